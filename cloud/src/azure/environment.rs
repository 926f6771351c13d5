//! The endpoints the Azure provider talks to: derived from the cluster's cloud
//! ([`AzureCloud`]), with environment overrides for tests and private endpoints.
//!
//! - A named cloud has fixed endpoints ([`AzureCloud::known_endpoints`]).
//! - Azure Stack Hub: `GET <armEndpoint>/metadata/endpoints?api-version=1.0`, unauthenticated,
//!   as go-autorest's `EnvironmentFromURL` does for the installer: the authority is
//!   `authentication.loginEndpoint`, the token audience `authentication.audiences[0]`.
//! - Overrides: `BOOTSTRAP_AGENT_AZURE_ARM_ENDPOINT` / `BOOTSTRAP_AGENT_AZURE_AUTHORITY_HOST`
//!   replace the URL only (the audience stays the cloud's: ARM checks it whatever the path);
//!   `BOOTSTRAP_AGENT_AZURE_CA_FILE` adds trusted roots; `BOOTSTRAP_AGENT_AZURE_RESOLVE`
//!   (`host=ip:port,...`) pins host names to addresses, so a test can serve a cloud's real
//!   host names from a local fake and prove the names were derived, not given.

use super::{CA_FILE_ENV, RESOLVE_ENV};
use crate::CloudError;
use crate::azure_cloud::{AzureCloud, AzureEndpoints, check_arm_endpoint};
use serde_json::Value;
use std::net::SocketAddr;

pub const ARM_ENDPOINT_ENV: &str = "BOOTSTRAP_AGENT_AZURE_ARM_ENDPOINT";
pub const AUTHORITY_HOST_ENV: &str = "BOOTSTRAP_AGENT_AZURE_AUTHORITY_HOST";

/// The API version go-autorest asks the metadata endpoint for.
pub const METADATA_API: &str = "1.0";

/// What the environment overrides (all optional).
#[derive(Debug, Clone, Default)]
pub struct EndpointOverrides {
    pub arm: Option<String>,
    pub authority: Option<String>,
    pub ca_pem: Option<Vec<u8>>,
    pub resolve: Vec<(String, SocketAddr)>,
}

fn bad_env(var: &str, problem: impl std::fmt::Display) -> CloudError {
    CloudError::fatal("azure", format!("{var}: {problem}"))
}

impl EndpointOverrides {
    pub fn from_env() -> Result<Self, CloudError> {
        let text = |var: &str| std::env::var(var).ok().filter(|v| !v.trim().is_empty());
        let ca_pem =
            match std::env::var_os(CA_FILE_ENV) {
                Some(path) => Some(std::fs::read(&path).map_err(|e| {
                    bad_env(CA_FILE_ENV, format!("{}: {e}", path.to_string_lossy()))
                })?),
                None => None,
            };
        let resolve = match text(RESOLVE_ENV) {
            Some(list) => parse_resolve(&list).map_err(|p| bad_env(RESOLVE_ENV, p))?,
            None => Vec::new(),
        };
        Ok(Self {
            arm: text(ARM_ENDPOINT_ENV),
            authority: text(AUTHORITY_HOST_ENV),
            ca_pem,
            resolve,
        })
    }

    /// The one HTTP client for the metadata, token and ARM calls.
    pub fn http_client(&self) -> Result<reqwest::Client, CloudError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none());
        if let Some(pem) = &self.ca_pem {
            let certs =
                reqwest::Certificate::from_pem_bundle(pem).map_err(|e| bad_env(CA_FILE_ENV, e))?;
            builder = builder.tls_certs_merge(certs);
        }
        for (host, addr) in &self.resolve {
            builder = builder.resolve(host, *addr);
        }
        builder
            .build()
            .map_err(|e| CloudError::fatal("azure", format!("cannot build the HTTP client: {e}")))
    }
}

/// `host=ip:port[,host=ip:port...]`.
fn parse_resolve(list: &str) -> Result<Vec<(String, SocketAddr)>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|pair| {
            let (host, addr) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: expected host=ip:port"))?;
            let addr = addr
                .parse::<SocketAddr>()
                .map_err(|e| format!("{pair:?}: {e}; expected host=ip:port"))?;
            Ok((host.trim().to_ascii_lowercase(), addr))
        })
        .collect()
}

/// The cluster's endpoints: the cloud's, Stack's from its metadata, then the overrides.
pub async fn resolve(
    cloud: &AzureCloud,
    overrides: &EndpointOverrides,
    http: &reqwest::Client,
) -> Result<AzureEndpoints, CloudError> {
    let arm_override = match &overrides.arm {
        Some(url) => Some(check_arm_endpoint(url).map_err(|p| bad_env(ARM_ENDPOINT_ENV, p))?),
        None => None,
    };
    let mut endpoints = match (cloud.known_endpoints(), cloud) {
        (Some(known), _) => known,
        (None, AzureCloud::AzureStackCloud { arm_endpoint }) => {
            let arm = arm_override.as_deref().unwrap_or(arm_endpoint);
            stack_endpoints(arm, http).await?
        }
        (None, other) => {
            return Err(CloudError::fatal(
                "azure",
                format!("no endpoints known for {}", other.name()),
            ));
        }
    };
    if let Some(arm) = arm_override {
        endpoints.resource_manager = arm;
    }
    if let Some(authority) = &overrides.authority {
        endpoints.authority_host = authority.clone();
    }
    Ok(endpoints)
}

