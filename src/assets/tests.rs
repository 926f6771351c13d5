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

/// (name, value, source as `plan` prints it) of each network value.
fn sources(spec: &ClusterSpec) -> Vec<(String, String, String)> {
    spec.network_values()
        .into_iter()
        .map(|v| (v.name, v.value, v.source.to_string()))
        .collect()
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

fn public(aws: &AwsSpec) -> Vec<&str> {
    aws.public_subnets().map(String::as_str).collect()
}

fn private(aws: &AwsSpec) -> Vec<&str> {
    aws.private_subnets().map(String::as_str).collect()
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
    assert_eq!(public(aws), PUBLIC_SUBNETS);
    assert_eq!(private(aws), PRIVATE_SUBNETS);
    assert_eq!(aws.hosted_zone, None);
    let values = spec.network_values();
    assert_eq!(values.len(), 6, "{values:?}");
    assert_eq!(
        values[0],
        NetworkValue {
            name: "public subnet".into(),
            value: PUBLIC_SUBNETS[0].into(),
            source: Source::InstallConfig {
                field: "platform.aws.vpc.subnets[3].id".into()
            },
            classified_by: Some(Classification::Role {
                field: "platform.aws.vpc.subnets[3].roles[1].type".into(),
                role: "ControlPlaneExternalLB".into()
            }),
        }
    );
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
    assert!(public(aws).is_empty(), "{aws:?}");
    assert_eq!(private(aws), PRIVATE_SUBNETS);
    assert_aws_keys_from_secret(&spec);
}

#[test]
fn aws_dual_stack_machine_networks_give_both_families_ipv4_first() {
    let spec = load_fixture("aws-dualstack");
    assert_common_fields(&spec);
    assert_eq!(spec.publish, Publish::External);
    assert_eq!(spec.ip_families, vec![IpFamily::Ipv4, IpFamily::Ipv6]);
    let aws = aws_spec(&spec);
    assert_eq!(public(aws), PUBLIC_SUBNETS);
    assert_eq!(private(aws), PRIVATE_SUBNETS);
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
    assert_eq!(azure.control_plane_subnet, "mycluster-master-subnet");
    assert_eq!(
        sources(spec),
        [
            (
                "resource group",
                "mycluster-7xk2p-rg",
                "install-config platform.azure.resourceGroupName"
            ),
            (
                "network resource group",
                "network-rg",
                "install-config platform.azure.networkResourceGroupName"
            ),
            (
                "virtual network",
                "mycluster-vnet",
                "install-config platform.azure.virtualNetwork"
            ),
            (
                "control-plane subnet",
                "mycluster-master-subnet",
                "install-config platform.azure.controlPlaneSubnet"
            ),
            (
                "compute subnet",
                "mycluster-worker-subnet",
                "install-config platform.azure.computeSubnet"
            ),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
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
    assert!(
        sources(&spec)
            .iter()
            .all(|(_, _, source)| source.starts_with("install-config platform.gcp.")),
        "{:?}",
        sources(&spec)
    );
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

/// The installer's Manual mode: `credentialsMode: Manual` kept in install-config, and no
/// creds secret written at all.
#[test]
fn manual_credentials_mode_without_a_secret_uses_the_environment_chain() {
    let spec = load_fixture("aws-manual-creds");
    assert!(matches!(spec.credentials, Credentials::Environment));
    assert!(matches!(spec.platform, Platform::Aws(_)));
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
        "expected External, Internal or Mixed",
    );
    assert!(err.problem.contains("Sometimes"), "{err}");
}

// ---- user-managed DNS -------------------------------------------------------------------------

#[test]
fn fixtures_without_the_switches_leave_dns_to_the_agent() {
    for name in ["aws", "azure-mixed-api-external", "gcp", "none"] {
        assert_eq!(load_fixture(name).dns, DnsManagement::Cloud, "{name}");
    }
}

#[test]
fn aws_user_provisioned_dns_makes_dns_the_users() {
    let spec = load_fixture("aws-user-dns");
    assert_eq!(
        spec.user_managed_dns(),
        Some("install-config platform.aws.userProvisionedDNS: Enabled")
    );
}

/// The Infrastructure manifest alone says so too (as a UPI install's would).
#[test]
fn cluster_hosted_dns_type_alone_makes_dns_the_users() {
    let dir = broken(
        "aws-user-dns",
        CLUSTER_CONFIG,
        "        userProvisionedDNS: Enabled\n",
        "        userProvisionedDNS: Disabled\n",
    );
    assert_eq!(
        load(dir.path()).unwrap().user_managed_dns(),
        Some(
            "manifests/cluster-infrastructure-02-config.yml status.platformStatus.aws.cloudLoadBalancerConfig.dnsType: ClusterHosted"
        )
    );
}

#[test]
fn user_provisioned_dns_is_read_on_gcp_and_azure_too() {
    let gcp = broken(
        "gcp",
        CLUSTER_CONFIG,
        "        projectID: example-project\n",
        "        projectID: example-project\n        userProvisionedDNS: Enabled\n",
    );
    assert_eq!(
        load(gcp.path()).unwrap().user_managed_dns(),
        Some("install-config platform.gcp.userProvisionedDNS: Enabled")
    );
    let azure = broken(
        "azure",
        INFRASTRUCTURE,
        "      cloudName: AzurePublicCloud\n",
        "      cloudName: AzurePublicCloud\n      cloudLoadBalancerConfig:\n        dnsType: ClusterHosted\n",
    );
    assert!(load(azure.path()).unwrap().user_managed_dns().is_some());
    let disabled = broken(
        "azure-mixed-api-external",
        CLUSTER_CONFIG,
        "        region: eastus\n",
        "        region: eastus\n        userProvisionedDNS: Disabled\n",
    );
    assert_eq!(load(disabled.path()).unwrap().dns, DnsManagement::Cloud);
}

#[test]
fn bad_user_provisioned_dns_inputs_name_file_and_field() {
    let dir = broken(
        "aws-user-dns",
        CLUSTER_CONFIG,
        "userProvisionedDNS: Enabled",
        "userProvisionedDNS: enabled",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.userProvisionedDNS",
        "expected Enabled or Disabled, found \"enabled\"",
    );
    let dir = broken(
        "aws-user-dns",
        INFRASTRUCTURE,
        "dnsType: ClusterHosted",
        "dnsType: UserHosted",
    );
    let err = load_err(dir.path(), INFRASTRUCTURE);
    assert_problem(
        &err,
        "status.platformStatus.aws.cloudLoadBalancerConfig.dnsType",
        "expected PlatformDefault or ClusterHosted, found \"UserHosted\"",
    );
    let dir = broken(
        "aws-user-dns",
        INFRASTRUCTURE,
        "dnsType: ClusterHosted",
        "dnsType: PlatformDefault",
    );
    let err = load_err(dir.path(), INFRASTRUCTURE);
    assert_problem(
        &err,
        "status.platformStatus.aws.cloudLoadBalancerConfig.dnsType",
        "is PlatformDefault, but the install-config's platform.aws.userProvisionedDNS is Enabled",
    );
}

// ---- publish Mixed (Azure) ------------------------------------------------------------------

#[test]
fn azure_mixed_reads_both_sides_and_the_public_api_follows_the_apiserver_only() {
    let external = load_fixture("azure-mixed-api-external");
    assert_eq!(
        external.publish,
        Publish::Mixed {
            apiserver: Exposure::External,
            ingress: Exposure::Internal
        }
    );
    assert!(external.publish.public_api());
    let internal = load_fixture("azure-mixed-api-internal");
    assert_eq!(
        internal.publish,
        Publish::Mixed {
            apiserver: Exposure::Internal,
            ingress: Exposure::External
        }
    );
    assert!(!internal.publish.public_api());
    assert!(Publish::External.public_api());
    assert!(!Publish::Internal.public_api());
}

#[test]
fn mixed_sides_default_to_external_as_the_installer_fills_them_in() {
    let dir = broken(
        "azure-mixed-api-internal",
        CLUSTER_CONFIG,
        "      ingress: External\n",
        "",
    );
    assert_eq!(
        load(dir.path()).unwrap().publish,
        Publish::Mixed {
            apiserver: Exposure::Internal,
            ingress: Exposure::External
        }
    );
    let dir = broken(
        "azure-mixed-api-internal",
        CLUSTER_CONFIG,
        "      apiserver: Internal\n",
        "      apiserver: \"\"\n",
    );
    assert!(load(dir.path()).unwrap().publish.public_api());
}

#[test]
fn empty_publish_is_external_as_in_the_installers_public_api_rule() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "    publish: External",
        "    publish: \"\"",
    );
    assert_eq!(load(dir.path()).unwrap().publish, Publish::External);
}

/// Each case the installer refuses: (fixture, from, to, field, problem).
#[test]
fn publish_and_operator_publishing_strategy_are_refused_where_the_installer_refuses_them() {
    let ops =
        "    operatorPublishingStrategy:\n      apiserver: External\n      ingress: Internal\n";
    let cases = [
        (
            "aws",
            "    publish: External\n",
            format!("    publish: Mixed\n{ops}"),
            "publish",
            "Mixed is supported only on platform azure, not aws",
        ),
        (
            "gcp",
            "    publish: External\n",
            format!("    publish: Mixed\n{ops}"),
            "publish",
            "Mixed is supported only on platform azure, not gcp",
        ),
        (
            "none",
            "    publish: External\n",
            "    publish: Internal\n".to_string(),
            "publish",
            "Internal is not supported on platform none",
        ),
        (
            "azure-mixed-api-internal",
            "    operatorPublishingStrategy:\n      apiserver: Internal\n      ingress: External\n",
            String::new(),
            "operatorPublishingStrategy",
            "missing; publish Mixed needs it",
        ),
        (
            "azure",
            "    publish: External\n",
            format!("    publish: External\n{ops}"),
            "operatorPublishingStrategy",
            "allowed only with publish Mixed, but publish is External",
        ),
        (
            "azure-mixed-api-internal",
            "      ingress: External",
            "      ingress: Internal".to_string(),
            "operatorPublishingStrategy",
            "both Internal",
        ),
        (
            "azure-mixed-api-internal",
            "      apiserver: Internal",
            "      apiserver: Public".to_string(),
            "operatorPublishingStrategy.apiserver",
            "expected External or Internal, found \"Public\"",
        ),
        (
            "azure-mixed-api-external",
            "      ingress: Internal",
            "      ingress: [Internal]".to_string(),
            "operatorPublishingStrategy.ingress",
            "expected External or Internal, found a list",
        ),
        (
            "azure-mixed-api-external",
            "    operatorPublishingStrategy:\n      apiserver: External\n      ingress: Internal\n",
            "    operatorPublishingStrategy: External\n".to_string(),
            "operatorPublishingStrategy",
            "expected a mapping with apiserver and ingress",
        ),
        (
            "azure",
            "    publish: External",
            "    publish: 3".to_string(),
            "publish",
            "expected External, Internal or Mixed, found a number",
        ),
    ];
    for (fixture, from, to, field, problem) in cases {
        let dir = broken(fixture, CLUSTER_CONFIG, from, &to);
        let err = load_err(dir.path(), CLUSTER_CONFIG);
        assert_problem(&err, &format!("data.install-config: {field}"), problem);
    }
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

// ---- installer-default networks ------------------------------------------------------------

fn lookup(spec: &ClusterSpec) -> &SubnetLookup {
    spec.pending_subnets()
        .unwrap_or_else(|| panic!("expected subnets to look up, got {:?}", spec.platform))
}

fn listed(spec: &ClusterSpec) -> Vec<(&str, &str)> {
    match &lookup(spec).how {
        LookupKind::Listed(listed) => listed
            .iter()
            .map(|s| (s.id.as_str(), s.field.as_str()))
            .collect(),
        LookupKind::ClusterTag => panic!("expected a listed lookup"),
    }
}

#[test]
fn aws_installer_vpc_leaves_the_subnets_to_the_cluster_tag() {
    let spec = load_fixture("aws-installer-vpc");
    assert_common_fields(&spec);
    let lookup = lookup(&spec);
    assert!(matches!(lookup.how, LookupKind::ClusterTag), "{lookup:?}");
    assert!(lookup.file.ends_with(CLUSTER_CONFIG));
    assert_eq!(
        lookup.query(),
        bootstrap_cloud::subnets::SubnetQuery::ClusterTag
    );
    let aws = aws_spec(&spec);
    assert!(public(aws).is_empty() && private(aws).is_empty());
    assert!(spec.network_values().is_empty(), "nothing known yet");
}

#[test]
fn aws_flat_list_as_converted_by_the_installer_is_classified_at_run_time() {
    // Both keys, as the installer writes them: vpc.subnets (no roles) is used.
    let spec = load_fixture("aws-flat-subnets");
    let ids: Vec<&str> = PRIVATE_SUBNETS
        .iter()
        .chain(&PUBLIC_SUBNETS)
        .copied()
        .collect();
    let fields: Vec<String> = (0..6)
        .map(|i| format!("platform.aws.vpc.subnets[{i}].id"))
        .collect();
    let expected: Vec<(&str, &str)> = ids
        .iter()
        .zip(&fields)
        .map(|(id, field)| (*id, field.as_str()))
        .collect();
    assert_eq!(listed(&spec), expected);
    assert_eq!(
        lookup(&spec).query(),
        bootstrap_cloud::subnets::SubnetQuery::Ids(ids.iter().map(|s| s.to_string()).collect())
    );
}

#[test]
fn aws_deprecated_flat_list_alone_is_read_from_platform_aws_subnets() {
    // An older installer wrote only the deprecated key.
    let dir = copy_fixture("aws-flat-subnets");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("        vpc:\n").unwrap();
    let end = text.find("    pullSecret:").unwrap();
    std::fs::write(&path, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let spec = load(dir.path()).unwrap();
    let entries = listed(&spec);
    assert_eq!(entries.len(), 6);
    assert_eq!(entries[0], (PRIVATE_SUBNETS[0], "platform.aws.subnets[0]"));
    assert_eq!(entries[5], (PUBLIC_SUBNETS[2], "platform.aws.subnets[5]"));
}

#[test]
fn aws_flat_list_entry_that_is_not_a_subnet_id_names_the_entry() {
    let dir = broken(
        "aws-flat-subnets",
        CLUSTER_CONFIG,
        "        - subnet-0a1b2c3d4e5f60002\n",
        "        - vpc-0a1b2c3d4e5f60002\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.subnets[1]",
        "expected a subnet id like subnet-0123456789abcdef0, found \"vpc-0a1b2c3d4e5f60002\"",
    );
    let dir = broken(
        "aws-flat-subnets",
        CLUSTER_CONFIG,
        "        - subnet-0a1b2c3d4e5f60003\n",
        "        - {id: subnet-0a1b2c3d4e5f60003}\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.subnets[2]",
        "expected a subnet id like subnet-0123456789abcdef0, found a mapping",
    );
}

#[test]
fn aws_flat_list_that_disagrees_with_its_converted_copy_is_rejected() {
    let dir = broken(
        "aws-flat-subnets",
        CLUSTER_CONFIG,
        "        - subnet-0a1b2c3d4e5f60013\n",
        "        - subnet-0a1b2c3d4e5f60099\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.subnets",
        "but platform.aws.vpc.subnets names",
    );
    assert!(err.problem.contains("subnet-0a1b2c3d4e5f60099"), "{err}");
}

#[test]
fn aws_roles_on_some_subnets_only_are_rejected() {
    let dir = broken(
        "aws-flat-subnets",
        CLUSTER_CONFIG,
        "          - id: subnet-0a1b2c3d4e5f60002\n",
        "          - id: subnet-0a1b2c3d4e5f60002\n            roles:\n            - type: ControlPlaneInternalLB\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[0].roles",
        "but platform.aws.vpc.subnets[1] has roles; expected roles on every subnet or on none",
    );
}

#[test]
fn aws_external_without_an_external_lb_subnet_is_rejected() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("type: ControlPlaneExternalLB", "type: IngressControllerLB"),
    )
    .unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "no subnet has the role ControlPlaneExternalLB; publish External needs at least one",
    );
}

