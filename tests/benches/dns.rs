//! `cargo bench --features aws --bench dns`: the whole `run` (moto + ministack + the local API
//! server) with Route53 changes PENDING for `DNS_BENCH_PROPAGATION` (default 30 s; real
//! Route53: "generally within 60 seconds") and every load balancer ready 2 s after its
//! Service, drain off. Prints the critical path: how many propagation waits `run` sat through
//! one after the other (changes whose waits overlap, zones written at once, count as one), the
//! time they took, and the agent's own time (wall minus LB readiness minus propagation minus
//! drain). Goal (issue 27): at most one wait per phase (seed, joins of one gate pass,
//! removal), so 3 on AWS; agent overhead at most 0.5 s in a release build.
//!
//! `DNS_BENCH_AGENT=/path/to/bootstrap-agent` times another build of the agent (e.g. the
//! one before batching) in the same world.

use bootstrap_sim::AwsPeers;
use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use std::path::Path;
use std::time::{Duration, Instant};

/// The load balancers' readiness after their Service appears: ingress, then endpoints.
const INGRESS: Duration = Duration::from_millis(1900);
const ENDPOINTS: Duration = Duration::from_millis(100);
const BOOTSTRAP_IP: &str = "10.0.1.10";

fn propagation() -> Duration {
    std::env::var("DNS_BENCH_PROPAGATION")
        .ok()
        .and_then(|s| humantime_secs(&s))
        .unwrap_or(Duration::from_secs(30))
}

/// `30s`, `500ms` or a number of seconds.
fn humantime_secs(s: &str) -> Option<Duration> {
    if let Some(ms) = s.strip_suffix("ms") {
        return ms.parse().ok().map(Duration::from_millis);
    }
    s.trim_end_matches('s')
        .parse::<f64>()
        .ok()
        .map(Duration::from_secs_f64)
}

/// The propagation waits as the Route53 proxy saw them: per change, from its
/// ChangeResourceRecordSets to the last GetChange of it (the agent stops asking once INSYNC).
/// Overlapping waits are merged: the critical path's (count, total time).
fn critical_waits(calls: &[(Instant, bootstrap_sim::proxy::Call)]) -> (usize, Duration, usize) {
    let mut changes = 0;
    let mut polls: std::collections::BTreeMap<String, (Instant, Instant)> = Default::default();
    let mut posts: Vec<Instant> = Vec::new();
    for (at, call) in calls {
        if call.action.starts_with("POST ") && call.action.contains("/rrset") {
            changes += 1;
            posts.push(*at);
        } else if let Some(id) = call.action.strip_prefix("GET /2013-04-01/change/") {
            let entry = polls.entry(id.to_string()).or_insert((*at, *at));
            entry.1 = *at;
        }
    }
    // Each change's wait starts at the latest POST before its first poll.
    let mut spans: Vec<(Instant, Instant)> = polls
        .values()
        .map(|(first, last)| {
            let start = posts
                .iter()
                .copied()
                .filter(|p| p <= first)
                .max()
                .unwrap_or(*first);
            (start, *last)
        })
        .collect();
    spans.sort();
    let mut merged: Vec<(Instant, Instant)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let total = merged.iter().map(|(s, e)| *e - *s).sum();
    (merged.len(), total, changes)
}

fn wire_overrides(kubeconfig: &Path) -> String {
    let text = std::fs::read_to_string(kubeconfig).unwrap_or_else(|e| panic!("{e}"));
    let api = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .unwrap_or_else(|| panic!("the kubeconfig names no https server"))
        .trim()
        .to_string();
    format!("*:6443={api},*:22623={api}")
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let propagation = propagation();
    let peers = AwsPeers::start_with_propagation(propagation)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let assets = dir.path().join("assets");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/aws");
    peers
        .setup_world(&fixture, &assets)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let kube = KubeSim::start(KubeSimOptions {
        controller: ControllerKnobs {
            ingress_delay: INGRESS,
            endpoints_delay: ENDPOINTS,
            ..Default::default()
        },
        cloud: peers.lb_cloud(),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let agent = std::env::var("DNS_BENCH_AGENT")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_bootstrap-agent").to_string());
    let kubeconfig = kube.kubeconfig_path();
    let mut cmd = tokio::process::Command::new(&agent);
    cmd.arg("run")
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--assets")
        .arg(&assets)
        .args(["--bootstrap-ip", BOOTSTRAP_IP])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--done-file")
        .arg(dir.path().join("done"))
        .args(["--drain-wait", "0s"])
        .args(["--wire-dial-override", &wire_overrides(kubeconfig)])
        .args(["--gate-timeout", "20m"])
        .envs(peers.agent_env())
        .kill_on_drop(true);
    peers.route53_proxy.reset();
    let started = Instant::now();
    let out = cmd.output().await.unwrap_or_else(|e| panic!("{e}"));
    let wall = started.elapsed();
    assert!(
        out.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (waits, waited, changes) = critical_waits(&peers.route53_proxy.timed_calls());
    let readiness = INGRESS + ENDPOINTS;
    // Propagation proper: the time Route53 holds each change on the path PENDING. What the
    // agent waited beyond it is its polling lag (it looks again with backoff, at most 5 s
    // apart), part of its overhead.
    let propagated = propagation * u32::try_from(waits).unwrap_or(u32::MAX);
    let lag = waited.saturating_sub(propagated);
    let overhead = wall.saturating_sub(readiness + propagated);
    println!(
        "dns run ({agent}): propagation {propagation:?}, LB readiness {readiness:?}, drain 0s"
    );
    println!(
        "  wall {wall:.3?}; {changes} Route53 changes; critical path: {waits} propagation \
         wait(s) ({propagated:?} of propagation, {waited:.3?} waited: polling lag \
         {lag:.3?}); agent overhead (wall - readiness - propagation - drain) {overhead:.3?}, \
         of which polling lag {lag:.3?}, the rest {:.3?}",
        overhead.saturating_sub(lag)
    );
}
