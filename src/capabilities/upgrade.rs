//! PURE: implicit enablement on an update. A manifest that the cluster applies today keeps
//! being applied after the update, so the capabilities it carries in the new payload are
//! enabled even when the configuration would leave them out (the seed's four steps: included
//! old manifests; new manifests included without capability filtering; match by group, kind,
//! namespace and name; union their capabilities with the enabled set).

use super::inclusion::{Context, Decision, decide, decide_without_capabilities};
use super::manifests::Payload;
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};

/// The condition reported on ClusterVersion.
pub const CONDITION: &str = "ImplicitlyEnabledCapabilities";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// `ImplicitlyEnabledCapabilities`: True when `enabled` holds capabilities the spec does not
/// ask for (listed sorted), else False/AsExpected.
pub fn condition(requested: &BTreeSet<String>, enabled: &BTreeSet<String>) -> Condition {
    let implicit: Vec<&str> = enabled.difference(requested).map(String::as_str).collect();
    if implicit.is_empty() {
        Condition {
            type_: CONDITION.into(),
            status: "False".into(),
            reason: "AsExpected".into(),
            message: "Capabilities match configured spec".into(),
        }
    } else {
        Condition {
            type_: CONDITION.into(),
            status: "True".into(),
            reason: "CapabilitiesImplicitlyEnabled".into(),
            message: format!(
                "The following capabilities could not be disabled: {}",
                implicit.join(", ")
            ),
        }
    }
}

/// What the cluster-version operator reports for an enabled set: the set, what in it the
/// spec does not ask for, and the condition saying so.
#[derive(Debug, Clone, Serialize)]
pub struct CvoWillReport {
    #[serde(rename = "enabledCapabilities")]
    pub enabled: BTreeSet<String>,
    #[serde(rename = "implicitlyEnabled")]
    pub implicitly_enabled: BTreeSet<String>,
    pub condition: Condition,
}