#[test]
fn azure_installer_network_takes_the_installers_default_names() {
    let spec = load_fixture("azure-default-network");
    assert_common_fields(&spec);
    let Platform::Azure(azure) = &spec.platform else {
        panic!("expected azure, got {:?}", spec.platform);
    };
    assert_eq!(azure.resource_group, "mycluster-7xk2p-rg");
    assert_eq!(azure.network_resource_group, "mycluster-7xk2p-rg");
    assert_eq!(azure.virtual_network, "mycluster-7xk2p-vnet");
    assert_eq!(azure.control_plane_subnet, "mycluster-7xk2p-master-subnet");
    assert_eq!(azure.compute_subnet, "mycluster-7xk2p-worker-subnet");
    assert_eq!(azure.base_domain_resource_group, "dns-rg");
    assert_eq!(
        sources(&spec),
        [
            (
                "resource group",
                "mycluster-7xk2p-rg",
                "default name (<infra-id>-rg)"
            ),
            (
                "network resource group",
                "mycluster-7xk2p-rg",
                "default name (the resource group)"
            ),
            (
                "virtual network",
                "mycluster-7xk2p-vnet",
                "default name (<infra-id>-vnet)"
            ),
            (
                "control-plane subnet",
                "mycluster-7xk2p-master-subnet",
                "default name (<infra-id>-master-subnet)"
            ),
            (
                "compute subnet",
                "mycluster-7xk2p-worker-subnet",
                "default name (<infra-id>-worker-subnet)"
            ),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
}

#[test]
fn azure_named_resource_group_is_also_the_network_resource_group_of_the_installers_vnet() {
    let dir = broken(
        "azure-default-network",
        CLUSTER_CONFIG,
        "        baseDomainResourceGroupName: dns-rg\n",
        "        baseDomainResourceGroupName: dns-rg\n        resourceGroupName: my-empty-rg\n",
    );
    let spec = load(dir.path()).unwrap();
    let Platform::Azure(azure) = &spec.platform else {
        panic!()
    };
    assert_eq!(azure.resource_group, "my-empty-rg");
    assert_eq!(azure.network_resource_group, "my-empty-rg");
    assert_eq!(azure.virtual_network, "mycluster-7xk2p-vnet");
}

#[test]
fn azure_subnets_list_with_roles_wins_over_the_deprecated_keys_it_was_converted_from() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "        computeSubnet: mycluster-worker-subnet\n        subnets:\n        - name: cp-from-list\n          role: control-plane\n        - name: nodes-from-list\n          role: node\n        - name: more-nodes\n          role: node\n",
    );
    let spec = load(dir.path()).unwrap();
    let Platform::Azure(azure) = &spec.platform else {
        panic!()
    };
    assert_eq!(azure.control_plane_subnet, "cp-from-list");
    assert_eq!(azure.compute_subnet, "nodes-from-list");
    let sources = sources(&spec);
    assert_eq!(
        sources[3].2,
        "install-config platform.azure.subnets[0].name"
    );
    assert_eq!(
        sources[4].2,
        "install-config platform.azure.subnets[1].name"
    );
}

