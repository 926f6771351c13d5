//! The node clients, each a task sampling its requests until stopped: the kubelets (masters
//! and workers) on api-int, the masters' dials to the bootstrap host, and the agent's proof
//! of each internal frontend.

use super::{Cluster, MASTERS, NodeSample, WORKERS};
use crate::nodes::{self, Cloud, Reached, Role, World};
use crate::rng::Rng;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Go's dialer over `answer` (in a new order each time): Ok when `accept` likes who answered.
pub(super) async fn dial(
    cluster: &Cluster,
    from: usize,
    answer: &[IpAddr],
    port: u16,
    timeout: Duration,
    rng: &mut Rng,
    accept: impl Fn(&World, usize) -> bool,
) -> bool {
    let mut order = answer.to_vec();
    rng.shuffle(&mut order);
    for ip in order {
        let (reached, ok) = {
            let world = cluster.now();
            let reached = world.connect(from, ip, port, rng);
            let ok = matches!(reached, Reached::Node(k) if accept(&world, k));
            (reached, ok)
        };
        match reached {
            _ if ok => return true,
            Reached::Dropped => tokio::time::sleep(timeout).await,
            // Refused, or the wrong host answered: the next address.
            _ => {}
        }
    }
    false
}

/// One request every period until `stop`.
struct Pace {
    next: Instant,
    period: Duration,
    stop: watch::Receiver<bool>,
}

impl Pace {
    fn new(period: Duration, stop: watch::Receiver<bool>) -> Pace {
        Pace {
            next: Instant::now(),
            period,
            stop,
        }
    }

    /// Waits for the next request's turn; false once stopped.
    async fn next(&mut self) -> bool {
        self.next += self.period;
        tokio::select! {
            _ = tokio::time::sleep_until(self.next.max(Instant::now())) => {}
            _ = self.stop.changed() => {}
        }
        !*self.stop.borrow()
    }
}

pub(super) fn serves_api(world: &World, k: usize) -> bool {
    matches!(world.nodes[k].role, Role::Master | Role::Bootstrap)
}

/// A kubelet (master or worker): calls api-int from its node's boot on.
async fn kubelet(
    cluster: Arc<Cluster>,
    class: &'static str,
    i: usize,
    api_int: watch::Receiver<Vec<IpAddr>>,
    mut pace: Pace,
    timeout: Duration,
    seed: u64,
) -> Vec<NodeSample> {
    let mut rng = Rng(seed);
    let mut samples = Vec::new();
    while pace.next().await {
        let answer = cluster.resolve(&api_int.borrow());
        if !cluster.booted(i) || answer.is_empty() {
            continue;
        }
        let started = Instant::now();
        let ok = dial(
            &cluster,
            i,
            &answer,
            nodes::API,
            timeout,
            &mut rng,
            serves_api,
        )
        .await;
        if ok {
            cluster.kubelet_ok(i, cluster.t0.elapsed());
        }
        samples.push(NodeSample {
            class,
            started,
            latency: started.elapsed(),
            ok,
        });
    }
    samples
}

/// A master's connections to the bootstrap host by its IP, the four ports in turn, until
/// the host is destroyed: they count only when the bootstrap host answers.
async fn to_bootstrap(
    cluster: Arc<Cluster>,
    i: usize,
    mut pace: Pace,
    timeout: Duration,
    seed: u64,
) -> Vec<NodeSample> {
    let ports = [nodes::ETCD_CLIENT, nodes::ETCD_PEER, nodes::API, nodes::MCS];
    let mut rng = Rng(seed);
    let mut samples = Vec::new();
    let mut turn = 0usize;
    while pace.next().await {
        let target = {
            let w = cluster.now();
            w.nodes[0].up.then_some(w.nodes[0].ip)
        };
        let Some(ip) = target.filter(|_| cluster.booted(i)) else {
            continue;
        };
        turn += 1;
        let port = ports[turn % ports.len()];
        let started = Instant::now();
        let ok = dial(&cluster, i, &[ip], port, timeout, &mut rng, |_, k| k == 0).await;
        samples.push(NodeSample {
            class: "master-to-bootstrap",
            started,
            latency: started.elapsed(),
            ok,
        });
    }
    samples
}

/// The agent's proof of each internal frontend, as it makes it: on Azure the bootstrap
/// host's own connection, which counts when a master answers; on GCP the cloud's health
/// check with a ready endpoint ([`World::cloud_proof`](crate::nodes::World::cloud_proof)),
/// because the bootstrap VM's own connection comes back to itself (G2).
async fn proof(
    cluster: Arc<Cluster>,
    mut pace: Pace,
    timeout: Duration,
    seed: u64,
) -> Vec<NodeSample> {
    let mut rng = Rng(seed);
    let mut samples = Vec::new();
    while pace.next().await {
        let vips: Vec<IpAddr> = {
            let w = cluster.now();
            match w.nodes[0].up {
                true => w.internal.iter().copied().collect(),
                false => Vec::new(),
            }
        };
        for vip in vips {
            let started = Instant::now();
            let from_cloud = {
                let w = cluster.now();
                (w.cloud == Cloud::Gcp).then(|| w.cloud_proof(vip, nodes::API))
            };
            let ok = match from_cloud {
                Some(ok) => ok,
                None => {
                    dial(
                        &cluster,
                        0,
                        &[vip],
                        nodes::API,
                        timeout,
                        &mut rng,
                        |w, k| w.nodes[k].role == Role::Master,
                    )
                    .await
                }
            };
            samples.push(NodeSample {
                class: "bootstrap-proof",
                started,
                latency: started.elapsed(),
                ok,
            });
        }
    }
    samples
}

/// Runs every node client until `stop`; their samples.
pub async fn clients(
    cluster: Arc<Cluster>,
    api_int: watch::Receiver<Vec<IpAddr>>,
    period: Duration,
    timeout: Duration,
    stop: watch::Receiver<bool>,
) -> Vec<NodeSample> {
    let pace = || Pace::new(period, stop.clone());
    let mut tasks = Vec::new();
    for m in 0..MASTERS {
        let i = cluster.index(Role::Master, m);
        let seed = 7_000 + m as u64;
        tasks.push(tokio::spawn(kubelet(
            cluster.clone(),
            "master-kubelet",
            i,
            api_int.clone(),
            pace(),
            timeout,
            seed,
        )));
        tasks.push(tokio::spawn(to_bootstrap(
            cluster.clone(),
            i,
            pace(),
            timeout,
            seed + 100,
        )));
    }
    for k in 0..WORKERS {
        let i = cluster.index(Role::Worker, k);
        tasks.push(tokio::spawn(kubelet(
            cluster.clone(),
            "worker-kubelet",
            i,
            api_int.clone(),
            pace(),
            timeout,
            8_000 + k as u64,
        )));
    }
    tasks.push(tokio::spawn(proof(cluster.clone(), pace(), timeout, 9_000)));
    let mut samples = Vec::new();
    for task in tasks {
        if let Ok(s) = task.await {
            samples.extend(s);
        }
    }
    samples
}
