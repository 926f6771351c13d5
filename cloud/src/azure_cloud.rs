//! Which Azure cloud the cluster lives in (`platform.azure.cloudName`, + `armEndpoint` on Azure
//! Stack Hub), and the endpoints each one answers on.
//!
//! The installer maps the name to go-autorest's environments (openshift/installer
//! `pkg/asset/installconfig/azure/session.go`: `EnvironmentFromName`, and for
//! `AzureStackCloud` `EnvironmentFromURL(armEndpoint)`), whose values are those of
//! Azure/go-autorest `autorest/azure/environments.go` and the azure-sdk-for-go `azcore/cloud`
//! configurations: the ARM endpoint, the Entra ID (login) authority and the token audience,
//! which for ARM is the ARM endpoint itself. Azure Stack Hub publishes its own in
//! `<armEndpoint>/metadata/endpoints?api-version=1.0` (`authentication.loginEndpoint`,
//! `authentication.audiences[0]`), which the Azure provider reads at start
//! (`azure::environment`). Always compiled: the asset reader validates the name without the
//! Azure SDK.

use serde::Serialize;

/// A cloud the installer accepts (openshift/installer `pkg/types/azure/platform.go`,
/// `validation/platform.go` `validCloudNames`), less `AzureGermanCloud`: Microsoft Cloud
/// Deutschland closed on 2021-10-29 and its endpoints are gone (see [`GERMAN_CLOUD`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "name")]
pub enum AzureCloud {
    AzurePublicCloud,
    AzureUSGovernmentCloud,
    AzureChinaCloud,
    /// Azure Stack Hub: ARM is the stamp's own endpoint; the rest comes from its metadata.
    AzureStackCloud {
        arm_endpoint: String,
    },
}

/// The name the installer still accepts for Microsoft Cloud Deutschland.
pub const GERMAN_CLOUD: &str = "AzureGermanCloud";

/// Where ARM calls go, where tokens come from, and which audience they are asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AzureEndpoints {
    /// ARM base URL, e.g. `https://management.usgovcloudapi.net/`.
    pub resource_manager: String,
    /// Entra ID authority host, e.g. `https://login.microsoftonline.us/`.
    pub authority_host: String,
    /// The token audience; the scope asked for is `<audience>/.default`.
    pub audience: String,
}

impl AzureEndpoints {
    fn of(resource_manager: &str, authority_host: &str) -> Self {
        Self {
            resource_manager: resource_manager.to_string(),
            authority_host: authority_host.to_string(),
            // go-autorest's TokenAudience for the named clouds is the ARM endpoint.
            audience: resource_manager.to_string(),
        }
    }

    /// The OAuth2 scope for ARM tokens: the audience without its trailing `/`, + `/.default`.
    pub fn scope(&self) -> String {
        format!("{}/.default", self.audience.trim_end_matches('/'))
    }
}

impl AzureCloud {
    /// The installer's name for it.
    pub fn name(&self) -> &'static str {
        match self {
            AzureCloud::AzurePublicCloud => "AzurePublicCloud",
            AzureCloud::AzureUSGovernmentCloud => "AzureUSGovernmentCloud",
            AzureCloud::AzureChinaCloud => "AzureChinaCloud",
            AzureCloud::AzureStackCloud { .. } => "AzureStackCloud",
        }
    }

    /// Parses `cloudName` (empty or absent: the installer's default, AzurePublicCloud) with
    /// `armEndpoint`, validated as the installer validates them. Err: (field, problem), the
    /// field relative to `platform.azure`.
    pub fn parse(
        cloud_name: Option<&str>,
        arm_endpoint: Option<&str>,
    ) -> Result<Self, (&'static str, String)> {
        let arm_endpoint = arm_endpoint.map(str::trim).filter(|s| !s.is_empty());
        let cloud = match cloud_name.map(str::trim).unwrap_or("") {
            "" | "AzurePublicCloud" => AzureCloud::AzurePublicCloud,
            "AzureUSGovernmentCloud" => AzureCloud::AzureUSGovernmentCloud,
            "AzureChinaCloud" => AzureCloud::AzureChinaCloud,
            "AzureStackCloud" => {
                let Some(arm) = arm_endpoint else {
                    return Err((
                        "armEndpoint",
                        "missing; expected the Azure Stack Hub ARM endpoint (https://management.<region>.<fqdn>) with cloudName AzureStackCloud, as the installer requires".into(),
                    ));
                };
                return Ok(AzureCloud::AzureStackCloud {
                    arm_endpoint: check_arm_endpoint(arm).map_err(|p| ("armEndpoint", p))?,
                });
            }
            GERMAN_CLOUD => {
                return Err((
                    "cloudName",
                    "AzureGermanCloud: Microsoft Cloud Deutschland closed on 2021-10-29 and its endpoints no longer answer; expected AzurePublicCloud (Germany's regions are public Azure now), AzureUSGovernmentCloud, AzureChinaCloud or AzureStackCloud".into(),
                ));
            }
            other => {
                return Err((
                    "cloudName",
                    format!(
                        "{other:?} is not supported; expected one of AzurePublicCloud, AzureUSGovernmentCloud, AzureChinaCloud, AzureStackCloud"
                    ),
                ));
            }
        };
        if arm_endpoint.is_some() {
            return Err((
                "armEndpoint",
                format!(
                    "must not be set when the cloud name is {}; expected it only with AzureStackCloud (as the installer requires)",
                    cloud.name()
                ),
            ));
        }
        Ok(cloud)
    }

    /// The endpoints of a named cloud; None for Azure Stack Hub, whose come from its metadata.
    pub fn known_endpoints(&self) -> Option<AzureEndpoints> {
        match self {
            AzureCloud::AzurePublicCloud => Some(AzureEndpoints::of(
                "https://management.azure.com/",
                "https://login.microsoftonline.com/",
            )),
            AzureCloud::AzureUSGovernmentCloud => Some(AzureEndpoints::of(
                "https://management.usgovcloudapi.net/",
                "https://login.microsoftonline.us/",
            )),
            AzureCloud::AzureChinaCloud => Some(AzureEndpoints::of(
                "https://management.chinacloudapi.cn/",
                "https://login.chinacloudapi.cn/",
            )),
            AzureCloud::AzureStackCloud { .. } => None,
        }
    }

    /// Azure Stack Hub has no Azure Private DNS: every record goes into the base-domain zone.
    pub fn has_private_dns(&self) -> bool {
        !matches!(self, AzureCloud::AzureStackCloud { .. })
    }
}

