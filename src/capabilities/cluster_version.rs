//! ClusterVersion `version` (config.openshift.io/v1, no k8s-openapi type: `DynamicObject` +
//! `ApiResource`). The agent writes `spec.capabilities` and nothing else: the status belongs
//! to the cluster-version operator (CVO). A second status writer fails the real CRD's schema
//! (`status.desired`, `status.versionHash`, ... are required) while the CVO has not written
//! its status yet, and fights the CVO afterwards.
//!
//! - The object exists: `spec.capabilities` is server-side applied under the agent's field
//!   manager, so fields other writers own (`spec.channel`, `spec.clusterID`, ...) stay theirs.
//!   Capabilities cannot be uninstalled, so a capability the live spec enables and ours does
//!   not is kept in `additionalEnabledCapabilities` (and reported as kept).
//! - The object is absent and the installer's `manifests/cvo-overrides.yaml` is in the asset
//!   dir: it is created from that file's whole `spec` plus our `spec.capabilities`.
//! - Absent and no such file: the agent waits for the object (the installer's
//!   cluster-bootstrap creates it), bounded by the caller's deadline.
//!
//! What the CVO will then report (effective capabilities, `ImplicitlyEnabledCapabilities`) is
//! computed, never written: see [`CvoWillReport`].

use super::selection::Selection;
use super::upgrade::CvoWillReport;
use crate::cluster::FIELD_MANAGER;
use crate::cluster::apply::contains;
use crate::error::{InputError, read_if_present};
use anyhow::{Context, Result};
use futures::StreamExt;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::watcher;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const NAME: &str = "version";

/// The installer's ClusterVersion manifest in the asset dir.
pub const CVO_OVERRIDES: &str = "manifests/cvo-overrides.yaml";

pub fn api_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("config.openshift.io", "v1", "ClusterVersion"),
        "clusterversions",
    )
}

/// The `spec` of the installer's `manifests/cvo-overrides.yaml` (clusterID, channel,
/// upstream, overrides, ...), used only to create `version` when it does not exist yet.
#[derive(Debug, Clone)]
pub struct CvoOverrides {
    pub path: PathBuf,
    pub spec: Value,
}

impl CvoOverrides {
    pub fn cluster_id(&self) -> Option<&str> {
        self.spec.get("clusterID").and_then(Value::as_str)
    }
}

/// Reads `<assets>/manifests/cvo-overrides.yaml` when it exists. Its `spec` must be a mapping
/// with a non-empty `clusterID` (the real CRD requires it).
pub fn overrides_from_assets(assets: &Path) -> Result<Option<CvoOverrides>, InputError> {
    let path = assets.join(CVO_OVERRIDES);
    let Some(text) = read_if_present(&path)? else {
        return Ok(None);
    };
    let doc: Value = serde_saphyr::from_str(&text)
        .map_err(|e| InputError::new(&path, "(document)", format!("invalid YAML: {e}")))?;
    for (field, want) in [
        ("kind", "ClusterVersion"),
        ("apiVersion", "config.openshift.io/v1"),
    ] {
        match doc.get(field).and_then(Value::as_str) {
            Some(v) if v == want => {}
            other => {
                return Err(InputError::new(
                    &path,
                    field,
                    format!("expected {want}, found {}", other.unwrap_or("nothing")),
                ));
            }
        }
    }
    let Some(spec) = doc.get("spec").filter(|s| s.is_object()) else {
        return Err(InputError::new(&path, "spec", "expected a mapping"));
    };
    match spec.get("clusterID") {
        Some(Value::String(id)) if !id.trim().is_empty() => {}
        other => {
            return Err(InputError::new(
                &path,
                "spec.clusterID",
                format!(
                    "expected a non-empty string, found {}",
                    other.map_or("nothing".to_string(), Value::to_string)
                ),
            ));
        }
    }
    Ok(Some(CvoOverrides {
        path,
        spec: spec.clone(),
    }))
}

/// What `apply` did and found.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The object did not exist and was created (from cvo-overrides.yaml).
    pub created: bool,
    /// `spec.capabilities` was written (false: it already held the wanted values).
    #[serde(rename = "specPatched")]
    pub spec_patched: bool,
    /// The `additionalEnabledCapabilities` written: ours plus `kept`.
    #[serde(rename = "additionalEnabledCapabilities")]
    pub additional: Vec<String>,
    /// Enabled by the live spec, not by ours, and kept: capabilities cannot be uninstalled.
    pub kept: BTreeSet<String>,
    /// What the cluster-version operator will report once it reconciles the spec we wrote:
    /// `enabledCapabilities` is the spec's set plus every capability the live status already
    /// has enabled (capabilities cannot be uninstalled). The agent never writes these: it
    /// shows them so a person knows what to expect.
    #[serde(rename = "cvoWillReport")]
    pub cvo_will_report: CvoWillReport,
    /// Mutating API calls made.
    pub mutations: u32,
}

