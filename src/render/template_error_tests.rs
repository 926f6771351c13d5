//! A template that cannot render, or renders what is no Service, fails naming the template
//! (a child of the render tests, for their reservations and fixtures).

use super::*;

#[test]
fn missing_reservation_is_an_error_naming_the_template() {
    let spec = fixture("aws");
    assert_render_fails(
        &spec,
        &[],
        None,
        "services/aws/external-lb.yaml",
        "empty value",
    );
}

/// Azure and GCP print single addresses: without their reservation the value is missing,
/// and the template must fail instead of rendering the word "None".
#[test]
fn a_missing_address_fails_the_template_on_every_cloud() {
    for (name, template) in [
        ("azure", "services/azure/external-lb.yaml"),
        ("gcp", "services/gcp/external-lb.yaml"),
    ] {
        assert_render_fails(&fixture(name), &[], None, template, "missing value");
    }
    // Publish Internal: the first template printing an address is the internal one.
    let mut spec = fixture("azure");
    spec.publish = Publish::Internal;
    let public_only: Vec<Reservation> = reservations(&fixture("azure"))
        .into_iter()
        .filter(|r| r.key.scope == Scope::Public)
        .collect();
    assert_render_fails(
        &spec,
        &public_only,
        None,
        "services/azure/internal-lb.yaml",
        "missing value",
    );
}

/// A template directory whose GCP templates are these (file name, text).
fn gcp_overrides(templates: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cloud = dir.path().join("services/gcp");
    std::fs::create_dir_all(&cloud).unwrap();
    for (name, text) in templates {
        std::fs::write(cloud.join(name), text).unwrap();
    }
    dir
}

#[test]
fn override_dir_replaces_the_embedded_templates_and_bad_output_names_the_template() {
    let spec = fixture("gcp");
    let custom = GCP[1].replace("Internal", "Custom");
    let dir = gcp_overrides(&[
        ("external-lb.yaml", ""),
        ("internal-lb.yaml", &custom),
        (
            "internal-lb-machine-config-server.yaml",
            "kind: Service\nmetadata: {name: x}\n",
        ),
    ]);
    assert_render_fails(
        &spec,
        &reservations(&spec),
        Some(dir.path()),
        "services/gcp/internal-lb-machine-config-server.yaml",
        "namespace",
    );
    std::fs::write(
        dir.path()
            .join("services/gcp/internal-lb-machine-config-server.yaml"),
        GCP[2],
    )
    .unwrap();
    let rendered = services(&spec, &reservations(&spec), Some(dir.path())).unwrap();
    assert_eq!(rendered.len(), 2, "an empty override renders nothing");
    assert_eq!(
        rendered[0].service.metadata.annotations.as_ref().unwrap()["networking.gke.io/load-balancer-type"],
        "Custom"
    );
}

#[test]
fn a_template_error_names_the_template() {
    let spec = fixture("gcp");
    let dir = gcp_overrides(&[("external-lb.yaml", "{{ no_such_variable }}")]);
    assert_render_fails(
        &spec,
        &reservations(&spec),
        Some(dir.path()),
        "services/gcp/external-lb.yaml",
        "undefined value",
    );
}

#[test]
fn a_list_where_the_annotations_mapping_belongs_is_named_by_its_path() {
    let spec = fixture("gcp");
    let dir = gcp_overrides(&[(
        "external-lb.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  namespace: y\n  annotations:\n  - networking.gke.io/load-balancer-type\nspec: {type: LoadBalancer}\n",
    )]);
    assert_render_fails(
        &spec,
        &reservations(&spec),
        Some(dir.path()),
        "services/gcp/external-lb.yaml",
        "metadata.annotations: expected a mapping of names to string values, found a list",
    );
}