/// An ARM endpoint: an https URL with a host and no query (a path is kept, as go-autorest
/// appends `/metadata/endpoints` to whatever it is given). Plain http only to a loopback
/// address (the local fakes).
pub fn check_arm_endpoint(raw: &str) -> Result<String, String> {
    let (scheme, rest) = raw
        .split_once("://")
        .ok_or_else(|| format!("{raw:?} has no scheme; expected an https:// URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    if host.is_empty() {
        return Err(format!("{raw:?} has no host; expected an https:// URL"));
    }
    if rest.contains(['?', '#']) {
        return Err(format!(
            "{raw:?} has a query or fragment; expected a base URL"
        ));
    }
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match scheme {
        "https" => {}
        "http" if loopback => {}
        other => {
            return Err(format!(
                "{raw:?} has scheme {other}; expected https (plain http only to a loopback address)"
            ));
        }
    }
    Ok(format!("{}/", raw.trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_named_cloud_has_its_documented_endpoints_and_audience() {
        let gov = AzureCloud::parse(Some("AzureUSGovernmentCloud"), None)
            .unwrap()
            .known_endpoints()
            .unwrap();
        assert_eq!(
            gov.resource_manager,
            "https://management.usgovcloudapi.net/"
        );
        assert_eq!(gov.authority_host, "https://login.microsoftonline.us/");
        assert_eq!(gov.scope(), "https://management.usgovcloudapi.net/.default");
        let china = AzureCloud::AzureChinaCloud.known_endpoints().unwrap();
        assert_eq!(
            china.resource_manager,
            "https://management.chinacloudapi.cn/"
        );
        assert_eq!(china.authority_host, "https://login.chinacloudapi.cn/");
        let public = AzureCloud::parse(None, None).unwrap();
        assert_eq!(public, AzureCloud::AzurePublicCloud);
        let e = public.known_endpoints().unwrap();
        assert_eq!(e.resource_manager, "https://management.azure.com/");
        assert_eq!(e.authority_host, "https://login.microsoftonline.com/");
        assert_eq!(e.scope(), "https://management.azure.com/.default");
        assert_eq!(AzureCloud::parse(Some(""), None).unwrap(), public);
    }

    #[test]
    fn stack_needs_its_arm_endpoint_and_others_refuse_one() {
        let stack = AzureCloud::parse(
            Some("AzureStackCloud"),
            Some("https://management.local.azurestack.external"),
        )
        .unwrap();
        assert_eq!(
            stack,
            AzureCloud::AzureStackCloud {
                arm_endpoint: "https://management.local.azurestack.external/".into()
            }
        );
        assert!(stack.known_endpoints().is_none());
        assert!(!stack.has_private_dns());
        assert!(AzureCloud::AzureUSGovernmentCloud.has_private_dns());
        let (field, problem) = AzureCloud::parse(Some("AzureStackCloud"), None).unwrap_err();
        assert_eq!(field, "armEndpoint");
        assert!(problem.contains("missing"), "{problem}");
        let (field, problem) = AzureCloud::parse(
            Some("AzureUSGovernmentCloud"),
            Some("https://management.usgovcloudapi.net"),
        )
        .unwrap_err();
        assert_eq!(field, "armEndpoint");
        assert!(problem.contains("must not be set"), "{problem}");
    }

    #[test]
    fn unknown_and_closed_clouds_are_refused_by_name() {
        let (field, problem) = AzureCloud::parse(Some("AzureCloud"), None).unwrap_err();
        assert_eq!(field, "cloudName");
        assert!(
            problem.contains("\"AzureCloud\" is not supported"),
            "{problem}"
        );
        let (field, problem) = AzureCloud::parse(Some(GERMAN_CLOUD), None).unwrap_err();
        assert_eq!(field, "cloudName");
        assert!(problem.contains("closed on 2021-10-29"), "{problem}");
    }

    #[test]
    fn arm_endpoints_must_be_https_except_to_loopback() {
        assert_eq!(
            check_arm_endpoint("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/"
        );
        assert!(check_arm_endpoint("http://management.example.com").is_err());
        assert!(check_arm_endpoint("management.example.com").is_err());
        assert!(check_arm_endpoint("https://").is_err());
        assert!(check_arm_endpoint("https://m.example.com/?x=1").is_err());
        assert_eq!(
            check_arm_endpoint("https://m.example.com:8443/").unwrap(),
            "https://m.example.com:8443/"
        );
    }
}
