//! `bootstrap-sim handover <cloud>`: a population of API clients through a whole `run`, on
//! loopback only, to measure what clients see while the API moves from the bootstrap host to
//! the load balancers.
//!
//! The world: the cloud's local peers and the local Kubernetes API server, whose load balancers
//! come up `lb_delay` after their Service appears. Every IP a DNS answer can hold maps to a
//! local listener ([`network`]): the bootstrap IP answers until the simulated installer destroys
//! the host, which it does at the agent's `complete` signal (the README's installer contract);
//! a reserved IP answers once its load balancer holds it and has a ready endpoint, and until
//! then drops connections (the client waits for its connect timeout). Clients ([`clients`])
//! resolve `api-int` (private zone) and `api` (public zone) by reading the zones of the cloud
//! peers and keep each answer for the TTL, each with its own phase.
//!
//! Stages, by the start of each request: 1 = before the gate passes, 2 = gate passed, an
//! address of the bootstrap host still in api-int, 3 = after every address of the bootstrap
//! host (its IP and, on GCP and Azure, its second address) left api-int.
//!
//! The tallies per policy, class and stage are in `tally`, the scope change's run and windows
//! in `scope_change`, the simulated installer's side in `installer`, the report's JSON and
//! text in `report`; this file holds the options, the timeline and the run.

pub mod clients;
mod installer;
pub mod network;
pub mod node_design;
pub mod openshift;
mod report;
mod scope_change;
mod tally;

pub use report::Report;
pub use scope_change::ScopeRow;
pub use tally::{ClassRow, Row};

use crate::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use crate::peers::Peers;
use anyhow::{Context, Result, bail};
use clients::{Client, Policy};
use installer::watch_installer_side;
use network::{Alive, Network};
use scope_change::{scope_round_trip, scope_rows};
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tally::{class_rows, rows};
use tokio::sync::watch;
use tokio::time::Instant;

/// The bootstrap host's IP in every example world.
const BOOTSTRAP_IP: &str = "10.0.1.10";

#[derive(Clone, Debug)]
pub struct Options {
    pub cloud: String,
    /// The agent binary.
    pub agent: PathBuf,
    /// A scratch dir (state dir, done-file, AWS assets).
    pub work: PathBuf,
    /// `progressive` or `all-at-once` (the agent's `--dns-seeding`).
    pub dns_seeding: String,
    /// The agent's `--bootstrap-second-address` (None: the harness's `cloud`; `off` is the
    /// agent before issue 33, the bootstrap IP alone).
    pub second_address: Option<String>,
    /// The record TTL (the agent's `--dns-ttl`); the resolvers cache answers this long.
    pub ttl: Duration,
    /// Clients per policy and record (api-int, api).
    pub clients: usize,
    /// Each client sends one request per period.
    pub period: Duration,
    pub connect_timeout: Duration,
    /// A load balancer comes up this long after its Service appears.
    pub lb_delay: Duration,
    /// How long the clients go on after the host is destroyed (and after each scope change).
    pub linger: Duration,
    /// After `complete` and the linger: `publish --scope Internal --auto-delete`, the linger,
    /// then `publish --scope External`, with the clients going on through both; run as an
    /// admin runs them once the bootstrap host is destroyed (the installer's documents in the
    /// cluster, no asset dir, a fresh state dir).
    pub scope_round_trip: bool,
    /// GCP / Azure: the cluster's own nodes as clients and backends ([`openshift`]).
    pub openshift_nodes: bool,
    pub node_timing: openshift::NodeTiming,
    pub node_design: openshift::NodeDesign,
}

impl Options {
    pub fn new(cloud: &str, agent: PathBuf, work: PathBuf) -> Options {
        Options {
            cloud: cloud.to_string(),
            agent,
            work,
            dns_seeding: "progressive".into(),
            second_address: None,
            ttl: Duration::from_secs(30),
            clients: 7,
            period: Duration::from_millis(200),
            connect_timeout: Duration::from_secs(1),
            lb_delay: Duration::from_secs(5),
            linger: Duration::from_secs(35),
            scope_round_trip: false,
            openshift_nodes: false,
            node_timing: openshift::NodeTiming::default(),
            node_design: openshift::NodeDesign::default(),
        }
    }
}

