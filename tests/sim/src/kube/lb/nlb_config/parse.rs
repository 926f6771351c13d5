//! The controller's annotation parsers (`pkg/annotations/parser.go`): an annotation by its
//! suffix, Go's booleans, string maps and int32s, each refused in the controller's words.

use super::PREFIX;
use crate::kube::meta;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) fn annotation<'a>(svc: &'a Value, suffix: &str) -> Option<&'a str> {
    meta::get_str(
        svc,
        &["metadata", "annotations", &format!("{PREFIX}{suffix}")],
    )
}

/// Go's `strconv.ParseBool`.
pub(super) fn go_bool(raw: &str) -> Result<bool, String> {
    match raw {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {raw:?}: invalid syntax"
        )),
    }
}

/// `key=value` pairs separated by commas, a backslash escaping the next character; a comma
/// ends a pair only when what follows holds a `=`. Any pair without `=` or with an empty key
/// is refused, as the controller's `ParseStringMapAnnotation` does.
pub(super) fn string_map(
    svc: &Value,
    suffix: &str,
) -> Result<Option<BTreeMap<String, String>>, String> {
    let Some(raw) = annotation(svc, suffix) else {
        return Ok(None);
    };
    let malformed = || format!("failed to parse stringMap annotation, {PREFIX}{suffix}: {raw}");
    let mut pairs: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut chars = raw.chars().peekable();
    let mut rest_at = 0;
    while let Some(c) = chars.next() {
        rest_at += c.len_utf8();
        match c {
            '\\' if chars.peek().is_some() => {
                if let Some(next) = chars.next() {
                    rest_at += next.len_utf8();
                    current.push(next);
                }
            }
            ',' => {
                let rest = raw[rest_at..].trim();
                if rest.contains('=') {
                    pairs.push(current.trim().to_string());
                    current.clear();
                } else if !rest.is_empty() {
                    pairs.push(current.trim().to_string());
                    pairs.push(rest.to_string());
                    current.clear();
                    break;
                } else {
                    current.push(c);
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        pairs.push(current.trim().to_string());
    }
    let mut map = BTreeMap::new();
    for pair in pairs {
        let (key, value) = pair.split_once('=').ok_or_else(malformed)?;
        let key = key.trim();
        if key.is_empty() {
            return Err(malformed());
        }
        map.insert(key.to_string(), value.trim().to_string());
    }
    Ok(Some(map))
}

pub(super) fn int32(svc: &Value, suffix: &str, default: i64) -> Result<i64, String> {
    let Some(raw) = annotation(svc, suffix) else {
        return Ok(default);
    };
    let why = match raw.parse::<i64>() {
        Ok(n) if i32::try_from(n).is_ok() => return Ok(n),
        Ok(_) => "value out of range",
        Err(_) => "invalid syntax",
    };
    Err(format!(
        "failed to parse int32 annotation, {PREFIX}{suffix}: {raw}: strconv.ParseInt: parsing {raw:?}: {why}"
    ))
}
