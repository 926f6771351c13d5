//! OpenShift's own nodes on GCP and Azure, as the load balancers' backends and as clients of
//! the API: where a connection from a node (or the bootstrap host) to an address ends up.
//! A pure model, driven by the hand-over simulation's clock (`handover::openshift`).
//!
//! The rules, each from its source:
//! - Backends (k8s.io/cloud-provider `controllers/service/controller.go`,
//!   `stableNodeSetPredicates`): every Node not being deleted and without the label
//!   `node.kubernetes.io/exclude-from-external-load-balancers`; readiness and roles are not
//!   checked, so masters AND workers. On GCP the internal load balancer also reuses the
//!   installer's `<infra>-master-<zone>` instance groups, which hold the bootstrap VM
//!   (openshift/cloud-provider-gcp `gce_loadbalancer_internal_openshift.go`,
//!   `filterNodesWithExistingExternalInstanceGroups`): the bootstrap host is a backend there.
//! - Health (`externalTrafficPolicy: Cluster`): GCP's `k8s-<cluster-id>-node` check and
//!   Azure's TCP probe on the nodePort both reach ovnkube-node (:10256, the nodePort), so a
//!   node is healthy when OVN-Kubernetes runs on it, not when an apiserver serves.
//! - No healthy backend: GCE's internal passthrough load balancer fails open (spreads over
//!   every backend); an Azure Standard load balancer drops new flows.
//! - GCE: whether a backend's own connection to its internal load balancer's address comes
//!   back to that backend is unsettled ([`Hairpin`]). Google's text ("is always answered by the
//!   client/backend VM") is the guest agent's local route, which RHCOS does not run; whether
//!   the fabric itself returns the packets only a real cloud can tell, so both are modelled.
//! - Azure: a flow the load balancer sends back to its own sender is dropped (it DNATs, so
//!   the SYN-ACK comes from the wrong address; the header of MCO's azure-routes script).
//! - OVN-Kubernetes (ovn-kubernetes `gateway_iptables.go`, `getExternalIPTRules`): a node's
//!   own connections to a Service's load-balancer IP are DNAT'd to the ClusterIP (chain
//!   OVN-KUBE-EXTERNALIP, nat OUTPUT), so they reach a ready endpoint without the load
//!   balancer; the route scripts' output rules come first (they register at boot). Packets
//!   arriving for that IP are steered into OVN by br-ex's flows before the host's netfilter
//!   (`gateway_shared_intf.go`, `updateServiceFlowCache`), so a route script's prerouting rule
//!   matters only while OVN-K is not running.
//! - The route scripts and the apiserver-watcher: [`routes`], [`watcher`].

pub mod conformance;
pub mod routes;
pub mod watcher;

use crate::rng::Rng;
pub use routes::Cloud;
use std::collections::BTreeSet;
use std::net::IpAddr;
use watcher::{RunDir, Watcher};

pub const API: u16 = 6443;
pub const MCS: u16 = 22623;
pub const ETCD_CLIENT: u16 = 2379;
pub const ETCD_PEER: u16 = 2380;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Master,
    Worker,
    Bootstrap,
}

/// A master's kube-apiserver (static pod) through a rollout: `Draining` is the shutdown
/// delay, when `/readyz` already fails but requests are still served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Apiserver {
    NotStarted,
    Ready,
    Draining,
    Down,
}

impl Apiserver {
    pub fn serves(self) -> bool {
        matches!(self, Apiserver::Ready | Apiserver::Draining)
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub role: Role,
    pub ip: IpAddr,
    /// Its other addresses (the bootstrap host's second address).
    pub aliases: Vec<IpAddr>,
    /// Booted (the bootstrap host: alive, until the installer destroys it).
    pub up: bool,
    /// ovnkube-node runs (serves :10256, DNATs load-balancer IPs).
    pub ovnk: bool,
    pub apiserver: Apiserver,
    pub watcher: Option<Watcher>,
    pub run: RunDir,
    /// GCP: the forwarded IPs as its route script last read them from the metadata.
    pub forwarded: BTreeSet<IpAddr>,
}

impl Node {
    pub fn new(name: &str, role: Role, ip: IpAddr) -> Node {
        Node {
            name: name.to_string(),
            role,
            ip,
            aliases: Vec::new(),
            up: false,
            ovnk: false,
            apiserver: Apiserver::NotStarted,
            watcher: None,
            run: RunDir::default(),
            forwarded: BTreeSet::new(),
        }
    }

