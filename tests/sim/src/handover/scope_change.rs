//! The scope round trip after `complete` (`publish --scope Internal --auto-delete`, then
//! `publish --scope External`, run as an admin runs them) and what the clients saw through
//! it, window by window.

use super::clients::Sample;
use super::installer::installer_left_in_the_cluster;
use super::{Options, Timeline, lock};
use crate::kube::KubeSim;
use crate::peers::Peers;
use anyhow::{Context, Result, bail};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Through the scope change, per group of clients (private `api-int`, public `api`) and
/// window (see [`scope_window`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeRow {
    pub public: bool,
    pub window: &'static str,
    pub requests: usize,
    pub failures: usize,
    /// Of the failures, those where the client called an address that did not answer (the
    /// others found no record).
    pub unanswered: usize,
}
/// The scope change's next move, once `run` is done and the clients lingered: `publish
/// --scope Internal --auto-delete` (the drain one TTL), then after the linger `publish --scope
/// External`; each command's end goes into the timeline.
pub(super) fn scope_round_trip(
    opts: &Options,
    assets: &std::path::Path,
    kube: &KubeSim,
    peers: &Peers,
    publish: &mut Option<tokio::process::Child>,
    t0: Instant,
    timeline: &Mutex<Timeline>,
) -> Result<()> {
    let now = t0.elapsed();
    if let Some(child) = publish.as_mut() {
        let Some(status) = child.try_wait()? else {
            return Ok(());
        };
        if !status.success() {
            bail!("publish failed ({status})");
        }
        *publish = None;
        let mut t = lock(timeline);
        match t.to_external {
            None => t.internal_done = Some(now),
            Some(_) => t.external_done = Some(now),
        }
        return Ok(());
    }
    let scope = {
        let mut t = lock(timeline);
        let after = |at: Option<Duration>| at.is_some_and(|at| now >= at + opts.linger);
        if t.to_internal.is_none() && after(t.complete) {
            t.to_internal = Some(now);
            "Internal"
        } else if t.to_external.is_none() && after(t.internal_done) {
            t.to_external = Some(now);
            "External"
        } else {
            return Ok(());
        }
    };
    if scope == "Internal" {
        installer_left_in_the_cluster(kube, assets)?;
    }
    let api = kube.url().trim_start_matches("https://").to_string();
    // Day 2 as an admin runs it: the bootstrap host (its asset dir, its journal) is not
    // used; the inputs and what `run` left come from the cluster, the journal is the admin's.
    let child = tokio::process::Command::new(&opts.agent)
        .args(["publish", "--scope", scope, "--auto-delete"])
        .arg("--state-dir")
        .arg(opts.work.join("admin-state"))
        .env_remove("BOOTSTRAP_AGENT_ASSETS")
        .arg("--kubeconfig")
        .arg(kube.kubeconfig_path())
        .arg("--dns-ttl")
        .arg(format!("{}s", opts.ttl.as_secs()))
        .args(["--drain-wait", "ttl", "--gate-timeout", "3m"])
        .arg("--wire-dial-override")
        .arg(format!("*:6443={api},*:22623={api}"))
        .envs(peers.agent_env())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start publish")?;
    *publish = Some(child);
    Ok(())
}

/// The window of the scope change a request started in: `to-internal` (publish Internal
/// started, the public record still there), `draining` (the record gone, within one TTL of
/// that: resolvers may still hold it), `internal`, `to-external` (publish External started,
/// until the record is back), `external`; None before the change.
fn scope_window(at: Duration, t: &Timeline, ttl: Duration) -> Option<&'static str> {
    let to_internal = t.to_internal?;
    let reached = |mark: Option<Duration>| mark.is_some_and(|m| at >= m);
    Some(match at {
        at if at < to_internal => return None,
        _ if reached(t.rejoined) && reached(t.to_external) => "external",
        _ if reached(t.to_external) => "to-external",
        _ if reached(t.withdrawn.map(|w| w + ttl)) => "internal",
        _ if reached(t.withdrawn) => "draining",
        _ => "to-internal",
    })
}

const SCOPE_WINDOWS: [&str; 5] = [
    "to-internal",
    "draining",
    "internal",
    "to-external",
    "external",
];

pub(super) fn scope_rows(
    samples: &[Sample],
    t0: Instant,
    t: &Timeline,
    ttl: Duration,
) -> Vec<ScopeRow> {
    let mut rows = Vec::new();
    for public in [false, true] {
        for window in SCOPE_WINDOWS {
            let of: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.public == public)
                .filter(|s| scope_window(s.started - t0, t, ttl) == Some(window))
                .collect();
            rows.push(ScopeRow {
                public,
                window,
                requests: of.len(),
                failures: of.iter().filter(|s| !s.ok).count(),
                unanswered: of.iter().filter(|s| !s.ok && s.resolved).count(),
            });
        }
    }
    rows
}
