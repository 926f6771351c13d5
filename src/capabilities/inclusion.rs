//! PURE: does one object belong to this cluster? The annotations are parsed once
//! ([`Annotations::parse`], where malformed values are errors), then [`decide`] applies the
//! CVO's checks in order: exclude identifier, feature set, feature gates, cluster profile,
//! capabilities. An included object annotated `release.openshift.io/delete: "true"` is not
//! created at install and is deleted on an update.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

pub const EXCLUDE_PREFIX: &str = "exclude.release.openshift.io/";
pub const INCLUDE_PREFIX: &str = "include.release.openshift.io/";
pub const FEATURE_SET: &str = "release.openshift.io/feature-set";
pub const FEATURE_GATE: &str = "release.openshift.io/feature-gate";
pub const CAPABILITY: &str = "capability.openshift.io/name";
pub const DELETE: &str = "release.openshift.io/delete";
pub const DEFAULT_PROFILE: &str = "self-managed-high-availability";

/// A malformed annotation. The caller adds which manifest it is on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {annotation} is {value:?}: {problem}")]
pub struct AnnotationError {
    pub annotation: String,
    pub value: String,
    pub problem: String,
}

fn bad(annotation: &str, value: &str, problem: impl Into<String>) -> AnnotationError {
    AnnotationError {
        annotation: annotation.to_string(),
        value: value.to_string(),
        problem: problem.into(),
    }
}

/// The inclusion-relevant annotations of one object, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Annotations {
    /// Identifiers with `exclude.release.openshift.io/<id>: "true"`.
    pub excluded_for: Vec<String>,
    /// `release.openshift.io/feature-set`, when present.
    pub feature_sets: Option<Vec<String>>,
    /// `release.openshift.io/feature-gate`, when present.
    pub feature_gates: Option<Vec<String>>,
    /// Profiles with `include.release.openshift.io/<profile>: "true"`.
    pub profiles: Vec<String>,
    /// `capability.openshift.io/name`, split on `+`, when present.
    pub capabilities: Option<Vec<String>>,
    /// `release.openshift.io/delete: "true"`.
    pub delete: bool,
}

/// The entries of `value` split on `separator`, trimmed; an empty entry is an error saying
/// `problem`.
fn split_list(
    key: &str,
    value: &str,
    separator: char,
    problem: &str,
) -> Result<Vec<String>, AnnotationError> {
    value
        .split(separator)
        .map(|s| {
            let s = s.trim();
            if s.is_empty() {
                Err(bad(key, value, problem))
            } else {
                Ok(s.to_string())
            }
        })
        .collect()
}

/// A comma list with no empty entries.
fn comma_list(key: &str, value: &str) -> Result<Vec<String>, AnnotationError> {
    split_list(
        key,
        value,
        ',',
        "expected a comma-separated list without empty entries",
    )
}

impl Annotations {
    /// Validates the annotations; `feature_sets` are the valid feature-set names.
    pub fn parse(
        annotations: &BTreeMap<String, String>,
        feature_sets: &[String],
    ) -> Result<Self, AnnotationError> {
        let mut out = Annotations::default();
        for (key, value) in annotations {
            if let Some(id) = key.strip_prefix(EXCLUDE_PREFIX) {
                match value.as_str() {
                    "true" => out.excluded_for.push(id.to_string()),
                    _ => return Err(bad(key, value, "the only valid value is \"true\"")),
                }
            } else if let Some(profile) = key.strip_prefix(INCLUDE_PREFIX) {
                match value.as_str() {
                    "true" => out.profiles.push(profile.to_string()),
                    _ => return Err(bad(key, value, "the only valid value is \"true\"")),
                }
            } else if key == FEATURE_SET {
                let list = comma_list(key, value)?;
                if let Some(unknown) = list.iter().find(|s| !feature_sets.contains(s)) {
                    return Err(bad(
                        key,
                        value,
                        format!(
                            "unknown feature set {unknown:?}; valid: {}",
                            feature_sets.join(", ")
                        ),
                    ));
                }
                out.feature_sets = Some(list);
            } else if key == FEATURE_GATE {
                out.feature_gates = Some(comma_list(key, value)?);
            } else if key == CAPABILITY {
                out.capabilities = Some(split_list(
                    key,
                    value,
                    '+',
                    "expected capability names separated by '+', without empty names",
                )?);
            } else if key == DELETE {
                match value.as_str() {
                    "true" => out.delete = true,
                    _ => return Err(bad(key, value, "the only valid value is \"true\"")),
                }
            }
        }
        Ok(out)
    }
}

