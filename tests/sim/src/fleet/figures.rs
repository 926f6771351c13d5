//! The fleet's figures, as JSON: failed agents, throttled calls and what they caused, calls
//! per agent by kind, each quota's peak against its limit, and the slowest agent against the
//! lone one.

use super::{AgentRun, Options, Report, STAGES};
use crate::limits::{QuotaUse, Refill};
use crate::peers::Peers;
use crate::proxy::Call;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What a call does to the cloud: reads, writes (creates, updates, Route53's change batches
/// whatever they hold) or deletes (EC2's Delete/Release/Unassign/Disassociate actions, REST
/// DELETEs).
pub fn kind(call: &Call) -> &'static str {
    if !call.mutating {
        return "read";
    }
    let deletes = match call.action.split_once(' ') {
        Some((method, _)) => method == "DELETE",
        None => ["Delete", "Release", "Unassign", "Disassociate"]
            .iter()
            .any(|p| call.action.starts_with(p)),
    };
    if deletes { "delete" } else { "write" }
}

/// Calls through every proxy since the last reset, by kind, divided by `agents`.
pub fn calls_by_kind(peers: &Peers, agents: usize) -> Value {
    let mut counts = BTreeMap::<&str, usize>::new();
    for call in peers.proxies().iter().flat_map(|p| p.calls()) {
        *counts.entry(kind(&call)).or_default() += 1;
        *counts.entry("total").or_default() += 1;
    }
    let per = |k: &str| round(counts.get(k).copied().unwrap_or(0) as f64 / agents.max(1) as f64);
    json!({"read": per("read"), "write": per("write"), "delete": per("delete"), "total": per("total")})
}

