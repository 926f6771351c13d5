//! The creds secret the installer writes (`openshift/99_cloud-creds-secret.yaml`): absent
//! means the SDK's standard chain. Every key of the platform is read, and every problem is
//! reported, never a key's value.

use super::doc::{self, Doc};
use super::spec::{Credentials, Platform};
use crate::error::InputError;
use base64::Engine;
use serde_json::Value;

/// Credentials from the creds secret when there is one; else the SDK's standard chain.
pub(super) fn read(
    secret: Option<Doc>,
    platform: &Platform,
) -> Result<Credentials, Vec<InputError>> {
    let Some(secret) = secret.filter(|_| !matches!(platform, Platform::None)) else {
        return Ok(Credentials::Environment);
    };
    let mut errors = Vec::new();
    // A `stringData` or `data` that is not a mapping hides every key: said once, for itself.
    for section in ["stringData", "data"] {
        if let Some(other) = secret.get(section).filter(|v| !v.is_object()) {
            errors.push(secret.error(
                section,
                format!(
                    "expected a mapping of key names to values, found {}",
                    doc::kind(other)
                ),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut key = |name: &str| match value(&secret, name) {
        Ok(v) => v,
        Err(e) => {
            errors.push(e);
            String::new()
        }
    };
    let credentials = match platform {
        Platform::Aws(_) => Credentials::AwsKeys {
            access_key_id: key("aws_access_key_id"),
            secret_access_key: key("aws_secret_access_key"),
        },
        Platform::Azure(_) => Credentials::AzureClientSecret {
            subscription_id: key("azure_subscription_id"),
            tenant_id: key("azure_tenant_id"),
            client_id: key("azure_client_id"),
            client_secret: key("azure_client_secret"),
        },
        Platform::Gcp(_) => {
            let json = key("service_account.json");
            if errors.is_empty()
                && !serde_json::from_str::<Value>(&json).is_ok_and(|v| v.is_object())
            {
                errors.push(secret.error(
                    "data.service_account.json",
                    "expected a service account key (JSON object)",
                ));
            }
            Credentials::GcpServiceAccount { json }
        }
        Platform::None => Credentials::Environment,
    };
    if errors.is_empty() {
        Ok(credentials)
    } else {
        Err(errors)
    }
}

/// One key: `stringData.<key>` (a string) wins over `data.<key>` (base64 of UTF-8 text).
fn value(secret: &Doc, key: &str) -> Result<String, InputError> {
    match secret.get_in(&["stringData", key]) {
        Some(Value::String(s)) => return Ok(s.clone()),
        Some(other) => {
            return Err(secret.error(
                &format!("stringData.{key}"),
                format!("expected a string, found {}", doc::kind(other)),
            ));
        }
        None => {}
    }
    let field = format!("data.{key}");
    let encoded = match secret.get_in(&["data", key]) {
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(secret.error(
                &field,
                format!("expected a base64 string, found {}", doc::kind(other)),
            ));
        }
        None => {
            return Err(secret.error(
                &field,
                format!("missing; expected a base64 string (or stringData.{key}, a string)"),
            ));
        }
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| secret.error(&field, "expected base64"))?;
    String::from_utf8(bytes).map_err(|_| secret.error(&field, "expected base64 of UTF-8 text"))
}
