//! `GET /metadata/endpoints?api-version=2019-05-01` (and later): ARM's list of the clouds it
//! knows, a JSON **array** of `{name, resourceManager, authentication.{loginEndpoint,
//! audiences, tenant, identityProvider}, suffixes, ...}`, with no token needed. Older
//! api-versions answer the single object Azure Stack Hub stamps publish (see `cloud`).
//! cloud-provider-azure's `resourceManagerEndpoint` knob reads the array and takes the entry
//! whose `name` is the cloud config's `cloud` (vendor `sigs.k8s.io/cloud-provider-azure/pkg/
//! azclient/cloud.go:42-104`, openshift/cloud-provider-azure d04449b95a54). The fake's entry
//! names its own ARM and authority, so a client that follows it stays on loopback.

use super::arm::Reply;
use super::cloud::SimCloud;
use serde_json::json;

/// Whether an api-version asks for the array (2019-05-01 and later; the dates compare as text).
pub fn wants_array(api_version: Option<&str>) -> bool {
    api_version.is_some_and(|v| v >= "2019-05-01")
}

/// The array: one entry, the cloud the fake is, reached at `arm` (as the client addressed it)
/// and `login` (the fake's authority).
pub fn clouds(cloud: SimCloud, arm: &str, login: &str) -> Reply {
    let name = match cloud {
        SimCloud::Public => "AzureCloud",
        SimCloud::UsGovernment => "AzureUSGovernment",
        SimCloud::Stack => "AzureStackCloud",
    };
    let audiences: Vec<String> = cloud.audiences().iter().map(|a| format!("{a}/")).collect();
    Reply::json(
        200,
        json!([{
            "name": name,
            "resourceManager": format!("{arm}/"),
            "authentication": {
                "loginEndpoint": format!("{login}/"),
                "audiences": audiences,
                "tenant": "common",
                "identityProvider": "AAD",
            },
            "suffixes": {"storage": "core.windows.net", "keyVaultDns": "vault.azure.net"},
        }]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_api_versions_get_an_array_naming_the_fake() {
        assert!(wants_array(Some("2019-05-01")));
        assert!(wants_array(Some("2022-09-01")));
        assert!(!wants_array(Some("2015-01-01")));
        assert!(!wants_array(None));
        let body = clouds(
            SimCloud::Public,
            "http://127.0.0.1:1",
            "https://127.0.0.1:2",
        )
        .body
        .unwrap_or_default();
        let entry = &body.as_array().map(|a| a[0].clone()).unwrap_or_default();
        assert_eq!(entry["name"], "AzureCloud");
        assert_eq!(entry["resourceManager"], "http://127.0.0.1:1/");
        assert_eq!(
            entry["authentication"]["loginEndpoint"],
            "https://127.0.0.1:2/"
        );
        assert_eq!(
            entry["authentication"]["audiences"][1],
            "https://management.core.windows.net/"
        );
    }
}
