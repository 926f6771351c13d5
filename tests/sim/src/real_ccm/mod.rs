//! `bootstrap-sim real-ccm <cloud> --ccm PATH --output json`: the agent's whole `run`, a
//! second `run` and `teardown --all` with a REAL cloud-controller-manager (built by the user
//! from the cloud's OpenShift fork) as the process that builds the Services' load balancers,
//! against the cloud's loopback fake and the local API server (its simulated load-balancer
//! controller switched off: `CloudOptions::external_controller`). The cloud-specific part
//! (the fake's world, the CCM's configuration, what is left) is in the cloud's module.
//!
//! Not in CI: it needs the CCM binary, which CI does not build.

mod azure;

use crate::kube::KubeSim;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const USAGE: &str = "bootstrap-sim real-ccm azure (--ccm PATH | --simulated) --output json";

/// What one harness run found.
#[derive(Debug)]
pub struct Report {
    pub cloud: String,
    /// `local` (the in-process API server).
    pub kube: String,
    pub run_exit: i32,
    pub second_run_exit: i32,
    /// Mutating cloud calls the agent made in the second `run`.
    pub second_run_mutations: usize,
    pub teardown_exit: i32,
    /// What is left of the agent's own resources after `teardown --all`.
    pub left_ours: Vec<String>,
    /// What is left of what the CCM made for our Services.
    pub left_ccm: Vec<String>,
    /// What the CCM had made once the first `run` was done (same form).
    pub built_ccm: Vec<String>,
    /// The CCM's Events on our Services (`<ns>/<name> <type> <reason>: <message>`).
    pub events: Vec<String>,
    /// From the moment the last of a Service's reserved IPs was served by a load balancer
    /// frontend the CCM made to the gate passing (None: the gate never passed, or no frontend).
    pub gate_lag_ms: Option<i64>,
    /// After the second `run`, a fourth Node and its VM come: how long until the CCM put the
    /// VM's NIC in the pools (None: no CCM, or not within a minute).
    pub node_added_ms: Option<u128>,
    /// From the moment the last of our Services got its ingress to the gate passing.
    pub gate_after_ingress_ms: Option<i64>,
    /// `real-ccm` (the CCM built the load balancers) or `simulated` (the local API server's
    /// simulated controller did, for comparison).
    pub controller: String,
    /// The CCM's cloud calls per Service, in each phase.
    pub calls_per_service: CallsPerService,
    pub teardown_ms: u128,
}

#[derive(Debug, Default)]
pub struct CallsPerService {
    pub run: f64,
    pub second_run: f64,
    /// After a fourth Node (and its VM) came.
    pub node_added: f64,
    pub teardown: f64,
}

impl Report {
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "cloud": self.cloud,
            "kube": self.kube,
            "run_exit": self.run_exit,
            "second_run_exit": self.second_run_exit,
            "second_run_mutations": self.second_run_mutations,
            "teardown_exit": self.teardown_exit,
            "left_ours": self.left_ours,
            "left_ccm": self.left_ccm,
            "built_ccm": self.built_ccm,
            "events": self.events,
            "gate_lag_ms": self.gate_lag_ms,
            "gate_after_ingress_ms": self.gate_after_ingress_ms,
            "node_added_ms": self.node_added_ms,
            "controller": self.controller,
            "calls_per_service": {
                "run": self.calls_per_service.run,
                "second_run": self.calls_per_service.second_run,
                "node_added": self.calls_per_service.node_added,
                "teardown": self.calls_per_service.teardown,
            },
            "teardown_ms": self.teardown_ms,
        })
    }
}

/// The cloud a harness run is about.
pub trait CloudUnderTest {
    /// The example asset dir the fake matches.
    fn assets(&self) -> PathBuf;
    /// The agent's environment for this cloud.
    fn agent_env(&self) -> Vec<(String, String)>;
    /// Mutating calls the agent made since the last reset.
    fn agent_mutations(&self) -> usize;
    fn reset_agent_counts(&self);
    /// The CCM's cloud calls since the start.
    fn ccm_calls(&self) -> usize;
    /// When a load balancer first served `ip` on `port`.
    fn serving_since(&self, ip: std::net::IpAddr, port: u16) -> Option<Instant>;
    /// What is left of the agent's resources.
    fn left_ours(&self) -> Vec<String>;
    /// What is left of the CCM's resources.
    fn left_ccm(&self) -> Vec<String>;
}