#[test]
fn azure_subnet_with_an_unknown_role_names_the_role() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "        subnets:\n        - name: x\n          role: worker\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.subnets[0].role",
        "expected node or control-plane",
    );
}

#[test]
fn azure_two_control_plane_subnets_are_rejected() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "        subnets:\n        - name: a\n          role: control-plane\n        - name: b\n          role: control-plane\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.subnets[1].role",
        "a second control-plane subnet (a is the first); expected exactly one",
    );
}

#[test]
fn azure_vnet_without_its_resource_group_is_rejected() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        networkResourceGroupName: network-rg\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.networkResourceGroupName",
        "missing; expected the resource group of virtualNetwork mycluster-vnet",
    );
}

#[test]
fn azure_vnet_without_a_compute_subnet_is_rejected() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.computeSubnet",
        "missing; with virtualNetwork mycluster-vnet expected a subnet with role node",
    );
}

#[test]
fn azure_subnet_without_a_vnet_is_rejected() {
    let dir = broken(
        "azure-default-network",
        CLUSTER_CONFIG,
        "        baseDomainResourceGroupName: dns-rg\n",
        "        baseDomainResourceGroupName: dns-rg\n        computeSubnet: my-subnet\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.computeSubnet",
        "set without platform.azure.virtualNetwork",
    );
    assert!(err.problem.contains("mycluster-7xk2p-vnet"), "{err}");
}

