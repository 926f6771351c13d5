//! Fixtures that load: what each platform's asset dir yields.

use super::*;

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
    let azure = azure_spec(spec);
    assert_eq!(azure.region, "eastus");
    assert_eq!(azure.resource_group, "mycluster-7xk2p-rg");
    assert_eq!(azure.base_domain_resource_group, "dns-rg");
    assert_eq!(azure.network_resource_group, "network-rg");
    assert_eq!(azure.virtual_network, "mycluster-vnet");
    assert_eq!(azure.compute_subnet, "mycluster-worker-subnet");
    assert_eq!(azure.control_plane_subnet, "mycluster-master-subnet");
    assert_sources(
        spec,
        "resource group         | mycluster-7xk2p-rg      | install-config platform.azure.resourceGroupName
         network resource group | network-rg              | install-config platform.azure.networkResourceGroupName
         virtual network        | mycluster-vnet          | install-config platform.azure.virtualNetwork
         control-plane subnet   | mycluster-master-subnet | install-config platform.azure.controlPlaneSubnet
         compute subnet         | mycluster-worker-subnet | install-config platform.azure.computeSubnet",
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
    let gcp = gcp_spec(&spec);
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
    let dir = without("aws", CREDS_SECRET);
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
    let spec = load_broken(
        "gcp",
        CLUSTER_CONFIG,
        "baseDomain: example.com",
        "baseDomain: example.com.",
    );
    assert_eq!(spec.base_domain, "example.com");
    assert_eq!(spec.cluster_domain(), "mycluster.example.com");
}

#[test]
fn publish_and_replicas_default_when_absent() {
    let spec = load_broken("gcp", CLUSTER_CONFIG, "    publish: External\n", "");
    assert_eq!(spec.publish, Publish::External);
    let spec = load_broken(
        "gcp",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "    compute:",
    );
    assert_eq!(spec.control_plane_replicas, 3);
}
