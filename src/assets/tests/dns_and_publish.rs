//! User-managed DNS and publish Mixed, read as the installer reads them.

use super::*;

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
    refused(
        "aws-user-dns",
        CLUSTER_CONFIG,
        "userProvisionedDNS: Enabled",
        "userProvisionedDNS: enabled",
        "data.install-config: platform.aws.userProvisionedDNS",
        "expected Enabled or Disabled, found \"enabled\"",
    );
    refused(
        "aws-user-dns",
        INFRASTRUCTURE,
        "dnsType: ClusterHosted",
        "dnsType: UserHosted",
        "status.platformStatus.aws.cloudLoadBalancerConfig.dnsType",
        "expected PlatformDefault or ClusterHosted, found \"UserHosted\"",
    );
    refused(
        "aws-user-dns",
        INFRASTRUCTURE,
        "dnsType: ClusterHosted",
        "dnsType: PlatformDefault",
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
        refused(
            fixture,
            CLUSTER_CONFIG,
            from,
            &to,
            &format!("data.install-config: {field}"),
            problem,
        );
    }
}
