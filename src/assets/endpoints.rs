//! AWS `serviceEndpoints`: custom API endpoints per service (private endpoints, air-gapped
//! regions). The install-config's `platform.aws.serviceEndpoints` is copied by the installer
//! into the Infrastructure manifest's `status.platformStatus.aws.serviceEndpoints`
//! (openshift/installer pkg/asset/manifests/infrastructure.go); either is read, the
//! install-config first. Validated as the installer validates them
//! (pkg/types/aws/validation/platform.go `validateServiceEndpoints`): no name twice, and a URL
//! with a host, scheme https (assumed when absent) and no path. One exception: plain http to a
//! loopback address, which is how the local test peers are reached (nothing leaves the host).
//! The agent's clients use `ec2`, `route53` and `sts`; other names are kept, unused.

use super::doc::{self, Doc};
use crate::error::InputError;
use serde_json::Value;
use std::collections::BTreeMap;

/// Service name -> URL, from the install-config or else the Infrastructure manifest.
pub fn aws(ic: &Doc, infra: &Doc) -> Result<BTreeMap<String, String>, InputError> {
    const IC_FIELD: &str = "platform.aws.serviceEndpoints";
    if ic.get(IC_FIELD).is_some() {
        return read(ic, IC_FIELD, "data.install-config: ");
    }
    read(infra, "status.platformStatus.aws.serviceEndpoints", "")
}

fn read(d: &Doc, field: &str, prefix: &str) -> Result<BTreeMap<String, String>, InputError> {
    let err = |f: String, problem: String| d.error(&format!("{prefix}{f}"), problem);
    let list = d.opt_list(field).map_err(|e| err(e.field, e.problem))?;
    let mut endpoints = BTreeMap::new();
    for (i, entry) in list.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let text = |key: &str| match entry.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(Value::String(_)) | None | Some(Value::Null) => Err(err(
                format!("{at}.{key}"),
                "missing; expected a non-empty string".into(),
            )),
            Some(other) => Err(err(
                format!("{at}.{key}"),
                format!("expected a string, found {}", doc::kind(other)),
            )),
        };
        let name = text("name")?;
        let url = normalize(&text("url")?).map_err(|p| err(format!("{at}.url"), p))?;
        if endpoints.insert(name.clone(), url).is_some() {
            return Err(err(
                format!("{at}.name"),
                format!("{name:?} is given twice; expected each service once"),
            ));
        }
    }
    Ok(endpoints)
}

/// The URL with its scheme (https when absent), checked as the installer checks it.
fn normalize(url: &str) -> Result<String, String> {
    let full = if url.contains("://") {
        url.to_string()
    } else {
        format!("https://{url}")
    };
    let uri: http::Uri = full
        .parse()
        .map_err(|e| format!("{url:?} is not a URL ({e})"))?;
    let host = uri.host().unwrap_or_default();
    if host.is_empty() {
        return Err(format!("{url:?} has no host; expected https://<host>"));
    }
    let loopback = host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if loopback => {}
        other => {
            return Err(format!(
                "{url:?}: scheme {} is not allowed; expected https",
                other.unwrap_or("(none)")
            ));
        }
    }
    match uri.path_and_query().map(|p| p.as_str()) {
        None | Some("") | Some("/") => Ok(full.trim_end_matches('/').to_string()),
        Some(path) => Err(format!(
            "{url:?} has the path {path:?}; expected no path or query"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn urls_are_checked_as_the_installer_checks_them() {
        assert_eq!(
            normalize("ec2.us-east-1.example.internal").unwrap(),
            "https://ec2.us-east-1.example.internal"
        );
        assert_eq!(
            normalize("https://route53.example.internal/").unwrap(),
            "https://route53.example.internal"
        );
        assert_eq!(
            normalize("http://127.0.0.1:4566").unwrap(),
            "http://127.0.0.1:4566"
        );
        for (bad, why) in [
            ("http://ec2.example.internal", "scheme http"),
            ("ftp://ec2.example.internal", "scheme ftp"),
            ("https://ec2.example.internal/v1", "path"),
            ("https://", "URL"),
        ] {
            let err = normalize(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