    /// Whether the node itself accepts `port`: the bootstrap host serves all four while
    /// alive; a master its apiserver and MCS while its apiserver serves, its etcd once up;
    /// a worker none of them.
    fn accepts(&self, port: u16) -> bool {
        if !self.up {
            return false;
        }
        match (self.role, port) {
            (Role::Bootstrap, _) => true,
            (Role::Master, API | MCS) => self.apiserver.serves(),
            (Role::Master, _) => true,
            (Role::Worker, _) => false,
        }
    }
}

/// Where a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reached {
    /// Accepted by this node (an index into [`World::nodes`]).
    Node(usize),
    /// Refused at once (nothing listens; the client tries its next address).
    Refused,
    /// Dropped: the client waits for its connect timeout.
    Dropped,
}

/// Where a node's own connection goes on the node itself (its output hook, before OVN-K and
/// the network): what the real route scripts decide, judged by `bootstrap-sim
/// nodes-conformance` ([`World::on_host`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OnHost {
    /// Accepted on the node itself.
    Served,
    /// Redirected to, or addressed to, the node itself, where nothing listens.
    Refused,
    /// Sent out of the node.
    Leaves,
}

impl OnHost {
    pub fn as_str(self) -> &'static str {
        match self {
            OnHost::Served => "served-locally",
            OnHost::Refused => "refused",
            OnHost::Leaves => "leaves-the-host",
        }
    }
}

/// GCE, a backend's own connection to its internal load balancer's address (unsettled, see
/// the module doc): it comes back to that backend, healthy or not (`Returns`), or it is
/// balanced as any other client's (`Balances`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hairpin {
    Returns,
    Balances,
}

impl Hairpin {
    pub fn as_str(self) -> &'static str {
        match self {
            Hairpin::Returns => "returns",
            Hairpin::Balances => "balances",
        }
    }
}

#[derive(Clone, Debug)]
pub struct World {
    pub cloud: Cloud,
    pub nodes: Vec<Node>,
    /// The load balancers' frontend addresses that exist now: internal and external.
    pub internal: BTreeSet<IpAddr>,
    pub external: BTreeSet<IpAddr>,
    pub hairpin: Hairpin,
}

impl World {
    pub fn new(cloud: Cloud, nodes: Vec<Node>) -> World {
        World {
            cloud,
            nodes,
            internal: BTreeSet::new(),
            external: BTreeSet::new(),
            hairpin: Hairpin::Returns,
        }
    }

    pub fn bootstrap(&self) -> Option<usize> {
        self.nodes.iter().position(|n| n.role == Role::Bootstrap)
    }

    /// What the node's route script has programmed ([`routes::Script::of`] its role).
    pub fn redirects(&self, node: &Node) -> routes::Redirects {
        match routes::Script::of(self.cloud, node.role) {
            Some(script) => routes::programmed(script, &node.forwarded, &node.run),
            None => routes::Redirects::default(),
        }
    }

    /// Where node `from`'s own connection to `ip:port` goes on the node itself: the route
    /// script's output rule or one of its own addresses makes it local.
    pub fn on_host(&self, from: usize, ip: IpAddr, port: u16) -> OnHost {
        let me = &self.nodes[from];
        let own = me.ip == ip || me.aliases.contains(&ip);
        if !(own || self.redirects(me).local.contains(&ip)) {
            return OnHost::Leaves;
        }
        match me.accepts(port) {
            true => OnHost::Served,
            false => OnHost::Refused,
        }
    }

