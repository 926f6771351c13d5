//! Where the loader's four documents come from: the installer's asset dir on the bootstrap
//! host, or the cluster the installer applied them to (day 2, from an admin's machine). Both
//! hand the loader the same documents, so one parser validates both; errors name the file or
//! the object (`ConfigMap kube-system/cluster-config-v1: data.install-config: ...`).

use super::doc::Doc;
use crate::error::InputError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The documents the loader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Document {
    /// ConfigMap kube-system/cluster-config-v1 (`data.install-config`); required.
    ClusterConfig,
    /// Infrastructure `cluster`; required.
    Infrastructure,
    /// DNS `cluster`; optional (older installers, user-provisioned DNS).
    Dns,
    /// The cloud creds Secret; optional (absent: the SDK's standard chain).
    CredsSecret,
}

/// A source of the loader's documents.
pub trait AssetSource {
    /// The source as a whole, for a problem of none of its documents.
    fn origin(&self) -> &Path;
    /// Whether the source can be read at all (an asset dir that does not exist cannot).
    fn problem(&self) -> Option<InputError> {
        None
    }
    /// `which`, parsed; None when it is absent (a required one is an error instead).
    fn read(&self, which: Document) -> Result<Option<Doc>, InputError>;
}

/// The installer's asset dir.
pub struct AssetDir<'a>(pub &'a Path);

impl AssetDir<'_> {
    pub fn path_of(&self, which: Document) -> PathBuf {
        self.0.join(match which {
            Document::ClusterConfig => super::CLUSTER_CONFIG,
            Document::Infrastructure => super::INFRASTRUCTURE,
            Document::Dns => super::DNS_CONFIG,
            Document::CredsSecret => super::CREDS_SECRET,
        })
    }
}

impl AssetSource for AssetDir<'_> {
    fn origin(&self) -> &Path {
        self.0
    }

    fn problem(&self) -> Option<InputError> {
        (!self.0.is_dir()).then(|| {
            InputError::new(
                self.0,
                "(dir)",
                "asset dir does not exist or is not a directory",
            )
        })
    }

    fn read(&self, which: Document) -> Result<Option<Doc>, InputError> {
        let path = self.path_of(which);
        let optional = matches!(which, Document::Dns | Document::CredsSecret);
        if optional && !path.exists() {
            return Ok(None);
        }
        Doc::read(&path).map(Some)
    }
}

/// Documents read from somewhere else (the cluster), each under the name errors give it
/// (`Infrastructure cluster`). A required one that is absent is reported as `missing`
/// says. Its Debug never shows a document: one may be the creds Secret.
pub struct Fetched {
    origin: PathBuf,
    docs: BTreeMap<Document, (PathBuf, Option<Value>)>,
    /// Why a required document is absent, per document (what to check).
    missing: BTreeMap<Document, String>,
}

impl std::fmt::Debug for Fetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = self.docs.values().map(|(n, v)| (n, v.is_some())).collect();
        f.debug_struct("Fetched")
            .field("origin", &self.origin)
            .field("present", &names)
            .finish()
    }
}

impl Fetched {
    pub fn new(origin: impl Into<PathBuf>) -> Self {
        Self {
            origin: origin.into(),
            docs: BTreeMap::new(),
            missing: BTreeMap::new(),
        }
    }

    /// `which` as `name` holds it (None: absent).
    pub fn insert(&mut self, which: Document, name: impl Into<PathBuf>, object: Option<Value>) {
        self.docs.insert(which, (name.into(), object));
    }

    /// What the error of an absent required `which` says.
    pub fn when_missing(&mut self, which: Document, problem: impl Into<String>) {
        self.missing.insert(which, problem.into());
    }

    /// The name `which` was read under, when it was.
    pub fn name_of(&self, which: Document) -> Option<&Path> {
        self.docs.get(&which).map(|(n, _)| n.as_path())
    }

    /// The raw object of `which`, when present.
    pub fn object(&self, which: Document) -> Option<&Value> {
        self.docs.get(&which).and_then(|(_, v)| v.as_ref())
    }
}

impl AssetSource for Fetched {
    fn origin(&self) -> &Path {
        &self.origin
    }

    fn read(&self, which: Document) -> Result<Option<Doc>, InputError> {
        let required = matches!(which, Document::ClusterConfig | Document::Infrastructure);
        match self.docs.get(&which) {
            Some((name, Some(root))) if root.is_object() => Ok(Some(Doc {
                file: name.clone(),
                root: root.clone(),
            })),
            Some((name, Some(_))) => Err(InputError::new(
                name,
                "(document)",
                "expected an object (a mapping)",
            )),
            Some((name, None)) if required => Err(InputError::new(
                name,
                "(object)",
                self.missing.get(&which).map_or("not found", String::as_str),
            )),
            None if required => Err(InputError::new(
                &self.origin,
                "(object)",
                format!("{which:?} was not read"),
            )),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The asset dir's documents as the cluster holds them, under the cluster's names.
    fn as_the_cluster_holds(fixture: &str) -> Fetched {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
        let dir = AssetDir(&dir);
        let mut docs = Fetched::new("(the cluster)");
        for (which, name) in [
            (
                Document::ClusterConfig,
                "ConfigMap kube-system/cluster-config-v1",
            ),
            (Document::Infrastructure, "Infrastructure cluster"),
            (Document::Dns, "DNS cluster"),
            (Document::CredsSecret, "Secret kube-system/creds"),
        ] {
            let root = dir.read(which).unwrap().map(|d| d.root);
            docs.insert(which, name, root);
        }
        docs
    }

    #[test]
    fn the_cluster_and_the_asset_dir_load_into_the_same_spec() {
        for fixture in [
            "tests/fixtures/assets/aws",
            "tests/fixtures/assets/gcp",
            "tests/fixtures/assets/azure",
            "tests/fixtures/assets/aws-cross-account-zone",
        ] {
            let from_dir =
                crate::assets::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture)).unwrap();
            let from_cluster = crate::assets::load_from(&as_the_cluster_holds(fixture)).unwrap();
            assert_eq!(
                format!("{from_dir:?}"),
                format!("{from_cluster:?}"),
                "{fixture}"
            );
        }
    }

    #[test]
    fn a_problem_in_the_cluster_names_the_object_and_the_field() {
        let mut docs = as_the_cluster_holds("tests/fixtures/assets/aws");
        let mut infra = docs.object(Document::Infrastructure).cloned().unwrap();
        infra["status"]["infrastructureName"] = serde_json::json!("Not_An_Id");
        docs.insert(
            Document::Infrastructure,
            "Infrastructure cluster",
            Some(infra),
        );
        let e = crate::assets::load_from(&docs).unwrap_err();
        assert_eq!(
            (e.file.display().to_string(), e.field.as_str()),
            (
                "Infrastructure cluster".to_string(),
                "status.infrastructureName"
            )
        );
        docs.insert(Document::Infrastructure, "Infrastructure cluster", None);
        docs.when_missing(Document::Infrastructure, "not found");
        let e = crate::assets::load_from(&docs).unwrap_err();
        assert_eq!(e.to_string(), "Infrastructure cluster: (object): not found");
    }

    #[test]
    fn the_fetched_documents_never_show_in_debug() {
        let docs = as_the_cluster_holds("tests/fixtures/assets/aws");
        let shown = format!("{docs:?}");
        assert!(!shown.contains("aws_secret_access_key"), "{shown}");
        assert!(shown.contains("Secret kube-system/creds"), "{shown}");
    }
}