#[test]
fn gcp_installer_network_takes_the_installers_default_names() {
    let spec = load_fixture("gcp-default-network");
    assert_common_fields(&spec);
    let Platform::Gcp(gcp) = &spec.platform else {
        panic!("expected gcp, got {:?}", spec.platform);
    };
    assert_eq!(gcp.project, "example-project");
    assert_eq!(gcp.network, "mycluster-7xk2p-network");
    assert_eq!(gcp.control_plane_subnet, "mycluster-7xk2p-master-subnet");
    assert_eq!(gcp.compute_subnet, "mycluster-7xk2p-worker-subnet");
    assert_eq!(
        sources(&spec),
        [
            (
                "network",
                "mycluster-7xk2p-network",
                "default name (<infra-id>-network)"
            ),
            (
                "control-plane subnet",
                "mycluster-7xk2p-master-subnet",
                "default name (<infra-id>-master-subnet)"
            ),
            (
                "compute subnet",
                "mycluster-7xk2p-worker-subnet",
                "default name (<infra-id>-worker-subnet)"
            ),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
}

#[test]
fn gcp_network_without_its_subnets_is_rejected() {
    let dir = broken(
        "gcp",
        CLUSTER_CONFIG,
        "        controlPlaneSubnet: mycluster-master-subnet\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.gcp.controlPlaneSubnet",
        "missing; expected the name of a subnet of network mycluster-network",
    );
}

// ---- GCP Shared VPC ----------------------------------------------------------------------------

#[test]
fn gcp_shared_vpc_takes_the_subnetwork_from_the_host_project_and_keeps_the_service_project() {
    let spec = load_fixture("gcp-shared-vpc");
    let Platform::Gcp(gcp) = &spec.platform else {
        panic!("expected gcp, got {:?}", spec.platform);
    };
    assert_eq!(gcp.project, "example-project");
    assert_eq!(gcp.network_project.as_deref(), Some("example-host-project"));
    assert_eq!(gcp.subnetwork_project(), "example-host-project");
    assert_eq!(
        gcp.compute_subnetwork_url(),
        "projects/example-host-project/regions/us-central1/subnetworks/ocp-compute"
    );
    assert!(
        sources(&spec).contains(&(
            "network project (Shared VPC host)".into(),
            "example-host-project".into(),
            "install-config platform.gcp.networkProjectID".into()
        )),
        "{:?}",
        sources(&spec)
    );
    let plain = load_fixture("gcp");
    let Platform::Gcp(gcp) = &plain.platform else {
        panic!("expected gcp");
    };
    assert_eq!(gcp.network_project, None);
    assert_eq!(
        gcp.compute_subnetwork_url(),
        "projects/example-project/regions/us-central1/subnetworks/mycluster-worker-subnet"
    );
}

/// The installer's rules for networkProjectID: a named network, and credentials Manual or
/// Passthrough.
#[test]
fn gcp_shared_vpc_without_its_network_or_with_mint_credentials_is_rejected() {
    let dir = broken(
        "gcp-shared-vpc",
        CLUSTER_CONFIG,
        "        network: shared-vpc\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.gcp.network",
        "missing; networkProjectID example-host-project (Shared VPC) needs the name of the network it shares",
    );
    for (to, found) in [
        ("    credentialsMode: Mint\n", "is \"Mint\""),
        ("", "missing"),
    ] {
        let dir = broken(
            "gcp-shared-vpc",
            CLUSTER_CONFIG,
            "    credentialsMode: Passthrough\n",
            to,
        );
        let err = load_err(dir.path(), CLUSTER_CONFIG);
        assert_problem(
            &err,
            "data.install-config: credentialsMode",
            &format!(
                "{found}; platform.gcp.networkProjectID (Shared VPC) needs Manual or Passthrough"
            ),
        );
    }
}

#[test]
fn gcp_subnet_without_a_network_is_rejected() {
    let dir = broken(
        "gcp-default-network",
        CLUSTER_CONFIG,
        "        region: us-central1\n",
        "        region: us-central1\n        computeSubnet: my-subnet\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.gcp.computeSubnet",
        "set without platform.gcp.network",
    );
}

// ---- AWS subnets settled from what EC2 reports (pure) ---------------------------------------

use bootstrap_cloud::subnets::{RouteTableFacts, SubnetFacts};

fn facts(
    id: &str,
    tags: &[(&str, &str)],
    route: Option<(&str, bool, Option<&str>)>,
) -> SubnetFacts {
    SubnetFacts {
        id: id.into(),
        vpc: "vpc-1".into(),
        zone: "us-east-1a".into(),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        route_table: route.map(|(id, main, igw)| RouteTableFacts {
            id: id.into(),
            main,
            internet_gateway: igw.map(str::to_string),
        }),
    }
}

const OWNED: (&str, &str) = ("kubernetes.io/cluster/mycluster-7xk2p", "owned");
const ELB: (&str, &str) = ("kubernetes.io/role/elb", "1");
const INTERNAL_ELB: (&str, &str) = ("kubernetes.io/role/internal-elb", "1");

fn resolve(fixture: &str, found: &[SubnetFacts]) -> Result<AwsSpec, InputError> {
    let spec = load_fixture(fixture);
    let lookup = lookup(&spec).clone();
    let subnets = lookup.resolve(&spec.infra_id, "us-east-1", spec.publish, found)?;
    let mut aws = aws_spec(&spec).clone();
    aws.subnets = subnets;
    Ok(aws)
}

fn known(aws: &AwsSpec) -> (&[AwsSubnet], &[String]) {
    match &aws.subnets {
        AwsSubnets::Known { subnets, ignored } => (subnets, ignored),
        AwsSubnets::Pending(_) => panic!("still pending"),
    }
}

#[test]
fn discovered_subnets_are_public_or_private_by_their_role_tags() {
    let aws = resolve(
        "aws-installer-vpc",
        &[
            facts("subnet-pub-b", &[OWNED, ELB], None),
            facts(
                "subnet-pub-a",
                &[OWNED, ("kubernetes.io/role/elb", "")],
                None,
            ),
            facts("subnet-prv-a", &[OWNED, INTERNAL_ELB], None),
            facts("subnet-edge", &[OWNED], None),
            facts(
                "subnet-off",
                &[OWNED, ("kubernetes.io/role/internal-elb", "0")],
                None,
            ),
        ],
    )
    .unwrap();
    assert_eq!(public(&aws), ["subnet-pub-a", "subnet-pub-b"]);
    assert_eq!(private(&aws), ["subnet-prv-a"]);
    let (subnets, ignored) = known(&aws);
    assert_eq!(ignored, ["subnet-edge", "subnet-off"]);
    let prv = subnets.iter().find(|s| s.id == "subnet-prv-a").unwrap();
    assert_eq!(
        prv.source,
        Source::DiscoveredByTag {
            tag: "kubernetes.io/cluster/mycluster-7xk2p=owned".into()
        }
    );
    assert_eq!(
        prv.classified_by,
        Classification::Tag {
            tag: "kubernetes.io/role/internal-elb=1".into()
        }
    );
}

#[test]
fn discovery_that_finds_nothing_says_what_it_looked_for() {
    let err = resolve("aws-installer-vpc", &[]).unwrap_err();
    assert!(err.file.ends_with(CLUSTER_CONFIG), "{err}");
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "no subnet in us-east-1 has the tag kubernetes.io/cluster/mycluster-7xk2p (owned or shared)",
    );
}

#[test]
fn discovery_without_an_internal_elb_subnet_is_rejected() {
    let err = resolve(
        "aws-installer-vpc",
        &[
            facts("subnet-pub", &[OWNED, ELB], None),
            facts("subnet-x", &[OWNED], None),
        ],
    )
    .unwrap_err();
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "of the subnets tagged kubernetes.io/cluster/mycluster-7xk2p in us-east-1 (subnet-pub, subnet-x), none has the tag kubernetes.io/role/internal-elb; the internal API load balancer needs at least one",
    );
}

