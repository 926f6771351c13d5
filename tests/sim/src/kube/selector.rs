//! Label selectors (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a`, `!a`, joined by
//! commas = AND) and field selectors (`metadata.name`, `metadata.namespace`; `=`, `==`, `!=`).

use super::meta;
use super::objects::{is_label_key, is_label_value};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Req {
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Req>);

/// Splits on commas outside parentheses.
fn terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn key(k: &str) -> Result<String, String> {
    checked(k, is_label_key, "invalid label key")
}

fn value(v: &str) -> Result<String, String> {
    checked(v, is_label_value, "invalid label value:")
}

/// `text` trimmed, if `valid`; else the parser's error, `refusal` and the text.
fn checked(text: &str, valid: fn(&str) -> bool, refusal: &str) -> Result<String, String> {
    let text = text.trim();
    if valid(text) {
        Ok(text.to_string())
    } else {
        Err(format!("unable to parse requirement: {refusal} {text:?}"))
    }
}

fn set(rest: &str) -> Result<Vec<String>, String> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("found '{rest}', expected: '('"))?;
    inner.split(',').map(value).collect()
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for t in terms(s) {
            let t = t.trim();
            if t.is_empty() {
                if s.trim().is_empty() {
                    continue;
                }
                return Err(format!("found '', expected: identifier in {s:?}"));
            }
            let req = if let Some(k) = t.strip_prefix('!') {
                Req::NotExists(key(k)?)
            } else if let Some((k, rest)) = t.split_once(" notin ") {
                Req::NotIn(key(k)?, set(rest)?)
            } else if let Some((k, rest)) = t.split_once(" in ") {
                Req::In(key(k)?, set(rest)?)
            } else if let Some((k, v)) = t.split_once("!=") {
                Req::Ne(key(k)?, value(v)?)
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                Req::Eq(key(k)?, value(v)?)
            } else {
                Req::Exists(key(t)?)
            };
            reqs.push(req);
        }
        Ok(Self(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = meta::labels(obj);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::Ne(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Req::NotIn(k, vs) => get(k).is_none_or(|l| !vs.iter().any(|v| v == l)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// Field labels kube-apiserver accepts per kind beyond `metadata.name`/`metadata.namespace`
/// (core/v1 Event: pkg/registry/core/event/strategy.go `ToSelectableFields`).
fn selectable(kind: &str) -> &'static [&'static str] {
    match kind {
        "Event" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        _ => &[],
    }
}

impl FieldSelector {
    /// As `parse`, with the field labels `kind` adds (an Event's `involvedObject.name`, ...).
    pub fn parse_for(s: &str, kind: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, eq, v) = if let Some((f, v)) = t.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!("invalid selector: '{s}'; can't understand '{t}'"));
            };
            let field = field.trim();
            if field != "metadata.name"
                && field != "metadata.namespace"
                && !selectable(kind).contains(&field)
            {
                return Err(format!("field label not supported: {field}"));
            }
            reqs.push((field.to_string(), eq, v.trim().to_string()));
        }
        Ok(Self(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, eq, v)| {
            let actual = match field.as_str() {
                "metadata.name" => meta::name(obj),
                "metadata.namespace" => meta::namespace(obj),
                // `source` is the component, as kube-apiserver selects it.
                "source" => meta::get_str(obj, &["source", "component"]).unwrap_or(""),
                other => {
                    let path: Vec<&str> = other.split('.').collect();
                    meta::get_str(obj, &path).unwrap_or("")
                }
            };
            (actual == v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_select_by_involved_object_and_other_kinds_refuse_it() {
        let event = json!({"metadata": {"name": "e1", "namespace": "n"},
            "involvedObject": {"kind": "Service", "name": "internal-lb"}, "reason": "FailedDeployModel"});
        let m = |s: &str| {
            FieldSelector::parse_for(s, "Event")
                .unwrap()
                .matches(&event)
        };
        assert!(m(
            "involvedObject.kind=Service,involvedObject.name=internal-lb"
        ));
        assert!(!m("involvedObject.name=external-lb"));
        assert!(m("reason=FailedDeployModel"));
        assert!(FieldSelector::parse_for("involvedObject.name=x", "Service").is_err());
        assert!(FieldSelector::parse_for("spec.type=LoadBalancer", "Event").is_err());
    }

    #[test]
    fn label_selector_forms() {
        let obj = json!({"metadata": {"labels": {"app": "api", "tier": "cp"}}});
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(&obj);
        assert!(m("app=api"));
        assert!(m("app==api,tier"));
        assert!(!m("app!=api"));
        assert!(m("app in (x, api),!missing"));
        assert!(!m("app notin (api)"));
        assert!(m("missing notin (a)"));
        assert!(!m("missing"));
        assert!(m(""));
        assert!(LabelSelector::parse("a in x").is_err());
        assert!(LabelSelector::parse("bad key!=x").is_err());
    }

    #[test]
    fn field_selector_forms() {
        let obj = json!({"metadata": {"name": "a", "namespace": "n"}});
        let m = |s: &str| FieldSelector::parse_for(s, "").unwrap().matches(&obj);
        assert!(m("metadata.name=a"));
        assert!(m("metadata.name==a,metadata.namespace=n"));
        assert!(!m("metadata.name!=a"));
        assert!(FieldSelector::parse_for("spec.type=x", "").is_err());
    }
}
