//! Compute Engine's list `filter`: `field = value`, `field != value`, `field:*` (has) and
//! `field:value`, several of them AND-ed when written as `(a) (b)` or `a AND b`. Fields are
//! dotted paths into the resource (`labels.env`, `name`, `status`). Quotes are optional.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq,
    Ne,
    Has,
}

#[derive(Debug, Clone, PartialEq)]
struct Term {
    field: String,
    op: Op,
    value: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
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
    } else if let Some((f, v)) = raw.split_once(':') {
        (f, Op::Has, v)
    } else if let Some((f, v)) = raw.split_once(" eq ") {
        (f, Op::Eq, v)
    } else if let Some((f, v)) = raw.split_once(" ne ") {
        (f, Op::Ne, v)
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
}
