//! A bad day on one account: the bench that `bootstrap-sim faults` and `bootstrap-sim soak`
//! share. One cloud's peers (behind the counting, fault-injecting proxies) with another
//! cluster's reservations and another writer's DNS values planted first, the local Kubernetes
//! API server, and the real agent binary run stage by stage as the systemd unit runs it: a
//! command that fails is run again (exit 1; never after 2, 3 or 5, which the unit does not
//! restart). After every stage the peers are read directly (never through the proxies):
//!
//! - touched: anything of the planted world (another cluster's reservations, another writer's
//!   values, the bootstrap host) missing or changed;
//! - shape: how many of each thing exist (addresses, ENIs, values per record set) against a
//!   fault-free reference cycle at the same stage: one more is a duplicate, one fewer a loss;
//! - leaks, after `teardown --all`: anything that was not there before the cycle.

pub mod args;
pub mod check;
pub mod faults;
mod long_gate;
pub mod soak;

use crate::kube::{KubeSim, KubeSimOptions};
use crate::peers::Peers;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The bootstrap host of the example assets.
const BOOTSTRAP_IP: &str = "10.0.1.10";
/// Another writer's value in the cluster's private `api-int` and `api` record sets.
pub const OTHER_WRITER: &str = "192.0.2.9";
/// Another writer's value in the public `api` record set (outside every pool of the peers).
pub const OTHER_PUBLIC: &str = "203.0.113.7";
/// Runs of one command before the stage counts as failed (the unit would go on restarting).
const MAX_RUNS: u32 = 25;
/// One run's limit; the agent's own step deadline is shorter.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// One stage of an install and its teardown, as the unit (or the user) runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Reserve,
    DnsSeed,
    /// `run`: the rest of stage 1 from the journal (capabilities, the hand-over, the
    /// Services, the gate) and the bootstrap IP's removal.
    HandOver,
    DnsTeardown,
    TeardownAll,
}

impl Stage {
    pub const ALL: [Stage; 5] = [
        Stage::Reserve,
        Stage::DnsSeed,
        Stage::HandOver,
        Stage::DnsTeardown,
        Stage::TeardownAll,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Reserve => "reserve",
            Stage::DnsSeed => "dns seed",
            Stage::HandOver => "run (hand-over)",
            Stage::DnsTeardown => "dns teardown",
            Stage::TeardownAll => "teardown --all",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Stage::Reserve => &["reserve"],
            Stage::DnsSeed => &["dns", "seed"],
            Stage::HandOver => &["run"],
            Stage::DnsTeardown => &["dns", "teardown"],
            Stage::TeardownAll => &["teardown", "--all"],
        }
    }
}

/// How one stage went: every run of its command.
#[derive(Debug, Clone, Default)]
pub struct StageRun {
    /// Exit codes, one per run (the last 0 when it completed).
    pub exits: Vec<i32>,
    pub seconds: f64,
    /// The agent's peak resident set (VmHWM), the largest over the runs, in KiB.
    pub peak_rss_kib: u64,
    /// The last failed run's last stderr line.
    pub last_error: Option<String>,
}

impl StageRun {
    pub fn completed(&self) -> bool {
        self.exits.last() == Some(&0)
    }
}

/// One cloud's peers with the planted world, the local API server and the agent.
pub struct Bench {
    pub cloud: String,
    pub peers: Peers,
    assets: PathBuf,
    kube: KubeSim,
    agent: PathBuf,
    pub work: PathBuf,
    /// What existed before any cycle: the planted world.
    pub base: Value,
}

impl Bench {
    /// Starts `cloud`'s peers under `work` (emptied first), plants another cluster's
    /// reservations and another writer's values, and starts the local API server.
    pub async fn start(cloud: &str, agent: PathBuf, work: &Path) -> Result<Self> {
        let _ = std::fs::remove_dir_all(work);
        std::fs::create_dir_all(work)?;
        let (peers, assets) = Peers::start(cloud, work).await?;
        plant(&peers)
            .await
            .context("cannot plant the other cluster's world")?;
        let kube = KubeSim::start(KubeSimOptions {
            cloud: peers.lb_cloud(),
            ..Default::default()
        })
        .await?;
        let base = check::comparable(&peers.inspect().await?);
        Ok(Self {
            cloud: cloud.to_string(),
            peers,
            assets,
            kube,
            agent,
            work: work.to_path_buf(),
            base,
        })
    }

