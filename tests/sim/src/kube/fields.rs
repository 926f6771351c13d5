//! Field sets: which fields of an object a manager owns, as paths of `f:<name>` segments, and
//! their `FieldsV1` encoding in `metadata.managedFields`.
//!
//! Simplification: lists are atomic (a list is one leaf, `f:ports: {}`), as structured-merge-diff
//! does for lists without `listType=map|set`. kube-apiserver treats some lists as maps (Service
//! `spec.ports` keyed by port+protocol, `metadata.finalizers` as a set), so two managers that
//! each own one port here conflict on the whole list.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

pub type Path = Vec<String>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet(pub BTreeSet<Path>);

/// Segments not owned by anyone: identity and server-maintained metadata.
fn is_ignored(path: &[String]) -> bool {
    match path {
        [a] => a == "f:apiVersion" || a == "f:kind",
        [m, f] if m == "f:metadata" => matches!(
            f.as_str(),
            "f:name"
                | "f:namespace"
                | "f:uid"
                | "f:resourceVersion"
                | "f:generation"
                | "f:creationTimestamp"
                | "f:deletionTimestamp"
                | "f:deletionGracePeriodSeconds"
                | "f:managedFields"
                | "f:selfLink"
        ),
        _ => false,
    }
}

pub fn seg(name: &str) -> String {
    format!("f:{name}")
}

impl FieldSet {
    /// The leaf fields of `v`: scalars, lists, empty maps and atomic maps. `keep` filters by
    /// path prefix (scope: main resource vs status).
    pub fn of(
        v: &Value,
        atomic: &dyn Fn(&[String]) -> bool,
        keep: &dyn Fn(&[String]) -> bool,
    ) -> Self {
        fn walk(
            v: &Value,
            path: &mut Path,
            out: &mut BTreeSet<Path>,
            atomic: &dyn Fn(&[String]) -> bool,
            keep: &dyn Fn(&[String]) -> bool,
        ) {
            if !path.is_empty() && (is_ignored(path) || !keep(path)) {
                return;
            }
            match v {
                Value::Object(m) if !m.is_empty() && !atomic(path) => {
                    for (k, v) in m {
                        path.push(seg(k));
                        walk(v, path, out, atomic, keep);
                        path.pop();
                    }
                }
                _ if path.is_empty() => {}
                _ => {
                    out.insert(path.clone());
                }
            }
        }
        let mut out = BTreeSet::new();
        walk(v, &mut Vec::new(), &mut out, atomic, keep);
        Self(out)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Paths of `self` equal to, under or above `p`.
    pub fn related<'a>(&'a self, p: &'a [String]) -> impl Iterator<Item = &'a Path> + 'a {
        self.0
            .iter()
            .filter(move |q| q.starts_with(p) || p.starts_with(q))
    }

    pub fn to_fields_v1(&self) -> Value {
        let mut root = Map::new();
        for path in &self.0 {
            let mut node = &mut root;
            for (i, s) in path.iter().enumerate() {
                let entry = node
                    .entry(s.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(child) = entry else { break };
                if i + 1 == path.len() {
                    if !child.is_empty() {
                        child.insert(".".into(), Value::Object(Map::new()));
                    }
                } else if child.is_empty() && self.0.contains(&path[..=i]) {
                    child.insert(".".into(), Value::Object(Map::new()));
                }
                node = child;
            }
        }
        Value::Object(root)
    }

    pub fn from_fields_v1(v: &Value) -> Self {
        fn walk(m: &Map<String, Value>, path: &mut Path, out: &mut BTreeSet<Path>) {
            for (k, v) in m {
                if k == "." {
                    out.insert(path.clone());
                    continue;
                }
                path.push(k.clone());
                match v.as_object() {
                    Some(child) if !child.is_empty() => walk(child, path, out),
                    _ => {
                        out.insert(path.clone());
                    }
                }
                path.pop();
            }
        }
        let mut out = BTreeSet::new();
        if let Some(m) = v.as_object() {
            walk(m, &mut Vec::new(), &mut out);
        }
        Self(out)
    }
}

/// `.spec.ports`, as structured-merge-diff prints paths.
pub fn path_string(p: &[String]) -> String {
    p.iter()
        .map(|s| format!(".{}", s.strip_prefix("f:").unwrap_or(s)))
        .collect()
}

fn key(s: &str) -> &str {
    s.strip_prefix("f:").unwrap_or(s)
}

pub fn value_at<'a>(v: &'a Value, p: &[String]) -> Option<&'a Value> {
    p.iter().try_fold(v, |v, s| v.get(key(s)))
}

/// Removes the field at `p`, then any map above it that became empty (but not top-level ones).
pub fn remove_at(v: &mut Value, p: &[String]) {
    fn rec(v: &mut Value, p: &[String]) -> bool {
        let Some(m) = v.as_object_mut() else {
            return false;
        };
        match p {
            [] => false,
            [last] => {
                m.remove(key(last));
                m.is_empty()
            }
            [first, rest @ ..] => {
                let emptied = m.get_mut(key(first)).is_some_and(|c| rec(c, rest));
                if emptied {
                    m.remove(key(first));
                }
                m.is_empty()
            }
        }
    }
    if let Some(m) = v.as_object_mut()
        && let [first, rest @ ..] = p
    {
        if rest.is_empty() {
            m.remove(key(first));
        } else if let Some(child) = m.get_mut(key(first)) {
            rec(child, rest);
        }
    }
}

/// Merges `patch` into `target`: maps merge member by member (unless atomic), everything else
/// replaces. This is apply's merge of a configuration into the live object.
pub fn merge(
    target: &mut Value,
    patch: &Value,
    path: &mut Path,
    atomic: &dyn Fn(&[String]) -> bool,
) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) if !atomic(path) => {
            for (k, pv) in p {
                path.push(seg(k));
                match t.get_mut(k) {
                    Some(tv) => merge(tv, pv, path, atomic),
                    None => {
                        t.insert(k.clone(), pv.clone());
                    }
                }
                path.pop();
            }
        }
        (t, p) => *t = p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_v1_round_trip_with_dot() {
        let set = FieldSet(
            [
                vec!["f:metadata".into(), "f:labels".into()],
                vec!["f:metadata".into(), "f:labels".into(), "f:a".into()],
                vec!["f:spec".into(), "f:ports".into()],
            ]
            .into_iter()
            .collect(),
        );
        let v = set.to_fields_v1();
        assert_eq!(
            v,
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {"f:ports": {}}})
        );
        assert_eq!(FieldSet::from_fields_v1(&v), set);
    }

    #[test]
    fn leaves_skip_identity() {
        let obj = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {"ports": [{"port": 1}], "selector": {"a": "b"}, "x": {}}});
        let atomic = |p: &[String]| p == ["f:spec", "f:selector"];
        let set = FieldSet::of(&obj, &atomic, &|_| true);
        let paths: Vec<String> = set.0.iter().map(|p| path_string(p)).collect();
        assert_eq!(
            paths,
            [
                ".metadata.labels.a",
                ".spec.ports",
                ".spec.selector",
                ".spec.x"
            ]
        );
    }
}
