//! Azure `cloudName` / `armEndpoint`: read from the install-config or the Infrastructure
//! manifest, refused as the installer refuses them.

use super::*;
use bootstrap_cloud::azure_cloud::AzureCloud;

fn cloud_of(name: &str) -> AzureCloud {
    match load_fixture(name).platform {
        Platform::Azure(azure) => azure.cloud,
        other => panic!("{name}: not Azure: {other:?}"),
    }
}

const IC: &str = "manifests/cluster-config.yaml";
const INFRA: &str = "manifests/cluster-infrastructure-02-config.yml";

#[test]
fn each_fixture_names_its_cloud() {
    assert_eq!(cloud_of("azure"), AzureCloud::AzurePublicCloud);
    assert_eq!(cloud_of("azure-usgov"), AzureCloud::AzureUSGovernmentCloud);
    assert_eq!(
        cloud_of("azure-stack"),
        AzureCloud::AzureStackCloud {
            arm_endpoint: "https://management.local.azurestack.external/".into()
        }
    );
}

#[test]
fn the_infrastructure_manifest_names_the_cloud_when_the_install_config_does_not() {
    let spec = load_broken(
        "azure-usgov",
        IC,
        "        cloudName: AzureUSGovernmentCloud\n",
        "",
    );
    match spec.platform {
        Platform::Azure(azure) => assert_eq!(azure.cloud, AzureCloud::AzureUSGovernmentCloud),
        other => panic!("{other:?}"),
    }
}

#[test]
fn clouds_the_installer_refuses_are_refused_naming_the_field() {
    assert_refusals(&[
        Refusal {
            case: "an unknown cloud",
            fixture: "azure",
            file: IC,
            from: "cloudName: AzurePublicCloud",
            to: "cloudName: AzureCloud",
            field: "data.install-config: platform.azure.cloudName",
            problem_has: &["\"AzureCloud\" is not supported"],
        },
        Refusal {
            case: "the closed German cloud, with the reason",
            fixture: "azure",
            file: IC,
            from: "cloudName: AzurePublicCloud",
            to: "cloudName: AzureGermanCloud",
            field: "data.install-config: platform.azure.cloudName",
            problem_has: &["closed on 2021-10-29"],
        },
        Refusal {
            case: "Azure Stack Hub without its ARM endpoint",
            fixture: "azure-stack",
            file: IC,
            from: "        armEndpoint: https://management.local.azurestack.external\n",
            to: "",
            field: "data.install-config: platform.azure.armEndpoint",
            problem_has: &["missing"],
        },
        Refusal {
            case: "an ARM endpoint with another cloud",
            fixture: "azure-usgov",
            file: IC,
            from: "        cloudName: AzureUSGovernmentCloud\n",
            to: "        cloudName: AzureUSGovernmentCloud\n        armEndpoint: https://management.usgovcloudapi.net\n",
            field: "data.install-config: platform.azure.armEndpoint",
            problem_has: &["must not be set when the cloud name is AzureUSGovernmentCloud"],
        },
        Refusal {
            case: "manifests that disagree on the cloud",
            fixture: "azure-usgov",
            file: INFRA,
            from: "cloudName: AzureUSGovernmentCloud",
            to: "cloudName: AzurePublicCloud",
            field: "status.platformStatus.azure.cloudName",
            problem_has: &["expected the same"],
        },
    ]);
}
