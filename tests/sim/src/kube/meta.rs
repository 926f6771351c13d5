//! Small helpers on JSON objects: paths, metadata fields, timestamps and random names.

use serde_json::{Map, Value};
use std::time::SystemTime;

pub fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

pub fn get_str<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(v, path).and_then(Value::as_str)
}

/// The strings of an array (none when it is missing or not an array).
pub fn strings(array: Option<&Value>) -> Vec<String> {
    array
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The object at `path`, created (replacing non-objects) on the way.
pub fn obj_mut<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut cur = v;
    for k in path {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else {
            unreachable!("just made an object")
        };
        cur = m
            .entry(k.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !cur.is_object() {
        *cur = Value::Object(Map::new());
    }
    match cur {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

pub fn set(v: &mut Value, path: &[&str], value: Value) {
    if let Some((last, parent)) = path.split_last() {
        obj_mut(v, parent).insert(last.to_string(), value);
    }
}

pub fn set_str(v: &mut Value, path: &[&str], s: &str) {
    set(v, path, Value::String(s.to_string()));
}

pub fn remove(v: &mut Value, path: &[&str]) -> Option<Value> {
    let (last, parent) = path.split_last()?;
    let mut cur = v;
    for k in parent {
        cur = cur.get_mut(*k)?;
    }
    cur.as_object_mut()?.remove(*last)
}

pub fn name(v: &Value) -> &str {
    get_str(v, &["metadata", "name"]).unwrap_or("")
}

pub fn namespace(v: &Value) -> &str {
    get_str(v, &["metadata", "namespace"]).unwrap_or("")
}

pub fn uid(v: &Value) -> &str {
    get_str(v, &["metadata", "uid"]).unwrap_or("")
}

pub fn rv_of(v: &Value) -> u64 {
    get_str(v, &["metadata", "resourceVersion"])
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

pub fn labels(v: &Value) -> Option<&Map<String, Value>> {
    get(v, &["metadata", "labels"]).and_then(Value::as_object)
}

/// RFC 3339 in whole seconds, UTC, as kube-apiserver writes metav1.Time.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The alphabet kube-apiserver uses for generateName suffixes (no vowels, no confusables).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `n` characters from the generateName alphabet; deterministic when `seed` is given.
pub fn suffix(n: usize, seed: Option<&str>) -> String {
    let bytes: Vec<u8> = match seed {
        Some(s) => {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            (0..n)
                .map(|i| {
                    for b in s.bytes().chain([i as u8]) {
                        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                    }
                    (h >> 32) as u8
                })
                .collect()
        }
        None => uuid::Uuid::new_v4().as_bytes()[..n.min(16)].to_vec(),
    };
    bytes
        .iter()
        .map(|b| ALPHANUMS[usize::from(*b) % ALPHANUMS.len()] as char)
        .collect()
}

/// Removes null members recursively (server-side apply treats them as unset).
pub fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
