//! PURE: does one object belong to this cluster? The annotations are read once
//! ([`Annotations::parse`]), then [`decide`] applies the checks of library-go `pkg/manifest`
//! `Include` (as cluster-version-operator 6e719331fb58 vendors it: `manifest.go:310-376`) in
//! its order: exclude identifier, feature set and feature gate together, feature set,
//! feature gates, major version, cluster profile, capabilities. Values the cluster does not
//! accept exclude the object, as there, with a reason that says what is wrong. An included
//! object annotated `release.openshift.io/delete: "true"` is not created at install and is
//! deleted on an update.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod reason;
pub use reason::{Decision, Reason};

pub const EXCLUDE_PREFIX: &str = "exclude.release.openshift.io/";
pub const INCLUDE_PREFIX: &str = "include.release.openshift.io/";
pub const FEATURE_SET: &str = "release.openshift.io/feature-set";
pub const FEATURE_GATE: &str = "release.openshift.io/feature-gate";
pub const MAJOR_VERSION: &str = "release.openshift.io/major-version";
pub const CAPABILITY: &str = "capability.openshift.io/name";
pub const DELETE: &str = "release.openshift.io/delete";
pub const DEFAULT_PROFILE: &str = "self-managed-high-availability";

/// A malformed `release.openshift.io/delete` (the one annotation `Include` does not read:
/// the agent refuses to guess). The caller adds which manifest it is on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {annotation} is {value:?}: {problem}")]
pub struct AnnotationError {
    pub annotation: String,
    pub value: String,
    pub problem: String,
}

/// One entry of `release.openshift.io/feature-gate`: `Gate` needs it on, `-Gate` off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateRequirement {
    pub gate: String,
    pub enabled: bool,
}

/// The inclusion-relevant annotations of one object, as `Include` reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Annotations {
    /// The object has no annotations the cluster can read: none at all, or one whose value
    /// is not a string (`unstructured.GetAnnotations` then returns nil). `Include` excludes
    /// it ("no annotations"). Holds what the reader found.
    pub unreadable: Option<String>,
    /// Identifiers with `exclude.release.openshift.io/<id>: "true"` (other values are ignored).
    pub excluded_for: Vec<String>,
    /// `release.openshift.io/feature-set`, split on `,` (not trimmed, as `getFeatureSets`).
    pub feature_sets: Option<Vec<String>>,
    /// `release.openshift.io/feature-gate`: entries trimmed, empty ones skipped.
    pub feature_gates: Option<Vec<GateRequirement>>,
    /// `release.openshift.io/major-version` as written; checked only with a major version.
    pub major_version: Option<String>,
    /// Whether the object's kind may carry a major-version requirement (a FeatureGate of
    /// config.openshift.io or a CustomResourceDefinition); the reader sets it.
    pub major_version_kind: bool,
    /// `include.release.openshift.io/<profile>` values by profile.
    pub profiles: BTreeMap<String, String>,
    /// `capability.openshift.io/name`, split on `+`; None when absent or empty.
    pub capabilities: Option<Vec<String>>,
    /// `release.openshift.io/delete: "true"`.
    pub delete: bool,
}

impl Annotations {
    /// Reads the annotations. Only `release.openshift.io/delete` with a value other than
    /// `"true"` is an error.
    pub fn parse(annotations: &BTreeMap<String, String>) -> Result<Self, AnnotationError> {
        let mut out = Annotations::default();
        for (key, value) in annotations {
            if let Some(id) = key.strip_prefix(EXCLUDE_PREFIX) {
                if value == "true" {
                    out.excluded_for.push(id.to_string());
                }
            } else if let Some(profile) = key.strip_prefix(INCLUDE_PREFIX) {
                out.profiles.insert(profile.to_string(), value.clone());
            } else if key == FEATURE_SET {
                out.feature_sets = Some(value.split(',').map(str::to_string).collect());
            } else if key == FEATURE_GATE {
                out.feature_gates = Some(gate_requirements(value));
            } else if key == MAJOR_VERSION {
                out.major_version = Some(value.clone());
            } else if key == CAPABILITY {
                out.capabilities =
                    (!value.is_empty()).then(|| value.split('+').map(str::to_string).collect());
            } else if key == DELETE {
                if value != "true" {
                    return Err(AnnotationError {
                        annotation: key.clone(),
                        value: value.clone(),
                        problem: "the only valid value is \"true\"".into(),
                    });
                }
                out.delete = true;
            }
        }
        Ok(out)
    }
}

/// `checkFeatureGates` (library-go manifest.go:206-237): trimmed, empty entries skipped,
/// a leading `-` asks for the gate to be off.
fn gate_requirements(value: &str) -> Vec<GateRequirement> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_prefix('-') {
            Some(gate) => GateRequirement {
                gate: gate.to_string(),
                enabled: false,
            },
            None => GateRequirement {
                gate: s.to_string(),
                enabled: true,
            },
        })
        .collect()
}

