//! Fixtures that load: what each platform's asset dir yields.

use super::*;

/// What each fixture says at the top: (fixture, platform, publish, address families, with the
/// fixture's capabilities or none).
#[test]
fn each_fixture_gives_its_platform_publish_address_families_and_capabilities() {
    let ipv4 = [IpFamily::Ipv4];
    let dual_stack = [IpFamily::Ipv4, IpFamily::Ipv6];
    for (fixture, platform, publish, families, with_capabilities) in [
        ("aws", "aws", Publish::External, &ipv4[..], true),
        ("aws-internal", "aws", Publish::Internal, &ipv4, true),
        // Both families from the machine networks, IPv4 first.
        ("aws-dualstack", "aws", Publish::External, &dual_stack, true),
        ("azure", "azure", Publish::External, &ipv4, true),
        (
            "azure-dualstack",
            "azure",
            Publish::External,
            &dual_stack,
            true,
        ),
        ("gcp", "gcp", Publish::External, &ipv4, true),
        ("none", "none", Publish::External, &ipv4, false),
    ] {
        let spec = load_fixture(fixture);
        assert_common_fields(&spec);
        assert_eq!(spec.platform_name(), platform, "{fixture}");
        assert_eq!(spec.publish, publish, "{fixture}");
        assert_eq!(spec.ip_families, families, "{fixture}");
        let capabilities = with_capabilities.then(fixture_capabilities).flatten();
        assert_eq!(spec.capabilities, capabilities, "{fixture}");
    }
}

#[test]
fn aws_external_reads_subnets_by_role_and_keys_from_the_secret() {
    let spec = load_fixture("aws");
    let aws = aws_spec(&spec);
    assert_eq!(aws.region, "us-east-1");
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
}

/// The AWS fixtures' subnets by role (an internal API has no public subnets), and the keys of
/// their creds secret.
#[test]
fn aws_fixtures_read_subnets_by_role_and_keys_from_the_secret() {
    for (fixture, public_subnets) in [
        ("aws", &PUBLIC_SUBNETS[..]),
        ("aws-internal", &[]),
        ("aws-dualstack", &PUBLIC_SUBNETS),
    ] {
        let spec = load_fixture(fixture);
        let aws = aws_spec(&spec);
        assert_eq!(public(aws), public_subnets, "{fixture}");
        assert_eq!(private(aws), PRIVATE_SUBNETS, "{fixture}");
        assert_aws_keys_from_secret(&spec);
    }
}

#[test]
fn azure_fixtures_read_resource_groups_network_and_the_service_principal() {
    for fixture in ["azure", "azure-dualstack"] {
        let spec = load_fixture(fixture);
        let azure = azure_spec(&spec);
        assert_eq!(azure.region, "eastus");
        assert_eq!(azure.base_domain_resource_group, "dns-rg");
        assert_network(
            fixture,
            &spec,
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
}

#[test]
fn gcp_reads_project_region_network_and_subnet() {
    let spec = load_fixture("gcp");
    let gcp = gcp_spec(&spec);
    assert_eq!(gcp.project, "example-project");
    assert_eq!(gcp.region, "us-central1");
    assert_network(
        "gcp",
        &spec,
        "network              | mycluster-network       | install-config platform.gcp.network
         control-plane subnet | mycluster-master-subnet | install-config platform.gcp.controlPlaneSubnet
         compute subnet       | mycluster-worker-subnet | install-config platform.gcp.computeSubnet",
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
    assert!(matches!(spec.platform, Platform::None));
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