/// What the cluster is: everything the decision depends on.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    pub profile: String,
    #[serde(rename = "featureSet")]
    pub feature_set: String,
    #[serde(rename = "featureGates")]
    pub gates: BTreeSet<String>,
    /// `exclude.release.openshift.io/<id>` identifiers in force (e.g. internal-openshift-hosted).
    pub exclude: Vec<String>,
    #[serde(rename = "enabledCapabilities")]
    pub enabled: BTreeSet<String>,
    #[serde(rename = "knownCapabilities")]
    pub known: BTreeSet<String>,
}

/// Why an object is left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Reason {
    /// `exclude.release.openshift.io/<identifier>: "true"` for an identifier in force.
    ExcludedFor { identifier: String },
    /// Its feature-set list does not include the cluster's.
    FeatureSet {
        cluster: String,
        allowed: Vec<String>,
    },
    /// A feature gate it needs is off.
    FeatureGates { disabled: Vec<String> },
    /// Not `include.release.openshift.io/<profile>: "true"`.
    Profile { profile: String },
    /// It names capabilities the registry does not know.
    UnknownCapabilities { unknown: Vec<String> },
    /// It needs capabilities that are not enabled.
    DisabledCapabilities { disabled: Vec<String> },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::ExcludedFor { identifier } => {
                write!(f, "{EXCLUDE_PREFIX}{identifier}=true")
            }
            Reason::FeatureSet { cluster, allowed } => write!(
                f,
                "feature set {cluster} is not in {FEATURE_SET}={}",
                allowed.join(",")
            ),
            Reason::FeatureGates { disabled } => {
                write!(f, "feature gate(s) not enabled: {}", disabled.join(","))
            }
            Reason::Profile { profile } => {
                write!(
                    f,
                    "not in profile ({INCLUDE_PREFIX}{profile} is not \"true\")"
                )
            }
            Reason::UnknownCapabilities { unknown } => {
                write!(f, "unknown capability: {}", unknown.join("+"))
            }
            Reason::DisabledCapabilities { disabled } => {
                write!(f, "capability not enabled: {}", disabled.join("+"))
            }
        }
    }
}

/// The outcome for one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum Decision {
    Include,
    /// Included, but annotated for deletion: not created at install, deleted on an update.
    Delete,
    Exclude(Reason),
}

impl Decision {
    pub fn is_included(&self) -> bool {
        matches!(self, Decision::Include)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Include => f.write_str("included"),
            Decision::Delete => write!(
                f,
                "delete ({DELETE}=true: not created at install, deleted on an update)"
            ),
            Decision::Exclude(r) => write!(f, "excluded: {r}"),
        }
    }
}

/// The names `set` does not hold, in their order.
fn not_in(names: &[String], set: &BTreeSet<String>) -> Vec<String> {
    names
        .iter()
        .filter(|n| !set.contains(*n))
        .cloned()
        .collect()
}

/// Every check but the capabilities one (used for implicit enablement on updates).
pub fn decide_without_capabilities(a: &Annotations, ctx: &Context) -> Option<Reason> {
    if let Some(id) = a.excluded_for.iter().find(|id| ctx.exclude.contains(id)) {
        return Some(Reason::ExcludedFor {
            identifier: id.clone(),
        });
    }
    if let Some(allowed) = &a.feature_sets
        && !allowed.contains(&ctx.feature_set)
    {
        return Some(Reason::FeatureSet {
            cluster: ctx.feature_set.clone(),
            allowed: allowed.clone(),
        });
    }
    if let Some(gates) = &a.feature_gates {
        let disabled = not_in(gates, &ctx.gates);
        if !disabled.is_empty() {
            return Some(Reason::FeatureGates { disabled });
        }
    }
    if !a.profiles.contains(&ctx.profile) {
        return Some(Reason::Profile {
            profile: ctx.profile.clone(),
        });
    }
    None
}

/// The capability check alone.
pub fn capability_check(a: &Annotations, ctx: &Context) -> Option<Reason> {
    let names = a.capabilities.as_ref()?;
    let unknown = not_in(names, &ctx.known);
    if !unknown.is_empty() {
        return Some(Reason::UnknownCapabilities { unknown });
    }
    let disabled = not_in(names, &ctx.enabled);
    (!disabled.is_empty()).then_some(Reason::DisabledCapabilities { disabled })
}

/// The decision for one object, checks in the CVO's order.
pub fn decide(a: &Annotations, ctx: &Context) -> Decision {
    if let Some(r) = decide_without_capabilities(a, ctx).or_else(|| capability_check(a, ctx)) {
        return Decision::Exclude(r);
    }
    if a.delete {
        Decision::Delete
    } else {
        Decision::Include
    }
}

#[cfg(test)]
mod tests;