/// What the cluster is: everything the decision depends on.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    pub profile: String,
    #[serde(rename = "featureSet")]
    pub feature_set: String,
    /// The values `release.openshift.io/feature-set` may hold.
    #[serde(rename = "knownFeatureSets")]
    pub known_feature_sets: Vec<String>,
    #[serde(rename = "featureGates")]
    pub gates: BTreeSet<String>,
    /// The release's major version; None: `release.openshift.io/major-version` is not checked.
    #[serde(rename = "majorVersion")]
    pub major_version: Option<u64>,
    /// `exclude.release.openshift.io/<id>` identifiers in force (e.g. internal-openshift-hosted).
    pub exclude: Vec<String>,
    #[serde(rename = "enabledCapabilities")]
    pub enabled: BTreeSet<String>,
    #[serde(rename = "knownCapabilities")]
    pub known: BTreeSet<String>,
}

/// The names `set` does not hold, in their order.
fn not_in(names: &[String], set: &BTreeSet<String>) -> Vec<String> {
    names
        .iter()
        .filter(|n| !set.contains(*n))
        .cloned()
        .collect()
}

/// `checkMajorVersion` (library-go manifest.go:240-297).
fn major_version_check(a: &Annotations, cluster: u64) -> Option<Reason> {
    let value = a.major_version.as_ref()?;
    if !a.major_version_kind {
        return Some(Reason::MajorVersionKind);
    }
    let mut included = BTreeSet::new();
    let mut excluded = BTreeSet::new();
    for entry in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (set, digits) = match entry.strip_prefix('-') {
            Some(rest) => (&mut excluded, rest),
            None => (&mut included, entry),
        };
        // strconv.ParseUint(s, 10, 64): ASCII digits only, no sign.
        match digits.parse::<u64>() {
            Ok(v) if digits.bytes().all(|b| b.is_ascii_digit()) => {
                set.insert(v);
            }
            _ => {
                return Some(Reason::MajorVersionInvalid {
                    value: value.clone(),
                });
            }
        }
    }
    let mismatch = || Reason::MajorVersion {
        cluster,
        required: value.clone(),
    };
    if included.intersection(&excluded).next().is_some() {
        Some(Reason::MajorVersionInvalid {
            value: value.clone(),
        })
    } else if included.contains(&cluster) {
        None
    } else if excluded.contains(&cluster) || !included.is_empty() {
        Some(mismatch())
    } else {
        None
    }
}

/// Every check but the capabilities one (used for implicit enablement on updates).
pub fn decide_without_capabilities(a: &Annotations, ctx: &Context) -> Option<Reason> {
    if let Some(found) = &a.unreadable {
        return Some(Reason::NoAnnotations {
            found: found.clone(),
        });
    }
    if let Some(id) = a.excluded_for.iter().find(|id| ctx.exclude.contains(id)) {
        return Some(Reason::ExcludedFor {
            identifier: id.clone(),
        });
    }
    if a.feature_sets.is_some() && a.feature_gates.is_some() {
        return Some(Reason::FeatureSetAndGate);
    }
    if let Some(allowed) = &a.feature_sets {
        if let Some(unknown) = allowed.iter().find(|s| !ctx.known_feature_sets.contains(s)) {
            return Some(Reason::UnknownFeatureSet {
                value: unknown.clone(),
                known: ctx.known_feature_sets.clone(),
            });
        }
        if !allowed.contains(&ctx.feature_set) {
            return Some(Reason::FeatureSet {
                cluster: ctx.feature_set.clone(),
                allowed: allowed.clone(),
            });
        }
    }
    if let Some(requirements) = &a.feature_gates {
        let (disabled, enabled): (Vec<_>, Vec<_>) = requirements
            .iter()
            .filter(|r| ctx.gates.contains(&r.gate) != r.enabled)
            .partition(|r| r.enabled);
        if !disabled.is_empty() || !enabled.is_empty() {
            let names = |v: Vec<&GateRequirement>| v.into_iter().map(|r| r.gate.clone()).collect();
            return Some(Reason::FeatureGates {
                disabled: names(disabled),
                enabled: names(enabled),
            });
        }
    }
    if let Some(r) = ctx.major_version.and_then(|v| major_version_check(a, v)) {
        return Some(r);
    }
    match a.profiles.get(&ctx.profile) {
        Some(v) if v == "true" => None,
        value => Some(Reason::Profile {
            profile: ctx.profile.clone(),
            value: value.cloned(),
        }),
    }
}

/// The capability check alone (`checkResourceEnablement`).
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
