//! `real-ccm --upi`: the user makes the load balancers' addresses before the install, by the
//! seed's names and with the official clients (`crate::upi`, straight to the fake: the
//! counting proxies count only the agent and the CCM), as docs/upi.md says; the agent then
//! adopts them instead of reserving. The harness reads the user's resources before the first
//! `run` and once `teardown --all` has settled, and reports what changed: they must still be
//! there, as the user made them (nothing of the agent's or the CCM's on them).

use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The user's addresses, each by name as the cloud's API shows it.
pub type UserAddresses = BTreeMap<String, Value>;

/// What the user made, and what became of it.
#[derive(Debug, Default)]
pub struct UpiReport {
    /// Each address of the user's as the cloud showed it before the first `run`.
    pub before: UserAddresses,
    /// The same once `teardown --all` settled (a name missing: deleted).
    pub after: UserAddresses,
    /// What the user named without a resource (Azure's private IP, by `--reservations`).
    pub named_only: Vec<String>,
    /// The user's IPs (their addresses' and those named only).
    pub user_ips: Vec<String>,
    /// Once `run` was done, each of our Services asking for one of the user's IPs, as
    /// `<ns>/<name> <ip>`.
    pub services_on_user_ips: Vec<String>,
}

impl UpiReport {
    /// Each difference between `before` and `after`: `<name>: deleted`, `<name>: <field>
    /// <before> -> <after>` (top-level fields and, for ARM, `properties.*`), or `<name>: new`
    /// (should a user's name appear only afterwards).
    pub fn changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, before) in &self.before {
            match self.after.get(name) {
                None => out.push(format!("{name}: deleted")),
                Some(after) => diff(name, "", before, after, &mut out),
            }
        }
        for name in self.after.keys() {
            if !self.before.contains_key(name) {
                out.push(format!("{name}: new"));
            }
        }
        out
    }

    /// Every IP of the user's is asked for by one of our Services: they were adopted.
    pub fn adopted(&self) -> bool {
        !self.user_ips.is_empty()
            && self.user_ips.iter().all(|ip| {
                let held = format!(" {ip}");
                self.services_on_user_ips.iter().any(|s| s.ends_with(&held))
            })
    }

    pub fn to_json(&self) -> Value {
        let changes = self.changes();
        json!({
            "user_ips": self.user_ips,
            "services_on_user_ips": self.services_on_user_ips,
            "adopted": self.adopted(),
            "user_addresses_before": self.before,
            "user_addresses_after": self.after,
            "named_only": self.named_only,
            "changes": changes,
            "untouched": changes.is_empty() && !self.before.is_empty(),
        })
    }
}

/// The IP of a user's address as its API shows it: GCE's `address`, ARM's
/// `properties.ipAddress`.
pub fn address_ip(resource: &Value) -> Option<String> {
    resource["address"]
        .as_str()
        .or(resource["properties"]["ipAddress"].as_str())
        .map(str::to_string)
}

/// The fields of `before` and `after` that differ, one line each, nested objects by their
/// dotted path.
fn diff(name: &str, path: &str, before: &Value, after: &Value, out: &mut Vec<String>) {
    match (before.as_object(), after.as_object()) {
        (Some(b), Some(a)) => {
            let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for key in keys {
                let (bv, av) = (
                    b.get(key).unwrap_or(&Value::Null),
                    a.get(key).unwrap_or(&Value::Null),
                );
                let sub = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                diff(name, &sub, bv, av, out);
            }
        }
        _ if before != after => out.push(format!("{name}: {path} {before} -> {after}")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(before: Value, after: Option<Value>) -> UpiReport {
        let mut r = UpiReport::default();
        r.before.insert("pub".into(), before);
        if let Some(after) = after {
            r.after.insert("pub".into(), after);
        }
        r
    }

    #[test]
    fn the_same_resource_is_untouched() {
        let pip = json!({"name": "pub", "etag": "W/\"1\"", "tags": {},
                         "properties": {"ipAddress": "20.1.2.3"}});
        let r = report(pip.clone(), Some(pip));
        assert_eq!(r.changes(), Vec::<String>::new());
        assert_eq!(r.to_json()["untouched"], true);
    }

    #[test]
    fn a_deleted_retagged_or_new_address_is_named_with_the_field() {
        let before = json!({"labels": {}, "status": "RESERVED", "address": "34.1.2.3"});
        let r = report(before.clone(), None);
        assert_eq!(r.changes(), vec!["pub: deleted"]);
        assert_eq!(r.to_json()["untouched"], false);
        let mut after = before.clone();
        after["labels"]["bootstrap-agent-reservation"] = json!("x");
        after["status"] = json!("IN_USE");
        let r = report(before, Some(after));
        assert_eq!(
            r.changes(),
            vec![
                "pub: labels.bootstrap-agent-reservation null -> \"x\"",
                "pub: status \"RESERVED\" -> \"IN_USE\"",
            ]
        );
        let mut r = UpiReport::default();
        r.after.insert("late".into(), json!({}));
        assert_eq!(r.changes(), vec!["late: new"]);
        // Nothing of the user's to compare is no proof: not untouched.
        assert_eq!(UpiReport::default().to_json()["untouched"], false);
    }

    #[test]
    fn adopted_only_when_a_service_asks_for_each_of_the_users_ips() {
        assert_eq!(
            address_ip(&json!({"address": "34.1.2.3"})).unwrap(),
            "34.1.2.3"
        );
        let arm = json!({"properties": {"ipAddress": "20.1.2.3"}});
        assert_eq!(address_ip(&arm).unwrap(), "20.1.2.3");
        let mut r = UpiReport {
            user_ips: vec!["20.1.2.3".into(), "10.0.1.200".into()],
            services_on_user_ips: vec!["openshift-kube-apiserver/external-lb 20.1.2.3".into()],
            ..Default::default()
        };
        assert!(!r.adopted(), "the private IP is held by none");
        r.services_on_user_ips
            .push("openshift-kube-apiserver/internal-lb 10.0.1.200".into());
        assert!(r.adopted());
        assert!(
            !UpiReport::default().adopted(),
            "no user IP: nothing adopted"
        );
    }
}
