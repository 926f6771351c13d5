//! `--openshift-nodes true`: the cluster's own nodes through the hand-over, on GCP and Azure,
//! with the node model of [`crate::nodes`] (apiserver-watcher, the route scripts, the load
//! balancers' backends and health). Three masters boot once `api-int` exists, two workers a
//! moment later; the clients are the nodes themselves:
//!
//! - `master-kubelet`: each master's kubelet calls api-int (Go's dialer: every address in
//!   order, refused -> next at once, dropped -> the connect timeout). Master *i* rolls its
//!   kube-apiserver out in stage *i*+1: `/readyz` fails for the shutdown delay while it
//!   still serves, then it is down for the restart.
//! - `master-to-bootstrap`: each master dials the bootstrap host's etcd (2379, 2380), its
//!   kube-apiserver and its MCS by IP, as the etcd members and the operators do, until the
//!   host is destroyed; it counts only when the bootstrap host answers.
//! - `worker-kubelet`: each worker's kubelet calls api-int; worker 0 reboots in stage 3 and
//!   its OVN-Kubernetes starts only after its kubelet reached the API again.
//! - `bootstrap-proof`: the agent's proof of each internal frontend: on Azure the bootstrap
//!   host's own connection (the proof on the wire), which counts when a master answers
//!   through the load balancer, not the bootstrap host itself or nobody; on GCP the cloud's
//!   health check with a ready endpoint, since the bootstrap VM is a backend there (G2).
//!
//! Timing: the watcher's and the scripts' are OpenShift's (2 s checks, 8 failures, metadata
//! re-read every 30 s on masters and 240 s on workers and the bootstrap VM); the nodes' boot
//! and the rollout are shortened to fit the simulation (`NodeTiming`), the shutdown delay kept
//! above the watcher's 16 s as OpenShift's is.
//!
//! [`NodeDesign`]: what the simulation cannot settle (GCE's hairpin) and the node-side
//! designs it evaluates beside the agent's own flags (the watcher's health-check host, a
//! restart of the watchers once the bootstrap addresses left api-int).

use super::Timeline;
use super::network::{Alive, Network};
pub use super::node_design::{NodeDesign, WatcherHost, WatcherRestart};
use crate::nodes::routes::Script;
use crate::nodes::watcher::{CHECK_INTERVAL, Watcher};
use crate::nodes::{self, Apiserver, Cloud, Reached, Role, World};
use crate::rng::Rng;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

pub const MASTERS: usize = 3;
pub const WORKERS: usize = 2;

/// The node client classes, in report order.
pub const CLASSES: [&str; 4] = [
    "master-kubelet",
    "master-to-bootstrap",
    "worker-kubelet",
    "bootstrap-proof",
];

#[derive(Clone, Debug)]
pub struct NodeTiming {
    /// A master boots this long after api-int first exists (each next one 200 ms later).
    pub master_boot: Duration,
    /// Its kube-apiserver serves this long after boot; OVN-K runs after `ovnk_start`.
    pub apiserver_start: Duration,
    pub ovnk_start: Duration,
    /// A rollout: `/readyz` fails while the server still serves (OpenShift: 70 s), then
    /// the server is down for `restart`.
    pub shutdown_delay: Duration,
    pub restart: Duration,
}

impl Default for NodeTiming {
    fn default() -> Self {
        NodeTiming {
            master_boot: Duration::from_millis(500),
            apiserver_start: Duration::from_millis(1500),
            ovnk_start: Duration::from_secs(1),
            shutdown_delay: Duration::from_secs(25),
            restart: Duration::from_secs(5),
        }
    }
}

impl NodeTiming {
    /// From the last rollout's start, an upper bound of when every master is back (the
    /// servers go down one after the other, a second apart), and 3 s more.
    pub fn rollouts_end(&self) -> Duration {
        let one = self.restart + Duration::from_secs(1);
        self.shutdown_delay + one * MASTERS as u32 + Duration::from_secs(3)
    }
}

