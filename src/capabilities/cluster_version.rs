//! ClusterVersion `version` (config.openshift.io/v1, no k8s-openapi type: `DynamicObject` +
//! `ApiResource`). `spec.capabilities` is written by server-side apply under the agent's field
//! manager, so fields other writers own (`spec.channel`, `spec.clusterID`, ...) stay theirs.
//! The status gets the effective capabilities and the `ImplicitlyEnabledCapabilities`
//! condition through the status subresource: capabilities enabled before stay enabled
//! (they cannot be uninstalled). Both are compared first, so a re-run makes no write.

use super::selection::Selection;
use super::upgrade::{self, Condition};
use crate::cluster::FIELD_MANAGER;
use crate::cluster::apply::contains;
use anyhow::{Context, Result};
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub const NAME: &str = "version";

pub fn api_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("config.openshift.io", "v1", "ClusterVersion"),
        "clusterversions",
    )
}

/// What `apply` did and found.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The object did not exist and was created.
    pub created: bool,
    /// `spec.capabilities` was patched (false: it already held the wanted values).
    #[serde(rename = "specPatched")]
    pub spec_patched: bool,
    #[serde(rename = "statusPatched")]
    pub status_patched: bool,
    #[serde(rename = "enabledCapabilities")]
    pub enabled: BTreeSet<String>,
    #[serde(rename = "implicitlyEnabled")]
    pub implicitly_enabled: BTreeSet<String>,
    pub condition: Condition,
    /// Mutating API calls made.
    pub mutations: u32,
}

/// The `spec.capabilities` the agent owns.
pub fn desired_spec(sel: &Selection) -> Value {
    json!({
        "capabilities": {
            "baselineCapabilitySet": sel.baseline,
            "additionalEnabledCapabilities": sel.additional,
        }
    })
}

fn string_set(v: Option<&Value>) -> BTreeSet<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The installer's ClusterVersion manifest in the asset dir; its `spec.clusterID` is sent
/// along (the real CRD requires it when `version` is created).
pub const CVO_OVERRIDES: &str = "manifests/cvo-overrides.yaml";

/// `spec.clusterID` from `<assets>/manifests/cvo-overrides.yaml`, when that file exists.
pub fn cluster_id_from_assets(
    assets: &std::path::Path,
) -> Result<Option<String>, crate::error::InputError> {
    let path = assets.join(CVO_OVERRIDES);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(crate::error::InputError::new(
                &path,
                "(file)",
                format!("cannot read: {e}"),
            ));
        }
    };
    let doc: Value = serde_saphyr::from_str(&text).map_err(|e| {
        crate::error::InputError::new(&path, "(document)", format!("invalid YAML: {e}"))
    })?;
    match doc.pointer("/spec/clusterID") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(Some(id.clone())),
        Some(other) => Err(crate::error::InputError::new(
            &path,
            "spec.clusterID",
            format!("expected a non-empty string, found {other}"),
        )),
    }
}

/// Writes `spec.capabilities` (creating `version` when absent), then the status.
/// `cluster_id` (from the installer's manifest) is sent too, unless the live object already
/// holds a different one, which is then left alone.
pub async fn apply(
    client: &kube::Client,
    sel: &Selection,
    cluster_id: Option<&str>,
) -> Result<Applied> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource());
    let live = api
        .get_opt(NAME)
        .await
        .context("cannot read ClusterVersion version")?;
    let live_json = live.as_ref().map(serde_json::to_value).transpose()?;
    let mut spec = desired_spec(sel);
    let live_id = live_json
        .as_ref()
        .and_then(|l| l.pointer("/spec/clusterID"))
        .and_then(Value::as_str);
    if let Some(id) = cluster_id
        && live_id.is_none_or(|l| l == id)
    {
        spec["clusterID"] = Value::String(id.to_string());
    }
    let mut mutations = 0;
    let spec_current = live_json
        .as_ref()
        .and_then(|l| l.get("spec"))
        .is_some_and(|s| contains(s, &spec));
    if !spec_current {
        let body = json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "metadata": {"name": NAME},
            "spec": spec,
        });
        // force: the agent is the authority for spec.capabilities during bootstrap; fields it
        // does not send are left to their owners.
        api.patch(
            NAME,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .context("cannot server-side apply spec.capabilities to ClusterVersion version")?;
        mutations += 1;
    }

    // Capabilities cannot be uninstalled: what was enabled stays enabled.
    let before = string_set(
        live_json
            .as_ref()
            .and_then(|l| l.pointer("/status/capabilities/enabledCapabilities")),
    );
    let enabled: BTreeSet<String> = sel.enabled.union(&before).cloned().collect();
    let condition = upgrade::condition(&sel.enabled, &enabled);
    let implicitly_enabled = enabled.difference(&sel.enabled).cloned().collect();
    let status_patched = write_status(&api, &enabled, &sel.known, &condition).await?;
    if status_patched {
        mutations += 1;
    }
    Ok(Applied {
        created: live.is_none(),
        spec_patched: !spec_current,
        status_patched,
        enabled,
        implicitly_enabled,
        condition,
        mutations,
    })
}

/// Sets status.capabilities and our condition, keeping everyone else's conditions. A merge
/// patch with the read resourceVersion, so a concurrent writer makes it retry, not lose data.
async fn write_status(
    api: &Api<DynamicObject>,
    enabled: &BTreeSet<String>,
    known: &BTreeSet<String>,
    condition: &Condition,
) -> Result<bool> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let live = api
            .get(NAME)
            .await
            .context("cannot read ClusterVersion version")?;
        let live = serde_json::to_value(&live)?;
        let capabilities = json!({
            "enabledCapabilities": enabled,
            "knownCapabilities": known,
        });
        let conditions: Vec<Value> = live
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let ours = conditions
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(upgrade::CONDITION));
        let same_condition = ours.is_some_and(|c| {
            c.get("status").and_then(Value::as_str) == Some(condition.status.as_str())
                && c.get("reason").and_then(Value::as_str) == Some(condition.reason.as_str())
                && c.get("message").and_then(Value::as_str) == Some(condition.message.as_str())
        });
        let same_caps = live
            .pointer("/status/capabilities")
            .is_some_and(|c| contains(c, &capabilities));
        if same_condition && same_caps {
            return Ok(false);
        }
        let transition = match ours {
            Some(c) if c.get("status").and_then(Value::as_str) == Some(&condition.status) => {
                c.get("lastTransitionTime").cloned().unwrap_or_else(now)
            }
            _ => now(),
        };
        let mut new_conditions: Vec<Value> = conditions
            .into_iter()
            .filter(|c| c.get("type").and_then(Value::as_str) != Some(upgrade::CONDITION))
            .collect();
        new_conditions.push(json!({
            "type": condition.type_,
            "status": condition.status,
            "reason": condition.reason,
            "message": condition.message,
            "lastTransitionTime": transition,
        }));
        let patch = json!({
            "metadata": {"resourceVersion": live.pointer("/metadata/resourceVersion")},
            "status": {"capabilities": capabilities, "conditions": new_conditions},
        });
        match api
            .patch_status(
                NAME,
                &PatchParams {
                    field_manager: Some(FIELD_MANAGER.into()),
                    ..Default::default()
                },
                &Patch::Merge(&patch),
            )
            .await
        {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(e)) if e.code == 409 && attempt < 5 => continue,
            Err(e) => {
                return Err(e).context("cannot update the status of ClusterVersion version");
            }
        }
    }
}

fn now() -> Value {
    Value::String(crate::journal::now())
}
