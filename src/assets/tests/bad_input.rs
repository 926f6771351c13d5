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
fn a_missing_manifest_names_the_file() {
    for file in [CLUSTER_CONFIG, INFRASTRUCTURE] {
        let dir = without("aws", file);
        let err = load_err(dir.path(), file);
        assert_problem(&err, "(file)", "cannot read");
    }
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
fn bad_documents_and_values_are_refused_naming_file_and_field() {
    let too_long_infra_id = format!("infrastructureName: {}", "a".repeat(33));
    assert_refusals(&[
        Refusal {
            case: "invalid YAML in the config map names the document",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "kind: ConfigMap",
            to: "kind: [ConfigMap",
            field: "(document)",
            problem_has: &["invalid YAML"],
        },
        Refusal {
            case: "invalid YAML in the embedded install-config names the key",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "    publish: External",
            to: "    publish: [External",
            field: "data.install-config",
            problem_has: &["invalid YAML"],
        },
        Refusal {
            case: "a config map without the install-config key names it",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "  install-config: |",
            to: "  other: |",
            field: "data.install-config",
            problem_has: &["missing; expected a string"],
        },
        Refusal {
            case: "the cluster name missing names metadata.name",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "      name: mycluster\n",
            to: "",
            field: "data.install-config: metadata.name",
            problem_has: &["missing"],
        },
        Refusal {
            case: "an unknown platform is refused with the known ones",
            fixture: "gcp",
            file: CLUSTER_CONFIG,
            from: "      gcp:\n",
            to: "      openstack:\n",
            field: "data.install-config: platform",
            problem_has: &["unknown platform \"openstack\"", "aws, azure, gcp, none"],
        },
        Refusal {
            case: "two platforms",
            fixture: "none",
            file: CLUSTER_CONFIG,
            from: "      none: {}\n",
            to: "      none: {}\n      gcp: {}\n",
            field: "data.install-config: platform",
            problem_has: &["expected exactly one"],
        },
        Refusal {
            case: "no platform block",
            fixture: "none",
            file: CLUSTER_CONFIG,
            from: "    platform:\n      none: {}\n",
            to: "",
            field: "data.install-config: platform",
            problem_has: &["missing"],
        },
        Refusal {
            case: "publish Sometimes",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "    publish: External",
            to: "    publish: Sometimes",
            field: "data.install-config: publish",
            problem_has: &["expected External, Internal or Mixed", "Sometimes"],
        },
        Refusal {
            case: "an upper-case infra id",
            fixture: "aws",
            file: INFRASTRUCTURE,
            from: "infrastructureName: mycluster-7xk2p",
            to: "infrastructureName: MyCluster-7xk2p",
            field: "status.infrastructureName",
            problem_has: &[
                "expected at most 32 characters of a-z, 0-9 and '-'",
                "MyCluster-7xk2p",
            ],
        },
        Refusal {
            case: "a too long infra id",
            fixture: "gcp",
            file: INFRASTRUCTURE,
            from: "infrastructureName: mycluster-7xk2p",
            to: &too_long_infra_id,
            field: "status.infrastructureName",
            problem_has: &["at most 32 characters"],
        },
        Refusal {
            case: "the Infrastructure manifest's platform is not the install-config's",
            fixture: "aws",
            file: INFRASTRUCTURE,
            from: "  platformStatus:\n    type: AWS",
            to: "  platformStatus:\n    type: GCP",
            field: "status.platformStatus.type",
            problem_has: &["is GCP, but the install-config's platform is aws; expected AWS"],
        },
        Refusal {
            case: "additional capabilities that are not a list",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "      additionalEnabledCapabilities:\n      - marketplace\n      - Console\n",
            to: "      additionalEnabledCapabilities: marketplace\n",
            field: "data.install-config: capabilities.additionalEnabledCapabilities",
            problem_has: &["expected a list of strings"],
        },
        Refusal {
            case: "an additional capability that is not a string names its index",
            fixture: "gcp",
            file: CLUSTER_CONFIG,
            from: "      - Console\n",
            to: "      - {name: Console}\n",
            field: "data.install-config: capabilities.additionalEnabledCapabilities[1]",
            problem_has: &["expected a string"],
        },
        Refusal {
            case: "zero control-plane replicas",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "      replicas: 3\n    compute:",
            to: "      replicas: 0\n    compute:",
            field: "data.install-config: controlPlane.replicas",
            problem_has: &["expected a positive integer"],
        },
        Refusal {
            case: "non-numeric control-plane replicas",
            fixture: "gcp",
            file: CLUSTER_CONFIG,
            from: "      replicas: 3\n    compute:",
            to: "      replicas: three\n    compute:",
            field: "data.install-config: controlPlane.replicas",
            problem_has: &["expected a positive integer"],
        },
    ]);
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
    let dir = broken_in(
        "aws",
        &[
            (
                INFRASTRUCTURE,
                "infrastructureName: mycluster-7xk2p",
                "infrastructureName: MyCluster",
            ),
            (
                CLUSTER_CONFIG,
                "      replicas: 3\n    compute",
                "      replicas: -1\n    compute",
            ),
            (CLUSTER_CONFIG, "      - Console\n", "      - 7\n"),
            (
                CLUSTER_CONFIG,
                "      - cidr: 10.0.0.0/16\n",
                "      - cidr: 10.0.0.0/99\n      - cidr: x\n",
            ),
            (
                CLUSTER_CONFIG,
                "        region: us-east-1\n",
                "        region: [us-east-1]\n",
            ),
        ],
    );
    let all = load_all(dir.path()).unwrap_err();
    let mut fields: Vec<&str> = all.iter().map(|e| e.field.as_str()).collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "data.install-config: capabilities.additionalEnabledCapabilities[1]",
            "data.install-config: controlPlane.replicas",
            "data.install-config: networking.machineNetwork[0].cidr",
            "data.install-config: networking.machineNetwork[1].cidr",
            // The platform block is checked although the infra id is malformed.
            "data.install-config: platform.aws.region",
            "status.infrastructureName",
        ]
    );
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
    // The key moved from data to stringData, with a number for its value.
    let dir = rewritten("aws", CREDS_SECRET, |text| {
        text.replace("  aws_secret_access_key:", "  moved_away:")
            + "stringData:\n  aws_secret_access_key: 12345\n"
    });
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
    let edits: Vec<(&str, &str, &str)> = edits
        .iter()
        .map(|(from, to)| (CLUSTER_CONFIG, *from, *to))
        .collect();
    let dir = broken_in(fixture, &edits);
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
