#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const INFRA_ID: &str = "mycluster-7xk2p";
const SECRET: &str = "fixture-secret-DO-NOT-LOG";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(name)
}

fn load_fixture(name: &str) -> ClusterSpec {
    load(&fixture(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A temp copy of a fixture.
fn copy_fixture(name: &str) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    dir
}

/// A temp copy of a fixture with `from` replaced by `to` (exactly once) in `file`.
fn broken(name: &str, file: &str, from: &str, to: &str) -> TempDir {
    let dir = copy_fixture(name);
    let path = dir.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} must occur exactly once in {name}/{file}"
    );
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    dir
}

/// Loading must fail; returns the error after checking it names `file`.
fn load_err(dir: &Path, file: &str) -> InputError {
    let err = match load(dir) {
        Ok(spec) => panic!("expected an InputError, loaded {spec:?}"),
        Err(e) => e,
    };
    assert!(
        err.file.ends_with(file),
        "error names file {}, expected one ending with {file}: {err}",
        err.file.display()
    );
    err
}

fn assert_problem(err: &InputError, field: &str, problem: &str) {
    assert_eq!(err.field, field, "{err}");
    assert!(
        err.problem.contains(problem),
        "problem {:?} should contain {problem:?}",
        err.problem
    );
}

fn assert_common_fields(spec: &ClusterSpec) {
    assert_eq!(spec.infra_id, INFRA_ID);
    assert_eq!(spec.cluster_name, "mycluster");
    assert_eq!(spec.base_domain, "example.com");
    assert_eq!(spec.cluster_domain(), "mycluster.example.com");
    assert_eq!(
        spec.api_server_internal_uri,
        "https://api-int.mycluster.example.com:6443"
    );
    assert_eq!(spec.control_plane_replicas, 3);
    assert_eq!(
        spec.bootstrap_ip, None,
        "the loader never sets the bootstrap IP"
    );
    let debug = format!("{spec:?}");
    assert!(!debug.contains(SECRET), "secret leaked into Debug: {debug}");
    let json = serde_json::to_string(spec).unwrap();
    assert!(!json.contains(SECRET), "secret leaked into JSON: {json}");
}

fn fixture_capabilities() -> Option<CapabilitiesSpec> {
    Some(CapabilitiesSpec {
        baseline: Some("v4.14".into()),
        additional: vec!["marketplace".into(), "Console".into()],
    })
}

fn aws_spec(spec: &ClusterSpec) -> &AwsSpec {
    match &spec.platform {
        Platform::Aws(aws) => aws,
        other => panic!("expected aws, got {other:?}"),
    }
}

fn assert_aws_keys_from_secret(spec: &ClusterSpec) {
    match &spec.credentials {
        Credentials::AwsKeys {
            access_key_id,
            secret_access_key,
        } => {
            assert_eq!(access_key_id, "AKIAFIXTUREEXAMPLE00");
            assert_eq!(secret_access_key, "fixture-secret-DO-NOT-LOG-wJalrXUtnFEMI");
        }
        other => panic!("expected the keys of the creds secret, got {other:?}"),
    }
    assert_eq!(
        format!("{:?}", spec.credentials),
        "Credentials::AwsKeys(<redacted>)"
    );
}

const PRIVATE_SUBNETS: [&str; 3] = [
    "subnet-0a1b2c3d4e5f60001",
    "subnet-0a1b2c3d4e5f60002",
    "subnet-0a1b2c3d4e5f60003",
];
const PUBLIC_SUBNETS: [&str; 3] = [
    "subnet-0a1b2c3d4e5f60011",
    "subnet-0a1b2c3d4e5f60012",
    "subnet-0a1b2c3d4e5f60013",
];

// ---- fixtures that load -------------------------------------------------------------------

#[test]
fn aws_external_reads_subnets_by_role_and_keys_from_the_secret() {
    let spec = load_fixture("aws");
    assert_common_fields(&spec);
    assert_eq!(spec.platform_name(), "aws");
    assert_eq!(spec.publish, Publish::External);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4]);
    assert_eq!(spec.capabilities, fixture_capabilities());
    let aws = aws_spec(&spec);
    assert_eq!(aws.region, "us-east-1");
    assert_eq!(aws.public_subnets, PUBLIC_SUBNETS);
    assert_eq!(aws.private_subnets, PRIVATE_SUBNETS);
    assert_eq!(aws.hosted_zone, None);
    assert_aws_keys_from_secret(&spec);
}