/// How to reach the wanted `spec.capabilities` from the live object.
pub struct Request<'a> {
    pub selection: &'a Selection,
    pub overrides: Option<&'a CvoOverrides>,
    /// How long to wait for `version` when it is absent and there is no cvo-overrides.yaml.
    pub wait: Duration,
}

/// PURE: the `additionalEnabledCapabilities` to write so that no capability the live spec
/// lists is taken away: ours, then (sorted) the listed ones our selection does not enable.
pub fn keep_enabled(
    sel: &Selection,
    live_additional: &BTreeSet<String>,
) -> (Vec<String>, BTreeSet<String>) {
    let kept: BTreeSet<String> = live_additional.difference(&sel.enabled).cloned().collect();
    let mut additional = sel.additional.clone();
    additional.extend(kept.iter().filter(|k| !sel.additional.contains(k)).cloned());
    (additional, kept)
}

/// The capabilities an admin (or the installer) listed in the live
/// `spec.capabilities.additionalEnabledCapabilities`: never taken away. Those enabled only by
/// the live baseline and already installed stay enabled anyway (the CVO reports them as
/// implicitly enabled); those not installed yet are not ours to keep.
pub fn live_additional(live_spec: Option<&Value>) -> BTreeSet<String> {
    string_set(live_spec.and_then(|s| s.pointer("/capabilities/additionalEnabledCapabilities")))
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

/// Writes `spec.capabilities` (creating `version` from cvo-overrides.yaml, or waiting for it).
/// `waiting` is called with a line saying what is awaited, before the wait starts.
pub async fn apply(
    client: &kube::Client,
    req: &Request<'_>,
    mut waiting: impl FnMut(&str),
) -> Result<Applied> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource());
    let mut live = api
        .get_opt(NAME)
        .await
        .context("cannot read ClusterVersion version")?;
    if live.is_none() && req.overrides.is_none() {
        waiting(&format!(
            "waiting for ClusterVersion version to be created (no {CVO_OVERRIDES} in the asset dir to create it from)"
        ));
        live = Some(wait_for_version(&api, req.wait).await?);
    }
    let live_json = live.as_ref().map(serde_json::to_value).transpose()?;
    let live_spec = live_json.as_ref().and_then(|l| l.get("spec"));
    let sel = req.selection;
    let (additional, kept) = keep_enabled(sel, &live_additional(live_spec));
    let capabilities = json!({
        "baselineCapabilitySet": sel.baseline,
        "additionalEnabledCapabilities": additional,
    });

    let mut mutations = 0;
    let spec_current = live_spec
        .and_then(|s| s.get("capabilities"))
        .is_some_and(|c| contains(c, &capabilities));
    let created = live.is_none();
    if !spec_current {
        let spec = match (&live, req.overrides) {
            // Creating: the installer's whole spec (the CRD requires spec.clusterID).
            (None, Some(o)) => {
                let mut spec = o.spec.clone();
                spec["capabilities"] = capabilities.clone();
                spec
            }
            // Existing: only what the agent owns; every other field stays with its owner.
            _ => json!({"capabilities": capabilities}),
        };
        let body = json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "metadata": {"name": NAME},
            "spec": spec,
        });
        // force: during bootstrap the agent is the authority for spec.capabilities.
        api.patch(
            NAME,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .context("cannot server-side apply spec.capabilities to ClusterVersion version")?;
        mutations += 1;
    }

    let mut spec_set = sel.enabled.clone();
    spec_set.extend(kept.iter().cloned());
    let before = string_set(
        live_json
            .as_ref()
            .and_then(|l| l.pointer("/status/capabilities/enabledCapabilities")),
    );
    let enabled: BTreeSet<String> = spec_set.union(&before).cloned().collect();
    Ok(Applied {
        created,
        spec_patched: !spec_current,
        additional,
        kept,
        cvo_will_report: CvoWillReport::new(&spec_set, enabled),
        mutations,
    })
}