/// Parses `real-ccm` arguments and runs it; the exit code: 0 when the run is done and
/// printed (whatever it found), 2 when the CCM binary is missing.
pub async fn command(args: &[&str]) -> Result<i32> {
    let (cloud, rest) = match args {
        [cloud, rest @ ..] => (*cloud, rest),
        [] => bail!("{USAGE}"),
    };
    let mut ccm: Option<PathBuf> = None;
    let mut output = "json";
    let mut simulated = false;
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        if *flag == "--simulated" {
            simulated = true;
            continue;
        }
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value\n{USAGE}"))?;
        match *flag {
            "--ccm" => ccm = Some(PathBuf::from(value)),
            "--output" => output = value,
            other => bail!("unknown flag {other}\n{USAGE}"),
        }
    }
    if output != "json" {
        bail!("--output: expected json, got {output:?}");
    }
    let source = match cloud {
        "azure" => azure::SOURCE,
        other => bail!("unknown cloud {other:?}: expected azure\n{USAGE}"),
    };
    let ccm = ccm.filter(|p| p.is_file());
    if ccm.is_none() && !simulated {
        eprintln!(
            "error: --ccm: the cloud-controller-manager binary is missing; build \
             ./cmd/cloud-controller-manager of {source} and pass its path"
        );
        return Ok(2);
    }
    let agent = std::env::current_exe()?.with_file_name("bootstrap-agent");
    if !agent.exists() {
        bail!(
            "{} not found; build it first: cargo build --all-features --workspace --bins",
            agent.display()
        );
    }
    let work = crate::venv::target_dir().join(format!("real-ccm-{cloud}"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let report = azure::run(&agent, ccm.as_deref(), &work).await?;
    println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    Ok(0)
}

/// One agent command (`run`, `teardown --all`) against the local API server, its output in
/// `log` of `work`; its exit code.
pub async fn agent_step(
    agent: &Path,
    step: &[&str],
    log: &str,
    cloud: &dyn CloudUnderTest,
    kube: &KubeSim,
    work: &Path,
) -> Result<i32> {
    let api = kube.url().trim_start_matches("https://").to_string();
    let mut cmd = tokio::process::Command::new(agent);
    cmd.args(step)
        .arg("--state-dir")
        .arg(work.join("state"))
        .arg("--assets")
        .arg(cloud.assets())
        .args(["--bootstrap-ip", "10.0.1.10"])
        .arg("--kubeconfig")
        .arg(kube.kubeconfig_path())
        .envs(cloud.agent_env())
        .stdout(std::process::Stdio::null())
        .stderr(log_file(work, log)?)
        .kill_on_drop(true);
    if step[0] == "run" {
        cmd.args(["--drain-wait", "0s"])
            .args(["--gate-timeout", "3m"])
            // The wire proof dials each load-balancer IP: the local API server stands in for
            // them all (never dial the cloud's addresses).
            .arg("--wire-dial-override")
            .arg(format!("*:6443={api},*:22623={api}"));
    }
    let status = cmd
        .status()
        .await
        .with_context(|| format!("cannot run {}", agent.display()))?;
    Ok(status.code().unwrap_or(-1))
}

pub fn log_file(work: &Path, name: &str) -> Result<std::fs::File> {
    let path = work.join(name);
    std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))
}

/// One of our LoadBalancer Services as it is now.
pub struct OurService {
    pub namespace: String,
    pub name: String,
    /// The addresses its annotations ask for.
    pub ips: Vec<std::net::IpAddr>,
    pub ports: Vec<u16>,
}

