//! Capabilities (OpenShift semantics): which optional components a cluster gets.
//!
//! - `registry`: known capabilities and capability sets, as data
//!   (`templates/capabilities.yaml`, embedded; `--registry FILE` replaces it).
//! - `feature_gates`: the cluster's feature set and gates (a FeatureGate object, or the table
//!   generated from openshift/api).
//! - `selection`: the install-config's `capabilities` block -> the enabled set (exit 2 on
//!   unknown names).
//! - `reader`: manifest documents read as the cluster reads them (non-strict YAML, JSON).
//! - `manifests`: multi-document manifest files with each document's byte range.
//! - `inclusion`: PURE decision per object, with a reason (`Decision`, `Reason`).
//! - `upgrade`: PURE implicit enablement across payloads, and the condition.
//! - `cluster_version`: ClusterVersion `version` spec.capabilities (server-side apply) and
//!   status.
//! - `delete`: the `release.openshift.io/delete` annotation on updates.

pub mod cli;
pub mod cluster_version;
pub mod delete;
pub mod feature_gates;
pub mod inclusion;
pub mod manifests;
pub mod reader;
pub mod registry;
pub mod release;
pub mod selection;
pub mod upgrade;

use crate::assets::CapabilitiesSpec;
use crate::error::InputError;
use anyhow::{Context as _, Result};
use inclusion::{Context, Decision};
use manifests::Payload;
use registry::Registry;
use selection::{Gates, Selection};
use std::path::Path;

/// The enabled set from an asset dir's install-config (the defaults without a block).
pub fn selection_from_assets(
    registry: &Registry,
    gates: &Gates,
    assets: &Path,
) -> Result<Selection, InputError> {
    let spec = crate::assets::load(assets)?;
    selection_for_spec(registry, gates, assets, spec.capabilities.as_ref())
}

/// The enabled set for an already loaded install-config `capabilities` block.
pub fn selection_for_spec(
    registry: &Registry,
    gates: &Gates,
    assets: &Path,
    spec: Option<&CapabilitiesSpec>,
) -> Result<Selection, InputError> {
    Selection::resolve(
        registry,
        spec,
        gates,
        &assets.join(crate::assets::CLUSTER_CONFIG),
        selection::IC_FIELD,
    )
}

/// The enabled set from `--baseline` / `--additional` (the defaults when neither is given).
pub fn selection_from_flags(
    registry: &Registry,
    gates: &Gates,
    baseline: Option<&str>,
    additional: &[String],
) -> Result<Selection, InputError> {
    let spec = CapabilitiesSpec {
        baseline: baseline.map(str::to_string),
        additional: additional.to_vec(),
    };
    Selection::resolve(
        registry,
        Some(&spec),
        gates,
        Path::new("(command line: --baseline, --additional)"),
        "capabilities",
    )
}

/// Some manifest documents could not be read (exit 6): each was reported with its file and
/// document number, and every other object was decided.
#[derive(Debug, thiserror::Error)]
#[error(
    "{count} manifest document(s) could not be read (each is listed above); the others were decided"
)]
pub struct UnreadableManifests {
    pub count: usize,
}

/// The unreadable documents of a payload, as data.
pub fn unreadable_json(payload: &Payload) -> serde_json::Value {
    payload
        .unreadable
        .iter()
        .map(|e| serde_json::json!({"file": e.file, "field": e.field, "problem": e.problem}))
        .collect()
}

/// The decision context for a selection (no major-version check: set `major_version`).
pub fn context(sel: &Selection, gates: &Gates, profile: &str, exclude: &[String]) -> Context {
    Context {
        profile: profile.to_string(),
        feature_set: gates.feature_set.clone(),
        known_feature_sets: gates.known_feature_sets.clone(),
        major_version: None,
        gates: gates.gates.clone(),
        exclude: exclude.to_vec(),
        enabled: sel.enabled.clone(),
        known: sel.known.clone(),
    }
}

/// The decision pass: one decision per manifest, in payload order.
pub fn decide_all(payload: &Payload, ctx: &Context) -> Vec<Decision> {
    payload
        .manifests
        .iter()
        .map(|m| inclusion::decide(&m.annotations, ctx))
        .collect()
}

/// Counts of a decision pass: (included, to delete, excluded).
pub fn counts(decisions: &[Decision]) -> (usize, usize, usize) {
    let included = decisions.iter().filter(|d| d.is_included()).count();
    let delete = decisions.iter().filter(|d| **d == Decision::Delete).count();
    (included, delete, decisions.len() - included - delete)
}

/// Writes the included objects into `out`, file by file, byte-for-byte; returns the number
/// of files written. Files with no included object are not written.
pub fn write_included(payload: &Payload, decisions: &[Decision], out: &Path) -> Result<usize> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let keep: Vec<bool> = decisions.iter().map(Decision::is_included).collect();
    let mut written = 0;
    for (i, f) in payload.files.iter().enumerate() {
        if let Some(text) = manifests::filtered_text(payload, i, &keep) {
            let path = out.join(&f.name);
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            written += 1;
        }
    }
    Ok(written)
}

/// One `--explain` line per object.
pub fn explain(payload: &Payload, decisions: &[Decision]) -> String {
    let mut out = String::new();
    for (m, d) in payload.manifests.iter().zip(decisions) {
        out.push_str(&format!("{}\t{}\t{}\n", payload.source(m), m.id, d));
    }
    out
}

/// A set as a comma list ("none" when empty).
pub fn list(set: &std::collections::BTreeSet<String>) -> String {
    if set.is_empty() {
        "none".to_string()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}
