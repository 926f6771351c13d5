//! The outcome of a decision and why, in the words `--explain` prints.

use super::{DELETE, EXCLUDE_PREFIX, FEATURE_SET, INCLUDE_PREFIX, MAJOR_VERSION};
use serde::Serialize;
use std::fmt;

/// Why an object is left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Reason {
    /// No annotations the cluster can read (none, or one that is not a string).
    NoAnnotations { found: String },
    /// `exclude.release.openshift.io/<identifier>: "true"` for an identifier in force.
    ExcludedFor { identifier: String },
    /// Both `release.openshift.io/feature-set` and `release.openshift.io/feature-gate`.
    FeatureSetAndGate,
    /// A `release.openshift.io/feature-set` entry that is no feature set.
    UnknownFeatureSet { value: String, known: Vec<String> },
    /// Its feature-set list does not include the cluster's.
    FeatureSet {
        cluster: String,
        allowed: Vec<String>,
    },
    /// Gates it needs on are off (`disabled`), or gates it needs off are on (`enabled`).
    FeatureGates {
        disabled: Vec<String>,
        enabled: Vec<String>,
    },
    /// `release.openshift.io/major-version` on a kind other than FeatureGate or CRD.
    MajorVersionKind,
    /// `release.openshift.io/major-version` that is not a list of (`-`)numbers, or lists a
    /// version both ways.
    MajorVersionInvalid { value: String },
    /// The release's major version is not one it asks for.
    MajorVersion { cluster: u64, required: String },
    /// `include.release.openshift.io/<profile>` is not `"true"` (`value`: what it is).
    Profile {
        profile: String,
        value: Option<String>,
    },
    /// It names capabilities the cluster does not know.
    UnknownCapabilities { unknown: Vec<String> },
    /// It needs capabilities that are not enabled.
    DisabledCapabilities { disabled: Vec<String> },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NoAnnotations { found } => {
                write!(f, "no annotations the cluster can read ({found})")
            }
            Reason::ExcludedFor { identifier } => {
                write!(f, "{EXCLUDE_PREFIX}{identifier}=true")
            }
            Reason::FeatureSetAndGate => write!(
                f,
                "both {FEATURE_SET} and release.openshift.io/feature-gate are set (only one may be)"
            ),
            Reason::UnknownFeatureSet { value, known } => write!(
                f,
                "{FEATURE_SET} names {value:?}, which is not a feature set; valid: {}",
                known.join(", ")
            ),
            Reason::FeatureSet { cluster, allowed } => write!(
                f,
                "feature set {cluster} is not in {FEATURE_SET}={}",
                allowed.join(",")
            ),
            Reason::FeatureGates { disabled, enabled } => {
                let mut parts = Vec::new();
                if !disabled.is_empty() {
                    parts.push(format!(
                        "feature gate(s) not enabled: {}",
                        disabled.join(",")
                    ));
                }
                if !enabled.is_empty() {
                    parts.push(format!(
                        "feature gate(s) enabled that must be off: {}",
                        enabled.join(",")
                    ));
                }
                f.write_str(&parts.join("; "))
            }
            Reason::MajorVersionKind => write!(
                f,
                "{MAJOR_VERSION} is only allowed on a FeatureGate or a CustomResourceDefinition"
            ),
            Reason::MajorVersionInvalid { value } => {
                write!(f, "{MAJOR_VERSION}={value} is not a valid requirement")
            }
            Reason::MajorVersion { cluster, required } => {
                write!(
                    f,
                    "major version {cluster} does not match {MAJOR_VERSION}={required}"
                )
            }
            Reason::Profile { profile, value } => match value {
                None => write!(
                    f,
                    "not in profile ({INCLUDE_PREFIX}{profile} is not \"true\")"
                ),
                Some(v) => write!(
                    f,
                    "not in profile ({INCLUDE_PREFIX}{profile} is {v:?}, not \"true\")"
                ),
            },
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
