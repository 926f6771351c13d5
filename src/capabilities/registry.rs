//! The capability registry as data: known capabilities and capability sets come from
//! `templates/capabilities.yaml` (embedded at build time) or from a file given with
//! `--registry`. Nothing about OpenShift's capability list is hard-coded in Rust. A gated
//! capability names the gates that enable it; ANY one of them does, as in
//! cluster-version-operator's `lib/capability/capability.go:13-42` (6e719331fb58). The feature
//! gates themselves come from `feature_gates`.

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
    /// Enabled when ANY of these gates is (empty: always known).
    #[serde(default, rename = "featureGates")]
    feature_gates: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistry {
    #[serde(rename = "defaultBaseline")]
    default_baseline: String,
    capabilities: Vec<RawCapability>,
    sets: BTreeMap<String, Vec<String>>,
}

/// A validated registry.
#[derive(Debug, Clone)]
pub struct Registry {
    /// Where it came from (a path, or [`EMBEDDED_NAME`]).
    pub source: PathBuf,
    pub default_baseline: String,
    /// Capability name -> the gates any one of which enables it (empty: always known), in
    /// file order.
    capabilities: Vec<(String, Vec<String>)>,
    sets: BTreeMap<String, BTreeSet<String>>,
    /// The release's own ClusterVersion CRD enums, when given (`--cluster-version-crd`).
    pub release: Option<super::release::CrdEnums>,
}

/// Whether a capability gated by `needs` (any of them) is enabled with `gates` on.
fn gate_open(needs: &[String], gates: &BTreeSet<String>) -> bool {
    needs.is_empty() || needs.iter().any(|g| gates.contains(g))
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
        Ok(Self {
            source: source.to_path_buf(),
            default_baseline: raw.default_baseline,
            capabilities: raw
                .capabilities
                .into_iter()
                .map(|c| (c.name, c.feature_gates))
                .collect(),
            sets,
            release: None,
        })
    }

    /// Capabilities known with these feature gates on: the ungated ones plus the gated ones
    /// one of whose gates is enabled.
    pub fn known(&self, gates: &BTreeSet<String>) -> BTreeSet<String> {
        self.capabilities
            .iter()
            .filter(|(_, needs)| gate_open(needs, gates))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Every capability the registry names, gated or not.
    pub fn all_names(&self) -> BTreeSet<String> {
        self.capabilities.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The members of a set with these gates on; None for an unknown set name.
    pub fn set(&self, name: &str, gates: &BTreeSet<String>) -> Option<BTreeSet<String>> {
        let mut members = self.sets.get(name)?.clone();
        if name == CURRENT_SET {
            members.extend(
                self.capabilities
                    .iter()
                    .filter(|(_, needs)| !needs.is_empty() && gate_open(needs, gates))
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

    /// CVO's `featureGatedCapabilities`: ClusterAPI by ClusterAPIMachineManagement;
    /// CompatibilityRequirements by CRDCompatibilityRequirementOperator OR that gate.
    #[test]
    fn gated_capabilities_follow_the_cvos_mapping_any_gate_enables() {
        let r = Registry::load(None).unwrap();
        let gated = |on: &[&str]| {
            let on = gates(on);
            let known = r.known(&on);
            assert_eq!(known, r.set("vCurrent", &on).unwrap(), "vCurrent = known");
            assert!(!r.set("v4.18", &on).unwrap().contains("ClusterAPI"));
            ["ClusterAPI", "CompatibilityRequirements"]
                .into_iter()
                .filter(|c| known.contains(*c))
                .collect::<Vec<_>>()
        };
        assert!(gated(&[]).is_empty());
        assert!(gated(&["ClusterAPI", "CompatibilityRequirements"]).is_empty());
        assert_eq!(
            gated(&["ClusterAPIMachineManagement"]),
            ["ClusterAPI", "CompatibilityRequirements"]
        );
        assert_eq!(
            gated(&["CRDCompatibilityRequirementOperator"]),
            ["CompatibilityRequirements"]
        );
        assert_eq!(r.all_names().len(), 19);
    }

    #[test]
    fn a_registry_naming_an_unknown_member_is_rejected_with_the_set() {
        let text = "defaultBaseline: A\ncapabilities: [{name: x}]\nsets: {A: [x, y]}\n";
        let e = Registry::parse(Path::new("r.yaml"), text).unwrap_err();
        assert_eq!(e.field, "sets.A");
        assert!(e.problem.contains("\"y\""), "{e}");
    }
}
