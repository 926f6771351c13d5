//! A parsed YAML document with field accessors whose errors name the file and the field path.

use crate::error::InputError;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub struct Doc {
    pub file: PathBuf,
    pub root: Value,
}

impl Doc {
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| InputError::new(path, "(file)", format!("cannot read: {e}")))?;
        Self::parse(path, &text, "(document)")
    }

    /// Parses YAML text that came from `file` (at `field`, for embedded documents).
    pub fn parse(file: &Path, text: &str, field: &str) -> Result<Self, InputError> {
        // No source snippet in the message: the file may be the creds secret.
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        let root: Value = serde_saphyr::from_str_with_options(text, options)
            .map_err(|e| InputError::new(file, field, format!("invalid YAML: {e}")))?;
        if !root.is_object() {
            return Err(InputError::new(file, field, "expected a YAML mapping"));
        }
        Ok(Self {
            file: file.to_path_buf(),
            root,
        })
    }

    pub fn error(&self, field: &str, problem: impl Into<String>) -> InputError {
        InputError::new(&self.file, field, problem)
    }

    /// The value at a dotted path, or None when any part is missing or null.
    pub fn get(&self, path: &str) -> Option<&Value> {
        path.split('.')
            .try_fold(&self.root, |v, part| v.get(part))
            .filter(|v| !v.is_null())
    }

    /// The value under `segments` (keys may contain dots, like `service_account.json`).
    pub fn get_in(&self, segments: &[&str]) -> Option<&Value> {
        segments
            .iter()
            .try_fold(&self.root, |v, part| v.get(part))
            .filter(|v| !v.is_null())
    }

    pub fn str(&self, path: &str) -> Result<&str, InputError> {
        match self.get(path) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Value::String(_)) => Err(self.error(path, "expected a non-empty string")),
            Some(other) => {
                Err(self.error(path, format!("expected a string, found {}", kind(other))))
            }
            None => Err(self.error(path, "missing; expected a string")),
        }
    }

    pub fn opt_str(&self, path: &str) -> Result<Option<&str>, InputError> {
        match self.get(path) {
            None => Ok(None),
            Some(_) => self.str(path).map(Some),
        }
    }

    pub fn opt_list(&self, path: &str) -> Result<&[Value], InputError> {
        match self.get(path) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(self.error(path, format!("expected a list, found {}", kind(other)))),
        }
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Where a Kubernetes object's head (`apiVersion`, `kind`, `metadata` with its name,
/// namespace, labels and annotations) has the wrong type: the field path and what was
/// expected. For a typed parse that failed with only a line and column to say. A scalar
/// where a string belongs is no problem: YAML reads `y` or `1` as a boolean or a number
/// here, where the typed parse takes it as the string it is.
pub fn object_head_problem(root: &Value) -> Option<(String, String)> {
    let found = |v: &Value| kind(v);
    let nested = |v: &Value| v.is_array() || v.is_object();
    let Value::Object(object) = root else {
        return Some((
            "(document)".into(),
            format!(
                "expected a Kubernetes object (a mapping), found {}",
                found(root)
            ),
        ));
    };
    let string = |v: Option<&Value>, field: &str| match v {
        Some(other) if nested(other) => Some((
            field.to_string(),
            format!("expected a string, found {}", found(other)),
        )),
        _ => None,
    };
    if let Some(p) = string(object.get("apiVersion"), "apiVersion")
        .or_else(|| string(object.get("kind"), "kind"))
    {
        return Some(p);
    }
    let metadata = match object.get("metadata") {
        None | Some(Value::Null) => return None,
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Some((
                "metadata".into(),
                format!("expected a mapping, found {}", found(other)),
            ));
        }
    };
    for field in ["name", "namespace", "generateName"] {
        if let Some((f, p)) = string(metadata.get(field), field) {
            return Some((format!("metadata.{f}"), p));
        }
    }
    for field in ["labels", "annotations"] {
        match metadata.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                if let Some((key, v)) = entries.iter().find(|(_, v)| nested(v)) {
                    return Some((
                        format!("metadata.{field}.{key}"),
                        format!("expected a string (quote it), found {}", found(v)),
                    ));
                }
            }
            Some(other) => {
                return Some((
                    format!("metadata.{field}"),
                    format!(
                        "expected a mapping of names to string values, found {}",
                        found(other)
                    ),
                ));
            }
        }
    }
    None
}