#[test]
fn discovery_without_an_elb_subnet_is_rejected_when_the_api_is_external() {
    let err = resolve(
        "aws-installer-vpc",
        &[facts("subnet-prv", &[OWNED, INTERNAL_ELB], None)],
    )
    .unwrap_err();
    assert!(
        err.problem.contains(
            "none has the tag kubernetes.io/role/elb; publish External needs at least one"
        ),
        "{err}"
    );
}

/// The flat fixture's six subnets: private ones by the VPC's main table (or an explicit one
/// without a way out), public ones by a table routing 0.0.0.0/0 to an internet gateway.
fn flat_facts() -> Vec<SubnetFacts> {
    let mut found = Vec::new();
    for (i, id) in PRIVATE_SUBNETS.iter().enumerate() {
        let route = if i == 0 {
            ("rtb-private", false, None)
        } else {
            ("rtb-main", true, None)
        };
        found.push(facts(id, &[], Some(route)));
    }
    for id in PUBLIC_SUBNETS {
        found.push(facts(id, &[], Some(("rtb-public", false, Some("igw-1")))));
    }
    found
}

#[test]
fn listed_subnets_without_role_tags_are_classified_by_their_route_tables() {
    let aws = resolve("aws-flat-subnets", &flat_facts()).unwrap();
    assert_eq!(public(&aws), PUBLIC_SUBNETS);
    assert_eq!(private(&aws), PRIVATE_SUBNETS);
    let (subnets, ignored) = known(&aws);
    assert!(ignored.is_empty());
    let first_public = subnets.iter().find(|s| s.id == PUBLIC_SUBNETS[0]).unwrap();
    assert_eq!(
        first_public.source,
        Source::InstallConfig {
            field: "platform.aws.vpc.subnets[3].id".into()
        }
    );
    assert_eq!(
        first_public.classified_by.to_string(),
        "route table rtb-public: 0.0.0.0/0 -> igw-1"
    );
    let main = subnets.iter().find(|s| s.id == PRIVATE_SUBNETS[1]).unwrap();
    assert_eq!(
        main.classified_by.to_string(),
        "the VPC's main route table rtb-main: no 0.0.0.0/0 route to an internet gateway"
    );
}

