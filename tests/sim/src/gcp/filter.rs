//! Compute Engine's list `filter`: `field = value`, `field != value`, `field:*` (has) and
//! `field:value`, several of them AND-ed when written as `(a) (b)` or `a AND b`. Fields are
//! dotted paths into the resource (`labels.env`, `name`, `status`). Quotes are optional.
//!
//! The older `field eq value` / `field ne value` form takes an RE2 regular expression that must
//! match the whole field (compute v1 `instances.list` `filter`: "The literal value is
//! interpreted as a regular expression using Google RE2 library syntax. The literal value
//! must match the entire field."). It is what the Go clients send: k8s-cloud-provider
//! `pkg/cloud/filter/filter.go` (`Regexp`, `EqualRegexp`) writes `name eq infra.*`, and
//! OpenShift's cloud provider lists `<infra>-master-<zone>` groups with it
//! (openshift/cloud-provider-gcp 30cc0479 `providers/gce/gce_instancegroup.go:79-93`).

use serde_json::Value;

#[derive(Debug, Clone)]
enum Op {
    Eq,
    Ne,
    Has,
    /// `eq`: the whole field matches the RE2 expression.
    Matches(regex::Regex),
    /// `ne`: it does not.
    NotMatches(regex::Regex),
}

#[derive(Debug, Clone)]
struct Term {
    field: String,
    op: Op,
    value: String,
}

#[derive(Debug, Clone, Default)]
pub struct Filter(Vec<Term>);

impl Filter {
    /// Parses a filter; an error text for the 400 reply otherwise.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Self::default());
        }
        let mut terms = Vec::new();
        for raw in split_terms(text)? {
            terms.push(term(&raw)?);
        }
        Ok(Self(terms))
    }

    pub fn matches(&self, resource: &Value) -> bool {
        self.0.iter().all(|t| {
            let found = t
                .field
                .split('.')
                .try_fold(resource, |v, seg| v.get(seg))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            match (&t.op, found) {
                (Op::Has, Some(_)) if t.value == "*" => true,
                (Op::Has, Some(v)) => v.contains(&t.value),
                (Op::Has, None) => false,
                (Op::Eq, Some(v)) => v == t.value,
                (Op::Eq, None) => false,
                (Op::Ne, Some(v)) => v != t.value,
                (Op::Ne, None) => true,
                (Op::Matches(re), Some(v)) => re.is_match(&v),
                (Op::Matches(_), None) => false,
                (Op::NotMatches(re), Some(v)) => !re.is_match(&v),
                (Op::NotMatches(_), None) => true,
            }
        })
    }
}

/// `(a) (b)`, `(a) AND (b)`, `a AND b` or a single `a`.
fn split_terms(text: &str) -> Result<Vec<String>, String> {
    if !text.starts_with('(') {
        return Ok(text
            .split(" AND ")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect());
    }
    let mut terms = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(terms);
        }
        if let Some(r) = rest.strip_prefix("AND ") {
            rest = r;
            continue;
        }
        let Some(inner) = rest.strip_prefix('(') else {
            return Err(format!("Invalid list filter expression '{text}'."));
        };
        let Some(end) = inner.find(')') else {
            return Err(format!("Invalid list filter expression '{text}'."));
        };
        terms.push(inner[..end].trim().to_string());
        rest = &inner[end + 1..];
    }
}

fn term(raw: &str) -> Result<Term, String> {
    let invalid = || format!("Invalid list filter expression '{raw}'.");
    let (field, op, value) = if let Some((f, v)) = raw.split_once("!=") {
        (f, Op::Ne, v)
    } else if let Some((f, v)) = raw.split_once('=') {
        (f, Op::Eq, v)
    } else if let Some((f, v)) = raw.split_once(" eq ") {
        (f, Op::Matches(whole(v)?), v)
    } else if let Some((f, v)) = raw.split_once(" ne ") {
        (f, Op::NotMatches(whole(v)?), v)
    } else if let Some((f, v)) = raw.split_once(':') {
        (f, Op::Has, v)
    } else {
        return Err(invalid());
    };
    let field = field.trim();
    if field.is_empty() || field.contains(' ') {
        return Err(invalid());
    }
    let value = value.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    if value.is_empty() {
        return Err(invalid());
    }
    Ok(Term {
        field: field.to_string(),
        op,
        value: value.to_string(),
    })
}

/// An RE2 expression matching a whole field (quotes optional); the 400's text otherwise.
fn whole(value: &str) -> Result<regex::Regex, String> {
    let value = value.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    regex::Regex::new(&format!("^(?:{value})$")).map_err(|_| {
        format!("Invalid list filter expression: '{value}' is not a valid regular expression.")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_filters_and_together() {
        let f = Filter::parse(r#"(labels.a = "owned") (labels.b:*)"#).unwrap();
        assert!(f.matches(&json!({"labels": {"a": "owned", "b": "x"}})));
        assert!(!f.matches(&json!({"labels": {"a": "owned"}})));
        assert!(!f.matches(&json!({"labels": {"a": "shared", "b": "x"}})));
        let f = Filter::parse("name != foo AND status = RESERVED").unwrap();
        assert!(f.matches(&json!({"name": "bar", "status": "RESERVED"})));
        assert!(Filter::parse("(labels.a = ").is_err());
        assert!(Filter::parse("nonsense").is_err());
    }

    #[test]
    fn eq_and_ne_take_an_re2_expression_that_must_match_the_whole_field() {
        let group = json!({"name": "mycluster-7xk2p-master-us-central1-a"});
        assert!(
            Filter::parse("name eq mycluster-7xk2p.*")
                .unwrap()
                .matches(&group)
        );
        assert!(
            !Filter::parse("name eq mycluster-7xk2p")
                .unwrap()
                .matches(&group),
            "the whole field must match, not a prefix"
        );
        assert!(
            !Filter::parse("name ne mycluster-7xk2p.*")
                .unwrap()
                .matches(&group)
        );
        assert!(Filter::parse("name ne other.*").unwrap().matches(&group));
        assert!(
            Filter::parse("address eq 10.0.128.2")
                .unwrap()
                .matches(&json!({"address": "10.0.128.2"}))
        );
        assert!(Filter::parse("name eq (unclosed").is_err());
        assert!(
            !Filter::parse("name = mycluster-7xk2p.*")
                .unwrap()
                .matches(&group),
            "`=` stays a literal comparison"
        );
    }
}
