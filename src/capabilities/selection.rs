//! From the install-config's `capabilities` block (or flags) to the effective enabled set.
//! Unknown names are input errors (exit 2) that name the file, the field, the value and the
//! valid values.

use super::registry::Registry;
use crate::assets::CapabilitiesSpec;
use crate::error::InputError;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The install-config field prefix, as the asset loader reports it.
pub const IC_FIELD: &str = "data.install-config: capabilities";

/// Feature set and enabled feature gates.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Gates {
    #[serde(rename = "featureSet")]
    pub feature_set: String,
    #[serde(rename = "featureGates")]
    pub gates: BTreeSet<String>,
}

impl Gates {
    /// `feature_set` (default: the registry's) with its gates, unless `explicit` names them.
    pub fn resolve(
        registry: &Registry,
        feature_set: Option<&str>,
        explicit: Option<&[String]>,
    ) -> Result<Self, InputError> {
        let feature_set = feature_set
            .unwrap_or(&registry.default_feature_set)
            .to_string();
        let Some(derived) = registry.feature_set_gates(&feature_set) else {
            return Err(InputError::new(
                "(command line)",
                "--feature-set",
                format!(
                    "unknown feature set {feature_set:?}; valid: {}",
                    registry.feature_set_names().join(", ")
                ),
            ));
        };
        let gates = match explicit {
            Some(list) => list
                .iter()
                .map(|g| g.trim().to_string())
                .filter(|g| !g.is_empty())
                .collect(),
            None => derived.clone(),
        };
        Ok(Self { feature_set, gates })
    }
}

/// What the cluster asks for and what that enables.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Selection {
    #[serde(rename = "baselineCapabilitySet")]
    pub baseline: String,
    /// As requested: install-config order, duplicates dropped.
    #[serde(rename = "additionalEnabledCapabilities")]
    pub additional: Vec<String>,
    #[serde(rename = "enabledCapabilities")]
    pub enabled: BTreeSet<String>,
    #[serde(rename = "knownCapabilities")]
    pub known: BTreeSet<String>,
}

impl Selection {
    /// Validates `spec` (None: the defaults) against the registry. `file` and `field` say
    /// where the values came from, for the error message.
    pub fn resolve(
        registry: &Registry,
        spec: Option<&CapabilitiesSpec>,
        gates: &Gates,
        file: &Path,
        field: &str,
    ) -> Result<Self, InputError> {
        let baseline = spec
            .and_then(|s| s.baseline.clone())
            .unwrap_or_else(|| registry.default_baseline.clone());
        let Some(mut enabled) = registry.set(&baseline, &gates.gates) else {
            return Err(InputError::new(
                file,
                format!("{field}.baselineCapabilitySet"),
                format!(
                    "unknown capability set {baseline:?}; valid: {}",
                    registry.set_names().join(", ")
                ),
            ));
        };
        let allowed = registry.in_some_set(&gates.gates);
        let mut additional: Vec<String> = Vec::new();
        for (i, name) in spec
            .map(|s| s.additional.as_slice())
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if !allowed.contains(name) {
                return Err(InputError::new(
                    file,
                    format!("{field}.additionalEnabledCapabilities[{i}]"),
                    format!(
                        "unknown capability {name:?}; valid: {}",
                        allowed.iter().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            if !additional.contains(name) {
                additional.push(name.clone());
            }
            enabled.insert(name.clone());
        }
        Ok(Self {
            baseline,
            additional,
            enabled,
            known: registry.known(&gates.gates),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (Registry, Gates) {
        let r = Registry::load(None).unwrap();
        let g = Gates::resolve(&r, None, None).unwrap();
        (r, g)
    }

    fn spec(baseline: Option<&str>, additional: &[&str]) -> CapabilitiesSpec {
        CapabilitiesSpec {
            baseline: baseline.map(str::to_string),
            additional: additional.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn no_block_means_vcurrent() {
        let (r, g) = setup();
        let s = Selection::resolve(&r, None, &g, Path::new("f"), IC_FIELD).unwrap();
        assert_eq!(s.baseline, "vCurrent");
        assert_eq!(s.enabled, r.set("vCurrent", &g.gates).unwrap());
    }

    #[test]
    fn baseline_plus_additional_is_the_enabled_set() {
        let (r, g) = setup();
        let s = Selection::resolve(
            &r,
            Some(&spec(
                Some("None"),
                &["marketplace", "Console", "marketplace"],
            )),
            &g,
            Path::new("f"),
            IC_FIELD,
        )
        .unwrap();
        assert_eq!(s.additional, ["marketplace", "Console"]);
        assert_eq!(
            s.enabled.iter().map(String::as_str).collect::<Vec<_>>(),
            ["Console", "marketplace"]
        );
        assert_eq!(s.known.len(), 17);
    }

    #[test]
    fn unknown_baseline_names_the_value_and_lists_the_sets() {
        let (r, g) = setup();
        let e = Selection::resolve(
            &r,
            Some(&spec(Some("v9.99"), &[])),
            &g,
            Path::new("cc.yaml"),
            IC_FIELD,
        )
        .unwrap_err();
        assert_eq!(e.field, format!("{IC_FIELD}.baselineCapabilitySet"));
        assert!(e.problem.contains("\"v9.99\""), "{e}");
        assert!(e.problem.contains("None, v4.11, v4.12"), "{e}");
    }

    #[test]
    fn unknown_additional_names_its_index_and_lists_the_valid_ones() {
        let (r, g) = setup();
        let e = Selection::resolve(
            &r,
            Some(&spec(None, &["Console", "console"])),
            &g,
            Path::new("cc.yaml"),
            IC_FIELD,
        )
        .unwrap_err();
        assert_eq!(
            e.field,
            format!("{IC_FIELD}.additionalEnabledCapabilities[1]")
        );
        assert!(
            e.problem.contains("\"console\"") && e.problem.contains("Console, DeploymentConfig"),
            "{e}"
        );
    }

    #[test]
    fn gated_capability_is_valid_only_with_its_gate() {
        let (r, g) = setup();
        let want = spec(Some("None"), &["ClusterAPI"]);
        assert!(Selection::resolve(&r, Some(&want), &g, Path::new("f"), IC_FIELD).is_err());
        let tp = Gates::resolve(&r, Some("TechPreviewNoUpgrade"), None).unwrap();
        let s = Selection::resolve(&r, Some(&want), &tp, Path::new("f"), IC_FIELD).unwrap();
        assert!(s.enabled.contains("ClusterAPI"));
    }
}