/// One node client's request.
#[derive(Clone, Copy, Debug)]
pub struct NodeSample {
    pub class: &'static str,
    pub started: Instant,
    pub latency: Duration,
    pub ok: bool,
}

/// What the driver knows of each node beyond the model.
#[derive(Clone, Debug, Default)]
struct Life {
    boot_at: Option<Duration>,
    /// The rollout's start (masters), and when its server goes down: after the shutdown
    /// delay, and never while another master's is down (the operator rolls one at a time).
    rollout_at: Option<Duration>,
    down_at: Option<Duration>,
    /// Workers: the reboot, and the kubelet's first success since the (re)boot.
    reboot_at: Option<Duration>,
    kubelet_ok_at: Option<Duration>,
    next_check: Duration,
    /// The route script's last read of the metadata (GCP).
    last_read: Option<Duration>,
    restarted: bool,
}

pub struct Cluster {
    design: NodeDesign,
    world: Mutex<World>,
    life: Mutex<Vec<Life>>,
    network: Arc<Network>,
    t0: Instant,
}

/// The frontends and the bootstrap host as the network has them now. Read again by every
/// client ([`Cluster::now`]), not only at the driver's 100 ms tick: a client may already
/// resolve a VIP the agent just proved, and a world a tick behind would drop its connection
/// (one failure per client at the join on a loaded machine, in CI); a master would dial the
/// bootstrap host the tick still shows alive.
fn observe(world: &mut World, alive: &Alive) {
    world.nodes[0].up = !alive.bootstrap.is_empty();
    let own = world.nodes[0].ip;
    world.nodes[0].aliases = alive
        .bootstrap
        .iter()
        .copied()
        .filter(|ip| *ip != own)
        .collect();
    world.internal = alive
        .load_balancers
        .iter()
        .copied()
        .filter(|ip| is_private(*ip))
        .collect();
    world.external = alive
        .load_balancers
        .iter()
        .copied()
        .filter(|ip| !is_private(*ip))
        .collect();
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Private addresses are the internal frontends (the example worlds' reserved private IPs).
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_private(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xfe00) == 0xfc00,
    }
}

impl Cluster {
    pub fn new(
        cloud: &str,
        bootstrap: IpAddr,
        network: Arc<Network>,
        t0: Instant,
        design: NodeDesign,
    ) -> Option<Arc<Cluster>> {
        let cloud = match cloud {
            "gcp" => Cloud::Gcp,
            "azure" => Cloud::Azure,
            _ => return None,
        };
        let ip = |s: String| s.parse::<IpAddr>().ok();
        let mut list = vec![nodes::Node::new("bootstrap", Role::Bootstrap, bootstrap)];
        for i in 0..MASTERS {
            list.push(nodes::Node::new(
                &format!("master-{i}"),
                Role::Master,
                ip(format!("10.0.0.{}", 20 + i))?,
            ));
        }
        for i in 0..WORKERS {
            list.push(nodes::Node::new(
                &format!("worker-{i}"),
                Role::Worker,
                ip(format!("10.0.32.{}", 30 + i))?,
            ));
        }
        list[0].up = true;
        let mut life = vec![Life::default(); list.len()];
        // The bootstrap VM runs before the agent starts: its route script read at boot.
        life[0].boot_at = Some(Duration::ZERO);
        let mut world = World::new(cloud, list);
        world.hairpin = design.hairpin;
        Some(Arc::new(Cluster {
            design,
            world: Mutex::new(world),
            life: Mutex::new(life),
            network,
            t0,
        }))
    }

    fn index(&self, role: Role, n: usize) -> usize {
        match role {
            Role::Bootstrap => 0,
            Role::Master => 1 + n,
            Role::Worker => 1 + MASTERS + n,
        }
    }