/// Watches until `version` exists; an error after `limit`.
async fn wait_for_version(api: &Api<DynamicObject>, limit: Duration) -> Result<DynamicObject> {
    let config = watcher::Config::default().fields(&format!("metadata.name={NAME}"));
    let mut events = watcher(api.clone(), config).boxed();
    let found = tokio::time::timeout(limit, async {
        while let Some(event) = events.next().await {
            match event {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o))
                    if o.metadata.name.as_deref() == Some(NAME) =>
                {
                    return Ok(o);
                }
                Ok(_) => {}
                Err(e) => {
                    if let Some(refused) = crate::cluster::WatchRefused::of(&e) {
                        return Err(refused.into());
                    }
                    tracing::warn!(error = %e, "watch of ClusterVersion interrupted; retrying")
                }
            }
        }
        anyhow::bail!("the watch of ClusterVersion ended")
    })
    .await;
    match found {
        Ok(result) => result,
        Err(_) => anyhow::bail!(
            "ClusterVersion version did not appear within {} and there is no {CVO_OVERRIDES} to create it from",
            humantime::format_duration(limit)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn selection(baseline: &str, additional: &[&str], enabled: &[&str]) -> Selection {
        Selection {
            baseline: baseline.into(),
            additional: additional.iter().map(|s| s.to_string()).collect(),
            enabled: set(enabled),
            known: set(enabled),
        }
    }

    #[test]
    fn day_two_keeps_what_an_admin_listed_and_adds_ours() {
        let sel = selection("None", &["Console"], &["Console"]);
        let live = json!({"capabilities": {"baselineCapabilitySet": "v4.14",
                                           "additionalEnabledCapabilities": ["Insights", "Build", "Console"]}});
        let listed = live_additional(Some(&live));
        assert_eq!(listed, set(&["Build", "Console", "Insights"]));
        let (additional, kept) = keep_enabled(&sel, &listed);
        assert_eq!(additional, ["Console", "Build", "Insights"]);
        assert_eq!(kept, set(&["Build", "Insights"]));
    }

    #[test]
    fn nothing_is_kept_when_ours_enables_every_listed_one() {
        // Storage is listed live and enabled by our baseline: not repeated, not "kept".
        let sel = selection("v4.14", &["Build"], &["Build", "Console", "Storage"]);
        let live = json!({"capabilities": {"additionalEnabledCapabilities": ["Storage", "Build"]}});
        let (additional, kept) = keep_enabled(&sel, &live_additional(Some(&live)));
        assert_eq!(additional, ["Build"]);
        assert!(kept.is_empty());
        assert!(live_additional(Some(&json!({"clusterID": "x"}))).is_empty());
        assert!(live_additional(None).is_empty());
    }

    #[test]
    fn overrides_need_a_cluster_version_with_a_cluster_id() {
        let dir = tempfile::tempdir().unwrap();
        assert!(overrides_from_assets(dir.path()).unwrap().is_none());
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        let file = dir.path().join(CVO_OVERRIDES);
        std::fs::write(
            &file,
            "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nmetadata: {name: version}\nspec: {channel: stable-4.18}\n",
        )
        .unwrap();
        let err = overrides_from_assets(dir.path()).unwrap_err();
        assert_eq!(err.field, "spec.clusterID");
        std::fs::write(
            &file,
            "apiVersion: config.openshift.io/v1\nkind: Secret\nspec: {clusterID: c}\n",
        )
        .unwrap();
        assert_eq!(overrides_from_assets(dir.path()).unwrap_err().field, "kind");
        std::fs::write(
            &file,
            "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nspec: {clusterID: c, channel: stable-4.18, upstream: 'https://u'}\n",
        )
        .unwrap();
        let o = overrides_from_assets(dir.path()).unwrap().unwrap();
        assert_eq!(o.cluster_id(), Some("c"));
        assert_eq!(o.spec["upstream"], "https://u");
    }

    #[test]
    fn an_unreadable_or_blank_cluster_id_overrides_file_is_bad_input_not_absent() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(CVO_OVERRIDES)).unwrap();
        let err = overrides_from_assets(dir.path()).unwrap_err();
        assert_eq!(
            err.field, "(file)",
            "a directory is unreadable, not missing"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        std::fs::write(
            dir.path().join(CVO_OVERRIDES),
            "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nspec: {clusterID: '  '}\n",
        )
        .unwrap();
        assert_eq!(
            overrides_from_assets(dir.path()).unwrap_err().field,
            "spec.clusterID"
        );
    }
}