impl CvoWillReport {
    /// `enabled` against what the spec asks for (`requested`).
    pub fn new(requested: &BTreeSet<String>, enabled: BTreeSet<String>) -> Self {
        Self {
            condition: condition(requested, &enabled),
            implicitly_enabled: enabled.difference(requested).cloned().collect(),
            enabled,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Upgrade {
    /// What the configuration asks for (plus what was enabled before).
    #[serde(rename = "requestedCapabilities")]
    pub requested: BTreeSet<String>,
    /// The new enabled set (requested + implicitly enabled: those only because manifests
    /// applied before carry them now), as the cluster-version operator will report it.
    #[serde(flatten)]
    pub report: CvoWillReport,
    /// Per new manifest, with the new enabled set.
    #[serde(skip)]
    pub decisions: Vec<Decision>,
}

/// `ctx.enabled` is what the cluster has enabled now (spec + previously enabled); the old
/// payload is judged with it (and its own major version, `old_major`, as the CVO's
/// `GetImplicitlyEnabledCapabilities` judges the current payload), the new payload with the
/// result.
pub fn upgrade(
    old: &Payload,
    new: &Payload,
    ctx: &Context,
    old_major: Option<u64>,
    requested: &BTreeSet<String>,
) -> Upgrade {
    let old_ctx = Context {
        major_version: old_major,
        ..ctx.clone()
    };
    let applied: HashSet<(&str, &str, &str, &str)> = old
        .manifests
        .iter()
        .filter(|m| decide(&m.annotations, &old_ctx) == Decision::Include)
        .map(|m| m.id.key())
        .collect();
    let mut enabled = ctx.enabled.clone();
    for m in &new.manifests {
        if decide_without_capabilities(&m.annotations, ctx).is_some()
            || !applied.contains(&m.id.key())
        {
            continue;
        }
        for c in m.annotations.capabilities.iter().flatten() {
            if ctx.known.contains(c) {
                enabled.insert(c.clone());
            }
        }
    }
    let new_ctx = Context {
        enabled: enabled.clone(),
        ..ctx.clone()
    };
    let decisions = new
        .manifests
        .iter()
        .map(|m| decide(&m.annotations, &new_ctx))
        .collect();
    Upgrade {
        requested: requested.clone(),
        report: CvoWillReport::new(requested, enabled),
        decisions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::inclusion::DEFAULT_PROFILE;
    use crate::capabilities::manifests::{ManifestFile, from_files};
    use std::path::Path;

    fn obj(kind: &str, name: &str, caps: Option<&str>) -> String {
        let cap = caps
            .map(|c| format!("    capability.openshift.io/name: {c}\n"))
            .unwrap_or_default();
        format!(
            "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: ns\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n{cap}"
        )
    }

    fn payload(docs: &[String]) -> Payload {
        from_files(
            Path::new("p"),
            vec![ManifestFile {
                name: "0000_50_x_00.yaml".into(),
                text: docs.join("---\n"),
            }],
        )
    }

    fn set(s: &[&str]) -> BTreeSet<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn ctx(enabled: &[&str]) -> Context {
        Context {
            profile: DEFAULT_PROFILE.into(),
            feature_set: "Default".into(),
            known_feature_sets: vec!["Default".into()],
            gates: BTreeSet::new(),
            major_version: None,
            exclude: Vec::new(),
            enabled: set(enabled),
            known: set(&["Console", "Insights", "Build"]),
        }
    }

    #[test]
    fn a_core_manifest_moving_into_a_disabled_capability_enables_it() {
        let old = payload(&[
            obj("Deployment", "a", None),
            obj("Deployment", "b", Some("Build")),
        ]);
        let new = payload(&[
            obj("Deployment", "a", Some("Insights")),
            obj("Deployment", "b", Some("Build")),
            obj("Deployment", "c", Some("Console")),
        ]);
        let u = upgrade(&old, &new, &ctx(&[]), None, &set(&[]));
        assert_eq!(u.report.enabled, set(&["Insights"]));
        assert_eq!(u.report.implicitly_enabled, set(&["Insights"]));
        assert_eq!(u.report.condition.status, "True");
        assert_eq!(u.report.condition.reason, "CapabilitiesImplicitlyEnabled");
        // The report's fields sit next to `requestedCapabilities`, as the CLI's JSON shows them.
        let json = serde_json::to_value(&u).unwrap();
        assert_eq!(json["requestedCapabilities"], serde_json::json!([]));
        assert_eq!(json["enabledCapabilities"], serde_json::json!(["Insights"]));
        assert_eq!(json["implicitlyEnabled"], serde_json::json!(["Insights"]));
        assert_eq!(json["condition"]["status"], "True");
        assert!(u.report.condition.message.ends_with("disabled: Insights"));
        assert_eq!(
            u.decisions
                .iter()
                .map(Decision::is_included)
                .collect::<Vec<_>>(),
            [true, false, false]
        );
    }

    #[test]
    fn nothing_moved_means_as_expected() {
        let old = payload(&[obj("Deployment", "a", Some("Console"))]);
        let new = payload(&[obj("Deployment", "a", Some("Console"))]);
        let u = upgrade(&old, &new, &ctx(&["Console"]), None, &set(&["Console"]));
        assert_eq!(u.report.enabled, set(&["Console"]));
        assert_eq!(u.report.condition.status, "False");
        assert_eq!(u.report.condition.reason, "AsExpected");
    }

    #[test]
    fn matching_ignores_the_api_version_but_not_the_kind() {
        let old = payload(&[obj("Deployment", "a", None)]);
        let new = payload(&[obj("DaemonSet", "a", Some("Build"))]);
        let u = upgrade(&old, &new, &ctx(&[]), None, &set(&[]));
        assert!(u.report.enabled.is_empty());
    }

    /// The old payload is judged with its own major version, the new one with the new.
    #[test]
    fn each_payload_is_judged_with_its_own_major_version() {
        let crd = |caps: Option<&str>| {
            obj("CustomResourceDefinition", "a", caps)
                .replace("apps/v1", "apiextensions.k8s.io/v1")
                .replace(
                    "  annotations:\n",
                    "  annotations:\n    release.openshift.io/major-version: \"4\"\n",
                )
        };
        let old = payload(&[crd(None)]);
        let new =
            payload(&[crd(Some("Build")).replace("major-version: \"4\"", "major-version: \"5\"")]);
        let ctx5 = Context {
            major_version: Some(5),
            ..ctx(&[])
        };
        // Applied under 4, so its new capability is enabled on the update to 5.
        let u = upgrade(&old, &new, &ctx5, Some(4), &set(&[]));
        assert_eq!(u.report.enabled, set(&["Build"]));
        // Judged with 5, the old object was never applied: nothing to keep.
        let u = upgrade(&old, &new, &ctx5, Some(5), &set(&[]));
        assert!(u.report.enabled.is_empty());
    }
}
