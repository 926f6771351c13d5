//! A manifests dir: multi-document YAML files, split on document markers while keeping each
//! document's byte range, so that `filter --out` writes the included objects byte-for-byte.
//! Only what inclusion needs is deserialized (apiVersion, kind, name, namespace, annotations).

use super::inclusion::{AnnotationError, Annotations};
use super::reader;
use crate::error::InputError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Matches objects across payloads: group, kind, namespace, name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectId {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectId {
    /// The identity used to match manifests between payloads (the version is left out).
    pub fn key(&self) -> (&str, &str, &str, &str) {
        (&self.group, &self.kind, &self.namespace, &self.name)
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() {
            String::new()
        } else {
            format!(".{}", self.group)
        };
        if self.namespace.is_empty() {
            write!(f, "{}{group} {}", self.kind, self.name)
        } else {
            write!(f, "{}{group} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One object in a manifest file.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Index of the file in [`Payload::files`].
    pub file: usize,
    /// Index of the document in its file (counting empty documents too).
    pub doc: usize,
    pub range: Range<usize>,
    pub id: ObjectId,
    pub raw_annotations: BTreeMap<String, String>,
    pub annotations: Annotations,
}

#[derive(Debug, Clone)]
pub struct ManifestFile {
    /// File name inside the manifests dir.
    pub name: String,
    pub text: String,
}

/// A manifests dir, read and parsed.
#[derive(Debug, Clone, Default)]
pub struct Payload {
    pub dir: PathBuf,
    pub files: Vec<ManifestFile>,
    pub manifests: Vec<Manifest>,
    /// Documents that could not be read (file, `document N: field`, problem).
    pub unreadable: Vec<InputError>,
}

impl Payload {
    /// `file#doc`, as messages name a manifest.
    pub fn source(&self, m: &Manifest) -> String {
        format!("{}#{}", self.files[m.file].name, m.doc)
    }

    /// The object's bytes, exactly as in the file.
    pub fn bytes(&self, m: &Manifest) -> &str {
        &self.files[m.file].text[m.range.clone()]
    }
}

/// Reads one file's documents into manifests (appended to `out`). A document that cannot be
/// read goes to `unreadable`, named by file and document number; the others are still read.
pub fn parse_file(
    dir: &Path,
    file_index: usize,
    file: &ManifestFile,
    out: &mut Vec<Manifest>,
    unreadable: &mut Vec<InputError>,
) {
    let path = dir.join(&file.name);
    for (doc, range, parsed) in reader::documents(&file.text) {
        let field = |f: &str| format!("document {doc}: {f}");
        let object = match parsed {
            Ok(Some(o)) => o,
            Ok(None) => continue,
            Err(reader::Problem { field: f, problem }) => {
                unreadable.push(InputError::new(&path, field(&f), problem));
                continue;
            }
        };
        let (group, version) = object
            .api_version
            .rsplit_once('/')
            .map_or((String::new(), object.api_version.clone()), |(g, v)| {
                (g.to_string(), v.to_string())
            });
        let mut annotations = match Annotations::parse(&object.annotations) {
            Ok(a) => a,
            Err(AnnotationError {
                annotation,
                value,
                problem,
            }) => {
                unreadable.push(InputError::new(
                    &path,
                    field(&format!("metadata.annotations.{annotation}")),
                    format!("{value:?}: {problem}"),
                ));
                continue;
            }
        };
        // Malformed annotations: the cluster reads none and excludes the object (decided so
        // below), but the API server would refuse such an object, so it is a bad input too.
        if let Some(why) = object.unreadable_annotations.as_deref()
            && why != reader::NO_ANNOTATIONS
        {
            unreadable.push(InputError::new(
                &path,
                field("metadata.annotations"),
                format!("{why}; the cluster reads no annotations on this object and excludes it"),
            ));
        }
        annotations.unreadable = object.unreadable_annotations;
        annotations.major_version_kind = (group == "config.openshift.io"
            && object.kind == "FeatureGate")
            || (group == "apiextensions.k8s.io" && object.kind == "CustomResourceDefinition");
        out.push(Manifest {
            file: file_index,
            doc,
            range,
            id: ObjectId {
                group,
                version,
                kind: object.kind,
                namespace: object.namespace,
                name: object.name,
            },
            raw_annotations: object.annotations,
            annotations,
        });
    }
}

/// Reads every `*.yaml`, `*.yml` and `*.json` file of `dir` (not recursive), in name order.
pub fn read_dir(dir: &Path) -> Result<Payload, InputError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| InputError::new(dir, "(dir)", format!("cannot read manifests dir: {e}")))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| InputError::new(dir, "(dir)", format!("cannot list: {e}")))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_manifest = [".yaml", ".yml", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext));
        if is_manifest && entry.path().is_file() {
            names.push(name);
        }
    }
    names.sort();
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(&name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| InputError::new(&path, "(file)", format!("cannot read: {e}")))?;
        files.push(ManifestFile { name, text });
    }
    Ok(from_files(dir, files))
}

/// Parses already-read files (the bench and tests use this without touching the disk).
pub fn from_files(dir: &Path, files: Vec<ManifestFile>) -> Payload {
    let mut manifests = Vec::new();
    let mut unreadable = Vec::new();
    for (i, f) in files.iter().enumerate() {
        parse_file(dir, i, f, &mut manifests, &mut unreadable);
    }
    Payload {
        dir: dir.to_path_buf(),
        files,
        manifests,
        unreadable,
    }
}

