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

/// Who manages DNS after each edit: (case, fixture, file, from, to, the input that makes it
/// the user's, or None for the agent).
#[test]
fn user_managed_dns_is_read_from_either_manifest_on_every_cloud() {
    let cases = [
        (
            // As a UPI install's would.
            "the Infrastructure manifest's dnsType alone",
            "aws-user-dns",
            CLUSTER_CONFIG,
            "        userProvisionedDNS: Enabled\n",
            "        userProvisionedDNS: Disabled\n",
            Some(
                "manifests/cluster-infrastructure-02-config.yml status.platformStatus.aws.cloudLoadBalancerConfig.dnsType: ClusterHosted",
            ),
        ),
        (
            "userProvisionedDNS on gcp",
            "gcp",
            CLUSTER_CONFIG,
            "        projectID: example-project\n",
            "        projectID: example-project\n        userProvisionedDNS: Enabled\n",
            Some("install-config platform.gcp.userProvisionedDNS: Enabled"),
        ),
        (
            "dnsType ClusterHosted on azure",
            "azure",
            INFRASTRUCTURE,
            "      cloudName: AzurePublicCloud\n",
            "      cloudName: AzurePublicCloud\n      cloudLoadBalancerConfig:\n        dnsType: ClusterHosted\n",
            Some(
                "manifests/cluster-infrastructure-02-config.yml status.platformStatus.azure.cloudLoadBalancerConfig.dnsType: ClusterHosted",
            ),
        ),
        (
            "userProvisionedDNS Disabled on azure",
            "azure-mixed-api-external",
            CLUSTER_CONFIG,
            "        region: eastus\n",
            "        region: eastus\n        userProvisionedDNS: Disabled\n",
            None,
        ),
    ];
    for (case, fixture, file, from, to, because) in cases {
        let spec = load_broken(fixture, file, from, to);
        assert_eq!(spec.user_managed_dns(), because, "{case}");
    }
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

/// What publish is after each edit: (case, fixture, from, to in the install-config, publish).
#[test]
fn empty_or_absent_publish_sides_are_external_as_the_installer_fills_them_in() {
    let cases = [
        (
            "a Mixed ingress side left out",
            "azure-mixed-api-internal",
            "      ingress: External\n",
            "",
            Publish::Mixed {
                apiserver: Exposure::Internal,
                ingress: Exposure::External,
            },
        ),
        (
            "an empty Mixed apiserver side",
            "azure-mixed-api-internal",
            "      apiserver: Internal\n",
            "      apiserver: \"\"\n",
            Publish::Mixed {
                apiserver: Exposure::External,
                ingress: Exposure::External,
            },
        ),
        (
            // The installer's public API rule reads an empty publish as External.
            "an empty publish",
            "azure",
            "    publish: External",
            "    publish: \"\"",
            Publish::External,
        ),
    ];
    for (case, fixture, from, to, publish) in cases {
        let spec = load_broken(fixture, CLUSTER_CONFIG, from, to);
        assert_eq!(spec.publish, publish, "{case}");
    }
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
