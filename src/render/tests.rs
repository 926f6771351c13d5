use super::*;
use crate::assets::Publish;
use crate::fixtures::spec as fixture;
use bootstrap_cloud::{IpFamily, Scope};
use std::path::Path;

/// One reservation per wanted key, with made-up ids and IPs.
fn reservations(spec: &ClusterSpec) -> Vec<Reservation> {
    crate::plan::wanted_reservations(spec)
        .into_iter()
        .enumerate()
        .map(|(i, w)| {
            let ip = match (w.key.scope, w.key.family) {
                (Scope::Public, IpFamily::Ipv4) => format!("203.0.113.{}", 10 + i),
                (Scope::Public, IpFamily::Ipv6) => format!("2001:db8::{}", 10 + i),
                (Scope::Private, IpFamily::Ipv4) => format!("10.0.{}.100", 1 + i),
                (Scope::Private, IpFamily::Ipv6) => format!("fd00:10::{}", 10 + i),
                (Scope::Bootstrap, _) => format!("10.0.9.{}", 10 + i),
            };
            Reservation {
                id: format!("res-{i}"),
                name: w.name,
                ip: ip.parse().unwrap(),
                key: w.key,
            }
        })
        .collect()
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/render")
        .join(format!("{name}.yaml"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, expected, "render golden {name} differs");
}

#[test]
fn golden_services_for_every_cloud_fixture() {
    for name in ["aws", "aws-internal", "azure", "azure-dualstack", "gcp"] {
        let spec = fixture(name);
        let rendered = services(&spec, &reservations(&spec), None).unwrap();
        golden(name, &to_yaml(&rendered).unwrap());
    }
}

fn names(fixture_name: &str) -> Vec<String> {
    let spec = fixture(fixture_name);
    services(&spec, &reservations(&spec), None)
        .unwrap()
        .iter()
        .map(|r| r.service.metadata.name.clone().unwrap())
        .collect()
}

#[test]
fn publish_internal_renders_no_external_service() {
    assert_eq!(names("aws-internal"), ["internal-lb"]);
    assert_eq!(
        names("gcp").len(),
        3,
        "publish External on GCP: external, internal API, internal MCS"
    );
}

/// Mixed: the external API Service exists exactly when the apiserver side is External
/// (the gate then waits on it), whatever ingress says.
#[test]
fn publish_mixed_renders_the_external_service_only_for_a_public_api() {
    assert_eq!(
        names("azure-mixed-api-external"),
        [
            "external-lb",
            "internal-lb",
            "internal-lb-machine-config-server"
        ]
    );
    assert_eq!(
        names("azure-mixed-api-internal"),
        ["internal-lb", "internal-lb-machine-config-server"]
    );
}

/// On AWS a private IP belongs to one NLB only: one internal Service carries both ports.
/// Azure and GCP can put several rules on one IP, so MCS keeps its own Service there.
#[test]
fn aws_renders_one_internal_service_with_both_ports_and_the_others_two() {
    assert_eq!(names("aws"), ["external-lb", "internal-lb"]);
    for cloud in ["azure", "gcp"] {
        assert_eq!(
            names(cloud),
            [
                "external-lb",
                "internal-lb",
                "internal-lb-machine-config-server"
            ],
            "{cloud}"
        );
    }
    let spec = fixture("aws");
    let rendered = services(&spec, &reservations(&spec), None).unwrap();
    let internal = &rendered[1].service;
    let ports: Vec<(Option<String>, i32)> = internal
        .spec
        .as_ref()
        .unwrap()
        .ports
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| (p.name.clone(), p.port))
        .collect();
    assert_eq!(
        ports,
        [
            (Some("https".to_string()), 6443),
            (Some("machine-config-server".to_string()), 22623)
        ]
    );
    let annotations = internal.metadata.annotations.as_ref().unwrap();
    assert_eq!(
        annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"],
        "internal"
    );
    assert_eq!(
        annotations["service.beta.kubernetes.io/aws-load-balancer-type"], "external",
        "private static IPs are an AWS Load Balancer Controller feature"
    );
    assert_eq!(
        annotations["service.beta.kubernetes.io/aws-load-balancer-target-group-attributes"],
        "preserve_client_ip.enabled=false"
    );
}