#[test]
fn aws_internal_has_no_public_subnets_and_publish_internal() {
    let spec = load_fixture("aws-internal");
    assert_common_fields(&spec);
    assert_eq!(spec.publish, Publish::Internal);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4]);
    assert_eq!(spec.capabilities, fixture_capabilities());
    let aws = aws_spec(&spec);
    assert!(aws.public_subnets.is_empty(), "{aws:?}");
    assert_eq!(aws.private_subnets, PRIVATE_SUBNETS);
    assert_aws_keys_from_secret(&spec);
}

#[test]
fn aws_dual_stack_machine_networks_give_both_families_ipv4_first() {
    let spec = load_fixture("aws-dualstack");
    assert_common_fields(&spec);
    assert_eq!(spec.publish, Publish::External);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4, IpFamily::Ipv6]);
    let aws = aws_spec(&spec);
    assert_eq!(aws.public_subnets, PUBLIC_SUBNETS);
    assert_eq!(aws.private_subnets, PRIVATE_SUBNETS);
    assert_aws_keys_from_secret(&spec);
}

fn assert_azure(spec: &ClusterSpec) {
    let Platform::Azure(azure) = &spec.platform else {
        panic!("expected azure, got {:?}", spec.platform);
    };
    assert_eq!(azure.region, "eastus");
    assert_eq!(azure.resource_group, "mycluster-7xk2p-rg");
    assert_eq!(azure.base_domain_resource_group, "dns-rg");
    assert_eq!(azure.network_resource_group, "network-rg");
    assert_eq!(azure.virtual_network, "mycluster-vnet");
    assert_eq!(azure.compute_subnet, "mycluster-worker-subnet");
    match &spec.credentials {
        Credentials::AzureClientSecret {
            subscription_id,
            tenant_id,
            client_id,
            client_secret,
        } => {
            assert_eq!(subscription_id, "00000000-0000-0000-0000-000000000001");
            assert_eq!(client_id, "00000000-0000-0000-0000-000000000002");
            assert_eq!(tenant_id, "00000000-0000-0000-0000-000000000003");
            assert_eq!(client_secret, "fixture-secret-DO-NOT-LOG");
        }
        other => panic!("expected the service principal of the creds secret, got {other:?}"),
    }
    assert!(!format!("{spec:?}").contains("fixture-secret-DO-NOT-LOG"));
}

#[test]
fn azure_reads_resource_groups_network_and_the_service_principal() {
    let spec = load_fixture("azure");
    assert_common_fields(&spec);
    assert_eq!(spec.platform_name(), "azure");
    assert_eq!(spec.publish, Publish::External);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4]);
    assert_eq!(spec.capabilities, fixture_capabilities());
    assert_azure(&spec);
}

#[test]
fn azure_dual_stack_gives_both_families() {
    let spec = load_fixture("azure-dualstack");
    assert_common_fields(&spec);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4, IpFamily::Ipv6]);
    assert_azure(&spec);
}

#[test]
fn gcp_reads_project_region_network_and_subnet() {
    let spec = load_fixture("gcp");
    assert_common_fields(&spec);
    assert_eq!(spec.platform_name(), "gcp");
    assert_eq!(spec.publish, Publish::External);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4]);
    assert_eq!(spec.capabilities, fixture_capabilities());
    let Platform::Gcp(gcp) = &spec.platform else {
        panic!("expected gcp, got {:?}", spec.platform);
    };
    assert_eq!(gcp.project, "example-project");
    assert_eq!(gcp.region, "us-central1");
    assert_eq!(gcp.network, "mycluster-network");
    assert_eq!(gcp.control_plane_subnet, "mycluster-master-subnet");
    assert_eq!(gcp.compute_subnet, "mycluster-worker-subnet");
    let Credentials::GcpServiceAccount { json } = &spec.credentials else {
        panic!(
            "expected the service account of the creds secret, got {:?}",
            spec.credentials
        );
    };
    assert!(json.contains("\"type\":\"service_account\""));
    assert!(!format!("{spec:?}").contains("fixture-secret-DO-NOT-LOG"));
}

#[test]
fn platform_none_without_capabilities_or_secret_loads() {
    let spec = load_fixture("none");
    assert_common_fields(&spec);
    assert!(matches!(spec.platform, Platform::None));
    assert_eq!(spec.platform_name(), "none");
    assert_eq!(spec.publish, Publish::External);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4]);
    assert_eq!(spec.capabilities, None);
    assert!(matches!(spec.credentials, Credentials::Environment));
}