/// When things happened, from the agent's start.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// An address of the bootstrap host first seen in the private zone's api-int.
    pub seeded: Option<Duration>,
    /// Each load-balancer IP first seen in a zone.
    pub joined: Vec<(IpAddr, Duration)>,
    pub gate_passed: Option<Duration>,
    /// Every address of the bootstrap host gone from the private zone's api-int.
    pub removed: Option<Duration>,
    pub complete: Option<Duration>,
    pub destroyed: Option<Duration>,
    /// `publish --scope Internal` started, the public `api` record first seen empty after
    /// that, and the command done.
    pub to_internal: Option<Duration>,
    pub withdrawn: Option<Duration>,
    pub internal_done: Option<Duration>,
    /// `publish --scope External` started, the public `api` record first seen holding a value
    /// again, and the command done.
    pub to_external: Option<Duration>,
    pub rejoined: Option<Duration>,
    pub external_done: Option<Duration>,
}

/// Runs the whole simulation.
pub async fn run(opts: Options) -> Result<Report> {
    if opts.openshift_nodes && !matches!(opts.cloud.as_str(), "gcp" | "azure") {
        bail!(
            "--openshift-nodes: the node model is GCP's and Azure's (on AWS the load balancers' targets are the masters' IPs), not {}",
            opts.cloud
        );
    }
    let _ = std::fs::remove_dir_all(&opts.work);
    std::fs::create_dir_all(&opts.work)
        .with_context(|| format!("cannot create {}", opts.work.display()))?;
    let (peers, assets) = Peers::start(&opts.cloud, &opts.work).await?;
    let kube = KubeSim::start(KubeSimOptions {
        cloud: peers.lb_cloud(),
        controller: ControllerKnobs {
            ingress_delay: opts.lb_delay,
            endpoints_delay: Duration::from_millis(500),
            ..Default::default()
        },
        ..Default::default()
    })
    .await?;
    let kube = Arc::new(kube);
    let bootstrap: IpAddr = BOOTSTRAP_IP.parse()?;
    let network = Network::new();
    network.set_alive(Alive {
        bootstrap: BTreeSet::from([bootstrap]),
        load_balancers: BTreeSet::new(),
    });
    // The bootstrap host's addresses as the cloud shows them: its IP, and the second address
    // the agent gives it (GCP alias IP, Azure IP configuration).
    let host = Arc::new(Mutex::new(BTreeSet::from([bootstrap])));

    let done_file = opts.work.join("done.json");
    let t0 = Instant::now();
    let mut agent = tokio::process::Command::new(&opts.agent)
        .arg("run")
        .arg("--assets")
        .arg(&assets)
        .arg("--state-dir")
        .arg(opts.work.join("state"))
        .args(["--bootstrap-ip", BOOTSTRAP_IP])
        .arg("--kubeconfig")
        .arg(kube.kubeconfig_path())
        .arg("--done-file")
        .arg(&done_file)
        .args(["--dns-seeding", &opts.dns_seeding])
        .args(
            opts.second_address
                .iter()
                .flat_map(|v| ["--bootstrap-second-address", v.as_str()]),
        )
        .arg("--dns-ttl")
        .arg(format!("{}s", opts.ttl.as_secs()))
        .args(["--drain-wait", "ttl"])
        // A stuck hand-over fails the simulation in minutes, not after the default 30.
        .args(["--gate-timeout", "3m"])
        // The proof on the wire dials each load-balancer IP: the local API server stands in
        // for every load balancer (never dial the clouds' addresses). Whether an IP serves is
        // the gate's verdict here (the load balancer holds it, with a ready endpoint); the
        // proof's own refusals are tested in tests/operating.rs.
        .arg("--wire-dial-override")
        .arg({
            let api = kube.url().trim_start_matches("https://").to_string();
            format!("*:6443={api},*:22623={api}")
        })
        .envs(peers.agent_env())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start the agent")?;
    let agent_log = agent.stderr.take().map(|mut err| {
        tokio::spawn(async move {
            let mut text = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut err, &mut text).await;
            text
        })
    });

    // The zones as a resolver sees them.
    let (private_tx, private_rx) = watch::channel(Vec::new());
    let (public_tx, public_rx) = watch::channel(Vec::new());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    for (record, zone) in [(0u64, &private_rx), (1, &public_rx)] {
        for policy in Policy::ALL {
            for n in 0..opts.clients {
                let client = Client {
                    policy,
                    public: record == 1,
                    zone: zone.clone(),
                    ttl: opts.ttl,
                    period: opts.period,
                    connect_timeout: opts.connect_timeout,
                    seed: record * 1_000_003 + policy as u64 * 10_007 + n as u64,
                };
                tasks.push(tokio::spawn(client.run(network.clone(), stop_rx.clone())));
            }
        }
    }

    let timeline = Arc::new(Mutex::new(Timeline::default()));
    let node_tasks = match opts.openshift_nodes {
        false => None,
        true => {
            let cluster = openshift::Cluster::new(
                &opts.cloud,
                bootstrap,
                network.clone(),
                t0,
                openshift::NodeDesign {
                    restart_after: opts.ttl,
                    ..opts.node_design.clone()
                },
            )
            .context("no node model for this cloud")?;
            let driver = tokio::spawn(openshift::drive(
                cluster.clone(),
                timeline.clone(),
                private_rx.clone(),
                opts.node_timing.clone(),
                stop_rx.clone(),
            ));
            let clients = tokio::spawn(openshift::clients(
                cluster,
                private_rx.clone(),
                opts.period,
                opts.connect_timeout,
                stop_rx.clone(),
            ));
            Some((driver, clients))
        }
    };
    let watcher = tokio::spawn(watch_installer_side(
        kube.clone(),
        network.clone(),
        done_file,
        host.clone(),
        t0,
        timeline.clone(),
        stop_rx.clone(),
    ));

    // The nodes' last rollout starts a second after the bootstrap host left api-int, its server
    // down after the others': the clients stay on until it is over.
    let linger = match opts.openshift_nodes {
        true => opts.linger.max(opts.node_timing.rollouts_end()),
        false => opts.linger,
    };
    let mut joined = BTreeSet::new();
    let mut agent_status = None;
    let mut publish: Option<tokio::process::Child> = None;
    loop {
        let end = {
            let t = lock(&timeline);
            match opts.scope_round_trip {
                false => t.complete.map(|at| t0 + at + linger),
                true => t.external_done.map(|at| t0 + at + linger),
            }
        };
        if end.is_some_and(|e| Instant::now() >= e) {
            break;
        }
        if opts.scope_round_trip && agent_status.is_some() {
            scope_round_trip(&opts, &assets, &kube, &peers, &mut publish, t0, &timeline)?;
        }
        if t0.elapsed() > Duration::from_secs(600) {
            bail!(
                "the simulation did not finish in 10 minutes: {:?}",
                lock(&timeline)
            );
        }
        // What the zones hold now, as a resolver would read it.
        let zones = peers.zones().await?;
        {
            let mut host = lock(&host);
            host.extend(peers.bootstrap_addresses());
        }
        let host_now = lock(&host).clone();
        let private = values(&zones["private"], "api-int.");
        let public = values(&zones["public"], "api.");
        {
            let at = t0.elapsed();
            let mut t = lock(&timeline);
            // The bootstrap host's addresses, not its IP alone: on Azure the agent's api-int
            // holds its second address without the bootstrap IP.
            let from_host = private.iter().any(|ip| host_now.contains(ip));
            if from_host && t.seeded.is_none() {
                t.seeded = Some(at);
            }
            if t.seeded.is_some() && !from_host && t.removed.is_none() {
                t.removed = Some(at);
            }
            if t.to_internal.is_some() && public.is_empty() && t.withdrawn.is_none() {
                t.withdrawn = Some(at);
            }
            if t.to_external.is_some() && !public.is_empty() && t.rejoined.is_none() {
                t.rejoined = Some(at);
            }
            for ip in private
                .iter()
                .chain(&public)
                .filter(|ip| !host_now.contains(ip))
            {
                if joined.insert(*ip) {
                    t.joined.push((*ip, at));
                }
            }
        }
        private_tx.send_replace(private);
        public_tx.send_replace(public);

        if agent_status.is_none()
            && let Some(status) = agent.try_wait()?
        {
            agent_status = Some(status);
            if !status.success() {
                let log = match agent_log {
                    Some(task) => task.await.unwrap_or_default(),
                    None => String::new(),
                };
                bail!("the agent failed ({status}):\n{log}");
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop_tx.send_replace(true);
    watcher.await?;
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await?);
    }
    let node_samples = match node_tasks {
        Some((driver, clients)) => {
            driver.await?;
            clients.await?
        }
        None => Vec::new(),
    };
    if agent_status.is_none() {
        let status = agent.wait().await?;
        if !status.success() {
            bail!("the agent failed after `complete`: {status}");
        }
    }
    let timeline = lock(&timeline).clone();
    let rows = rows(&samples, t0, &timeline);
    let class_rows = class_rows(&rows, &node_samples, t0, &timeline);
    let scope_rows = match opts.scope_round_trip {
        true => scope_rows(&samples, t0, &timeline, opts.ttl),
        false => Vec::new(),
    };
    Ok(Report {
        options: opts,
        timeline,
        rows,
        scope_rows,
        class_rows,
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The A and AAAA values of the record whose name starts with `prefix` in a zone of
/// `inspect()`: `{"<fqdn> <TYPE>": [values]}`.
fn values(zone: &Value, prefix: &str) -> Vec<IpAddr> {
    let mut ips: Vec<IpAddr> = zone
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| key.starts_with(prefix))
        .flat_map(|(_, v)| v.as_array().cloned().unwrap_or_default())
        .filter_map(|v| v.as_str().and_then(|s| s.parse().ok()))
        .collect();
    ips.sort();
    ips.dedup();
    ips
}

#[cfg(test)]
mod tests {
    use super::clients::Sample;
    use super::tally::stage;
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_belongs_to_the_stage_it_started_in() {
        let t = Timeline {
            gate_passed: Some(Duration::from_secs(10)),
            removed: Some(Duration::from_secs(11)),
            ..Default::default()
        };
        assert_eq!(stage(Duration::from_secs(9), &t), 1);
        assert_eq!(stage(Duration::from_secs(10), &t), 2);
        assert_eq!(stage(Duration::from_millis(10_999), &t), 2);
        assert_eq!(stage(Duration::from_secs(11), &t), 3);
        assert_eq!(stage(Duration::from_secs(99), &Timeline::default()), 1);
    }

    #[test]
    fn the_zone_values_of_one_record() {
        let zone = json!({
            "api-int.c.example.com A": ["10.0.0.2", "10.0.0.1"],
            "api.c.example.com A": ["10.0.0.9"],
        });
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(values(&zone, "api-int."), [ip("10.0.0.1"), ip("10.0.0.2")]);
        assert_eq!(values(&zone, "api."), [ip("10.0.0.9")]);
        assert!(values(&json!({}), "api.").is_empty());
    }

    #[test]
    fn p99_and_failures_per_policy_and_stage() {
        let t0 = Instant::now();
        let sample = |ms: u64, ok: bool| Sample {
            policy: Policy::FirstAddress,
            public: false,
            resolved: true,
            started: t0 + Duration::from_millis(5),
            latency: Duration::from_millis(ms),
            ok,
        };
        let mut samples: Vec<Sample> = (1..=100).map(|ms| sample(ms, true)).collect();
        samples.push(sample(1000, false));
        let rows = rows(&samples, t0, &Timeline::default());
        let first = rows
            .iter()
            .find(|r| r.policy == Policy::FirstAddress && r.stage == 1)
            .unwrap();
        assert_eq!(first.requests, 101);
        assert_eq!(first.failures, 1);
        assert_eq!(first.p99, Duration::from_millis(100));
        assert!(
            rows.iter()
                .filter(|r| r.stage != 1)
                .all(|r| r.requests == 0)
        );
    }
}