#[test]
fn a_listed_subnets_role_tag_wins_over_its_route_table() {
    let mut found = flat_facts();
    // Routes to the internet, but tagged for internal load balancers only.
    found[3] = facts(PUBLIC_SUBNETS[0], &[INTERNAL_ELB], None);
    let aws = resolve("aws-flat-subnets", &found).unwrap();
    assert_eq!(public(&aws), &PUBLIC_SUBNETS[1..]);
    assert!(private(&aws).contains(&PUBLIC_SUBNETS[0]));
    let (subnets, _) = known(&aws);
    let tagged = subnets.iter().find(|s| s.id == PUBLIC_SUBNETS[0]).unwrap();
    assert_eq!(
        tagged.classified_by.to_string(),
        "tag kubernetes.io/role/internal-elb=1"
    );
}

#[test]
fn a_listed_subnet_ec2_does_not_know_names_its_entry() {
    let mut found = flat_facts();
    found.remove(1);
    let err = resolve("aws-flat-subnets", &found).unwrap_err();
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[1].id",
        "subnet-0a1b2c3d4e5f60002 not found in us-east-1",
    );
}

#[test]
fn a_listed_untagged_subnet_without_a_route_table_names_its_entry() {
    let mut found = flat_facts();
    found[2].route_table = None;
    let err = resolve("aws-flat-subnets", &found).unwrap_err();
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[2].id",
        "has no role tag, and no route table applies to it (no explicit association, and vpc-1 has no main route table)",
    );
}

