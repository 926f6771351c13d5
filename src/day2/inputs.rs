//! The loader's four documents, read from the cluster the installer applied them to:
//! ConfigMap kube-system/cluster-config-v1 (the install-config), Infrastructure and DNS
//! `cluster` (config.openshift.io/v1) and the cloud creds Secret where the cluster keeps it
//! (kube-system aws-creds / gcp-credentials / azure-credentials; absent in the manual and STS
//! modes). They go through the asset loader unchanged (`assets::load_from`), so the checks
//! and messages are the asset dir's, naming the object instead of the file. The Secret stays
//! in memory: nothing of it is written or logged.

use crate::assets::{Document, Fetched};
use anyhow::{Context as _, Result};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::Value;

pub const CLUSTER_CONFIG: &str = "ConfigMap kube-system/cluster-config-v1";
pub const INFRASTRUCTURE: &str = "Infrastructure cluster";
pub const DNS: &str = "DNS cluster";

/// The creds Secret of a platform (`status.platformStatus.type`), as the installer names it.
pub fn creds_secret_name(platform_type: &str) -> Option<&'static str> {
    match platform_type {
        "AWS" => Some("aws-creds"),
        "GCP" => Some("gcp-credentials"),
        "Azure" => Some("azure-credentials"),
        _ => None,
    }
}

fn config_resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("config.openshift.io", "v1", kind),
        plural,
    )
}

async fn get<K>(api: kube::Api<K>, name: &str, label: &str) -> Result<Option<Value>>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object = api
        .get_opt(name)
        .await
        .map_err(|e| super::refused(e, label))?;
    object
        .map(|o| serde_json::to_value(o).with_context(|| format!("cannot encode {label}")))
        .transpose()
}

/// Reads the four documents from the cluster; the creds Secret only when `with_secret` (a
/// command that calls the cloud).
pub async fn fetch(client: &kube::Client, with_secret: bool) -> Result<Fetched> {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    let mut docs = Fetched::new("(the cluster)");
    let config = get(
        kube::Api::<ConfigMap>::namespaced(client.clone(), "kube-system"),
        "cluster-config-v1",
        CLUSTER_CONFIG,
    )
    .await?;
    docs.insert(Document::ClusterConfig, CLUSTER_CONFIG, config);
    docs.when_missing(
        Document::ClusterConfig,
        "not found; expected the install-config the installer keeps there (is this an OpenShift cluster made by openshift-install?)",
    );
    let dynamic = |kind: &str, plural: &str| {
        kube::Api::<DynamicObject>::all_with(client.clone(), &config_resource(kind, plural))
    };
    let infra = get(
        dynamic("Infrastructure", "infrastructures"),
        "cluster",
        INFRASTRUCTURE,
    )
    .await?;
    let platform_type = infra
        .as_ref()
        .and_then(|i| i.pointer("/status/platformStatus/type"))
        .and_then(Value::as_str)
        .map(str::to_string);
    docs.insert(Document::Infrastructure, INFRASTRUCTURE, infra);
    docs.when_missing(
        Document::Infrastructure,
        "not found; expected the cluster's Infrastructure (config.openshift.io/v1), as every OpenShift cluster has",
    );
    let dns = get(dynamic("DNS", "dnses"), "cluster", DNS).await?;
    docs.insert(Document::Dns, DNS, dns);
    if let Some(name) = platform_type
        .as_deref()
        .and_then(creds_secret_name)
        .filter(|_| with_secret)
    {
        let label = format!("Secret kube-system/{name}");
        let secret = get(
            kube::Api::<Secret>::namespaced(client.clone(), "kube-system"),
            name,
            &label,
        )
        .await?;
        docs.insert(Document::CredsSecret, label, secret);
    }
    Ok(docs)
}

/// The environment variables and files that give the SDK's standard chain credentials on
/// `platform_type`, or None when one of them is there. An AWS instance profile (IMDS) counts
/// unless `AWS_EC2_METADATA_DISABLED=true`: it cannot be told without asking it.
pub fn missing_environment_credentials(platform_type: &str) -> Option<&'static str> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let file = |path: Option<std::path::PathBuf>| {
        path.and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.is_file() && m.len() > 0)
    };
    let home = |rel: &str| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(rel));
    let env_or_home = |var: &str, rel: &str| {
        std::env::var_os(var)
            .map(std::path::PathBuf::from)
            .or_else(|| home(rel))
    };
    match platform_type {
        "AWS" => {
            let found = [
                "AWS_ACCESS_KEY_ID",
                "AWS_PROFILE",
                "AWS_WEB_IDENTITY_TOKEN_FILE",
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            ]
            .iter()
            .any(|v| set(v))
                || file(env_or_home(
                    "AWS_SHARED_CREDENTIALS_FILE",
                    ".aws/credentials",
                ))
                || file(env_or_home("AWS_CONFIG_FILE", ".aws/config"))
                || !std::env::var("AWS_EC2_METADATA_DISABLED")
                    .is_ok_and(|v| v.eq_ignore_ascii_case("true"));
            (!found).then_some(
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_WEB_IDENTITY_TOKEN_FILE, a shared credentials file, or an instance profile",
            )
        }
        "GCP" => {
            let adc = std::env::var_os("CLOUDSDK_CONFIG")
                .map(|d| std::path::Path::new(&d).join("application_default_credentials.json"))
                .or_else(|| home(".config/gcloud/application_default_credentials.json"));
            let found =
                set("GOOGLE_APPLICATION_CREDENTIALS") || set("GCE_METADATA_HOST") || file(adc);
            (!found).then_some(
                "GOOGLE_APPLICATION_CREDENTIALS, `gcloud auth application-default login`, or the metadata server (GCE_METADATA_HOST)",
            )
        }
        "Azure" => {
            let found = [
                "AZURE_SUBSCRIPTION_ID",
                "AZURE_TENANT_ID",
                "AZURE_CLIENT_ID",
                "AZURE_CLIENT_SECRET",
            ]
            .iter()
            .all(|v| set(v));
            (!found).then_some(
                "AZURE_SUBSCRIPTION_ID, AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET",
            )
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_creds_secret_is_the_one_the_installer_names_per_platform() {
        assert_eq!(creds_secret_name("AWS"), Some("aws-creds"));
        assert_eq!(creds_secret_name("GCP"), Some("gcp-credentials"));
        assert_eq!(creds_secret_name("Azure"), Some("azure-credentials"));
        assert_eq!(creds_secret_name("None"), None);
    }
}
