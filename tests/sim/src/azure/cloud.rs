//! Which Azure cloud the fake is, and what its ARM therefore refuses.
//!
//! Real ARM of one cloud accepts only tokens whose audience is one of its own ARM audiences
//! (401 `InvalidAuthenticationTokenAudience` otherwise) and issued by its own Entra ID
//! authority (401 `InvalidAuthenticationTokenTenant`: "The access token is from the wrong
//! issuer"). The fake's token endpoint records, per token, the audience asked for (the scope
//! less `/.default`) and the host the token was asked at; ARM checks both. So a client that
//! derived another cloud's endpoints is refused here as it would be there.
//!
//! Azure Stack Hub also answers `GET /metadata/endpoints` (no token) with its authority and
//! audience, has no Azure Private DNS (`privateDnsZones` is not a provider there) and serves
//! only the api-versions of its profiles (see [`stack_api_versions`]): any other is refused
//! as ARM refuses an api-version a provider does not register, 400
//! `NoRegisteredProviderFound`.

use super::arm::Reply;
use serde_json::json;

/// A cloud the fake can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SimCloud {
    #[default]
    Public,
    UsGovernment,
    /// Azure Stack Hub with Entra ID identity.
    Stack,
}

/// The audience the fake Stack stamp publishes (an Entra ID app id URI, as real stamps do).
pub const STACK_AUDIENCE: &str =
    "https://management.contoso.onmicrosoft.com/3e1a4b5c-6d7e-4f80-9a1b-2c3d4e5f6a7b";
/// The fake Stack stamp's ARM host (`armEndpoint` of the `azure-stack` fixture).
pub const STACK_ARM_HOST: &str = "management.local.azurestack.external";

/// Every host name of every cloud the fake knows: its certificate covers them all, and tests
/// pin them all to the fake, so a client that derived the wrong cloud reaches the fake (and is
/// refused) instead of the real internet.
pub const ALL_HOSTS: &[&str] = &[
    "management.azure.com",
    "login.microsoftonline.com",
    "management.usgovcloudapi.net",
    "login.microsoftonline.us",
    "management.chinacloudapi.cn",
    "login.chinacloudapi.cn",
    STACK_ARM_HOST,
];

/// What a token was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// The audience (scope without `/.default`), without a trailing `/`.
    pub audience: String,
    /// The host the token was asked at (None: a loopback address, i.e. an override URL).
    pub issuer_host: Option<String>,
}

impl SimCloud {
    pub fn arm_host(self) -> &'static str {
        match self {
            SimCloud::Public => "management.azure.com",
            SimCloud::UsGovernment => "management.usgovcloudapi.net",
            SimCloud::Stack => STACK_ARM_HOST,
        }
    }

    pub fn login_host(self) -> &'static str {
        match self {
            SimCloud::Public | SimCloud::Stack => "login.microsoftonline.com",
            SimCloud::UsGovernment => "login.microsoftonline.us",
        }
    }

    /// The audiences this cloud's ARM accepts (without trailing `/`): its ARM endpoint and its
    /// classic service-management URL; Stack: the stamp's published audience.
    pub fn audiences(self) -> &'static [&'static str] {
        match self {
            SimCloud::Public => &[
                "https://management.azure.com",
                "https://management.core.windows.net",
            ],
            SimCloud::UsGovernment => &[
                "https://management.usgovcloudapi.net",
                "https://management.core.usgovcloudapi.net",
            ],
            SimCloud::Stack => &[STACK_AUDIENCE],
        }
    }

    /// The token a client oracle uses (this cloud's own).
    pub fn own_token(self) -> TokenInfo {
        TokenInfo {
            audience: self.audiences()[0].to_string(),
            issuer_host: Some(self.login_host().to_string()),
        }
    }

    /// Why ARM refuses this token, if it does.
    pub fn refuse(self, token: &TokenInfo) -> Option<Reply> {
        if !self.audiences().contains(&token.audience.as_str()) {
            return Some(Reply::error(
                401,
                "InvalidAuthenticationTokenAudience",
                format!(
                    "The access token has been obtained for wrong audience or resource '{}'. It should exactly match with one of the allowed audiences '{}'.",
                    token.audience,
                    self.audiences().join("','")
                ),
            ));
        }
        match &token.issuer_host {
            Some(host) if host != self.login_host() => Some(Reply::error(
                401,
                "InvalidAuthenticationTokenTenant",
                format!(
                    "The access token is from the wrong issuer 'https://{host}/'. It must match the tenant associated with this subscription. Please use the authority (URL) 'https://{}/' to get the token.",
                    self.login_host()
                ),
            )),
            _ => None,
        }
    }

    /// `GET /metadata/endpoints` (Azure Stack Hub only; public clouds answer it too, but the
    /// agent only asks a stamp).
    pub fn metadata(self) -> Option<Reply> {
        (self == SimCloud::Stack).then(|| {
            Reply::json(
                200,
                json!({
                    "galleryEndpoint": "https://providers.local.azurestack.external:30016/",
                    "graphEndpoint": "https://graph.windows.net/",
                    "portalEndpoint": "https://portal.local.azurestack.external/",
                    "authentication": {
                        "loginEndpoint": format!("https://{}/", self.login_host()),
                        "audiences": [STACK_AUDIENCE]
                    }
                }),
            )
        })
    }

    /// Azure Stack Hub has no Azure Private DNS resource provider, and serves a provider's
    /// types only at the api-versions its profiles list.
    pub fn refuse_provider(self, segments: &[&str], api_version: Option<&str>) -> Option<Reply> {
        if self != SimCloud::Stack {
            return None;
        }
        let private_dns = segments
            .iter()
            .any(|s| s.eq_ignore_ascii_case("privateDnsZones"));
        if private_dns {
            return Some(Reply::error(
                400,
                "NoRegisteredProviderFound",
                "No registered resource provider found for location 'local' and type 'privateDnsZones'.",
            ));
        }
        let (kind, supported) = stack_api_versions(segments)?;
        let version = api_version.unwrap_or_default();
        if supported.contains(&version) {
            return None;
        }
        let message = if supported.is_empty() {
            format!(
                "No registered resource provider found for location 'local' and API version '{version}' for type '{kind}'."
            )
        } else {
            format!(
                "No registered resource provider found for location 'local' and API version '{version}' for type '{kind}'. The supported api-versions are '{}'. The supported locations are 'local'.",
                supported.join(", ")
            )
        };
        Some(Reply::error(400, "NoRegisteredProviderFound", message))
    }
}