    /// One step of the world at `now`: the frontends and the bootstrap host from the
    /// network, the nodes' boots, rollouts and reboots by the timeline, the watchers' checks
    /// and the GCP metadata re-reads.
    fn tick(&self, now: Duration, t: &Timeline, api_int: &[IpAddr], timing: &NodeTiming) {
        let mut world = lock(&self.world);
        let mut life = lock(&self.life);
        observe(&mut world, &self.network.alive());
        let Some(seeded) = t.seeded else {
            return;
        };
        let stage_start = [
            Some(seeded + timing.master_boot + Duration::from_secs(3)),
            t.gate_passed,
            t.removed.map(|r| r + Duration::from_secs(1)),
        ];
        let world_internal = world.internal.clone();
        for (m, stage_start) in stage_start.into_iter().enumerate().take(MASTERS) {
            let i = self.index(Role::Master, m);
            let boot = seeded + timing.master_boot + Duration::from_millis(200 * m as u64);
            if now < boot {
                continue;
            }
            let l = &mut life[i];
            let node = &mut world.nodes[i];
            if l.boot_at.is_none() {
                l.boot_at = Some(boot);
                l.next_check = boot;
                node.up = true;
                node.watcher = Some(Watcher::new(now));
            }
            if l.rollout_at.is_none()
                && let Some(at) = stage_start.filter(|at| now >= *at)
            {
                l.rollout_at = Some(at);
                l.down_at = Some(at + timing.shutdown_delay);
                if m > 0
                    && let Some(before) = life[i - 1].down_at
                {
                    let free = before + timing.restart + Duration::from_secs(1);
                    life[i].down_at = life[i].down_at.max(Some(free));
                }
            }
            let l = &life[i];
            let node = &mut world.nodes[i];
            node.ovnk = now >= boot + timing.ovnk_start;
            node.apiserver = match (l.rollout_at, l.down_at) {
                _ if now < boot + timing.apiserver_start => Apiserver::NotStarted,
                (Some(r), Some(d)) if now >= r && now < d => Apiserver::Draining,
                (Some(_), Some(d)) if now >= d && now < d + timing.restart => Apiserver::Down,
                _ => Apiserver::Ready,
            };
            let ready = node.apiserver == Apiserver::Ready;
            let l = &mut life[i];
            let restart_at = t.removed.map(|r| r + self.design.restart_after);
            if self.design.restart != WatcherRestart::Off
                && !l.restarted
                && restart_at.is_some_and(|at| now >= at)
                && let Some(w) = node.watcher.as_mut()
            {
                l.restarted = true;
                let old: Vec<IpAddr> = w.vips().to_vec();
                w.restart(now);
                if self.design.restart == WatcherRestart::RestartClean {
                    for ip in old.iter().filter(|ip| !api_int.contains(ip)) {
                        node.run.up.remove(ip);
                        node.run.down.remove(ip);
                    }
                }
            }
            let vip: Vec<IpAddr> = world_internal.iter().copied().collect();
            let answer = match self.design.watcher_host {
                WatcherHost::ApiInt => api_int,
                WatcherHost::Vip => vip.as_slice(),
            };
            if let Some(w) = node.watcher.as_mut()
                && !answer.is_empty()
            {
                w.maybe_start(now, "api-int", answer);
                while now >= l.next_check {
                    w.on_check(ready, &mut node.run);
                    l.next_check += CHECK_INTERVAL;
                }
            }
        }
        for k in 0..WORKERS {
            let i = self.index(Role::Worker, k);
            let boot = seeded + timing.master_boot + Duration::from_secs(1);
            if now < boot {
                continue;
            }
            let l = &mut life[i];
            if l.boot_at.is_none() {
                l.boot_at = Some(boot);
                world.nodes[i].up = true;
            }
            if k == 0
                && l.reboot_at.is_none()
                && let Some(at) = t
                    .removed
                    .map(|r| r + Duration::from_secs(2))
                    .filter(|at| now >= *at)
            {
                l.reboot_at = Some(at);
                l.kubelet_ok_at = None;
                world.nodes[i].ovnk = false;
            }
            world.nodes[i].ovnk = l
                .kubelet_ok_at
                .is_some_and(|ok| now >= ok + timing.ovnk_start);
        }
        // The GCP route scripts re-read the metadata when they start (boot, reboot) and then
        // at least every 30 s (masters) or 240 s (RHCOS's, on workers and the bootstrap VM);
        // a run-dir change only matters through `.down`, which the rules read live.
        for i in 0..world.nodes.len() {
            let role = world.nodes[i].role;
            let Some(refresh) = Script::of(world.cloud, role).and_then(Script::refresh) else {
                continue;
            };
            let l = &mut life[i];
            let Some(boot) = l.reboot_at.or(l.boot_at) else {
                continue;
            };
            let due = l
                .last_read
                .is_none_or(|read| read < boot || now >= read + refresh);
            if now >= boot && due {
                world.nodes[i].forwarded = world.forwarded_ips(i);
                l.last_read = Some(now);
            }
        }
    }

