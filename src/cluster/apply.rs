//! Server-side apply under one field manager, namespaces created when missing, and the
//! `release.openshift.io/delete: "true"` annotation turning an apply into a delete. A Service
//! whose live state already holds everything we would apply is not patched, so a re-run after
//! success makes zero mutating calls.

use super::FIELD_MANAGER;
use crate::render::Rendered;
use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::{Namespace, Service};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde::Serialize;
use serde_json::Value;

pub const DELETE_ANNOTATION: &str = "release.openshift.io/delete";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Applied,
    Unchanged,
    Deleted,
    AlreadyAbsent,
}

#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub namespace: String,
    pub name: String,
    pub template: String,
    pub outcome: Outcome,
}

/// What the manifest asks for: apply it, or delete the object it names.
pub fn wants_delete(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    source: &str,
) -> Result<bool> {
    match annotations
        .and_then(|a| a.get(DELETE_ANNOTATION))
        .map(String::as_str)
    {
        None => Ok(false),
        Some("true") => Ok(true),
        Some(other) => bail!(
            "{source}: annotation {DELETE_ANNOTATION} is {other:?}; the only valid value is \"true\""
        ),
    }
}

pub async fn apply_services(client: &kube::Client, rendered: &[Rendered]) -> Result<Vec<Applied>> {
    let mut out = Vec::new();
    for r in rendered {
        let name = r.service.metadata.name.clone().unwrap_or_default();
        let namespace = r.service.metadata.namespace.clone().unwrap_or_default();
        let api: Api<Service> = Api::namespaced(client.clone(), &namespace);
        let outcome = if wants_delete(r.service.metadata.annotations.as_ref(), &r.template)? {
            delete(&api, &name)
                .await
                .with_context(|| format!("cannot delete {namespace}/{name}"))?
        } else {
            ensure_namespace(client, &namespace).await?;
            apply(&api, &name, &r.service).await.with_context(|| {
                format!("cannot apply {namespace}/{name} (template {})", r.template)
            })?
        };
        tracing::info!(%namespace, %name, ?outcome, "service");
        out.push(Applied {
            namespace,
            name,
            template: r.template.clone(),
            outcome,
        });
    }
    Ok(out)
}

async fn delete(api: &Api<Service>, name: &str) -> Result<Outcome> {
    if api.get_opt(name).await?.is_none() {
        return Ok(Outcome::AlreadyAbsent);
    }
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(Outcome::Deleted),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(Outcome::AlreadyAbsent),
        Err(e) => Err(e.into()),
    }
}

async fn apply(api: &Api<Service>, name: &str, desired: &Service) -> Result<Outcome> {
    if let Some(live) = api.get_opt(name).await?
        && contains(
            &serde_json::to_value(&live)?,
            &serde_json::to_value(desired)?,
        )
    {
        return Ok(Outcome::Unchanged);
    }
    // force: during bootstrap the agent is the authority for these Services' fields.
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(desired),
    )
    .await?;
    Ok(Outcome::Applied)
}

pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    if api.get_opt(name).await?.is_some() {
        return Ok(());
    }
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api
        .create(
            &PostParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..Default::default()
            },
            &ns,
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot create namespace {name}")),
    }
}

/// Whether `live` already holds every field of `desired` with the same value (lists element
/// by element). The server adds fields (clusterIP, nodePort, status); those do not matter.
pub fn contains(live: &Value, desired: &Value) -> bool {
    match (live, desired) {
        (Value::Object(l), Value::Object(d)) => d
            .iter()
            .all(|(k, dv)| l.get(k).is_some_and(|lv| contains(lv, dv))),
        (Value::Array(l), Value::Array(d)) => {
            l.len() == d.len() && l.iter().zip(d).all(|(lv, dv)| contains(lv, dv))
        }
        (l, d) => l == d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_added_fields_do_not_count_as_a_difference() {
        let live = json!({"spec": {"type": "LoadBalancer", "clusterIP": "172.30.0.9", "ports": [{"port": 6443, "nodePort": 31000}]}});
        assert!(contains(
            &live,
            &json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 6443}]}})
        ));
    }

    #[test]
    fn a_changed_or_missing_field_is_a_difference() {
        let live =
            json!({"metadata": {"annotations": {"a": "1"}}, "spec": {"ports": [{"port": 6443}]}});
        assert!(!contains(
            &live,
            &json!({"metadata": {"annotations": {"a": "2"}}})
        ));
        assert!(!contains(
            &live,
            &json!({"metadata": {"annotations": {"b": "1"}}})
        ));
        assert!(!contains(
            &live,
            &json!({"spec": {"ports": [{"port": 6443}, {"port": 22623}]}})
        ));
    }

    #[test]
    fn delete_annotation_only_accepts_true() {
        let ann = |v: &str| {
            std::collections::BTreeMap::from([(DELETE_ANNOTATION.to_string(), v.to_string())])
        };
        assert!(wants_delete(Some(&ann("true")), "f").unwrap());
        assert!(!wants_delete(None, "f").unwrap());
        let err = wants_delete(Some(&ann("yes")), "manifests/x.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("manifests/x.yaml") && err.contains("\"yes\""),
            "{err}"
        );
    }
}