/// The resource type a Stack ARM path names and the api-versions the stamp serves for it
/// (the 2019-03-01-hybrid and 2020-09-01-hybrid profiles: Network up to 2018-11-01, DNS
/// 2016-04-01, Resources up to 2018-05-01, Authorization permissions 2015-07-01; no Tags API
/// at a scope: MicrosoftDocs/azure-stack-docs
/// `azure-stack/user/azure-stack-profiles-azure-resource-manager-versions.md`). None: a path
/// the fake does not classify (left to the router).
pub fn stack_api_versions(segments: &[&str]) -> Option<(String, &'static [&'static str])> {
    const NETWORK: &[&str] = &["2015-06-15", "2017-10-01", "2018-11-01"];
    const DNS: &[&str] = &["2016-04-01"];
    const RESOURCES: &[&str] = &["2016-06-01", "2018-05-01"];
    const AUTHORIZATION: &[&str] = &["2015-07-01"];
    let lower: Vec<String> = segments.iter().map(|s| s.to_ascii_lowercase()).collect();
    let l: Vec<&str> = lower.iter().map(String::as_str).collect();
    let provider_at = l.iter().rposition(|s| *s == "providers");
    match provider_at.map(|i| (l.get(i + 1).copied(), l.get(i + 2).copied())) {
        Some((Some("microsoft.network"), Some("dnszones"))) => Some(("dnszones".into(), DNS)),
        Some((Some("microsoft.network"), kind)) => {
            Some((format!("Microsoft.Network/{}", kind.unwrap_or("")), NETWORK))
        }
        Some((Some("microsoft.authorization"), kind)) => Some((
            format!("Microsoft.Authorization/{}", kind.unwrap_or("")),
            AUTHORIZATION,
        )),
        // The Tags API at a scope came with Resources 2019-10-01: no version serves it here.
        Some((Some("microsoft.resources"), Some("tags"))) => Some(("tags".into(), &[])),
        Some(_) => None,
        // `/subscriptions/{id}`, `/subscriptions/{id}/resourcegroups[/{rg}]`.
        None => match l.as_slice() {
            ["subscriptions", _] => Some(("subscriptions".into(), RESOURCES)),
            ["subscriptions", _, "resourcegroups", ..] => {
                Some(("resourceGroups".into(), RESOURCES))
            }
            _ => None,
        },
    }
}

/// The host a request named, without its port; None for a loopback address (override URLs).
pub fn named_host(host_header: &str) -> Option<String> {
    let host = match host_header.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_header.split(':').next().unwrap_or(""),
    }
    .to_ascii_lowercase();
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    (!loopback && !host.is_empty()).then_some(host)
}