    /// What exists now, as the checks compare it.
    pub async fn world(&self) -> Result<Value> {
        Ok(check::comparable(&self.peers.inspect().await?))
    }

    /// Runs `stage`'s command with the state dir `state` until it completes, as the unit
    /// would: again after exit 1, up to [`MAX_RUNS`]; not after 2, 3 or 5.
    /// `cycle` names the logs (`<work>/logs/`).
    pub async fn run_stage(&self, stage: Stage, state: &Path, cycle: usize) -> Result<StageRun> {
        let started = Instant::now();
        let mut run = StageRun::default();
        while run.exits.len() < MAX_RUNS as usize {
            let (code, rss, stderr) = self.agent_once(stage, state).await?;
            run.exits.push(code);
            // Beside the state dir (not in it: its size is a figure), for a post-mortem.
            let logs = self.work.join("logs");
            let _ = std::fs::create_dir_all(&logs);
            let log = logs.join(format!(
                "cycle-{cycle:03}-{}-{}.log",
                stage.name().replace([' ', '(', ')'], "-"),
                run.exits.len()
            ));
            let _ = std::fs::write(log, &stderr);
            run.peak_rss_kib = run.peak_rss_kib.max(rss);
            if code == 0 {
                break;
            }
            run.last_error = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string);
            if matches!(code, 2 | 3 | 5) {
                break;
            }
        }
        run.seconds = started.elapsed().as_secs_f64();
        Ok(run)
    }

    /// The agent's command for `stage` with the state dir `state`, as the unit runs it.
    fn command(&self, stage: Stage, state: &Path) -> tokio::process::Command {
        let api = self.kube.url().trim_start_matches("https://").to_string();
        let mut cmd = tokio::process::Command::new(&self.agent);
        cmd.args(stage.args())
            .arg("--state-dir")
            .arg(state)
            .arg("--assets")
            .arg(&self.assets)
            .args(["--bootstrap-ip", BOOTSTRAP_IP])
            .envs(self.peers.agent_env())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if matches!(stage, Stage::HandOver | Stage::TeardownAll) {
            cmd.arg("--kubeconfig").arg(self.kube.kubeconfig_path());
        }
        if stage == Stage::HandOver {
            cmd.arg("--done-file")
                .arg(state.join("done.json"))
                .args(["--drain-wait", "1s"])
                // The local API server stands in for every load balancer (loopback only).
                .arg("--wire-dial-override")
                .arg(format!("*:6443={api},*:22623={api}"));
        }
        cmd
    }

    async fn agent_once(&self, stage: Stage, state: &Path) -> Result<(i32, u64, String)> {
        let child = self
            .command(stage, state)
            .spawn()
            .context("cannot start the agent")?;
        let pid = child.id();
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let watch = pid.map(|pid| tokio::spawn(watch_rss(pid, peak.clone())));
        let output = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
            .await
            .with_context(|| format!("{} ran longer than {RUN_TIMEOUT:?}", stage.name()))??;
        if let Some(watch) = watch {
            watch.abort();
        }
        let code = output.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        Ok((
            code,
            peak.load(std::sync::atomic::Ordering::Relaxed),
            stderr,
        ))
    }

    /// The fault statistics of every proxy of the peers, summed, since the last injection.
    pub fn fault_stats(&self) -> crate::FaultStats {
        let mut stats = crate::FaultStats::default();
        for proxy in self.peers.proxies() {
            stats.add(&proxy.fault_stats());
        }
        stats
    }

    /// Injects `faults` into every proxy (each its own seed, `faults.seed` plus its place).
    pub fn inject(&self, faults: &crate::Faults) {
        for (i, proxy) in self.peers.proxies().into_iter().enumerate() {
            proxy.inject(crate::Faults {
                seed: faults.seed.wrapping_add(i as u64),
                ..faults.clone()
            });
        }
    }

    pub fn stop_faults(&self) {
        for proxy in self.peers.proxies() {
            proxy.stop_faults();
        }
    }

    /// Turns each proxy's service's published limits on (`crate::limits`); Cloud DNS's own
    /// on GCP's DNS proxy.
    pub fn limits_on(&self) {
        for proxy in self.peers.proxies() {
            let dns =
                matches!(self.peers, Peers::Gcp(_)) && std::ptr::eq(proxy, self.peers.dns_proxy());
            let limits = if dns {
                crate::Limits::cloud_dns()
            } else {
                crate::Limits::of(proxy.service)
            };
            proxy.limit(Some(limits));
        }
    }

    /// Turns every proxy's limits off (faults alone, as `bootstrap-sim faults` runs them).
    pub fn limits_off(&self) {
        for proxy in self.peers.proxies() {
            proxy.limit(None);
        }
    }

    /// Per proxy and quota: let through, refused, peak use (limits on).
    pub fn quota_use(&self) -> Value {
        let per_proxy: Vec<Value> = self
            .peers
            .proxies()
            .into_iter()
            .map(|p| {
                let quotas: Vec<Value> = p.quota_use().iter().map(|q| q.to_json()).collect();
                json!({"service": format!("{:?}", p.service), "quotas": quotas})
            })
            .collect();
        Value::from(per_proxy)
    }

    /// Requests through every proxy since the last reset, by kind (`Action` or method and
    /// path with ids left in).
    pub fn calls(&self) -> Vec<crate::proxy::Call> {
        self.peers
            .proxies()
            .iter()
            .flat_map(|p| p.calls())
            .collect()
    }

    pub fn reset_calls(&self) {
        for proxy in self.peers.proxies() {
            proxy.reset();
        }
    }
}

