//! The capability registry as data: known capabilities, capability sets and feature sets come
//! from `templates/capabilities.yaml` (embedded at build time) or from a file given with
//! `--registry`. Nothing about OpenShift's capability list is hard-coded in Rust.

use crate::error::InputError;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The embedded registry.
pub const EMBEDDED: &str = include_str!("../../templates/capabilities.yaml");
/// How the embedded registry is named in error messages.
pub const EMBEDDED_NAME: &str = "<embedded>/templates/capabilities.yaml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCapability {
    name: String,
    #[serde(default, rename = "featureGate")]
    feature_gate: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistry {
    #[serde(rename = "defaultBaseline")]
    default_baseline: String,
    #[serde(rename = "defaultFeatureSet")]
    default_feature_set: String,
    capabilities: Vec<RawCapability>,
    sets: BTreeMap<String, Vec<String>>,
    #[serde(rename = "featureSets")]
    feature_sets: BTreeMap<String, Vec<String>>,
}

/// A validated registry.
#[derive(Debug, Clone)]
pub struct Registry {
    /// Where it came from (a path, or [`EMBEDDED_NAME`]).
    pub source: PathBuf,
    pub default_baseline: String,
    pub default_feature_set: String,
    /// Capability name -> the feature gate it needs (None: always known), in file order.
    capabilities: Vec<(String, Option<String>)>,
    sets: BTreeMap<String, BTreeSet<String>>,
    feature_sets: BTreeMap<String, BTreeSet<String>>,
}

/// The set that also gets the gated capabilities whose gates are on.
pub const CURRENT_SET: &str = "vCurrent";

