//! What the clients saw, tallied: per policy (or node class) and stage, the requests, the
//! failures and the p99 latency. Pure arithmetic over the samples and the timeline, apart
//! from the run that gathers them.

use super::Timeline;
use super::clients::{Policy, Sample};
use super::openshift;
use std::time::Duration;
use tokio::time::Instant;

/// Per client class (a policy of the DNS clients, or a node client of [`openshift`]) and
/// stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassRow {
    pub class: &'static str,
    pub stage: u8,
    pub requests: usize,
    pub failures: usize,
    pub p99: Duration,
}

/// Per policy and stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub policy: Policy,
    pub stage: u8,
    pub requests: usize,
    pub failures: usize,
    pub p99: Duration,
}

/// The policies' rows and the node classes' ones (by the stage each request started in,
/// before any scope change).
pub(super) fn class_rows(
    rows: &[Row],
    nodes: &[openshift::NodeSample],
    t0: Instant,
    timeline: &Timeline,
) -> Vec<ClassRow> {
    let mut out: Vec<ClassRow> = rows
        .iter()
        .map(|r| ClassRow {
            class: r.policy.as_str(),
            stage: r.stage,
            requests: r.requests,
            failures: r.failures,
            p99: r.p99,
        })
        .collect();
    if nodes.is_empty() {
        return out;
    }
    let requests: Vec<_> = nodes
        .iter()
        .map(|x| (x.class, x.started, x.latency, x.ok))
        .collect();
    let tallies = tally_by(openshift::CLASSES, &requests, t0, timeline);
    out.extend(
        tallies
            .into_iter()
            .map(|(class, stage, (requests, failures, p99))| ClassRow {
                class,
                stage,
                requests,
                failures,
                p99,
            }),
    );
    out
}

/// [`tally`] per key of `keys` and stage 1 to 3, of the requests `(key, started, latency,
/// ok)`.
fn tally_by<K: Copy + PartialEq>(
    keys: impl IntoIterator<Item = K>,
    requests: &[(K, Instant, Duration, bool)],
    t0: Instant,
    timeline: &Timeline,
) -> Vec<(K, u8, (usize, usize, Duration))> {
    let mut out = Vec::new();
    for key in keys {
        for s in 1..=3u8 {
            let of_key = requests.iter().filter(|r| r.0 == key);
            let tallied = tally(of_key.map(|r| (r.1, r.2, r.3)), t0, timeline, s);
            out.push((key, s, tallied));
        }
    }
    out
}

/// Of the requests `(started, latency, ok)` that started in stage `s`, before any scope
/// change: how many, how many failed, and the p99 latency.
fn tally(
    requests: impl Iterator<Item = (Instant, Duration, bool)>,
    t0: Instant,
    timeline: &Timeline,
    s: u8,
) -> (usize, usize, Duration) {
    let mut latencies: Vec<Duration> = Vec::new();
    let mut failures = 0;
    for (_, latency, ok) in requests
        .filter(|(at, ..)| timeline.to_internal.is_none_or(|t| *at - t0 < t))
        .filter(|(at, ..)| stage(*at - t0, timeline) == s)
    {
        latencies.push(latency);
        failures += usize::from(!ok);
    }
    (latencies.len(), failures, p99(&mut latencies))
}

fn p99(latencies: &mut [Duration]) -> Duration {
    latencies.sort();
    latencies
        .get((latencies.len() * 99).div_ceil(100).saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

pub(super) fn stage(at: Duration, timeline: &Timeline) -> u8 {
    match (timeline.gate_passed, timeline.removed) {
        (_, Some(removed)) if at >= removed => 3,
        (Some(gate), _) if at >= gate => 2,
        _ => 1,
    }
}

pub(super) fn rows(samples: &[Sample], t0: Instant, timeline: &Timeline) -> Vec<Row> {
    let requests: Vec<_> = samples
        .iter()
        .map(|x| (x.policy, x.started, x.latency, x.ok))
        .collect();
    tally_by(Policy::ALL, &requests, t0, timeline)
        .into_iter()
        .map(|(policy, stage, (requests, failures, p99))| Row {
            policy,
            stage,
            requests,
            failures,
            p99,
        })
        .collect()
}
