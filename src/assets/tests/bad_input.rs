//! Bad input: each refusal names the file, the field and what was expected.

use super::*;

#[test]
fn missing_asset_dir_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-assets");
    let err = load_err(&missing, "no-such-assets");
    assert_problem(&err, "(dir)", "does not exist");
}

#[test]
fn missing_cluster_config_names_the_file() {
    let dir = copy_fixture("aws");
    std::fs::remove_file(dir.path().join(CLUSTER_CONFIG)).unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(&err, "(file)", "cannot read");
}

#[test]
fn missing_infrastructure_manifest_names_the_file() {
    let dir = copy_fixture("aws");
    std::fs::remove_file(dir.path().join(INFRASTRUCTURE)).unwrap();
    let err = load_err(dir.path(), INFRASTRUCTURE);
    assert_problem(&err, "(file)", "cannot read");
}

#[test]
fn invalid_yaml_in_the_config_map_names_the_document() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "kind: ConfigMap",
        "kind: [ConfigMap",
        "(document)",
        "invalid YAML",
    );
}

#[test]
fn invalid_yaml_in_the_embedded_install_config_names_the_key() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "    publish: External",
        "    publish: [External",
        "data.install-config",
        "invalid YAML",
    );
}

#[test]
fn config_map_without_install_config_key_is_named() {
    let dir = broken("aws", CLUSTER_CONFIG, "  install-config: |", "  other: |");
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(&err, "data.install-config", "missing; expected a string");
}

#[test]
fn install_config_key_missing_names_the_embedded_field() {
    let dir = broken("aws", CLUSTER_CONFIG, "    baseDomain: example.com\n", "");
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: baseDomain",
        "missing; expected a string",
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: data.install-config: baseDomain: missing; expected a string",
            dir.path().join(CLUSTER_CONFIG).display()
        )
    );
}

#[test]
fn install_config_cluster_name_missing_names_metadata_name() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "      name: mycluster\n",
        "",
        "data.install-config: metadata.name",
        "missing",
    );
}

#[test]
fn unknown_platform_is_rejected_with_the_known_ones() {
    let err = refused(
        "gcp",
        CLUSTER_CONFIG,
        "      gcp:\n",
        "      openstack:\n",
        "data.install-config: platform",
        "unknown platform \"openstack\"",
    );
    assert!(err.problem.contains("aws, azure, gcp, none"), "{err}");
}

#[test]
fn two_platforms_are_rejected() {
    refused(
        "none",
        CLUSTER_CONFIG,
        "      none: {}\n",
        "      none: {}\n      gcp: {}\n",
        "data.install-config: platform",
        "expected exactly one",
    );
}

#[test]
fn missing_platform_block_is_rejected() {
    refused(
        "none",
        CLUSTER_CONFIG,
        "    platform:\n      none: {}\n",
        "",
        "data.install-config: platform",
        "missing",
    );
}

#[test]
fn publish_sometimes_is_rejected() {
    let err = refused(
        "aws",
        CLUSTER_CONFIG,
        "    publish: External",
        "    publish: Sometimes",
        "data.install-config: publish",
        "expected External, Internal or Mixed",
    );
    assert!(err.problem.contains("Sometimes"), "{err}");
}

#[test]
fn uppercase_infra_id_is_rejected() {
    let err = refused(
        "aws",
        INFRASTRUCTURE,
        "infrastructureName: mycluster-7xk2p",
        "infrastructureName: MyCluster-7xk2p",
        "status.infrastructureName",
        "expected at most 32 characters of a-z, 0-9 and '-'",
    );
    assert!(err.problem.contains("MyCluster-7xk2p"), "{err}");
}

#[test]
fn too_long_infra_id_is_rejected() {
    refused(
        "gcp",
        INFRASTRUCTURE,
        "infrastructureName: mycluster-7xk2p",
        &format!("infrastructureName: {}", "a".repeat(33)),
        "status.infrastructureName",
        "at most 32 characters",
    );
}