/// Calls through every proxy since the last reset, by service and action (EC2's `Action`,
/// else the method and the path's first three segments and its last), divided by `agents`.
pub fn calls_by_action(peers: &Peers, agents: usize) -> Value {
    let mut counts = BTreeMap::<String, usize>::new();
    for proxy in peers.proxies() {
        for call in proxy.calls() {
            let action = match call.action.split_once(' ') {
                Some((method, path)) => {
                    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
                    let head = parts.iter().take(3).copied().collect::<Vec<_>>().join("/");
                    format!("{method} {head}/../{}", parts.last().unwrap_or(&""))
                }
                None => call.action.clone(),
            };
            *counts
                .entry(format!("{:?} {action}", proxy.service))
                .or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(k, n)| (k, json!(round(n as f64 / agents.max(1) as f64))))
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

/// Whether a quota's use stayed within what it allows: a window's within twice its capacity
/// in any span of its length (the span measured slides, the quota's windows are fixed: one
/// span can hold the end of one window and the start of the next, each full); a bucket's
/// within its capacity plus its refill over the span measured (one second, ten seconds).
pub fn held(q: &QuotaUse) -> bool {
    match q.quota.refill {
        Refill::Window(_) => q.peak_per_window as f64 <= 2.0 * q.quota.capacity,
        Refill::PerSecond(rate) => {
            q.peak_per_second as f64 <= q.quota.capacity + rate
                && q.peak_per_window as f64 <= q.quota.capacity + 10.0 * rate
        }
    }
}

/// The least time the quota needs to let `q.admitted` requests through (a bucket: what is
/// beyond its capacity at its refill rate; a window: one window per capacity beyond the
/// first).
pub fn floor_seconds(q: &QuotaUse) -> f64 {
    let admitted = q.admitted as f64;
    match q.quota.refill {
        Refill::PerSecond(rate) => (admitted - q.quota.capacity).max(0.0) / rate,
        Refill::Window(length) => {
            ((admitted - 1.0).max(0.0) / q.quota.capacity).floor() * length.as_secs_f64()
        }
    }
}

/// The report of a fleet of `runs` (the lone agent's `lone`).
pub fn report(
    opts: &Options,
    peers: &Peers,
    lone: &AgentRun,
    lone_calls: Value,
    runs: &[AgentRun],
    makespan: f64,
    world_diff: Vec<String>,
) -> Report {
    let failed: Vec<Value> = runs
        .iter()
        .filter(|r| !r.completed())
        .map(|r| json!({"cluster": r.cluster, "exits": r.exits, "last_error": r.last_error}))
        .collect();
    let mut limits_held = true;
    let mut refused = 0;
    let mut quotas = Vec::new();
    let mut floor = (0.0, String::new());
    for proxy in peers.proxies() {
        for q in proxy.quota_use() {
            let ok = held(&q);
            limits_held &= ok;
            refused += q.refused;
            if floor_seconds(&q) > floor.0 {
                floor = (floor_seconds(&q), q.quota.name.to_string());
            }
            let mut j = q.to_json();
            j["service"] = json!(format!("{:?}", proxy.service));
            j["held"] = json!(ok);
            quotas.push(j);
        }
    }
    let step_retries: usize = runs.iter().map(|r| r.step_retries).sum();
    let reruns: usize = runs.iter().map(AgentRun::reruns).sum();
    let slowest = runs
        .iter()
        .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .cloned()
        .unwrap_or_default();
    let mut times: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let ratio = if lone.seconds > 0.0 {
        slowest.seconds / lone.seconds
    } else {
        f64::INFINITY
    };
    let stages: Vec<Value> = STAGES
        .iter()
        .enumerate()
        .map(|(i, args)| {
            let slowest = runs
                .iter()
                .filter_map(|r| r.stage_seconds.get(i))
                .fold(0.0, |a: f64, b| a.max(*b));
            json!({"stage": args.join(" "), "lone_seconds": round(lone.stage_seconds.get(i).copied().unwrap_or(0.0)),
                   "slowest_seconds": round(slowest)})
        })
        .collect();
    let json = json!({
        "cloud": opts.cloud,
        "agents": opts.agents,
        "shared_record_set": opts.shared_record_set,
        "stages": STAGES.iter().map(|a| a.join(" ")).collect::<Vec<_>>(),
        "failed_agents": failed.len(),
        "failed": failed,
        "makespan_seconds": round(makespan),
        "lone_seconds": round(lone.seconds),
        "slowest": {"cluster": slowest.cluster, "seconds": round(slowest.seconds)},
        "median_seconds": round(median),
        "slowest_over_lone": round(ratio),
        "limits_floor": {"seconds": round(floor.0), "quota": floor.1},
        "slowest_over_floor": round(slowest.seconds / floor.0.max(lone.seconds)),
        "per_stage": stages,
        "calls_per_agent": calls_by_kind(peers, opts.agents),
        "calls_per_agent_by_action": calls_by_action(peers, opts.agents),
        "lone_calls": lone_calls,
        "throttled": {
            "refused": refused,
            "caused": {
                "retried_inside_the_client": refused.saturating_sub(step_retries + reruns),
                "step_retries": step_retries,
                "commands_run_again": reruns,
                "agents_failed": runs.iter().filter(|r| !r.completed()).count(),
            },
        },
        "limits_held": limits_held,
        "quotas": quotas,
        "world_diff": world_diff,
    });
    Report {
        failed_agents: runs.iter().filter(|r| !r.completed()).count(),
        slowest_over_lone: ratio,
        limits_held,
        world_diff,
        json,
    }
}

/// One line of the report for `--output text`.
pub fn summary(j: &Value) -> String {
    format!(
        "{}: {} agents, {} failed; slowest {} s, lone {} s (x{}), the limits' floor {} (slowest \
         over the longer x{}); {} refused by the limits ({}); calls per agent {}; limits held: \
         {}; world diff: {}",
        j["cloud"].as_str().unwrap_or(""),
        j["agents"],
        j["failed_agents"],
        j["slowest"]["seconds"],
        j["lone_seconds"],
        j["slowest_over_lone"],
        j["limits_floor"],
        j["slowest_over_floor"],
        j["throttled"]["refused"],
        j["throttled"]["caused"],
        j["calls_per_agent"],
        j["limits_held"],
        j["world_diff"].as_array().map_or(0, Vec::len)
    )
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(action: &str, mutating: bool) -> Call {
        Call {
            action: action.into(),
            mutating,
        }
    }

    #[test]
    fn calls_are_read_write_or_delete_by_action_or_method() {
        assert_eq!(kind(&call("DescribeAddresses", false)), "read");
        assert_eq!(kind(&call("AllocateAddress", true)), "write");
        assert_eq!(kind(&call("ReleaseAddress", true)), "delete");
        assert_eq!(kind(&call("DeleteNetworkInterface", true)), "delete");
        assert_eq!(
            kind(&call(
                "GET /compute/v1/projects/p/regions/r/addresses",
                false
            )),
            "read"
        );
        assert_eq!(
            kind(&call(
                "POST /dns/v1/projects/p/managedZones/z/changes",
                true
            )),
            "write"
        );
        assert_eq!(
            kind(&call("DELETE /subscriptions/s/resourceGroups/rg", true)),
            "delete"
        );
    }

    #[test]
    fn a_window_over_its_capacity_or_a_bucket_over_its_refill_is_not_held() {
        let use_of = |quota, per_second, per_window| QuotaUse {
            quota,
            admitted: 0,
            refused: 0,
            peak_per_second: per_second,
            peak_per_window: per_window,
        };
        let window = crate::Limits::compute().quotas[0];
        assert!(
            held(&use_of(window, 1500, 3000)),
            "two windows' worth across a turn"
        );
        assert!(!held(&use_of(window, 10, 3001)));
        let route53 = crate::Limits::of(crate::Service::Route53).quotas[0];
        assert!(held(&use_of(route53, 10, 55)));
        assert!(!held(&use_of(route53, 11, 20)));
        assert!(!held(&use_of(route53, 5, 56)));
    }

    #[test]
    fn the_floor_is_the_requests_beyond_the_burst_at_the_rate_or_the_windows_they_fill() {
        let route53 = crate::Limits::of(crate::Service::Route53).quotas[0];
        let window = crate::Limits::compute().quotas[0];
        let admitted = |quota, admitted| QuotaUse {
            quota,
            admitted,
            refused: 0,
            peak_per_second: 0,
            peak_per_window: 0,
        };
        assert_eq!(floor_seconds(&admitted(route53, 505)), 100.0);
        assert_eq!(floor_seconds(&admitted(route53, 3)), 0.0);
        assert_eq!(floor_seconds(&admitted(window, 1500)), 0.0);
        assert_eq!(floor_seconds(&admitted(window, 1501)), 60.0);
    }
}
