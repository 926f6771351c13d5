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

pub mod clients;
pub mod network;
pub mod node_design;
pub mod openshift;

use crate::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use crate::peers::Peers;
use anyhow::{Context, Result, bail};
use clients::{Client, Policy, Sample};
use network::{Alive, Network};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
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

pub struct Report {
    pub options: Options,
    pub timeline: Timeline,
    pub rows: Vec<Row>,
    /// With `scope_round_trip`: what the clients saw through it.
    pub scope_rows: Vec<ScopeRow>,
    /// Every client class, the nodes' included with `openshift_nodes`.
    pub class_rows: Vec<ClassRow>,
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

/// The policies' rows and the node classes' ones (by the stage each request started in,
/// before any scope change).
fn class_rows(
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

/// The scope change's next move, once `run` is done and the clients lingered: `publish
/// --scope Internal --auto-delete` (the drain one TTL), then after the linger `publish --scope
/// External`; each command's end goes into the timeline.
fn scope_round_trip(
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

/// What the installer leaves in the cluster of the asset dir (cluster-bootstrap applies its
/// manifests): ConfigMap kube-system/cluster-config-v1, Infrastructure `cluster` with its
/// status, and the creds Secret when the assets have one.
fn installer_left_in_the_cluster(kube: &KubeSim, assets: &std::path::Path) -> Result<()> {
    for file in [
        "manifests/cluster-config.yaml",
        "manifests/cluster-infrastructure-02-config.yml",
        "openshift/99_cloud-creds-secret.yaml",
    ] {
        let path = assets.join(file);
        if !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut doc: serde_json::Value = serde_saphyr::from_str(&text)
            .with_context(|| format!("{} is not YAML", path.display()))?;
        if let Some(meta) = doc["metadata"].as_object_mut() {
            meta.remove("creationTimestamp");
        }
        kube.create(doc)
            .with_context(|| format!("cannot create {file} in the cluster"))?;
    }
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

fn scope_rows(samples: &[Sample], t0: Instant, t: &Timeline, ttl: Duration) -> Vec<ScopeRow> {
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every 20 ms: which IPs answer (the load balancers that serve, the bootstrap host until it
/// is destroyed) and the installer's side: it reads the done-file and destroys the bootstrap
/// host at `complete`.
async fn watch_installer_side(
    kube: Arc<KubeSim>,
    network: Arc<Network>,
    done_file: PathBuf,
    host: Arc<Mutex<BTreeSet<IpAddr>>>,
    t0: Instant,
    timeline: Arc<Mutex<Timeline>>,
    stop: watch::Receiver<bool>,
) {
    let mut destroyed = false;
    while !*stop.borrow() {
        let load_balancers = kube.serving_ips().await;
        if let Ok(text) = std::fs::read_to_string(&done_file)
            && let Ok(doc) = serde_json::from_str::<Value>(&text)
        {
            let at = t0.elapsed();
            let mut t = lock(&timeline);
            t.gate_passed.get_or_insert(at);
            if doc["phase"] == "complete" && !destroyed {
                destroyed = true;
                t.complete = Some(at);
                t.destroyed = Some(at);
            }
        }
        let bootstrap = match destroyed {
            false => lock(&host).clone(),
            true => BTreeSet::new(),
        };
        network.set_alive(Alive {
            bootstrap,
            load_balancers,
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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

fn stage(at: Duration, timeline: &Timeline) -> u8 {
    match (timeline.gate_passed, timeline.removed) {
        (_, Some(removed)) if at >= removed => 3,
        (Some(gate), _) if at >= gate => 2,
        _ => 1,
    }
}

fn rows(samples: &[Sample], t0: Instant, timeline: &Timeline) -> Vec<Row> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