/// Azure Stack Hub's endpoints from `<arm>/metadata/endpoints` (no token needed).
async fn stack_endpoints(arm: &str, http: &reqwest::Client) -> Result<AzureEndpoints, CloudError> {
    const OP: &str = "GetMetadataEndpoints";
    let url = format!(
        "{}/metadata/endpoints?api-version={METADATA_API}",
        arm.trim_end_matches('/')
    );
    let response = http
        .get(&url)
        .send()
        .await
        .map_err(|e| CloudError::new(crate::ErrorKind::Transient, OP, format!("{url}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        let problem = format!("{url}: HTTP {status}; expected the Azure Stack Hub metadata");
        return Err(if status.is_server_error() || status.as_u16() == 429 {
            CloudError::new(crate::ErrorKind::Transient, OP, problem)
        } else {
            CloudError::fatal(OP, problem)
        });
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| CloudError::fatal(OP, format!("{url}: not JSON: {e}")))?;
    stack_from_metadata(arm, &body).map_err(|p| CloudError::fatal(OP, format!("{url}: {p}")))
}

/// The endpoints a Stack metadata document names.
pub fn stack_from_metadata(arm: &str, body: &Value) -> Result<AzureEndpoints, String> {
    let auth = &body["authentication"];
    let login = auth["loginEndpoint"]
        .as_str()
        .filter(|s| s.starts_with("https://"))
        .ok_or("authentication.loginEndpoint is missing or not an https URL")?;
    let audience = auth["audiences"]
        .get(0)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or("authentication.audiences is empty; expected the ARM token audience first")?;
    if login.trim_end_matches('/').ends_with("/adfs") {
        return Err(format!(
            "the stamp's identity provider is AD FS ({login}); the agent signs in with Entra ID client secrets only (Azure Stack Hub with Entra ID)"
        ));
    }
    Ok(AzureEndpoints {
        resource_manager: format!("{}/", arm.trim_end_matches('/')),
        authority_host: login.to_string(),
        audience: audience.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stack_metadata_gives_the_authority_and_the_first_audience() {
        let body = json!({
            "galleryEndpoint": "https://providers.local.azurestack.external:30016/",
            "graphEndpoint": "https://graph.windows.net/",
            "portalEndpoint": "https://portal.local.azurestack.external/",
            "authentication": {
                "loginEndpoint": "https://login.microsoftonline.com/",
                "audiences": ["https://management.contoso.onmicrosoft.com/4de154de", "https://other/"]
            }
        });
        let e = stack_from_metadata("https://management.local.azurestack.external", &body).unwrap();
        assert_eq!(
            e.resource_manager,
            "https://management.local.azurestack.external/"
        );
        assert_eq!(e.authority_host, "https://login.microsoftonline.com/");
        assert_eq!(
            e.scope(),
            "https://management.contoso.onmicrosoft.com/4de154de/.default"
        );
    }

    #[test]
    fn stack_metadata_without_audience_or_with_adfs_is_refused() {
        let no_audience = json!({"authentication": {"loginEndpoint": "https://login.microsoftonline.com/", "audiences": []}});
        assert!(
            stack_from_metadata("https://m", &no_audience)
                .unwrap_err()
                .contains("audiences")
        );
        let adfs = json!({"authentication": {"loginEndpoint": "https://adfs.local.azurestack.external/adfs/", "audiences": ["https://management.adfs.azurestack.local/x"]}});
        assert!(
            stack_from_metadata("https://m", &adfs)
                .unwrap_err()
                .contains("AD FS")
        );
        let http =
            json!({"authentication": {"loginEndpoint": "http://login/", "audiences": ["a"]}});
        assert!(stack_from_metadata("https://m", &http).is_err());
    }

    #[test]
    fn resolve_pins_are_host_equals_socket_address() {
        let pins = parse_resolve(
            "management.usgovcloudapi.net=127.0.0.1:4443, Login.Microsoftonline.US=127.0.0.1:4444",
        )
        .unwrap();
        assert_eq!(pins.len(), 2);
        assert_eq!(pins[1].0, "login.microsoftonline.us");
        assert_eq!(pins[1].1.port(), 4444);
        assert!(parse_resolve("management.azure.com").is_err());
        assert!(parse_resolve("management.azure.com=localhost").is_err());
    }

    #[tokio::test]
    async fn overrides_replace_urls_but_keep_the_clouds_audience() {
        let overrides = EndpointOverrides {
            arm: Some("http://127.0.0.1:9".into()),
            authority: Some("https://127.0.0.1:10".into()),
            ..Default::default()
        };
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let http = reqwest::Client::new();
        let e = resolve(&AzureCloud::AzureUSGovernmentCloud, &overrides, &http)
            .await
            .unwrap();
        assert_eq!(e.resource_manager, "http://127.0.0.1:9/");
        assert_eq!(e.authority_host, "https://127.0.0.1:10");
        assert_eq!(e.scope(), "https://management.usgovcloudapi.net/.default");
        let plain = resolve(
            &AzureCloud::AzureChinaCloud,
            &EndpointOverrides::default(),
            &http,
        )
        .await
        .unwrap();
        assert_eq!(
            plain.resource_manager,
            "https://management.chinacloudapi.cn/"
        );
    }
}
