//! The fake's Entra ID authority (HTTPS): the v2 token endpoint `POST
//! /{tenant}/oauth2/v2.0/token` (client-credentials grant only), and the ADFS authority
//! `/adfs` that cloud-provider-azure reaches with `"tenantId": "adfs"` (azidentity then skips
//! instance discovery, which would dial `login.microsoftonline.com`: vendor
//! `github.com/Azure/azure-sdk-for-go/sdk/azidentity/confidential_client.go:164-165`, and MSAL
//! treats the authority as ADFS, `microsoft-authentication-library-for-go/apps/internal/oauth/
//! ops/authority/authority.go:447-448`):
//! - `GET /adfs/.well-known/openid-configuration`: `{token_endpoint, authorization_endpoint,
//!   issuer}`, the issuer on the authority's own host (MSAL checks it, authority.go:111-152);
//! - `POST /adfs/oauth2/token`: the same grant as the v2 endpoint.
//!
//! MSAL asks for `<audience>/.default openid offline_access profile` (it always appends the
//! three OIDC scopes, `apps/internal/oauth/ops/accesstokens/accesstokens.go:446-476`): the
//! token endpoint takes one `/.default` scope and, beside it, only those three; anything else
//! is refused as Entra ID refuses it, `invalid_scope`.

use super::arm::Reply;
use super::world::{CLIENT_ID, CLIENT_SECRET, TENANT};
use super::{Shared, cloud, lock, segments, to_response};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::json;
use std::collections::BTreeMap;

/// The OIDC scopes MSAL adds to every token request.
const OIDC_SCOPES: [&str; 3] = ["openid", "offline_access", "profile"];

/// The `/.default` scope of a token request, if it is well formed: exactly one such scope,
/// the others OIDC scopes.
pub fn default_scope(scope: &str) -> Option<&str> {
    let mut defaults = scope.split(' ').filter(|s| s.ends_with("/.default"));
    let default = defaults.next()?;
    let others_ok = scope
        .split(' ')
        .filter(|s| !s.is_empty() && !s.ends_with("/.default"))
        .all(|s| OIDC_SCOPES.contains(&s));
    (defaults.next().is_none() && others_ok).then_some(default)
}

fn aad(status: u16, error: &str, description: &str) -> Reply {
    Reply::json(
        status,
        json!({"error": error, "error_description": description, "error_codes": []}),
    )
}

/// The authority's requests.
pub async fn login_handler(
    req: Request<Incoming>,
    world: Shared,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let form: BTreeMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let segments = segments(&parts.uri);
    let host = super::host_of(&parts.headers);
    let reply = match (parts.method.as_str(), segments.as_slice()) {
        ("GET", ["adfs", ".well-known", "openid-configuration"]) => Reply::json(
            200,
            json!({
                "issuer": format!("https://{host}/adfs"),
                "authorization_endpoint": format!("https://{host}/adfs/oauth2/authorize/"),
                "token_endpoint": format!("https://{host}/adfs/oauth2/token/"),
                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                "grant_types_supported": ["client_credentials"],
            }),
        ),
        ("POST", [tenant, "oauth2", "v2.0", "token"]) if *tenant != TENANT => aad(
            400,
            "invalid_request",
            &format!("AADSTS90002: Tenant '{tenant}' not found."),
        ),
        ("POST", [_, "oauth2", "v2.0", "token"]) | ("POST", ["adfs", "oauth2", "token"]) => {
            grant(&world, &form, &parts.headers)
        }
        _ => aad(404, "not_found", "no such endpoint in the fake"),
    };
    Ok(to_response(reply))
}

/// The client-credentials grant: the fixture's client and secret, one `/.default` scope.
fn grant(world: &Shared, form: &BTreeMap<String, String>, headers: &hyper::HeaderMap) -> Reply {
    let field = |name: &str| form.get(name).map(String::as_str);
    if field("grant_type") != Some("client_credentials") {
        return aad(
            400,
            "unsupported_grant_type",
            "AADSTS70003: The app requested an unsupported grant type.",
        );
    }
    if field("client_id") != Some(CLIENT_ID) {
        return aad(
            400,
            "unauthorized_client",
            "AADSTS700016: Application not found in the directory.",
        );
    }
    if field("client_secret") != Some(CLIENT_SECRET) {
        return aad(
            401,
            "invalid_client",
            "AADSTS7000215: Invalid client secret provided.",
        );
    }
    let Some(scope) = field("scope").and_then(default_scope) else {
        return aad(
            400,
            "invalid_scope",
            "AADSTS1002012: The provided value for scope is not valid.",
        );
    };
    let token = format!("fake-arm-token-{}", uuid::Uuid::new_v4());
    let info = cloud::TokenInfo {
        audience: cloud::audience_of(scope).unwrap_or_default(),
        issuer_host: headers
            .get(hyper::header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(cloud::named_host),
    };
    lock(world).tokens.insert(token.clone(), info);
    Reply::json(
        200,
        json!({"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scopes_msal_sends_are_taken_and_others_refused() {
        let arm = "https://management.azure.com/.default";
        assert_eq!(default_scope(arm), Some(arm));
        assert_eq!(
            default_scope(&format!("{arm} openid offline_access profile")),
            Some(arm)
        );
        assert_eq!(default_scope("openid profile"), None);
        assert_eq!(default_scope(&format!("{arm} {arm}")), None);
        assert_eq!(default_scope(&format!("{arm} User.Read")), None);
    }
}
