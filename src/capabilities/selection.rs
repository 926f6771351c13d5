//! From the install-config's `capabilities` block (or flags) to the effective enabled set.
//! Unknown names are input errors (exit 2) that name the file, the field, the value and the
//! valid values.

use super::feature_gates::{self, Table};
use super::registry::Registry;
use crate::assets::CapabilitiesSpec;
use crate::error::InputError;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The install-config field prefix, as the asset loader reports it.
pub const IC_FIELD: &str = "data.install-config: capabilities";

/// Feature set and enabled feature gates, and where they came from.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Gates {
    #[serde(rename = "featureSet")]
    pub feature_set: String,
    #[serde(rename = "featureGates")]
    pub gates: BTreeSet<String>,
    /// The values `release.openshift.io/feature-set` may hold.
    #[serde(rename = "knownFeatureSets")]
    pub known_feature_sets: Vec<String>,
    /// Where the gates came from, for people.
    pub source: String,
}

/// What says which gates are on; all optional (None everywhere: the embedded table's
/// Default feature set for self-managed-high-availability, major version 4).
#[derive(Debug, Clone, Copy, Default)]
pub struct GateInputs<'a> {
    /// `--feature-set`.
    pub feature_set: Option<&'a str>,
    /// `--feature-gates A,B`: exactly these.
    pub explicit: Option<&'a [String]>,
    /// `--feature-gates-file`: a FeatureGate object.
    pub file: Option<&'a Path>,
    /// `--release-version`: picks the FeatureGate status entry of that version.
    pub release_version: Option<&'a str>,
    /// The cluster profile (the table has gates per profile).
    pub profile: Option<&'a str>,
    /// The release's major version (the table has gates per major version).
    pub major: Option<u64>,
}

impl Gates {
    pub fn resolve(inputs: &GateInputs) -> Result<Self, InputError> {
        let table = Table::embedded()?;
        let known_feature_sets = table.feature_set_names();
        let flag_err =
            |field: &str, problem: String| InputError::new("(command line)", field, problem);
        if let Some(f) = inputs.feature_set
            && !known_feature_sets.iter().any(|k| k == f)
        {
            return Err(flag_err(
                "--feature-set",
                format!(
                    "unknown feature set {f:?}; valid: {}",
                    known_feature_sets.join(", ")
                ),
            ));
        }
        if let Some(path) = inputs.file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| InputError::new(path, "(file)", format!("cannot read: {e}")))?;
            let object = feature_gates::from_object(path, &text, inputs.release_version)?;
            if !known_feature_sets.contains(&object.feature_set) {
                return Err(InputError::new(
                    path,
                    "spec.featureSet",
                    format!(
                        "unknown feature set {:?}; valid: {}",
                        object.feature_set,
                        known_feature_sets.join(", ")
                    ),
                ));
            }
            if let Some(f) = inputs.feature_set
                && f != object.feature_set
            {
                return Err(flag_err(
                    "--feature-set",
                    format!(
                        "{f:?}, but {} says {:?}",
                        path.display(),
                        object.feature_set
                    ),
                ));
            }
            let version = if object.version.is_empty() {
                String::new()
            } else {
                format!(", version {}", object.version)
            };
            return Ok(Self {
                feature_set: object.feature_set,
                gates: object.gates,
                known_feature_sets,
                source: format!("FeatureGate in {}{version}", path.display()),
            });
        }
        let feature_set = inputs
            .feature_set
            .unwrap_or(feature_gates::DEFAULT_FEATURE_SET)
            .to_string();
        if let Some(list) = inputs.explicit {
            return Ok(Self {
                feature_set,
                gates: list
                    .iter()
                    .map(|g| g.trim().to_string())
                    .filter(|g| !g.is_empty())
                    .collect(),
                known_feature_sets,
                source: "--feature-gates".into(),
            });
        }
        if feature_set == feature_gates::CUSTOM_NO_UPGRADE {
            return Err(flag_err(
                "--feature-set",
                "CustomNoUpgrade enables the gates the cluster lists in spec.customNoUpgrade; give them with --feature-gates-file (the FeatureGate object) or --feature-gates".into(),
            ));
        }
        let profile = inputs.profile.unwrap_or(feature_gates::SELF_MANAGED);
        let major = inputs.major.unwrap_or(feature_gates::DEFAULT_MAJOR);
        let Some(gates) = table.gates(profile, &feature_set, major) else {
            return Err(flag_err(
                "--feature-set",
                format!(
                    "the embedded table ({}) has no gates for feature set {feature_set}, profile {profile}, major version {major}; give --feature-gates-file",
                    table.pinned()
                ),
            ));
        };
        Ok(Self {
            feature_set,
            gates: gates.clone(),
            known_feature_sets,
            source: format!(
                "embedded table from {} (profile {profile}, major version {major})",
                table.pinned()
            ),
        })
    }
}