#[test]
fn aws_services_carry_the_eips_and_private_ips_in_subnet_order() {
    let spec = fixture("aws");
    let res = reservations(&spec);
    let rendered = services(&spec, &res, None).unwrap();
    let ann = |i: usize, key: &str| {
        rendered[i].service.metadata.annotations.as_ref().unwrap()[key].clone()
    };
    assert_eq!(
        ann(
            0,
            "service.beta.kubernetes.io/aws-load-balancer-eip-allocations"
        ),
        "res-0,res-1,res-2"
    );
    assert_eq!(
        ann(0, "service.beta.kubernetes.io/aws-load-balancer-subnets"),
        "subnet-0a1b2c3d4e5f60011,subnet-0a1b2c3d4e5f60012,subnet-0a1b2c3d4e5f60013"
    );
    assert_eq!(
        ann(
            1,
            "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses"
        ),
        "10.0.4.100,10.0.5.100,10.0.6.100"
    );
    assert_eq!(
        ann(1, "service.beta.kubernetes.io/aws-load-balancer-subnets"),
        "subnet-0a1b2c3d4e5f60001,subnet-0a1b2c3d4e5f60002,subnet-0a1b2c3d4e5f60003"
    );
}

/// The AWS Load Balancer Controller gives the i-th allocation of `eip-allocations` to the i-th
/// subnet sorted by ID (`sortSubnetsByID`), whatever the annotation's order: the external
/// Service lists its subnets in ascending ID order, each EIP at its subnet's place, however
/// the reservations come.
#[test]
fn aws_external_service_lists_subnets_by_ascending_id_with_their_eips_in_the_same_order() {
    let spec = fixture("aws");
    let mut res = reservations(&spec);
    res.reverse();
    let rendered = services(&spec, &res, None).unwrap();
    let annotations = rendered[0].service.metadata.annotations.as_ref().unwrap();
    let list =
        |key: &str| -> Vec<String> { annotations[key].split(',').map(str::to_string).collect() };
    let subnets = list("service.beta.kubernetes.io/aws-load-balancer-subnets");
    let eips = list("service.beta.kubernetes.io/aws-load-balancer-eip-allocations");
    let mut sorted = subnets.clone();
    sorted.sort();
    assert_eq!(subnets, sorted, "ascending subnet ids");
    for (subnet, eip) in subnets.iter().zip(&eips) {
        let of_subnet = res
            .iter()
            .find(|r| r.key.scope == Scope::Public && r.key.placement.as_deref() == Some(subnet))
            .unwrap();
        assert_eq!(&of_subnet.id, eip, "the EIP reserved in {subnet}");
    }
}

/// The labels real OpenShift pods carry: kube-apiserver static pods `app:
/// openshift-kube-apiserver` + `apiserver: "true"`, machine-config-server DaemonSet pods
/// `k8s-app: machine-config-server` (the seed's `app: kube-apiserver` matches nothing).
#[test]
fn default_selectors_match_the_real_openshift_pod_labels() {
    let api = BTreeMap::from([
        ("app".to_string(), "openshift-kube-apiserver".to_string()),
        ("apiserver".to_string(), "true".to_string()),
    ]);
    let mcs = BTreeMap::from([("k8s-app".to_string(), "machine-config-server".to_string())]);
    for name in ["aws", "azure", "gcp"] {
        let spec = fixture(name);
        for r in services(&spec, &reservations(&spec), None).unwrap() {
            let ns = r.service.metadata.namespace.as_deref().unwrap();
            let selector = r.service.spec.as_ref().unwrap().selector.clone().unwrap();
            let wanted = match ns {
                "openshift-kube-apiserver" => &api,
                "openshift-machine-config-operator" => &mcs,
                other => panic!("{}: unexpected namespace {other}", r.template),
            };
            assert_eq!(&selector, wanted, "{}", r.template);
        }
    }
}

#[test]
fn dual_stack_sets_ip_families_and_the_ipv6_annotation() {
    let spec = fixture("azure-dualstack");
    let rendered = services(&spec, &reservations(&spec), None).unwrap();
    let external = &rendered[0].service;
    let spec_ = external.spec.as_ref().unwrap();
    assert_eq!(
        spec_.ip_families.as_deref(),
        Some(&["IPv4".to_string(), "IPv6".to_string()][..])
    );
    assert_eq!(spec_.ip_family_policy.as_deref(), Some("RequireDualStack"));
    assert!(
        external
            .metadata
            .annotations
            .as_ref()
            .unwrap()
            .contains_key("service.beta.kubernetes.io/azure-load-balancer-ipv6")
    );
}