    /// Members of the load balancer of `vip`: the Nodes, and on GCP's internal one the
    /// bootstrap VM of the reused master group.
    pub fn backends(&self, vip: IpAddr) -> Vec<usize> {
        let gcp_internal = self.cloud == Cloud::Gcp && self.internal.contains(&vip);
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| match n.role {
                Role::Master | Role::Worker => n.up,
                Role::Bootstrap => gcp_internal && n.up,
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The agent's proof of GCP's internal frontend `vip`, made from the cloud side because a
    /// dial from the bootstrap VM (one of its backends) comes back to itself: GCE's health
    /// check (ovnkube-node's :10256) passes on a backend other than the bootstrap VM, and an
    /// endpoint serves `port` (the gate's other half). Then a client that is no backend is
    /// served: a healthy backend's OVN-K relays it to the ready endpoint.
    pub fn cloud_proof(&self, vip: IpAddr, port: u16) -> bool {
        let healthy = self
            .backends(vip)
            .iter()
            .any(|i| self.nodes[*i].role != Role::Bootstrap && self.nodes[*i].ovnk);
        let ready = self
            .nodes
            .iter()
            .any(|n| n.role == Role::Master && n.accepts(port));
        healthy && ready
    }

    /// The forwarded IPs GCE's metadata lists for node `i`: every frontend it backs.
    pub fn forwarded_ips(&self, i: usize) -> BTreeSet<IpAddr> {
        self.internal
            .iter()
            .chain(&self.external)
            .filter(|vip| self.backends(**vip).contains(&i))
            .copied()
            .collect()
    }

    fn is_frontend(&self, ip: IpAddr) -> bool {
        self.internal.contains(&ip) || self.external.contains(&ip)
    }

    /// A ready endpoint of our Services (the masters whose apiserver serves), as OVN-K picks
    /// one for a ClusterIP; Refused when there is none (OVN-K rejects).
    fn endpoint(&self, port: u16, rng: &mut Rng) -> Reached {
        let ready: Vec<usize> = (0..self.nodes.len())
            .filter(|i| self.nodes[*i].role == Role::Master && self.nodes[*i].accepts(port))
            .collect();
        match ready.len() {
            0 => Reached::Refused,
            n => Reached::Node(ready[rng.below(n)]),
        }
    }

    fn answer(&self, i: usize, port: u16) -> Reached {
        match self.nodes[i].accepts(port) {
            true => Reached::Node(i),
            false if self.nodes[i].up => Reached::Refused,
            false => Reached::Dropped,
        }
    }

    /// A connection from node `from` to `ip:port`.
    pub fn connect(&self, from: usize, ip: IpAddr, port: u16, rng: &mut Rng) -> Reached {
        let me = &self.nodes[from];
        // Output hook: the route script's rules first, then OVN-K's.
        if self.redirects(me).local.contains(&ip) {
            return self.answer(from, port);
        }
        if me.ovnk && self.is_frontend(ip) {
            return self.endpoint(port, rng);
        }
        if let Some(i) = self
            .nodes
            .iter()
            .position(|n| n.ip == ip || n.aliases.contains(&ip))
        {
            return match self.nodes[i].up {
                true => self.answer(i, port),
                false => Reached::Dropped,
            };
        }
        if !self.is_frontend(ip) {
            return Reached::Dropped;
        }
        let backends = self.backends(ip);
        let gcp_internal = self.cloud == Cloud::Gcp && self.internal.contains(&ip);
        if gcp_internal && self.hairpin == Hairpin::Returns && backends.contains(&from) {
            return self.arrive(from, ip, port, rng);
        }
        let healthy: Vec<usize> = backends
            .iter()
            .copied()
            .filter(|i| self.nodes[*i].ovnk)
            .collect();
        let pool = match (healthy.is_empty(), self.cloud) {
            (false, _) => healthy,
            (true, Cloud::Gcp) => backends,
            (true, Cloud::Azure) => Vec::new(),
        };
        let pick = match pool.len() {
            0 => return Reached::Dropped,
            n => pool[rng.below(n)],
        };
        // Azure DNATs to the backend: a flow balanced back to its own sender never
        // completes (the MCO azure-routes script's header, citing Azure's limitations).
        if self.cloud == Cloud::Azure && pick == from {
            return Reached::Dropped;
        }
        self.arrive(pick, ip, port, rng)
    }

    /// A packet the load balancer delivered to backend `i` with the VIP as its destination
    /// (GCE does no DNAT; Azure's rules use floating IP). With OVN-K running, br-ex's flows
    /// steer it into OVN before the host's netfilter sees it (ovn-kubernetes
    /// `gateway_shared_intf.go` `updateServiceFlowCache`: "By default incoming traffic into the
    /// node is steered directly into OVN", shared gateway mode, `externalTrafficPolicy:
    /// Cluster`); without OVN-K the route script's prerouting rule decides.
    fn arrive(&self, i: usize, ip: IpAddr, port: u16, rng: &mut Rng) -> Reached {
        let node = &self.nodes[i];
        if node.ovnk {
            return self.endpoint(port, rng);
        }
        if self.redirects(node).external.contains(&ip) {
            return self.answer(i, port);
        }
        Reached::Dropped
    }
}

#[cfg(test)]
mod tests;