#[test]
fn platform_mismatch_between_install_config_and_infrastructure_is_rejected() {
    let dir = broken(
        "aws",
        INFRASTRUCTURE,
        "  platformStatus:\n    type: AWS",
        "  platformStatus:\n    type: GCP",
    );
    let err = load_err(dir.path(), INFRASTRUCTURE);
    assert_problem(
        &err,
        "status.platformStatus.type",
        "is GCP, but the install-config's platform is aws; expected AWS",
    );
}

#[test]
fn additional_capabilities_that_are_not_a_list_are_rejected() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "      additionalEnabledCapabilities:\n      - marketplace\n      - Console\n",
        "      additionalEnabledCapabilities: marketplace\n",
        "data.install-config: capabilities.additionalEnabledCapabilities",
        "expected a list of strings",
    );
}

#[test]
fn additional_capability_that_is_not_a_string_names_its_index() {
    refused(
        "gcp",
        CLUSTER_CONFIG,
        "      - Console\n",
        "      - {name: Console}\n",
        "data.install-config: capabilities.additionalEnabledCapabilities[1]",
        "expected a string",
    );
}

#[test]
fn zero_control_plane_replicas_are_rejected() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "      replicas: 0\n    compute:",
        "data.install-config: controlPlane.replicas",
        "expected a positive integer",
    );
}

#[test]
fn non_numeric_control_plane_replicas_are_rejected() {
    refused(
        "gcp",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "      replicas: three\n    compute:",
        "data.install-config: controlPlane.replicas",
        "expected a positive integer",
    );
}

#[test]
fn an_object_head_of_the_wrong_shape_is_named_by_field_and_expected_type() {
    let head = |yaml: &str| {
        let v: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
        crate::assets::object_head_problem(&v)
    };
    assert_eq!(
        head("kind: X\nmetadata:\n  name: a\n  annotations:\n  - a\n"),
        Some((
            "metadata.annotations".to_string(),
            "expected a mapping of names to string values, found a list".to_string()
        ))
    );
    assert_eq!(
        head("kind: X\nmetadata:\n  labels: {app: [a]}\n")
            .unwrap()
            .0,
        "metadata.labels.app"
    );
    assert_eq!(head("kind: X\nmetadata: [a]\n").unwrap().0, "metadata");
    assert_eq!(head("kind: {a: b}\n").unwrap().0, "kind");
    assert_eq!(head("- a\n").unwrap().0, "(document)");
    // Scalars YAML reads as booleans or numbers are strings to a typed parse.
    assert_eq!(
        head("kind: X\nmetadata: {name: 1, namespace: y, annotations: {a: true}}\n"),
        None
    );
}

#[test]
fn the_loader_reports_every_problem_it_finds_not_only_the_first() {
    let dir = copy_fixture("aws");
    let edit = |file: &str, from: &str, to: &str| {
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{from:?} in {file}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    edit(
        INFRASTRUCTURE,
        "infrastructureName: mycluster-7xk2p",
        "infrastructureName: MyCluster",
    );
    edit(
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute",
        "      replicas: -1\n    compute",
    );
    edit(CLUSTER_CONFIG, "      - Console\n", "      - 7\n");
    edit(
        CLUSTER_CONFIG,
        "      - cidr: 10.0.0.0/16\n",
        "      - cidr: 10.0.0.0/99\n      - cidr: x\n",
    );
    edit(
        CLUSTER_CONFIG,
        "        region: us-east-1\n",
        "        region: [us-east-1]\n",
    );
    let all = load_all(dir.path()).unwrap_err();
    let fields: Vec<&str> = all.iter().map(|e| e.field.as_str()).collect();
    for want in [
        "status.infrastructureName",
        "data.install-config: controlPlane.replicas",
        "data.install-config: capabilities.additionalEnabledCapabilities[1]",
        "data.install-config: networking.machineNetwork[0].cidr",
        "data.install-config: networking.machineNetwork[1].cidr",
        // The platform block is checked although the infra id is malformed.
        "data.install-config: platform.aws.region",
    ] {
        assert!(fields.contains(&want), "{want} not in {fields:?}");
    }
    assert_eq!(fields.len(), 6, "{fields:?}");
    // `load` (the commands past the one pass) says the first.
    assert_eq!(load(dir.path()).unwrap_err().field, all[0].field);
}

#[test]
fn a_broken_platform_name_is_said_once_though_two_rules_read_it() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "    platform:\n      aws:",
        "    platform:\n      cloud9:",
    );
    let all = load_all(dir.path()).unwrap_err();
    let platform: Vec<_> = all
        .iter()
        .filter(|e| e.field == "data.install-config: platform")
        .collect();
    assert_eq!(platform.len(), 1, "{all:?}");
}