/// The release's ClusterVersion CRD must accept the baseline and every additional capability,
/// or its API server refuses the spec.
fn release_allows(
    crd: &super::release::CrdEnums,
    file: &Path,
    field: &str,
    spec: Option<&CapabilitiesSpec>,
    baseline: &str,
) -> Result<(), InputError> {
    let refuse = |what: &str, name: &str, valid: &[String], f: String| {
        InputError::new(
            file,
            f,
            format!(
                "unknown {what} {name:?} for this release (its ClusterVersion CRD {}); valid: {}",
                crd.source.display(),
                valid.join(", ")
            ),
        )
    };
    if !crd.baselines.iter().any(|b| b == baseline) {
        return Err(refuse(
            "capability set",
            baseline,
            &crd.baselines,
            format!("{field}.baselineCapabilitySet"),
        ));
    }
    let additional = spec.map(|s| s.additional.as_slice()).unwrap_or_default();
    for (i, name) in additional.iter().enumerate() {
        if !crd.capabilities.contains(name) {
            return Err(refuse(
                "capability",
                name,
                &crd.capabilities,
                format!("{field}.additionalEnabledCapabilities[{i}]"),
            ));
        }
    }
    Ok(())
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
        if let Some(crd) = &registry.release {
            release_allows(crd, file, field, spec, &baseline)?;
        }
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
        let g = Gates::resolve(&GateInputs::default()).unwrap();
        (r, g)
    }

    fn spec(baseline: Option<&str>, additional: &[&str]) -> CapabilitiesSpec {
        CapabilitiesSpec {
            baseline: baseline.map(str::to_string),
            additional: additional.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The install-config's block `spec(baseline, additional)`, resolved against `r` and `g`.
    fn resolve(
        r: &Registry,
        g: &Gates,
        baseline: Option<&str>,
        additional: &[&str],
    ) -> Result<Selection, InputError> {
        let wanted = spec(baseline, additional);
        Selection::resolve(r, Some(&wanted), g, Path::new("cc.yaml"), IC_FIELD)
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
        let s = resolve(
            &r,
            &g,
            Some("None"),
            &["marketplace", "Console", "marketplace"],
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
        let e = resolve(&r, &g, Some("v9.99"), &[]).unwrap_err();
        assert_eq!(e.field, format!("{IC_FIELD}.baselineCapabilitySet"));
        assert!(e.problem.contains("\"v9.99\""), "{e}");
        assert!(e.problem.contains("None, v4.11, v4.12"), "{e}");
    }

    #[test]
    fn unknown_additional_names_its_index_and_lists_the_valid_ones() {
        let (r, g) = setup();
        let e = resolve(&r, &g, None, &["Console", "console"]).unwrap_err();
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
        let tp = Gates::resolve(&GateInputs {
            feature_set: Some("TechPreviewNoUpgrade"),
            ..GateInputs::default()
        })
        .unwrap();
        let s = Selection::resolve(&r, Some(&want), &tp, Path::new("f"), IC_FIELD).unwrap();
        assert!(s.enabled.contains("ClusterAPI"));
    }

    #[test]
    fn the_releases_crd_must_accept_the_baseline_and_each_additional_capability() {
        let (mut r, g) = setup();
        r.release = Some(crate::capabilities::release::CrdEnums {
            source: "crd.yaml".into(),
            baselines: vec!["None".into(), "vCurrent".into()],
            capabilities: vec!["Console".into(), "baremetal".into()],
        });
        let ok = resolve(&r, &g, Some("None"), &["Console"]);
        assert!(ok.is_ok(), "{ok:?}");
        // v4.14 is in the registry, not in this release's CRD.
        let e = resolve(&r, &g, Some("v4.14"), &[]).unwrap_err();
        assert_eq!(e.field, format!("{IC_FIELD}.baselineCapabilitySet"));
        assert_eq!(
            e.problem,
            "unknown capability set \"v4.14\" for this release (its ClusterVersion CRD crd.yaml); valid: None, vCurrent"
        );
        let e = resolve(&r, &g, None, &["Console", "Insights"]).unwrap_err();
        assert_eq!(
            e.field,
            format!("{IC_FIELD}.additionalEnabledCapabilities[1]")
        );
        assert!(e.problem.ends_with("valid: Console, baremetal"), "{e}");
    }

    #[test]
    fn gates_come_from_the_file_the_flags_or_the_table_for_the_profile() {
        let tp = |profile: Option<&str>| {
            Gates::resolve(&GateInputs {
                feature_set: Some("TechPreviewNoUpgrade"),
                profile,
                ..GateInputs::default()
            })
            .unwrap()
        };
        let smha = tp(None);
        assert!(
            smha.source
                .starts_with("embedded table from openshift/api@2259ae9f"),
            "{}",
            smha.source
        );
        assert_ne!(smha.gates, tp(Some("ibm-cloud-managed")).gates);
        assert_eq!(smha.gates, tp(Some("single-node-developer")).gates);
        let explicit = ["A".to_string(), " ".to_string()];
        let g = Gates::resolve(&GateInputs {
            explicit: Some(&explicit),
            ..GateInputs::default()
        })
        .unwrap();
        assert_eq!((g.feature_set.as_str(), g.gates.len()), ("Default", 1));
        let e = Gates::resolve(&GateInputs {
            feature_set: Some("Nope"),
            ..GateInputs::default()
        })
        .unwrap_err();
        assert!(e.problem.contains("valid: CustomNoUpgrade, Default"), "{e}");
        let e = Gates::resolve(&GateInputs {
            major: Some(11),
            ..GateInputs::default()
        })
        .unwrap_err();
        assert!(e.problem.contains("major version 11"), "{e}");
    }
}