/// The audience a token request asks for: the scope less `/.default` and any trailing `/`.
pub fn audience_of(scope: &str) -> Option<String> {
    scope
        .strip_suffix("/.default")
        .map(|a| a.trim_end_matches('/').to_string())
        .filter(|a| !a.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(audience: &str, issuer: Option<&str>) -> TokenInfo {
        TokenInfo {
            audience: audience.into(),
            issuer_host: issuer.map(str::to_string),
        }
    }

    #[test]
    fn arm_refuses_another_clouds_audience_and_issuer() {
        let gov = SimCloud::UsGovernment;
        let refused = gov
            .refuse(&token(
                "https://management.azure.com",
                Some("login.microsoftonline.com"),
            ))
            .unwrap();
        assert_eq!(refused.status, 401);
        assert_eq!(
            refused.body.unwrap()["error"]["code"],
            "InvalidAuthenticationTokenAudience"
        );
        let refused = gov
            .refuse(&token(
                "https://management.usgovcloudapi.net",
                Some("login.microsoftonline.com"),
            ))
            .unwrap();
        assert_eq!(
            refused.body.unwrap()["error"]["code"],
            "InvalidAuthenticationTokenTenant"
        );
        assert!(gov.refuse(&gov.own_token()).is_none());
        assert!(
            gov.refuse(&token("https://management.core.usgovcloudapi.net", None))
                .is_none()
        );
        assert!(SimCloud::Public.refuse(&gov.own_token()).is_some());
    }

    #[test]
    fn stack_publishes_its_metadata_and_has_no_private_dns() {
        assert!(SimCloud::Public.metadata().is_none());
        let meta = SimCloud::Stack.metadata().unwrap().body.unwrap();
        assert_eq!(meta["authentication"]["audiences"][0], STACK_AUDIENCE);
        assert!(
            SimCloud::Stack
                .refuse_provider(
                    &[
                        "subscriptions",
                        "s",
                        "providers",
                        "Microsoft.Network",
                        "privateDnsZones"
                    ],
                    Some("2020-06-01")
                )
                .is_some()
        );
        assert!(
            SimCloud::Public
                .refuse_provider(&["privateDnsZones"], Some("2020-06-01"))
                .is_none()
        );
    }

    /// Stack serves each provider only at its profiles' versions; the public cloud any.
    #[test]
    fn stack_refuses_api_versions_its_profiles_do_not_list() {
        let pip = [
            "subscriptions",
            "s",
            "resourceGroups",
            "rg",
            "providers",
            "Microsoft.Network",
            "publicIPAddresses",
            "ip",
        ];
        let refused = SimCloud::Stack
            .refuse_provider(&pip, Some("2024-05-01"))
            .unwrap();
        assert_eq!(refused.status, 400);
        let body = refused.body.unwrap();
        assert_eq!(body["error"]["code"], "NoRegisteredProviderFound");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("'2024-05-01'") && message.contains("2018-11-01"),
            "{message}"
        );
        assert!(
            SimCloud::Stack
                .refuse_provider(&pip, Some("2018-11-01"))
                .is_none()
        );
        assert!(
            SimCloud::Public
                .refuse_provider(&pip, Some("2024-05-01"))
                .is_none()
        );
        // (path, api-version, refused on Stack)
        let cases: [(&str, &str, bool); 10] = [
            (
                "rg/providers/Microsoft.Network/dnszones/example.com/A/api",
                "2018-05-01",
                true,
            ),
            (
                "rg/providers/Microsoft.Network/dnszones/example.com/A/api",
                "2016-04-01",
                false,
            ),
            (
                "rg/providers/Microsoft.Resources/tags/default",
                "2021-04-01",
                true,
            ),
            // No version serves the Tags API on Stack.
            (
                "rg/providers/Microsoft.Resources/tags/default",
                "2018-05-01",
                true,
            ),
            ("", "2021-04-01", true),
            ("", "2018-05-01", false),
            (
                "rg/providers/Microsoft.Authorization/permissions",
                "2022-04-01",
                true,
            ),
            (
                "rg/providers/Microsoft.Authorization/permissions",
                "2015-07-01",
                false,
            ),
            ("-", "2022-12-01", true),
            ("-", "2018-05-01", false),
        ];
        for (rest, version, refused) in cases {
            // "-": the subscription itself; "": its resource groups; else under group `rg`.
            let path = match rest {
                "-" => "subscriptions/s".to_string(),
                "" => "subscriptions/s/resourcegroups".to_string(),
                rest => format!("subscriptions/s/resourceGroups/{rest}"),
            };
            let segments: Vec<&str> = path.split('/').collect();
            let answer = SimCloud::Stack.refuse_provider(&segments, Some(version));
            assert_eq!(answer.is_some(), refused, "{path} at {version}");
        }
    }

    #[test]
    fn hosts_and_scopes_parse() {
        assert_eq!(named_host("127.0.0.1:4443"), None);
        assert_eq!(
            named_host("Management.UsGovCloudApi.net:443").as_deref(),
            Some("management.usgovcloudapi.net")
        );
        assert_eq!(
            audience_of("https://management.usgovcloudapi.net/.default").as_deref(),
            Some("https://management.usgovcloudapi.net")
        );
        assert_eq!(audience_of("https://x"), None);
    }
}
