//! The checks after each stage, over what the peers show (`Peers::inspect`), cloud-blind:
//! what of a world is still in another ([`missing`]), how many of each thing exist
//! ([`shape`], [`shape_diff`]).

use serde_json::{Map, Value};

/// Fields that change without anything being touched: Azure's record-set ETags move with
/// every write to the set (ours too).
const VOLATILE: [&str; 1] = ["etags"];

/// The world as the checks compare it: without [`VOLATILE`] fields.
pub fn comparable(world: &Value) -> Value {
    match world {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), comparable(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What of `base` is not in `now`, as `path: what` lines: an object's every key must be there
/// and hold what it held; a list's every element must still be in the list (others may have
/// joined: ours); anything else must be equal.
pub fn missing(base: &Value, now: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_missing("", base, now, &mut out);
    out
}

fn walk_missing(path: &str, base: &Value, now: &Value, out: &mut Vec<String>) {
    match (base, now) {
        (Value::Object(b), Value::Object(n)) => {
            for (k, v) in b {
                let here = format!("{path}/{k}");
                match n.get(k) {
                    Some(nv) => walk_missing(&here, v, nv, out),
                    None => out.push(format!("{here}: gone (was {v})")),
                }
            }
        }
        (Value::Array(b), Value::Array(n)) => {
            for v in b {
                // A named thing (the bootstrap host's NIC) may gain ours (a second address)
                // but keep all it had; anything else must be there as it was.
                let named = v.get("name").filter(|_| v.is_object());
                match named.and_then(|name| n.iter().find(|e| e.get("name") == Some(name))) {
                    Some(found) => walk_missing(&format!("{path}[{}]", v["name"]), v, found, out),
                    None if n.contains(v) => {}
                    None => out.push(format!("{path}: {v} gone or changed")),
                }
            }
        }
        (b, n) if b == n => {}
        (b, n) => out.push(format!("{path}: was {b}, now {n}")),
    }
}

/// How many of each thing: every list replaced by its length (and, where its elements are
/// objects or lists, their shapes too, counted), objects kept by key, values dropped.
pub fn shape(world: &Value) -> Value {
    match world {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shape(v)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::from(items.len()),
        _ => Value::Null,
    }
}

/// Where two shapes differ, as `path: expected a, found b` lines.
pub fn shape_diff(expected: &Value, found: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_shape("", expected, found, &mut out);
    out
}

fn walk_shape(path: &str, expected: &Value, found: &Value, out: &mut Vec<String>) {
    match (expected, found) {
        (Value::Object(e), Value::Object(f)) => {
            let keys: std::collections::BTreeSet<&String> = e.keys().chain(f.keys()).collect();
            for k in keys {
                let here = format!("{path}/{k}");
                match (e.get(k), f.get(k)) {
                    (Some(ev), Some(fv)) => walk_shape(&here, ev, fv, out),
                    (Some(ev), None) => out.push(format!("{here}: expected {ev}, found none")),
                    (None, Some(fv)) => out.push(format!("{here}: expected none, found {fv}")),
                    (None, None) => {}
                }
            }
        }
        (e, f) if e == f => {}
        (e, f) => out.push(format!("{path}: expected {e}, found {f}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn another_writers_value_gone_or_a_foreign_address_changed_is_missing() {
        let base = json!({"addresses": [{"name": "other", "ip": "1.2.3.4"}],
                          "zones": {"private": {"api A": ["192.0.2.9"]}}, "etags": {"x": 1}});
        let ours_added = json!({"addresses": [{"name": "other", "ip": "1.2.3.4"}, {"name": "ours"}],
                                "zones": {"private": {"api A": ["192.0.2.9", "10.0.0.5"]}}});
        assert!(missing(&comparable(&base), &ours_added).is_empty());
        let touched = json!({"addresses": [{"name": "other", "ip": "1.2.3.5"}],
                             "zones": {"private": {"api A": ["10.0.0.5"]}}});
        assert_eq!(missing(&comparable(&base), &touched).len(), 2);
        assert_eq!(
            missing(&touched, &base).len(),
            2,
            "and the other way round: leaks"
        );
    }

    #[test]
    fn a_duplicate_shows_in_the_shape() {
        let once = json!({"addresses": [{"a": 1}, {"a": 2}], "zones": {"api A": ["x", "y"]}});
        let twice =
            json!({"addresses": [{"a": 1}, {"a": 2}, {"a": 3}], "zones": {"api A": ["x", "y"]}});
        assert!(shape_diff(&shape(&once), &shape(&once)).is_empty());
        assert_eq!(
            shape_diff(&shape(&once), &shape(&twice)),
            ["/addresses: expected 2, found 3"]
        );
    }
}