#[test]
fn a_wrong_typed_string_data_key_says_so_not_that_data_is_missing() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CREDS_SECRET);
    // The key moved from data to stringData, with a number for its value.
    let mut text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("  aws_secret_access_key:", "  moved_away:");
    text.push_str("stringData:\n  aws_secret_access_key: 12345\n");
    std::fs::write(&path, text).unwrap();
    let all = load_all(dir.path()).unwrap_err();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_problem(
        &all[0],
        "stringData.aws_secret_access_key",
        "expected a string, found a number",
    );
    assert!(!all[0].to_string().contains(SECRET));
}

#[test]
fn every_rule_of_a_platform_block_is_checked_not_only_the_first() {
    let mut gcp = fields_refused(
        "gcp",
        &[
            ("        projectID: example-project\n", ""),
            (
                "        region: us-central1\n",
                "        region: [us-central1]\n",
            ),
            ("        network: mycluster-network\n", ""),
        ],
    );
    gcp.sort();
    assert_eq!(
        gcp,
        [
            "platform.gcp.controlPlaneSubnet",
            "platform.gcp.projectID",
            "platform.gcp.region"
        ]
    );

    let mut azure = fields_refused(
        "azure",
        &[
            ("        region: eastus\n", ""),
            ("        networkResourceGroupName: network-rg\n", ""),
            (
                "        computeSubnet: mycluster-worker-subnet\n",
                "        subnets:\n        - {name: a, role: db}\n        - {role: node}\n",
            ),
        ],
    );
    azure.sort();
    assert_eq!(
        azure,
        [
            "platform.azure.networkResourceGroupName",
            "platform.azure.region",
            "platform.azure.subnets[0].role",
            "platform.azure.subnets[1].name",
        ]
    );

    let mut aws = fields_refused(
        "aws",
        &[
            ("        region: us-east-1\n", "        region: {a: b}\n"),
            ("id: subnet-0a1b2c3d4e5f60002", "id: subnet-!!"),
            ("id: subnet-0a1b2c3d4e5f60003", "id: 7"),
            (
                "          - id: subnet-0a1b2c3d4e5f60011\n            roles:\n            - type: IngressControllerLB\n",
                "          - id: subnet-0a1b2c3d4e5f60011\n            roles:\n            - type: Ingress\n",
            ),
        ],
    );
    aws.sort();
    assert_eq!(
        aws,
        [
            "platform.aws.region",
            "platform.aws.vpc.subnets[1].id",
            "platform.aws.vpc.subnets[2].id",
            "platform.aws.vpc.subnets[3].roles[0].type",
        ]
    );
}

/// The install-config fields `load_all` names, after the `data.install-config: ` prefix.
fn fields_refused(fixture: &str, edits: &[(&str, &str)]) -> Vec<String> {
    let dir = copy_fixture(fixture);
    let path = dir.path().join(CLUSTER_CONFIG);
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "{from:?} in {fixture}");
        text = text.replacen(from, to, 1);
    }
    std::fs::write(&path, text).unwrap();
    load_all(dir.path())
        .unwrap_err()
        .into_iter()
        .map(|e| {
            e.field
                .trim_start_matches("data.install-config: ")
                .to_string()
        })
        .collect()
}
