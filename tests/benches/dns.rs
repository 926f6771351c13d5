//! `cargo bench --features aws,gcp --bench dns`: the whole `run` on each cloud's local peers
//! (moto + ministack on AWS, the GCP fake; the local API server) with DNS changes held pending
//! for `DNS_BENCH_PROPAGATION` (default 30 s; real Route53: "generally within 60 seconds";
//! Cloud DNS changes go `pending` -> `done` too) and every load balancer ready 2 s after its
//! Service, drain off. Prints the critical path: how many propagation waits `run` sat through
//! one after the other (changes whose waits overlap, zones written at once, count as one), the
//! time they took, and the agent's overhead (wall minus LB readiness minus propagation minus
//! drain), split into polling lag, the compute APIs' long-running operations (from the call
//! that starts one to its last poll: the cloud's time), time waiting on the cloud peers (a
//! call in flight through their proxies outside the waits), time waiting on the local API
//! server (a request to it in flight, watches aside) and the agent's own. Goal (issue 27): at
//! most one wait per phase (seed, joins of one gate pass, removal), so 3 on AWS and GCP; agent
//! overhead at most 0.5 s in a release build. Azure DNS has no change to wait for (a record-set PUT
//! answers once applied): with `azure` built in it is measured too, with 0 waits.
//!
//! `DNS_BENCH_CLOUDS=aws,gcp` picks the clouds (default: every cloud built in).
//! `DNS_BENCH_AGENT=/path/to/bootstrap-agent` times another build of the agent (e.g. a release
//! build, or the one before batching) in the same world. `DNS_BENCH_LOG=dir` keeps each
//! run's stderr there (`RUST_LOG=debug` for the agent's every step, timed).

use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use bootstrap_sim::peers::Peers;
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

/// A DNS change submitted: Route53's ChangeResourceRecordSets (`POST .../rrset`), Cloud DNS's
/// `changes.create` (`POST .../managedZones/<zone>/changes`), an Azure record set written or
/// deleted (`PUT|DELETE .../dnsZones|privateDnsZones/<zone>/A/<name>`).
fn is_change(action: &str) -> bool {
    let lower = action.to_ascii_lowercase();
    let azure_record_set = (lower.starts_with("put ") || lower.starts_with("delete "))
        && (lower.contains("/dnszones/") || lower.contains("/privatednszones/"))
        && lower.matches('/').count() > 9;
    azure_record_set
        || action.starts_with("POST ")
            && (action.ends_with("/rrset") || action.ends_with("/changes"))
}

/// A look at one change: Route53's GetChange (`GET /2013-04-01/change/<id>`), Cloud DNS's
/// `changes.get` (`GET .../changes/<id>`).
fn is_change_poll(action: &str) -> bool {
    action.starts_with("GET ") && (action.contains("/change/") || action.contains("/changes/"))
}

/// A look at a long-running operation of the compute APIs: GCP's `regionOperations.get`
/// (`GET .../operations/<name>`) or `.wait`, ARM's `Azure-AsyncOperation` and `Location`
/// URLs (`GET .../operations/<id>`, `.../operationResults/<id>`).
fn is_operation_poll(action: &str) -> bool {
    (action.starts_with("GET ") || action.ends_with("/wait"))
        && (action.contains("/operations/") || action.contains("/operationResults/"))
}

/// The propagation waits as the DNS proxy saw them: per change, from its submission to the
/// last look at it (the agent stops asking once it is done), merged where they overlap.
/// With the number of changes.
fn critical_waits(calls: &[(Instant, bootstrap_sim::proxy::Call)]) -> (Vec<Span>, usize) {
    // Preflight's Route53 probe (a DELETE of a record no one has) is no change.
    waits(
        calls,
        |c| c.mutating && is_change(&c.action),
        is_change_poll,
    )
}

/// The waits for the compute APIs' long-running operations `calls` started.
fn waits_of_operations(calls: &[(Instant, bootstrap_sim::proxy::Call)]) -> Vec<Span> {
    waits(calls, |c| c.mutating, is_operation_poll).0
}

/// The waits for what `calls` started: per polled thing, from the latest `started` call
/// before its first poll to its last poll, merged where they overlap. With the number of
/// calls that started something.
fn waits(
    calls: &[(Instant, bootstrap_sim::proxy::Call)],
    started: impl Fn(&bootstrap_sim::proxy::Call) -> bool,
    is_poll: impl Fn(&str) -> bool,
) -> (Vec<Span>, usize) {
    let mut polls: std::collections::BTreeMap<String, (Instant, Instant)> = Default::default();
    let mut starts: Vec<Instant> = Vec::new();
    for (at, call) in calls {
        if started(call) {
            starts.push(*at);
        } else if is_poll(&call.action) {
            let entry = polls.entry(call.action.clone()).or_insert((*at, *at));
            entry.1 = *at;
        }
    }
    let spans = polls
        .values()
        .map(|(first, last)| {
            let start = starts
                .iter()
                .copied()
                .filter(|p| p <= first)
                .max()
                .unwrap_or(*first);
            (start, *last)
        })
        .collect();
    (merged(spans), starts.len())
}