impl Registry {
    /// The embedded registry, or the file at `path`.
    pub fn load(path: Option<&Path>) -> Result<Self, InputError> {
        match path {
            None => Self::parse(Path::new(EMBEDDED_NAME), EMBEDDED),
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| InputError::new(p, "(file)", format!("cannot read: {e}")))?;
                Self::parse(p, &text)
            }
        }
    }

    pub fn parse(source: &Path, text: &str) -> Result<Self, InputError> {
        let raw: RawRegistry = serde_saphyr::from_str(text).map_err(|e| {
            InputError::new(
                source,
                "(document)",
                format!("invalid capability registry: {e}"),
            )
        })?;
        let err = |field: &str, problem: String| InputError::new(source, field, problem);
        let mut names = BTreeSet::new();
        for (i, c) in raw.capabilities.iter().enumerate() {
            if c.name.trim().is_empty() || c.name.contains('+') || c.name.contains(',') {
                return Err(err(
                    &format!("capabilities[{i}].name"),
                    format!("{:?} is not a valid capability name", c.name),
                ));
            }
            if !names.insert(c.name.clone()) {
                return Err(err(
                    &format!("capabilities[{i}].name"),
                    format!("{:?} is listed twice", c.name),
                ));
            }
        }
        let mut sets = BTreeMap::new();
        for (set, members) in &raw.sets {
            let mut s = BTreeSet::new();
            for m in members {
                if !names.contains(m) {
                    return Err(err(
                        &format!("sets.{set}"),
                        format!("{m:?} is not in capabilities"),
                    ));
                }
                s.insert(m.clone());
            }
            sets.insert(set.clone(), s);
        }
        if !sets.contains_key(&raw.default_baseline) {
            return Err(err(
                "defaultBaseline",
                format!("{:?} is not one of the sets", raw.default_baseline),
            ));
        }
        if !raw.feature_sets.contains_key(&raw.default_feature_set) {
            return Err(err(
                "defaultFeatureSet",
                format!("{:?} is not one of featureSets", raw.default_feature_set),
            ));
        }
        Ok(Self {
            source: source.to_path_buf(),
            default_baseline: raw.default_baseline,
            default_feature_set: raw.default_feature_set,
            capabilities: raw
                .capabilities
                .into_iter()
                .map(|c| (c.name, c.feature_gate))
                .collect(),
            sets,
            feature_sets: raw
                .feature_sets
                .into_iter()
                .map(|(k, v)| (k, v.into_iter().collect()))
                .collect(),
        })
    }

    /// Capabilities known with these feature gates on: the ungated ones plus the gated ones
    /// whose gate is enabled.
    pub fn known(&self, gates: &BTreeSet<String>) -> BTreeSet<String> {
        self.capabilities
            .iter()
            .filter(|(_, gate)| gate.as_ref().is_none_or(|g| gates.contains(g)))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The members of a set with these gates on; None for an unknown set name.
    pub fn set(&self, name: &str, gates: &BTreeSet<String>) -> Option<BTreeSet<String>> {
        let mut members = self.sets.get(name)?.clone();
        if name == CURRENT_SET {
            members.extend(
                self.capabilities
                    .iter()
                    .filter(|(_, gate)| gate.as_ref().is_some_and(|g| gates.contains(g)))
                    .map(|(n, _)| n.clone()),
            );
        }
        Some(members)
    }

    /// Every set name, sorted.
    pub fn set_names(&self) -> Vec<String> {
        self.sets.keys().cloned().collect()
    }

    /// Every capability in some set (with these gates on), sorted: what
    /// `additionalEnabledCapabilities` may name.
    pub fn in_some_set(&self, gates: &BTreeSet<String>) -> BTreeSet<String> {
        self.sets
            .keys()
            .filter_map(|s| self.set(s, gates))
            .flatten()
            .collect()
    }

    /// The valid values of `release.openshift.io/feature-set`, sorted.
    pub fn feature_set_names(&self) -> Vec<String> {
        self.feature_sets.keys().cloned().collect()
    }

    /// The gates a feature set enables; None for an unknown feature set.
    pub fn feature_set_gates(&self, name: &str) -> Option<&BTreeSet<String>> {
        self.feature_sets.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gates(g: &[&str]) -> BTreeSet<String> {
        g.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn embedded_registry_has_the_design_sets() {
        let r = Registry::load(None).unwrap();
        assert_eq!(r.default_baseline, "vCurrent");
        let none = gates(&[]);
        assert_eq!(
            r.set_names(),
            [
                "None", "v4.11", "v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18",
                "vCurrent"
            ]
        );
        assert!(r.set("None", &none).unwrap().is_empty());
        assert_eq!(
            r.set("v4.11", &none).unwrap(),
            gates(&[
                "baremetal",
                "marketplace",
                "openshift-samples",
                "MachineAPI"
            ])
        );
        let v414 = r.set("v4.14", &none).unwrap();
        assert!(v414.contains("ImageRegistry") && !v414.contains("CloudCredential"));
        assert_eq!(r.set("v4.16", &none), r.set("v4.17", &none));
        assert_eq!(r.set("v4.18", &none), r.set("vCurrent", &none));
        assert_eq!(r.known(&none).len(), 17);
        assert_eq!(r.in_some_set(&none), r.known(&none));
    }

    #[test]
    fn gated_capabilities_join_vcurrent_and_known_only_with_their_gate() {
        let r = Registry::load(None).unwrap();
        let on = gates(&["ClusterAPI"]);
        assert!(r.set("vCurrent", &on).unwrap().contains("ClusterAPI"));
        assert!(!r.set("v4.18", &on).unwrap().contains("ClusterAPI"));
        assert!(r.known(&on).contains("ClusterAPI"));
        assert!(!r.known(&gates(&[])).contains("ClusterAPI"));
        assert_eq!(
            r.feature_set_gates("TechPreviewNoUpgrade").unwrap(),
            &gates(&["ClusterAPI", "CompatibilityRequirements"])
        );
    }

    #[test]
    fn a_registry_naming_an_unknown_member_is_rejected_with_the_set() {
        let text = "defaultBaseline: A\ndefaultFeatureSet: Default\ncapabilities: [{name: x}]\nsets: {A: [x, y]}\nfeatureSets: {Default: []}\n";
        let e = Registry::parse(Path::new("r.yaml"), text).unwrap_err();
        assert_eq!(e.field, "sets.A");
        assert!(e.problem.contains("\"y\""), "{e}");
    }
}
