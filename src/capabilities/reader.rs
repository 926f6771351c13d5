//! Reads manifest files as the cluster-version operator does (library-go `ParseManifests`,
//! `manifest.go:514-537`, over apimachinery's `YAMLOrJSONDecoder`):
//!
//! - A file whose first non-space byte is `{` is a stream of JSON objects; any other file is
//!   multi-document YAML.
//! - YAML is read as sigs.k8s.io/yaml reads it (v1.6.0, `yaml.go:55-57`): not strict. A key
//!   given twice in a mapping is no error and the LAST value wins: go.yaml.in/yaml/v2
//!   `decode.go:685-691` (`setMapIndex`) reports a duplicate only when strict and otherwise
//!   overwrites. Go's encoding/json does the same for JSON, and so does serde_json.
//! - Empty and `null` documents are skipped.
//! - An object needs `kind` and `metadata.name` (`validateResourceId`, `manifest.go:539`).
//! - Annotations are `unstructured.GetAnnotations`: a value that is not a string makes the
//!   whole map nil, and `Include` then excludes the object ("no annotations").
//!
//! A document that cannot be read is reported with its number; the others are still read.

use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;

/// What inclusion needs from one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub annotations: BTreeMap<String, String>,
    /// Why the cluster reads no annotations on it (None: it reads `annotations`).
    pub unreadable_annotations: Option<String>,
}

/// Why a document is not an object the cluster reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: String,
    pub problem: String,
}

fn problem(field: &str, problem: impl Into<String>) -> Problem {
    Problem {
        field: field.to_string(),
        problem: problem.into(),
    }
}

/// One document of a file: its number, its byte range, and the object (None: an empty or
/// `null` document, which the cluster skips).
pub type Document = (usize, Range<usize>, Result<Option<Object>, Problem>);

/// Whether apimachinery would read the file as JSON (`IsJSONBuffer`: first non-space is `{`).
pub fn is_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Byte ranges of the documents in a YAML stream. A line starting with `---` (followed by
/// nothing or whitespace, or by inline content) starts a document; a `...` line ends one.
pub fn split_documents(text: &str) -> Vec<Range<usize>> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    let mut in_doc = true;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..end];
        let marker = |m: &str| {
            line.strip_prefix(m)
                .map(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']))
                .unwrap_or(false)
        };
        if marker("---") {
            if in_doc {
                docs.push(start..pos);
            }
            let rest = &line[3..];
            start = if rest.trim().is_empty() { end } else { pos + 3 };
            in_doc = true;
        } else if marker("...") {
            if in_doc {
                docs.push(start..pos);
            }
            in_doc = false;
            start = end;
        }
        pos = end;
    }
    if in_doc {
        docs.push(start..text.len());
    }
    docs
}

/// The documents of a file, in order.
pub fn documents(text: &str) -> Vec<Document> {
    if is_json(text) {
        return json_documents(text);
    }
    split_documents(text)
        .into_iter()
        .enumerate()
        .map(|(doc, range)| {
            let parsed = yaml_value(&text[range.clone()]).and_then(|v| object(&v));
            (doc, range, parsed)
        })
        .collect()
}

/// A JSON stream: one object after another. Reading stops at the first broken one, as the
/// decoder cannot find the next object after it.
fn json_documents(text: &str) -> Vec<Document> {
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut start = 0;
    loop {
        let doc = out.len();
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                let end = stream.byte_offset();
                let first = start + (text[start..end].len() - text[start..end].trim_start().len());
                out.push((doc, first..end, object(&v)));
                start = end;
            }
            Some(Err(e)) => {
                out.push((
                    doc,
                    start..text.len(),
                    Err(problem("(document)", format!("invalid JSON: {e}"))),
                ));
                break;
            }
        }
    }
    out
}

/// A file of one document (JSON or YAML, read as the cluster reads it) as a value.
pub fn value(text: &str) -> Result<Value, Problem> {
    if is_json(text) {
        serde_json::from_str(text).map_err(|e| problem("(document)", format!("invalid JSON: {e}")))
    } else {
        yaml_value(text)
    }
}

/// Whether a document holds nothing but comments and blank lines.
fn is_blank(doc: &str) -> bool {
    doc.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

/// One YAML document as a JSON value, duplicate keys resolved as sigs.k8s.io/yaml does.
fn yaml_value(text: &str) -> Result<Value, Problem> {
    if is_blank(text) {
        return Ok(Value::Null);
    }
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
    };
    serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| problem("(document)", format!("invalid YAML: {e}")))
}

/// What the cluster takes from a document's value.
fn object(v: &Value) -> Result<Option<Object>, Problem> {
    let root = match v {
        Value::Null => return Ok(None),
        Value::Object(o) => o,
        other => {
            return Err(problem(
                "(document)",
                format!(
                    "expected a Kubernetes object (a mapping), found {}",
                    crate::assets::kind(other)
                ),
            ));
        }
    };
    let string = |value: Option<&Value>, field: &str| match value {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        None | Some(Value::Null) => Err(problem(field, "missing; expected a string")),
        Some(Value::String(_)) => Err(problem(field, "empty; expected a string")),
        Some(other) => Err(problem(
            field,
            format!("expected a string, found {}", crate::assets::kind(other)),
        )),
    };
    let api_version = string(root.get("apiVersion"), "apiVersion")?;
    let kind = string(root.get("kind"), "kind")?;
    let meta = match root.get("metadata") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => return Err(problem("metadata", "missing")),
        Some(other) => {
            return Err(problem(
                "metadata",
                format!("expected a mapping, found {}", crate::assets::kind(other)),
            ));
        }
    };
    let name = string(meta.get("name"), "metadata.name")?;
    let namespace = match meta.get("namespace") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(problem(
                "metadata.namespace",
                format!("expected a string, found {}", crate::assets::kind(other)),
            ));
        }
    };
    let (annotations, unreadable_annotations) = annotations(meta.get("annotations"));
    Ok(Some(Object {
        api_version,
        kind,
        name,
        namespace,
        annotations,
        unreadable_annotations,
    }))
}

/// Why an object without annotations has none (not a malformed input).
pub const NO_ANNOTATIONS: &str = "none";

/// `unstructured.GetAnnotations`: the map when every value is a string, else nothing.
fn annotations(v: Option<&Value>) -> (BTreeMap<String, String>, Option<String>) {
    let map = match v {
        None | Some(Value::Null) => return (BTreeMap::new(), Some(NO_ANNOTATIONS.into())),
        Some(Value::Object(m)) => m,
        Some(other) => {
            let found = crate::assets::kind(other);
            return (
                BTreeMap::new(),
                Some(format!("metadata.annotations is {found}, not a mapping")),
            );
        }
    };
    let mut out = BTreeMap::new();
    for (k, v) in map {
        match v {
            Value::String(s) => {
                out.insert(k.clone(), s.clone());
            }
            other => {
                let found = crate::assets::kind(other);
                return (
                    BTreeMap::new(),
                    Some(format!(
                        "the value of {k} is {found}, not a string (quote it)"
                    )),
                );
            }
        }
    }
    (out, None)
}

#[cfg(test)]
mod tests;
