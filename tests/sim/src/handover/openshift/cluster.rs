//! The cluster's nodes as the driver keeps them: the node model's world (read again from the
//! network by every client), each node's boot, rollout and reboot, and one step of it all.

use super::super::Timeline;
use super::super::network::{Alive, Network};
use super::{MASTERS, NodeDesign, NodeTiming, WORKERS, WatcherHost, WatcherRestart, lock};
use crate::nodes::routes::Script;
use crate::nodes::watcher::{CHECK_INTERVAL, Watcher};
use crate::nodes::{self, Apiserver, Cloud, Role, World};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

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
    pub(super) t0: Instant,
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

    pub(super) fn index(&self, role: Role, n: usize) -> usize {
        match role {
            Role::Bootstrap => 0,
            Role::Master => 1 + n,
            Role::Worker => 1 + MASTERS + n,
        }
    }

    /// One step of the world at `now`: the frontends and the bootstrap host from the
    /// network, the nodes' boots, rollouts and reboots by the timeline, the watchers' checks
    /// and the GCP metadata re-reads.
    pub(super) fn tick(
        &self,
        now: Duration,
        t: &Timeline,
        api_int: &[IpAddr],
        timing: &NodeTiming,
    ) {
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
    pub(super) fn now(&self) -> std::sync::MutexGuard<'_, World> {
        let mut world = lock(&self.world);
        observe(&mut world, &self.network.alive());
        world
    }

    /// api-int as the nodes' resolvers answer it under the design.
    pub(super) fn resolve(&self, zone: &[IpAddr]) -> Vec<IpAddr> {
        let bootstrap = lock(&self.world).nodes[0].ip;
        match self.design.second_address_alone && zone.len() > 1 && zone.contains(&bootstrap) {
            true => zone.iter().copied().filter(|ip| *ip != bootstrap).collect(),
            false => zone.to_vec(),
        }
    }

    pub(super) fn booted(&self, i: usize) -> bool {
        lock(&self.life)[i].boot_at.is_some()
    }

    pub(super) fn kubelet_ok(&self, i: usize, now: Duration) {
        let mut life = lock(&self.life);
        life[i].kubelet_ok_at.get_or_insert(now);
    }
}