/// The text of a file holding only the documents `keep` (by manifest index in `payload`),
/// or None when none of its objects is kept. A file whose every object is kept is returned
/// unchanged; otherwise the kept documents are joined with `---` lines.
pub fn filtered_text(payload: &Payload, file: usize, keep: &[bool]) -> Option<String> {
    let in_file: Vec<(usize, &Manifest)> = payload
        .manifests
        .iter()
        .enumerate()
        .filter(|(_, m)| m.file == file)
        .collect();
    let kept: Vec<&Manifest> = in_file
        .iter()
        .filter(|(i, _)| keep.get(*i).copied().unwrap_or(false))
        .map(|(_, m)| *m)
        .collect();
    if kept.is_empty() {
        return None;
    }
    if kept.len() == in_file.len() {
        return Some(payload.files[file].text.clone());
    }
    let mut out = String::new();
    for (n, m) in kept.iter().enumerate() {
        if n > 0 {
            out.push_str("---\n");
        }
        let bytes = payload.bytes(m);
        out.push_str(bytes);
        if !bytes.ends_with('\n') {
            out.push('\n');
        }
    }
    Some(out)
}

/// Run level and component from a CVO file name `0000_<runlevel>_<component>_<file>`.
pub fn run_level(file_name: &str) -> Option<(u32, &str)> {
    let rest = file_name.strip_prefix("0000_")?;
    let (level, rest) = rest.split_once('_')?;
    let level: u32 = level.parse().ok()?;
    let component = rest.split_once('_').map_or(rest, |(c, _)| c);
    Some((level, component))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents of `text`, cut at the byte ranges `reader::split_documents` gives.
    fn documents(text: &str) -> Vec<&str> {
        reader::split_documents(text)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn documents_keep_their_byte_ranges() {
        let text = "a: 1\n---\nb: 2\n--- \n\n---\nc: 3";
        assert_eq!(documents(text), ["a: 1\n", "b: 2\n", "\n", "c: 3"]);
    }

    #[test]
    fn leading_marker_document_end_and_dashes_inside_values() {
        let text = "---\nk: \"---\"\nl: ---x\n...\n# trailing\n---\nz: 1\n";
        assert_eq!(documents(text), ["", "k: \"---\"\nl: ---x\n", "z: 1\n"]);
    }

    #[test]
    fn run_levels_come_from_the_file_name() {
        assert_eq!(
            run_level("0000_50_cluster-autoscaler-operator_07_deployment.yaml"),
            Some((50, "cluster-autoscaler-operator"))
        );
        assert_eq!(run_level("99_extra.yaml"), None);
        assert_eq!(run_level("0000_xx_a_b.yaml"), None);
    }

    fn payload(text: &str) -> Payload {
        from_files(
            Path::new("m"),
            vec![ManifestFile {
                name: "f.yaml".into(),
                text: text.into(),
            }],
        )
    }

    #[test]
    fn a_partly_kept_file_keeps_each_kept_document_verbatim() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}  # keep me\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
        let p = payload(text);
        assert_eq!(p.manifests.len(), 3);
        assert_eq!(p.manifests[1].id.to_string(), "ConfigMap b");
        let out = filtered_text(&p, 0, &[true, false, true]).unwrap();
        assert_eq!(
            out,
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}  # keep me\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
        );
        assert_eq!(filtered_text(&p, 0, &[true, true, true]).unwrap(), text);
        assert_eq!(filtered_text(&p, 0, &[false, false, false]), None);
    }

    #[test]
    fn an_unreadable_document_is_named_and_the_others_are_still_read() {
        let p = payload(
            "apiVersion: v1\nkind: X\nmetadata:\n  name: a\n  annotations:\n    release.openshift.io/delete: \"yes\"\n---\napiVersion: v1\nkind: X\nmetadata: {}\n---\nkind: [\n---\napiVersion: v1\nkind: X\nmetadata: {name: d}\n",
        );
        let names: Vec<_> = p
            .manifests
            .iter()
            .map(|m| (m.doc, m.id.name.as_str()))
            .collect();
        assert_eq!(names, [(3, "d")]);
        let fields: Vec<_> = p.unreadable.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "document 0: metadata.annotations.release.openshift.io/delete",
                "document 1: metadata.name",
                "document 2: (document)",
            ]
        );
        assert!(p.unreadable.iter().all(|e| e.file.ends_with("f.yaml")));
    }

    #[test]
    fn a_non_string_annotation_leaves_the_object_with_none_the_cluster_can_read() {
        let p = payload(
            "apiVersion: v1\nkind: X\nmetadata:\n  name: a\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n    x: 1\n",
        );
        let a = &p.manifests[0].annotations;
        assert_eq!(
            a.unreadable.as_deref(),
            Some("the value of x is a number, not a string (quote it)")
        );
        // Decided, and reported as a bad input (the API server would refuse it).
        assert_eq!(p.unreadable.len(), 1);
        let said = p.unreadable[0].to_string();
        assert!(
            said.contains("document 0: metadata.annotations") && said.contains("is a number"),
            "{said}"
        );
    }

    #[test]
    fn major_version_is_allowed_only_on_feature_gates_and_crds() {
        let doc = |api: &str, kind: &str| {
            payload(&format!(
                "apiVersion: {api}\nkind: {kind}\nmetadata: {{name: a}}\n"
            ))
            .manifests[0]
                .annotations
                .major_version_kind
        };
        assert!(doc("config.openshift.io/v1", "FeatureGate"));
        assert!(doc("apiextensions.k8s.io/v1", "CustomResourceDefinition"));
        assert!(!doc("config.openshift.io/v1", "ClusterVersion"));
        assert!(!doc("v1", "FeatureGate"));
        assert!(!doc("apiextensions.k8s.io/v1", "ConfigMap"));
    }
}
