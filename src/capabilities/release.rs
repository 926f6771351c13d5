//! The release's own metadata beside its manifests: `release-metadata` (Cincinnati JSON),
//! whose `version` the cluster-version operator parses as semver and whose major version it
//! filters `release.openshift.io/major-version` with (`pkg/payload/payload.go:222` and
//! `:284-300`, 6e719331fb58).

use crate::error::{InputError, read_if_present};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file name, as the CVO's `cincinnatiJSONFile` (`pkg/payload/payload.go:98`).
pub const METADATA: &str = "release-metadata";

/// The major version of `dir/release-metadata`; None when the file is absent.
pub fn major_version(dir: &Path) -> Result<Option<u64>, InputError> {
    let path = dir.join(METADATA);
    let Some(text) = read_if_present(&path)? else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| InputError::new(&path, "(document)", format!("invalid JSON: {e}")))?;
    let version = value
        .get("version")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| InputError::new(&path, "version", "missing; expected a string"))?;
    parse_major(version).map(Some).ok_or_else(|| {
        InputError::new(
            &path,
            "version",
            format!("{version:?} is not a semantic version (MAJOR.MINOR.PATCH)"),
        )
    })
}

/// The major of a semantic version `MAJOR.MINOR.PATCH[-pre][+build]`, numbers without
/// leading zeros.
pub fn parse_major(version: &str) -> Option<u64> {
    let core = version.split(['-', '+']).next()?;
    let parts: Vec<&str> = core.split('.').collect();
    let [major, minor, patch] = parts.as_slice() else {
        return None;
    };
    let number = |s: &str| {
        (!s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0')))
        .then(|| s.parse::<u64>().ok())
        .flatten()
    };
    number(minor)?;
    number(patch)?;
    number(major)
}

/// The values the release's own ClusterVersion CRD allows (its OpenAPI enums): what the API
/// server of that release accepts in `spec.capabilities`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdEnums {
    pub source: PathBuf,
    /// `baselineCapabilitySet`.
    pub baselines: Vec<String>,
    /// The items of `additionalEnabledCapabilities`.
    pub capabilities: Vec<String>,
}

const CAPABILITIES: &str =
    "/schema/openAPIV3Schema/properties/spec/properties/capabilities/properties";

/// Reads the enums of a ClusterVersion CRD (openshift/api
/// `config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-<FeatureSet>.crd.yaml`).
pub fn crd_enums(path: &Path) -> Result<CrdEnums, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, "(file)", format!("cannot read: {e}")))?;
    let v = super::reader::value(&text).map_err(|p| InputError::new(path, p.field, p.problem))?;
    let name = v.pointer("/metadata/name").and_then(Value::as_str);
    if v.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition")
        || name != Some("clusterversions.config.openshift.io")
    {
        return Err(InputError::new(
            path,
            "metadata.name",
            format!(
                "expected the CustomResourceDefinition clusterversions.config.openshift.io, found {name:?}"
            ),
        ));
    }
    let versions = v.pointer("/spec/versions").and_then(Value::as_array);
    for (i, version) in versions.into_iter().flatten().enumerate() {
        let Some(caps) = version.pointer(CAPABILITIES) else {
            continue;
        };
        let strings = |pointer: &str, field: &str| -> Result<Vec<String>, InputError> {
            caps.pointer(pointer)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .ok_or_else(|| {
                    InputError::new(
                        path,
                        format!("spec.versions[{i}].schema.openAPIV3Schema.properties.spec.properties.capabilities.properties.{field}"),
                        "no enum; expected the list of valid values",
                    )
                })
        };
        return Ok(CrdEnums {
            source: path.to_path_buf(),
            baselines: strings("/baselineCapabilitySet/enum", "baselineCapabilitySet.enum")?,
            capabilities: strings(
                "/additionalEnabledCapabilities/items/enum",
                "additionalEnabledCapabilities.items.enum",
            )?,
        });
    }
    Err(InputError::new(
        path,
        "spec.versions",
        "no version with spec.capabilities in its schema",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_major_version_is_the_first_number_of_a_semantic_version() {
        assert_eq!(parse_major("4.18.0"), Some(4));
        assert_eq!(parse_major("5.0.0-ec.1+abc"), Some(5));
        assert_eq!(parse_major("10.2.3"), Some(10));
        for bad in [
            "4.18", "4", "v4.18.0", "04.1.0", "4.01.0", "4.1.x", "", "4..0", "4.1.0.1",
        ] {
            assert_eq!(parse_major(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn release_metadata_gives_it_and_its_absence_gives_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(major_version(dir.path()).unwrap(), None);
        std::fs::write(
            dir.path().join(METADATA),
            r#"{"kind":"cincinnati-metadata-v0","version":"5.1.0"}"#,
        )
        .unwrap();
        assert_eq!(major_version(dir.path()).unwrap(), Some(5));
        std::fs::write(dir.path().join(METADATA), r#"{"version":"5.1"}"#).unwrap();
        let e = major_version(dir.path()).unwrap_err();
        assert_eq!(e.field, "version");
        std::fs::write(dir.path().join(METADATA), r#"{}"#).unwrap();
        assert_eq!(major_version(dir.path()).unwrap_err().field, "version");
    }

    /// Shaped like openshift/api's generated ClusterVersion CRD (TechPreviewNoUpgrade).
    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: clusterversions.config.openshift.io\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          spec:\n            properties:\n              capabilities:\n                properties:\n                  baselineCapabilitySet:\n                    enum: [None, v4.11, vCurrent]\n                    type: string\n                  additionalEnabledCapabilities:\n                    items:\n                      enum: [baremetal, Console, ClusterAPI]\n                      type: string\n                    type: array\n";

    #[test]
    fn the_crd_gives_the_baselines_and_capabilities_the_release_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("crd.yaml");
        std::fs::write(&p, CRD).unwrap();
        let e = crd_enums(&p).unwrap();
        assert_eq!(e.baselines, ["None", "v4.11", "vCurrent"]);
        assert_eq!(e.capabilities, ["baremetal", "Console", "ClusterAPI"]);
        std::fs::write(&p, CRD.replace("clusterversions.", "other.")).unwrap();
        assert_eq!(crd_enums(&p).unwrap_err().field, "metadata.name");
        std::fs::write(
            &p,
            CRD.replace("                    enum: [None, v4.11, vCurrent]\n", ""),
        )
        .unwrap();
        assert!(
            crd_enums(&p)
                .unwrap_err()
                .field
                .ends_with("baselineCapabilitySet.enum")
        );
    }
}