#[test]
fn a_flat_list_with_only_public_subnets_is_rejected() {
    let found: Vec<SubnetFacts> = flat_facts()
        .into_iter()
        .map(|mut f| {
            f.route_table = Some(RouteTableFacts {
                id: "rtb-public".into(),
                main: false,
                internet_gateway: Some("igw-1".into()),
            });
            f
        })
        .collect();
    let err = resolve("aws-flat-subnets", &found).unwrap_err();
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "none of the listed subnets (subnet-0a1b2c3d4e5f60001, ",
    );
    assert!(
        err.problem
            .contains("is private (tag kubernetes.io/role/internal-elb, or without role tags no 0.0.0.0/0 route to an internet gateway)"),
        "{err}"
    );
}

#[test]
fn offline_planning_of_subnets_to_discover_is_refused_with_the_reason() {
    let spec = load_fixture("aws-installer-vpc");
    let err = lookup(&spec).offline_error(&spec.infra_id);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "absent (installer-made VPC): the subnets are discovered at run time by tag kubernetes.io/cluster/mycluster-7xk2p",
    );
    let spec = load_fixture("aws-flat-subnets");
    let err = lookup(&spec).offline_error(&spec.infra_id);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "lists subnets without roles; each is classified at run time",
    );
}

mod zones;