#[test]
fn aws_without_creds_secret_falls_back_to_the_environment_chain() {
    let dir = copy_fixture("aws");
    std::fs::remove_file(dir.path().join(CREDS_SECRET)).unwrap();
    let spec = load(dir.path()).unwrap();
    assert!(matches!(spec.credentials, Credentials::Environment));
}

#[test]
fn aws_creds_secret_string_data_is_read_verbatim() {
    let dir = copy_fixture("aws");
    std::fs::write(
        dir.path().join(CREDS_SECRET),
        "apiVersion: v1\nkind: Secret\nstringData:\n  aws_access_key_id: AKIASTRINGDATA\n  aws_secret_access_key: fixture-secret-DO-NOT-LOG-plain\n",
    )
    .unwrap();
    let spec = load(dir.path()).unwrap();
    let Credentials::AwsKeys {
        access_key_id,
        secret_access_key,
    } = &spec.credentials
    else {
        panic!("expected keys");
    };
    assert_eq!(access_key_id, "AKIASTRINGDATA");
    assert_eq!(secret_access_key, "fixture-secret-DO-NOT-LOG-plain");
    assert!(!format!("{spec:?}").contains(SECRET));
}

#[test]
fn base_domain_trailing_dot_is_dropped() {
    let dir = broken(
        "gcp",
        CLUSTER_CONFIG,
        "baseDomain: example.com",
        "baseDomain: example.com.",
    );
    let spec = load(dir.path()).unwrap();
    assert_eq!(spec.base_domain, "example.com");
    assert_eq!(spec.cluster_domain(), "mycluster.example.com");
}

#[test]
fn publish_and_replicas_default_when_absent() {
    let dir = broken("gcp", CLUSTER_CONFIG, "    publish: External\n", "");
    let spec = load(dir.path()).unwrap();
    assert_eq!(spec.publish, Publish::External);
    let dir = broken(
        "gcp",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "    compute:",
    );
    assert_eq!(load(dir.path()).unwrap().control_plane_replicas, 3);
}

// ---- bad input ------------------------------------------------------------------------------

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
    let dir = broken("aws", CLUSTER_CONFIG, "kind: ConfigMap", "kind: [ConfigMap");
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(&err, "(document)", "invalid YAML");
}

#[test]
fn invalid_yaml_in_the_embedded_install_config_names_the_key() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "    publish: External",
        "    publish: [External",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(&err, "data.install-config", "invalid YAML");
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
    let dir = broken("aws", CLUSTER_CONFIG, "      name: mycluster\n", "");
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(&err, "data.install-config: metadata.name", "missing");
}

#[test]
fn unknown_platform_is_rejected_with_the_known_ones() {
    let dir = broken("gcp", CLUSTER_CONFIG, "      gcp:\n", "      openstack:\n");
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform",
        "unknown platform \"openstack\"",
    );
    assert!(err.problem.contains("aws, azure, gcp, none"), "{err}");
}

#[test]
fn two_platforms_are_rejected() {
    let dir = broken(
        "none",
        CLUSTER_CONFIG,
        "      none: {}\n",
        "      none: {}\n      gcp: {}\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform",
        "expected exactly one",
    );
}

#[test]
fn missing_platform_block_is_rejected() {
    let dir = broken(
        "none",
        CLUSTER_CONFIG,
        "    platform:\n      none: {}\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(&err, "data.install-config: platform", "missing");
}

#[test]
fn publish_sometimes_is_rejected() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "    publish: External",
        "    publish: Sometimes",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: publish",
        "expected External or Internal",
    );
    assert!(err.problem.contains("Sometimes"), "{err}");
}

#[test]
fn machine_network_prefix_too_long_is_rejected() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "      - cidr: 10.0.0.0/16",
        "      - cidr: 10.0.0.0/33",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: networking.machineNetwork[0].cidr",
        "prefix length \"33\" is not 0..=32",
    );
}

