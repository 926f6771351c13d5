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
    let spec = load_broken(
        "aws-user-dns",
        CLUSTER_CONFIG,
        "        userProvisionedDNS: Enabled\n",
        "        userProvisionedDNS: Disabled\n",
    );
    assert_eq!(
        spec.user_managed_dns(),
        Some(
            "manifests/cluster-infrastructure-02-config.yml status.platformStatus.aws.cloudLoadBalancerConfig.dnsType: ClusterHosted"
        )
    );
}

#[test]
fn user_provisioned_dns_is_read_on_gcp_and_azure_too() {
    let gcp = load_broken(
        "gcp",
        CLUSTER_CONFIG,
        "        projectID: example-project\n",
        "        projectID: example-project\n        userProvisionedDNS: Enabled\n",
    );
    assert_eq!(
        gcp.user_managed_dns(),
        Some("install-config platform.gcp.userProvisionedDNS: Enabled")
    );
    let azure = load_broken(
        "azure",
        INFRASTRUCTURE,
        "      cloudName: AzurePublicCloud\n",
        "      cloudName: AzurePublicCloud\n      cloudLoadBalancerConfig:\n        dnsType: ClusterHosted\n",
    );
    assert!(azure.user_managed_dns().is_some());
    let disabled = load_broken(
        "azure-mixed-api-external",
        CLUSTER_CONFIG,
        "        region: eastus\n",
        "        region: eastus\n        userProvisionedDNS: Disabled\n",
    );
    assert_eq!(disabled.dns, DnsManagement::Cloud);
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
    let spec = load_broken(
        "azure-mixed-api-internal",
        CLUSTER_CONFIG,
        "      ingress: External\n",
        "",
    );
    assert_eq!(
        spec.publish,
        Publish::Mixed {
            apiserver: Exposure::Internal,
            ingress: Exposure::External
        }
    );
    let spec = load_broken(
        "azure-mixed-api-internal",
        CLUSTER_CONFIG,
        "      apiserver: Internal\n",
        "      apiserver: \"\"\n",
    );
    assert!(spec.publish.public_api());
}

#[test]
fn empty_publish_is_external_as_in_the_installers_public_api_rule() {
    let spec = load_broken(
        "azure",
        CLUSTER_CONFIG,
        "    publish: External",
        "    publish: \"\"",
    );
    assert_eq!(spec.publish, Publish::External);
}

/// Each case the installer refuses.
#[test]
fn user_dns_publish_and_operator_publishing_strategy_are_refused_where_the_installer_refuses_them()
{
    let ops =
        "    operatorPublishingStrategy:\n      apiserver: External\n      ingress: Internal\n";
    let mixed = format!("    publish: Mixed\n{ops}");
    let external_with_ops = format!("    publish: External\n{ops}");
    assert_refusals(&[
        Refusal {
            case: "userProvisionedDNS in lower case",
            fixture: "aws-user-dns",
            file: CLUSTER_CONFIG,
            from: "userProvisionedDNS: Enabled",
            to: "userProvisionedDNS: enabled",
            field: "data.install-config: platform.aws.userProvisionedDNS",
            problem_has: &["expected Enabled or Disabled, found \"enabled\""],
        },
        Refusal {
            case: "an unknown dnsType",
            fixture: "aws-user-dns",
            file: INFRASTRUCTURE,
            from: "dnsType: ClusterHosted",
            to: "dnsType: UserHosted",
            field: "status.platformStatus.aws.cloudLoadBalancerConfig.dnsType",
            problem_has: &["expected PlatformDefault or ClusterHosted, found \"UserHosted\""],
        },
        Refusal {
            case: "dnsType PlatformDefault against userProvisionedDNS Enabled",
            fixture: "aws-user-dns",
            file: INFRASTRUCTURE,
            from: "dnsType: ClusterHosted",
            to: "dnsType: PlatformDefault",
            field: "status.platformStatus.aws.cloudLoadBalancerConfig.dnsType",
            problem_has: &[
                "is PlatformDefault, but the install-config's platform.aws.userProvisionedDNS is Enabled",
            ],
        },
        Refusal {
            case: "publish Mixed on aws",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "    publish: External\n",
            to: &mixed,
            field: "data.install-config: publish",
            problem_has: &["Mixed is supported only on platform azure, not aws"],
        },
        Refusal {
            case: "publish Mixed on gcp",
            fixture: "gcp",
            file: CLUSTER_CONFIG,
            from: "    publish: External\n",
            to: &mixed,
            field: "data.install-config: publish",
            problem_has: &["Mixed is supported only on platform azure, not gcp"],
        },
        Refusal {
            case: "publish Internal on none",
            fixture: "none",
            file: CLUSTER_CONFIG,
            from: "    publish: External\n",
            to: "    publish: Internal\n",
            field: "data.install-config: publish",
            problem_has: &["Internal is not supported on platform none"],
        },
        Refusal {
            case: "publish Mixed without operatorPublishingStrategy",
            fixture: "azure-mixed-api-internal",
            file: CLUSTER_CONFIG,
            from: "    operatorPublishingStrategy:\n      apiserver: Internal\n      ingress: External\n",
            to: "",
            field: "data.install-config: operatorPublishingStrategy",
            problem_has: &["missing; publish Mixed needs it"],
        },
        Refusal {
            case: "operatorPublishingStrategy with publish External",
            fixture: "azure",
            file: CLUSTER_CONFIG,
            from: "    publish: External\n",
            to: &external_with_ops,
            field: "data.install-config: operatorPublishingStrategy",
            problem_has: &["allowed only with publish Mixed, but publish is External"],
        },
        Refusal {
            case: "both sides Internal",
            fixture: "azure-mixed-api-internal",
            file: CLUSTER_CONFIG,
            from: "      ingress: External",
            to: "      ingress: Internal",
            field: "data.install-config: operatorPublishingStrategy",
            problem_has: &["both Internal"],
        },
        Refusal {
            case: "an apiserver side that is neither External nor Internal",
            fixture: "azure-mixed-api-internal",
            file: CLUSTER_CONFIG,
            from: "      apiserver: Internal",
            to: "      apiserver: Public",
            field: "data.install-config: operatorPublishingStrategy.apiserver",
            problem_has: &["expected External or Internal, found \"Public\""],
        },
        Refusal {
            case: "an ingress side that is a list",
            fixture: "azure-mixed-api-external",
            file: CLUSTER_CONFIG,
            from: "      ingress: Internal",
            to: "      ingress: [Internal]",
            field: "data.install-config: operatorPublishingStrategy.ingress",
            problem_has: &["expected External or Internal, found a list"],
        },
        Refusal {
            case: "operatorPublishingStrategy that is not a mapping",
            fixture: "azure-mixed-api-external",
            file: CLUSTER_CONFIG,
            from: "    operatorPublishingStrategy:\n      apiserver: External\n      ingress: Internal\n",
            to: "    operatorPublishingStrategy: External\n",
            field: "data.install-config: operatorPublishingStrategy",
            problem_has: &["expected a mapping with apiserver and ingress"],
        },
        Refusal {
            case: "publish that is a number",
            fixture: "azure",
            file: CLUSTER_CONFIG,
            from: "    publish: External",
            to: "    publish: 3",
            field: "data.install-config: publish",
            problem_has: &["expected External, Internal or Mixed, found a number"],
        },
    ]);
}
