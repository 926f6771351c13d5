//! The hand-over report: the options, the timeline and the tallies, as JSON and as text.

use super::clients::Policy;
use super::{ClassRow, Options, Row, ScopeRow, Timeline, openshift};
use serde_json::{Value, json};
use std::time::Duration;

pub struct Report {
    pub options: Options,
    pub timeline: Timeline,
    pub rows: Vec<Row>,
    /// With `scope_round_trip`: what the clients saw through it.
    pub scope_rows: Vec<ScopeRow>,
    /// Every client class, the nodes' included with `openshift_nodes`.
    pub class_rows: Vec<ClassRow>,
}
fn secs(d: Option<Duration>) -> Value {
    d.map_or(Value::Null, |d| {
        json!((d.as_secs_f64() * 10.0).round() / 10.0)
    })
}

impl Report {
    /// The bootstrap host's second address as the run had it (AWS gives none).
    fn second_address(&self) -> &str {
        match (self.options.cloud.as_str(), &self.options.second_address) {
            ("aws", _) => "none",
            (_, Some(v)) => v,
            (_, None) => "cloud",
        }
    }

    pub fn to_json(&self) -> Value {
        let t = &self.timeline;
        json!({
            "cloud": self.options.cloud,
            "dns_seeding": self.options.dns_seeding,
            "bootstrap_second_address": self.second_address(),
            "ttl_s": self.options.ttl.as_secs(),
            "clients": self.options.clients * Policy::ALL.len() * 2,
            "request_every_ms": self.options.period.as_millis() as u64,
            "connect_timeout_ms": self.options.connect_timeout.as_millis() as u64,
            "load_balancer_delay_s": self.options.lb_delay.as_secs_f64(),
            "timeline_s": {
                "seeded": secs(t.seeded),
                "joined": t.joined.iter().map(|(ip, at)| json!({"ip": ip, "at": secs(Some(*at))})).collect::<Vec<_>>(),
                "gate_passed": secs(t.gate_passed),
                "bootstrap_removed": secs(t.removed),
                "complete": secs(t.complete),
                "destroyed": secs(t.destroyed),
            },
            "scope_change_s": {
                "to_internal": secs(t.to_internal),
                "public_record_gone": secs(t.withdrawn),
                "internal_done": secs(t.internal_done),
                "to_external": secs(t.to_external),
                "public_record_back": secs(t.rejoined),
                "external_done": secs(t.external_done),
            },
            "scope_results": self.scope_rows.iter().map(|r| json!({
                "clients": if r.public { "public api" } else { "private api-int" },
                "window": r.window,
                "requests": r.requests,
                "failures": r.failures,
                "unanswered": r.unanswered,
            })).collect::<Vec<_>>(),
            "openshift_nodes": self.options.openshift_nodes,
            "node_design": {
                "gce_hairpin": self.options.node_design.hairpin.as_str(),
                "watcher_health_check_host": self.options.node_design.watcher_host.as_str(),
                "restart_watchers": self.options.node_design.restart.as_str(),
                "nodes_without_bootstrap_ip": self.options.node_design.second_address_alone,
            },
            "classes": self.class_rows.iter().map(|r| json!({
                "class": r.class,
                "stage": r.stage,
                "requests": r.requests,
                "failed": r.failures,
                "p99_ms": r.p99.as_millis() as u64,
            })).collect::<Vec<_>>(),
            "results": self.rows.iter().map(|r| json!({
                "policy": r.policy.as_str(),
                "stage": r.stage,
                "requests": r.requests,
                "failures": r.failures,
                "failed_percent": percent(r.failures, r.requests),
                "p99_ms": r.p99.as_millis() as u64,
            })).collect::<Vec<_>>(),
        })
    }

    pub fn to_text(&self) -> String {
        let t = &self.timeline;
        let at =
            |d: Option<Duration>| d.map_or("-".to_string(), |d| format!("{:.1}s", d.as_secs_f64()));
        let mut out = format!(
            "# hand-over on {}: dns-seeding {}, bootstrap second address {}, TTL {}s, {} clients (one request every {} ms, connect timeout {} ms), load balancers {}s after their Service\n",
            self.options.cloud,
            self.options.dns_seeding,
            self.second_address(),
            self.options.ttl.as_secs(),
            self.options.clients * Policy::ALL.len() * 2,
            self.options.period.as_millis(),
            self.options.connect_timeout.as_millis(),
            self.options.lb_delay.as_secs_f64(),
        );
        out += &format!("seeded {}", at(t.seeded));
        for (ip, when) in &t.joined {
            out += &format!(", {ip} joined {}", at(Some(*when)));
        }
        out += &format!(
            ", gate passed {}, bootstrap IP removed {}, complete {}, host destroyed {}\n",
            at(t.gate_passed),
            at(t.removed),
            at(t.complete),
            at(t.destroyed)
        );
        out += "policy          stage  requests  failed  p99\n";
        for r in &self.rows {
            out += &format!(
                "{:<15} {:>5}  {:>8}  {:>5.1}%  {} ms\n",
                r.policy.as_str(),
                r.stage,
                r.requests,
                percent(r.failures, r.requests),
                r.p99.as_millis()
            );
        }
        if self.options.openshift_nodes {
            out += "node class          stage  requests  failed  p99\n";
            for r in self
                .class_rows
                .iter()
                .filter(|r| openshift::CLASSES.contains(&r.class))
            {
                out += &format!(
                    "{:<19} {:>5}  {:>8}  {:>6}  {} ms\n",
                    r.class,
                    r.stage,
                    r.requests,
                    r.failures,
                    r.p99.as_millis()
                );
            }
        }
        if !self.scope_rows.is_empty() {
            out += &format!(
                "# scope change: publish Internal {}, public api gone {}, done {}; publish External {}, public api back {}, done {}\n",
                at(t.to_internal),
                at(t.withdrawn),
                at(t.internal_done),
                at(t.to_external),
                at(t.rejoined),
                at(t.external_done)
            );
            out += "clients          window       requests  failed  (no record / unanswered)\n";
            for r in &self.scope_rows {
                out += &format!(
                    "{:<16} {:<12} {:>8}  {:>6}  ({} / {})\n",
                    if r.public {
                        "public api"
                    } else {
                        "private api-int"
                    },
                    r.window,
                    r.requests,
                    r.failures,
                    r.failures - r.unanswered,
                    r.unanswered
                );
            }
        }
        out
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 1000.0 / whole as f64).round() / 10.0
    }
}