type Span = (Instant, Instant);

/// `spans` merged where they overlap, in order.
fn merged(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort();
    let mut merged: Vec<Span> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

fn length(spans: &[Span]) -> Duration {
    spans.iter().map(|(s, e)| *e - *s).sum()
}

/// How much of `busy` (merged) lies outside `waits` (merged).
fn outside(busy: &[Span], waits: &[Span]) -> Duration {
    let inside: Duration = busy
        .iter()
        .flat_map(|&(bs, be)| {
            waits.iter().filter_map(move |&(ws, we)| {
                let (s, e) = (bs.max(ws), be.min(we));
                (s < e).then(|| e - s)
            })
        })
        .sum();
    length(busy).saturating_sub(inside)
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

fn clouds() -> Vec<String> {
    if let Ok(list) = std::env::var("DNS_BENCH_CLOUDS") {
        return list.split(',').map(|c| c.trim().to_string()).collect();
    }
    [
        ("aws", cfg!(feature = "aws")),
        ("gcp", cfg!(feature = "gcp")),
        ("azure", cfg!(feature = "azure")),
    ]
    .into_iter()
    .filter(|(_, built)| *built)
    .map(|(cloud, _)| cloud.to_string())
    .collect()
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    for cloud in clouds() {
        bench(&cloud).await;
    }
}

async fn bench(cloud: &str) {
    let propagation = propagation();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (peers, assets) = Peers::start_with_propagation(cloud, dir.path(), Some(propagation))
        .await
        .unwrap_or_else(|e| panic!("{cloud}: {e}"));
    // Azure DNS applies a record-set PUT before it answers: nothing propagates after.
    let propagation = if cloud == "azure" {
        Duration::ZERO
    } else {
        propagation
    };
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
    for proxy in peers.proxies() {
        proxy.reset();
    }
    let started = Instant::now();
    let out = cmd.output().await.unwrap_or_else(|e| panic!("{e}"));
    let wall = started.elapsed();
    if let Ok(dir) = std::env::var("DNS_BENCH_LOG") {
        let _ = std::fs::write(format!("{dir}/{cloud}.log"), &out.stderr);
    }
    assert!(
        out.status.success(),
        "{cloud}: run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (wait_spans, changes) = critical_waits(&peers.dns_proxy().timed_calls());
    let (waits, waited) = (wait_spans.len(), length(&wait_spans));
    // The compute APIs' long-running operations (a GCP address insert, an Azure public IP
    // PUT): the cloud's time, as the agent is told to wait (Retry-After), not the agent's.
    let operation_spans = merged(
        peers
            .proxies()
            .iter()
            .flat_map(|p| waits_of_operations(&p.timed_calls()))
            .collect(),
    );
    let operations = outside(&operation_spans, &wait_spans);
    let all_waits = merged(wait_spans.iter().chain(&operation_spans).copied().collect());
    // The cloud peers' own time: some call to them in flight, outside the propagation waits
    // (moto and ministack are Python; the GCP and ARM fakes are in-process Rust).
    let busy = merged(
        peers
            .proxies()
            .iter()
            .flat_map(|p| p.busy_spans())
            .collect(),
    );
    let in_peers = outside(&busy, &all_waits);
    // The local API server's time (kube-apiserver in a real install): a request to it in
    // flight outside the waits and outside the cloud peers' time.
    let cloud_time = merged(all_waits.iter().chain(&busy).copied().collect());
    let in_api_server = outside(&merged(kube.busy_spans()), &cloud_time);
    let readiness = INGRESS + ENDPOINTS;
    // Propagation proper: the time the DNS service holds each change on the path pending.
    // What the agent waited beyond it is its polling lag (it looks again with backoff, at
    // most 5 s apart), part of its overhead.
    let propagated = propagation * u32::try_from(waits).unwrap_or(u32::MAX);
    let lag = waited.saturating_sub(propagated);
    let overhead = wall.saturating_sub(readiness + propagated);
    println!(
        "dns run on {cloud} ({agent}): propagation {propagation:?}, LB readiness {readiness:?}, drain 0s"
    );
    println!(
        "  wall {wall:.3?}; {changes} DNS changes; critical path: {waits} propagation \
         wait(s) ({propagated:?} of propagation, {waited:.3?} waited: polling lag \
         {lag:.3?}); agent overhead (wall - readiness - propagation - drain) {overhead:.3?}, \
         of which polling lag {lag:.3?}, the cloud's operations {operations:.3?}, waiting \
         on the cloud peers {in_peers:.3?} (a call in flight outside the waits), waiting on \
         the API server {in_api_server:.3?}, the agent's own {:.3?}",
        overhead
            .saturating_sub(lag)
            .saturating_sub(operations)
            .saturating_sub(in_peers)
            .saturating_sub(in_api_server)
    );
}