/// Dual stack on Azure: the internal Services carry the private IPv6 too and ask for both
/// families (cloud-provider-azure makes a frontend per family in `spec.ipFamilies`).
#[test]
fn azure_dual_stack_internal_services_claim_the_private_ipv6() {
    let spec = fixture("azure-dualstack");
    let res = reservations(&spec);
    let private_v6 = res
        .iter()
        .find(|r| r.key.scope == Scope::Private && r.key.family == IpFamily::Ipv6)
        .expect("a private IPv6 is wanted on Azure dual stack")
        .ip;
    let rendered = services(&spec, &res, None).unwrap();
    for r in &rendered[1..] {
        let svc = &r.service;
        let spec_ = svc.spec.as_ref().unwrap();
        assert_eq!(
            spec_.ip_families.as_deref(),
            Some(&["IPv4".to_string(), "IPv6".to_string()][..]),
            "{}",
            r.template
        );
        assert_eq!(spec_.ip_family_policy.as_deref(), Some("RequireDualStack"));
        assert_eq!(
            svc.metadata.annotations.as_ref().unwrap()["service.beta.kubernetes.io/azure-load-balancer-ipv6"],
            private_v6.to_string(),
            "{}",
            r.template
        );
        assert!(
            claimed_ips(svc, &res).contains(&private_v6),
            "the gate waits for the IPv6 too"
        );
    }
    // Single stack: neither the annotation nor the families.
    let spec = fixture("azure");
    for r in services(&spec, &reservations(&spec), None).unwrap() {
        let svc = &r.service;
        assert!(
            svc.spec.as_ref().unwrap().ip_families.is_none(),
            "{}",
            r.template
        );
        assert!(
            !svc.metadata
                .annotations
                .as_ref()
                .unwrap()
                .contains_key("service.beta.kubernetes.io/azure-load-balancer-ipv6")
        );
    }
    // Without the private IPv6 reservation the internal Services do not render.
    let spec = fixture("azure-dualstack");
    let without: Vec<Reservation> = reservations(&spec)
        .into_iter()
        .filter(|r| !(r.key.scope == Scope::Private && r.key.family == IpFamily::Ipv6))
        .collect();
    assert_render_fails(
        &spec,
        &without,
        None,
        "services/azure/internal-lb.yaml",
        "missing value",
    );
}

/// Rendering fails with an error that names `template` and says `problem`.
fn assert_render_fails(
    spec: &ClusterSpec,
    reserved: &[Reservation],
    templates: Option<&Path>,
    template: &str,
    problem: &str,
) {
    let err = services(spec, reserved, templates).unwrap_err().to_string();
    assert!(
        err.contains(template) && err.contains(problem),
        "{template}: {err}"
    );
}

/// cloud-provider-azure looks for a Service's public IP in the cluster's resource group
/// unless `azure-load-balancer-resource-group` names another: an adopted public IP of another
/// group renders that annotation, one of the cluster's group does not.
#[test]
fn azure_public_ip_of_another_resource_group_is_named_on_the_external_service() {
    const RG: &str = "service.beta.kubernetes.io/azure-load-balancer-resource-group";
    let spec = fixture("azure");
    let Platform::Azure(azure) = &spec.platform else {
        panic!("azure fixture");
    };
    let cluster_rg = azure.resource_group.clone();
    let with_public_in = |rg: &str| -> Vec<Reservation> {
        reservations(&spec)
            .into_iter()
            .map(|mut r| {
                if r.key.scope == Scope::Public {
                    r.id = format!(
                        "/subscriptions/s/resourceGroups/{rg}/providers/Microsoft.Network/publicIPAddresses/{}",
                        r.name
                    );
                }
                r
            })
            .collect()
    };
    let external = |res: &[Reservation]| {
        services(&spec, res, None)
            .unwrap()
            .into_iter()
            .find(|r| r.template == "services/azure/external-lb.yaml")
            .unwrap()
            .service
    };
    let elsewhere = external(&with_public_in("shared-ips-rg"));
    assert_eq!(
        elsewhere.metadata.annotations.as_ref().unwrap()[RG],
        "shared-ips-rg"
    );
    for same in [cluster_rg.clone(), cluster_rg.to_ascii_uppercase()] {
        let svc = external(&with_public_in(&same));
        assert!(
            !svc.metadata.annotations.as_ref().unwrap().contains_key(RG),
            "the cluster's own group ({same}) needs no annotation"
        );
    }
    // Two public IPs (dual stack) in two other groups: the Service can name only one.
    let spec = fixture("azure-dualstack");
    let mut res = reservations(&spec);
    for (i, r) in res
        .iter_mut()
        .filter(|r| r.key.scope == Scope::Public)
        .enumerate()
    {
        r.id = format!(
            "/subscriptions/s/resourceGroups/rg-{i}/providers/Microsoft.Network/publicIPAddresses/{}",
            r.name
        );
    }
    let err = services(&spec, &res, None).unwrap_err().to_string();
    assert!(err.contains("rg-0") && err.contains("rg-1"), "{err}");
}

#[path = "access_tests.rs"]
mod access;

#[path = "template_error_tests.rs"]
mod template_errors;
