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
//!
//! The nodes' world and its clock are in `cluster`, the node clients (kubelets, the masters'
//! dials to the bootstrap host, the agent's proof) in `node_clients`; this file holds the
//! timing, the samples and the driver.

mod cluster;
mod node_clients;

pub use cluster::Cluster;
pub use node_clients::clients;

use super::Timeline;
pub use super::node_design::{NodeDesign, WatcherHost, WatcherRestart};
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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

#[cfg(test)]
mod tests {
    use super::node_clients::{dial, serves_api};
    use super::*;
    use crate::handover::network::{Alive, Network};
    use crate::nodes::{self, Role};
    use crate::rng::Rng;

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
