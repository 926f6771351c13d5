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
    let dir = broken(
        "azure-usgov",
        IC,
        "        cloudName: AzureUSGovernmentCloud\n",
        "",
    );
    match load(dir.path()).unwrap().platform {
        Platform::Azure(azure) => assert_eq!(azure.cloud, AzureCloud::AzureUSGovernmentCloud),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_cloud_is_refused_naming_the_field() {
    refused(
        "azure",
        IC,
        "cloudName: AzurePublicCloud",
        "cloudName: AzureCloud",
        "data.install-config: platform.azure.cloudName",
        "\"AzureCloud\" is not supported",
    );
}

#[test]
fn the_closed_german_cloud_is_refused_with_the_reason() {
    refused(
        "azure",
        IC,
        "cloudName: AzurePublicCloud",
        "cloudName: AzureGermanCloud",
        "data.install-config: platform.azure.cloudName",
        "closed on 2021-10-29",
    );
}

#[test]
fn stack_without_its_arm_endpoint_is_refused() {
    refused(
        "azure-stack",
        IC,
        "        armEndpoint: https://management.local.azurestack.external\n",
        "",
        "data.install-config: platform.azure.armEndpoint",
        "missing",
    );
}

#[test]
fn an_arm_endpoint_with_another_cloud_is_refused() {
    refused(
        "azure-usgov",
        IC,
        "        cloudName: AzureUSGovernmentCloud\n",
        "        cloudName: AzureUSGovernmentCloud\n        armEndpoint: https://management.usgovcloudapi.net\n",
        "data.install-config: platform.azure.armEndpoint",
        "must not be set when the cloud name is AzureUSGovernmentCloud",
    );
}

#[test]
fn manifests_that_disagree_on_the_cloud_are_refused() {
    refused(
        "azure-usgov",
        INFRA,
        "cloudName: AzureUSGovernmentCloud",
        "cloudName: AzurePublicCloud",
        "status.platformStatus.azure.cloudName",
        "expected the same",
    );
}