/// Polls the process's peak resident set (VmHWM) until it is gone; the last reading stays.
async fn watch_rss(pid: u32, peak: std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let path = format!("/proc/{pid}/status");
    loop {
        let Ok(status) = std::fs::read_to_string(&path) else {
            return;
        };
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kib) = hwm {
            peak.fetch_max(kib, std::sync::atomic::Ordering::Relaxed);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Another cluster's reservations (untagged, another cluster's, ours by cluster tag only) and
/// another writer's values in the private `api`/`api-int` and the public `api` record sets.
async fn plant(peers: &Peers) -> Result<()> {
    let private = ["api.mycluster.example.com", "api-int.mycluster.example.com"];
    let public = "api.mycluster.example.com";
    match peers {
        Peers::Aws(p, _) => {
            p.create_foreign().await?;
            for fqdn in private {
                p.write_record("private", fqdn, &[OTHER_WRITER]).await?;
            }
            p.write_record("public", public, &[OTHER_PUBLIC]).await?;
        }
        Peers::Gcp(p) => {
            let fake = &p.fake;
            let cluster = "kubernetes-io-cluster-mycluster-7xk2p";
            let reservation = "bootstrap-agent-reservation";
            fake.create_address("unlabelled", false, &[])?;
            fake.create_address(
                "other-cluster-rsvd-public-ipv4",
                false,
                &[
                    ("kubernetes-io-cluster-other-abcde", "owned"),
                    (reservation, "public-ipv4"),
                ],
            )?;
            fake.create_address("mycluster-7xk2p-cluster-ip", true, &[(cluster, "owned")])?;
            for fqdn in private {
                fake.write_record("mycluster-7xk2p-private-zone", fqdn, "A", &[OTHER_WRITER])?;
            }
            fake.write_record("example-com", public, "A", &[OTHER_PUBLIC])?;
        }
        Peers::Azure(p) => {
            p.sim.create_foreign();
            for fqdn in private {
                p.sim.write_record(true, fqdn, &[OTHER_WRITER])?;
            }
            p.sim.write_record(false, public, &[OTHER_PUBLIC])?;
        }
    }
    Ok(())
}

/// Where the state dirs go: [`Hosts::OnePerTwoCycles`] puts each host's second install on the
/// state dir of its first (after `teardown --all`), and each pair on a new state dir for the
/// same infra id (a new bootstrap host: new idempotency tokens, or GCE would replay the last
/// pair's `requestId`s); [`Hosts::One`] keeps one state dir for every cycle: the first host's,
/// so that faulted cycles after a soak on the same bench continue on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosts {
    OnePerTwoCycles,
    One,
}

/// The state dir of cycle `cycle` (0: the reference) under `work`.
pub fn state_dir(work: &Path, hosts: Hosts, cycle: usize) -> Result<PathBuf> {
    let dir = match hosts {
        Hosts::OnePerTwoCycles => work.join(format!("state-{:03}", cycle / 2)),
        Hosts::One => work.join("state-000"),
    };
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Bytes under `dir` (files only).
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}