    /// The world as a client finds it now: the network read again (see [`observe`]).
    fn now(&self) -> std::sync::MutexGuard<'_, World> {
        let mut world = lock(&self.world);
        observe(&mut world, &self.network.alive());
        world
    }

    /// api-int as the nodes' resolvers answer it under the design.
    fn resolve(&self, zone: &[IpAddr]) -> Vec<IpAddr> {
        let bootstrap = lock(&self.world).nodes[0].ip;
        match self.design.second_address_alone && zone.len() > 1 && zone.contains(&bootstrap) {
            true => zone.iter().copied().filter(|ip| *ip != bootstrap).collect(),
            false => zone.to_vec(),
        }
    }

    fn booted(&self, i: usize) -> bool {
        lock(&self.life)[i].boot_at.is_some()
    }

    fn kubelet_ok(&self, i: usize, now: Duration) {
        let mut life = lock(&self.life);
        life[i].kubelet_ok_at.get_or_insert(now);
    }
}

/// Drives the world every 100 ms until `stop`.
pub async fn drive(
    cluster: Arc<Cluster>,
    timeline: Arc<Mutex<Timeline>>,
    api_int: watch::Receiver<Vec<IpAddr>>,
    timing: NodeTiming,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        let t = lock(&timeline).clone();
        let answer = cluster.resolve(&api_int.borrow());
        cluster.tick(cluster.t0.elapsed(), &t, &answer, &timing);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = stop.changed() => {}
        }
    }
}

/// Go's dialer over `answer` (in a new order each time): Ok when `accept` likes who answered.
async fn dial(
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

fn serves_api(world: &World, k: usize) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// A VIP the network serves is reachable at once, even before the driver's next tick:
    /// the client resolving it in between was dropped (CI, stop 39: 3 master and 2 worker
    /// kubelet requests at the join, on Azure).
    #[tokio::test]
    async fn a_connection_sees_the_network_as_it_is_not_as_the_last_tick_saw_it() {
        let network = Network::new();
        let bootstrap = ip("10.0.1.10");
        let vip = ip("10.0.1.215");
        network.set_alive(Alive {
            bootstrap: [bootstrap].into(),
            load_balancers: Default::default(),
        });
        let t0 = Instant::now();
        let cluster = Cluster::new(
            "azure",
            bootstrap,
            network.clone(),
            t0,
            NodeDesign::default(),
        )
        .unwrap();
        let timing = NodeTiming::default();
        let timeline = Timeline {
            seeded: Some(Duration::ZERO),
            ..Timeline::default()
        };
        // Every node booted, OVN-K and the apiservers up; the VIP not yet served.
        cluster.tick(Duration::from_secs(4), &timeline, &[bootstrap], &timing);
        network.set_alive(Alive {
            bootstrap: [bootstrap].into(),
            load_balancers: [vip].into(),
        });
        let master = cluster.index(Role::Master, 0);
        let ok = dial(
            &cluster,
            master,
            &[vip],
            nodes::API,
            Duration::from_millis(10),
            &mut Rng(1),
            serves_api,
        )
        .await;
        assert!(
            ok,
            "the master's kubelet reaches the VIP the network serves"
        );
    }
}