/// Our LoadBalancer Services now.
pub fn our_services(kube: &KubeSim) -> Vec<OurService> {
    kube.list("", "v1", "services", None)
        .into_iter()
        .filter(|s| s["spec"]["type"] == "LoadBalancer")
        .map(|s| {
            let text = |path: &[&str]| {
                let mut v = &s;
                for p in path {
                    v = &v[*p];
                }
                v.as_str().unwrap_or_default().to_string()
            };
            let ips = s["metadata"]["annotations"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| {
                    k.contains("load-balancer-ipv4") || k.contains("load-balancer-ipv6")
                })
                .filter_map(|(_, v)| v.as_str()?.parse().ok())
                .collect();
            let ports = s["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| u16::try_from(p["port"].as_u64()?).ok())
                .collect();
            OurService {
                namespace: text(&["metadata", "namespace"]),
                name: text(&["metadata", "name"]),
                ips,
                ports,
            }
        })
        .collect()
}

/// When the last of `services` was served by its load balancer on each of its addresses and
/// ports (None: one never was).
pub fn all_served_at(cloud: &dyn CloudUnderTest, services: &[OurService]) -> Option<Instant> {
    let mut latest: Option<Instant> = None;
    for svc in services {
        for ip in &svc.ips {
            for port in &svc.ports {
                let at = cloud.serving_since(*ip, *port)?;
                latest = Some(latest.map_or(at, |l| l.max(at)));
            }
        }
    }
    latest
}

/// The Events the CCM recorded on Services.
pub fn ccm_events(kube: &KubeSim) -> Vec<String> {
    kube.list("", "v1", "events", None)
        .into_iter()
        .filter(|e| e["involvedObject"]["kind"] == "Service")
        .filter(|e| e["source"]["component"] != "bootstrap-agent")
        .map(|e| {
            format!(
                "{}/{} {} {}: {}",
                e["involvedObject"]["namespace"].as_str().unwrap_or(""),
                e["involvedObject"]["name"].as_str().unwrap_or(""),
                e["type"].as_str().unwrap_or(""),
                e["reason"].as_str().unwrap_or(""),
                e["message"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// When each LoadBalancer Service (namespace, name) first had an ingress.
pub type IngressTimes =
    std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<(String, String), Instant>>>;

/// When each LoadBalancer Service first had an ingress, recorded from now on.
pub fn ingress_watch(kube: &KubeSim) -> Result<IngressTimes> {
    let mut changes = kube
        .changes("", "v1", "services")
        .context("the local API server serves no Services")?;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Some(svc) = changes.recv().await {
            let has_ingress = svc["status"]["loadBalancer"]["ingress"]
                .as_array()
                .is_some_and(|i| !i.is_empty());
            if has_ingress {
                let key = (
                    svc["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    svc["metadata"]["name"].as_str().unwrap_or("").to_string(),
                );
                let mut map = record.lock().unwrap_or_else(|p| p.into_inner());
                map.entry(key).or_insert_with(Instant::now);
            }
        }
    });
    Ok(seen)
}

/// When the agent's gate first passed: the first write of the ConfigMap
/// `kube-system/bootstrap-agent` with `phase: gate-passed`, watched from before `run`.
pub fn gate_watch(kube: &KubeSim) -> Result<tokio::task::JoinHandle<Option<Instant>>> {
    let mut changes = kube
        .changes("", "v1", "configmaps")
        .context("the local API server serves no ConfigMaps")?;
    Ok(tokio::spawn(async move {
        while let Some(cm) = changes.recv().await {
            let ours = cm["metadata"]["namespace"] == "kube-system"
                && cm["metadata"]["name"] == "bootstrap-agent";
            if ours && cm["data"]["phase"] == "gate-passed" {
                return Some(Instant::now());
            }
        }
        None
    }))
}

/// Milliseconds from `from` to `to`, negative when `to` came first.
pub fn signed_ms(from: Instant, to: Instant) -> i64 {
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    if to >= from {
        ms(to - from)
    } else {
        -ms(from - to)
    }
}