#[test]
fn machine_network_that_is_not_a_cidr_is_rejected() {
    let dir = broken(
        "aws-dualstack",
        CLUSTER_CONFIG,
        "      - cidr: fd00:10::/48",
        "      - cidr: \"fd00:10::\"",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: networking.machineNetwork[1].cidr",
        "expected a CIDR like 10.0.0.0/16",
    );
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "      - cidr: 10.0.0.0/16",
        "      - cidr: 10.0.0/16",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: networking.machineNetwork[0].cidr",
        "\"10.0.0\" is not an IP address",
    );
}

#[test]
fn uppercase_infra_id_is_rejected() {
    let dir = broken(
        "aws",
        INFRASTRUCTURE,
        "infrastructureName: mycluster-7xk2p",
        "infrastructureName: MyCluster-7xk2p",
    );
    let err = load_err(dir.path(), INFRASTRUCTURE);
    assert_problem(
        &err,
        "status.infrastructureName",
        "expected at most 32 characters of a-z, 0-9 and '-'",
    );
    assert!(err.problem.contains("MyCluster-7xk2p"), "{err}");
}

#[test]
fn too_long_infra_id_is_rejected() {
    let dir = broken(
        "gcp",
        INFRASTRUCTURE,
        "infrastructureName: mycluster-7xk2p",
        &format!("infrastructureName: {}", "a".repeat(33)),
    );
    let err = load_err(dir.path(), INFRASTRUCTURE);
    assert_problem(&err, "status.infrastructureName", "at most 32 characters");
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
fn aws_without_an_internal_lb_subnet_is_rejected() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("type: ControlPlaneInternalLB").count(), 3);
    std::fs::write(
        &path,
        text.replace("type: ControlPlaneInternalLB", "type: ClusterNode"),
    )
    .unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "no subnet has the role ControlPlaneInternalLB",
    );
}

#[test]
fn aws_without_subnets_is_rejected() {
    let dir = copy_fixture("aws-internal");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("        vpc:\n").unwrap();
    let end = text.find("    pullSecret:").unwrap();
    std::fs::write(&path, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "missing",
    );
}

#[test]
fn unknown_subnet_role_type_names_the_role() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    // The first subnet's third role.
    std::fs::write(
        &path,
        text.replacen("type: BootstrapNode", "type: Bootstrapper", 1),
    )
    .unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[0].roles[2].type",
        "expected one of ClusterNode",
    );
    assert!(err.problem.contains("ControlPlaneInternalLB"), "{err}");
}

#[test]
fn bad_subnet_id_is_rejected() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "- id: subnet-0a1b2c3d4e5f60002",
        "- id: vpc-0a1b2c3d4e5f60002",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[1].id",
        "expected a subnet id",
    );
}

#[test]
fn additional_capabilities_that_are_not_a_list_are_rejected() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "      additionalEnabledCapabilities:\n      - marketplace\n      - Console\n",
        "      additionalEnabledCapabilities: marketplace\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: capabilities.additionalEnabledCapabilities",
        "expected a list of strings",
    );
}

#[test]
fn additional_capability_that_is_not_a_string_names_its_index() {
    let dir = broken(
        "gcp",
        CLUSTER_CONFIG,
        "      - Console\n",
        "      - {name: Console}\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: capabilities.additionalEnabledCapabilities[1]",
        "expected a string",
    );
}

#[test]
fn creds_secret_with_non_base64_data_is_rejected_without_echoing_it() {
    let dir = broken(
        "aws",
        CREDS_SECRET,
        "aws_secret_access_key: Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRy13SmFsclhVdG5GRU1J",
        "aws_secret_access_key: fixture-secret-DO-NOT-LOG!!",
    );
    let err = load_err(dir.path(), CREDS_SECRET);
    assert_problem(&err, "data.aws_secret_access_key", "expected base64");
    assert!(!err.to_string().contains(SECRET), "{err}");
}

#[test]
fn creds_secret_without_a_key_names_the_key() {
    let dir = broken(
        "aws",
        CREDS_SECRET,
        "  aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=\n",
        "",
    );
    let err = load_err(dir.path(), CREDS_SECRET);
    assert_problem(&err, "data.aws_access_key_id", "missing");
}

#[test]
fn zero_control_plane_replicas_are_rejected() {
    let dir = broken(
        "aws",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "      replicas: 0\n    compute:",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: controlPlane.replicas",
        "expected a positive integer",
    );
}

#[test]
fn non_numeric_control_plane_replicas_are_rejected() {
    let dir = broken(
        "gcp",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "      replicas: three\n    compute:",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: controlPlane.replicas",
        "expected a positive integer",
    );
}
