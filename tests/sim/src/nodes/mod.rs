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
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    const VIP: &str = "10.0.2.5";

    /// Three masters, a worker and the bootstrap host, all up; masters ready with OVN-K.
    fn world(cloud: Cloud) -> World {
        let mut nodes = vec![Node::new("bootstrap", Role::Bootstrap, ip("10.0.1.10"))];
        for i in 0..3 {
            let mut m = Node::new(
                &format!("master-{i}"),
                Role::Master,
                ip(&format!("10.0.1.{}", 20 + i)),
            );
            m.apiserver = Apiserver::Ready;
            m.ovnk = true;
            nodes.push(m);
        }
        nodes.push(Node::new("worker-0", Role::Worker, ip("10.0.3.30")));
        for n in &mut nodes {
            n.up = true;
        }
        let mut w = World::new(cloud, nodes);
        w.internal.insert(ip(VIP));
        for i in 0..w.nodes.len() {
            w.nodes[i].forwarded = w.forwarded_ips(i);
        }
        w
    }

    #[test]
    fn every_node_backs_the_load_balancers_and_on_gcp_internal_the_bootstrap_vm_too() {
        let gcp = world(Cloud::Gcp);
        assert_eq!(gcp.backends(ip(VIP)), [0, 1, 2, 3, 4]);
        assert_eq!(world(Cloud::Azure).backends(ip(VIP)), [1, 2, 3, 4]);
        assert!(gcp.forwarded_ips(4).contains(&ip(VIP)), "workers too");
    }

    #[test]
    fn azure_masters_redirect_whatever_the_watcher_marked_up_the_bootstrap_ip_included() {
        let mut w = world(Cloud::Azure);
        let mut rng = Rng(1);
        assert_eq!(
            w.connect(1, ip("10.0.1.10"), ETCD_PEER, &mut rng),
            Reached::Node(0)
        );
        w.nodes[1].run.up.insert(ip("10.0.1.10"));
        assert_eq!(
            w.connect(1, ip("10.0.1.10"), ETCD_PEER, &mut rng),
            Reached::Node(1),
            "the bootstrap member's peer port lands on the master's own etcd"
        );
    }

    #[test]
    fn gcp_a_master_whose_apiserver_is_down_is_refused_on_the_vip_unless_it_is_marked_down() {
        let mut w = world(Cloud::Gcp);
        let mut rng = Rng(2);
        w.nodes[1].apiserver = Apiserver::Down;
        assert_eq!(w.connect(1, ip(VIP), API, &mut rng), Reached::Refused);
        w.nodes[1].run.down.insert(ip(VIP));
        // Withdrawn from the local chain: OVN-K's DNAT finds a ready master.
        assert!(matches!(
            w.connect(1, ip(VIP), API, &mut rng),
            Reached::Node(2 | 3)
        ));
    }

    /// RHCOS's own gcp-routes runs on workers and the bootstrap VM (the old model ran
    /// nothing there): no output rule, so their own connection leaves the host; a prerouting
    /// rule, so what GCE hands back (hypothesis `Returns`) lands on the node itself.
    #[test]
    fn gcp_workers_and_the_bootstrap_vm_get_their_own_connection_back_on_themselves() {
        let mut w = world(Cloud::Gcp);
        let mut rng = Rng(3);
        assert_eq!(w.on_host(0, ip(VIP), API), OnHost::Leaves);
        assert_eq!(w.on_host(4, ip(VIP), API), OnHost::Leaves);
        // The bootstrap VM's script has read our VIP: its own proof is served by itself.
        assert_eq!(w.connect(0, ip(VIP), API, &mut rng), Reached::Node(0));
        // Before its next read (every 240 s) it has no rule for the VIP: dropped.
        w.nodes[0].forwarded.clear();
        assert_eq!(w.connect(0, ip(VIP), API, &mut rng), Reached::Dropped);
        // A rebooted worker (OVN-K not yet up) is redirected to itself, where nothing
        // listens: refused at once (it was a drop, a connect timeout).
        w.nodes[4].ovnk = false;
        assert_eq!(w.connect(4, ip(VIP), API, &mut rng), Reached::Refused);
        w.hairpin = Hairpin::Balances;
        assert!(matches!(
            w.connect(4, ip(VIP), API, &mut rng),
            Reached::Node(1..=3)
        ));
    }

    /// Arrivals at a node running OVN-K are steered into OVN by br-ex before the host's
    /// prerouting rule: a master whose kube-apiserver restarts does not refuse what the load
    /// balancer hands it (the old model redirected it to the dead server first).
    #[test]
    fn a_packet_the_load_balancer_hands_a_node_with_ovnk_reaches_a_ready_endpoint() {
        let mut w = world(Cloud::Gcp);
        let mut rng = Rng(6);
        w.nodes[1].apiserver = Apiserver::Down;
        assert!(w.redirects(&w.nodes[1]).external.contains(&ip(VIP)));
        assert!(matches!(
            w.arrive(1, ip(VIP), API, &mut rng),
            Reached::Node(2 | 3)
        ));
        w.nodes[1].ovnk = false;
        assert_eq!(w.arrive(1, ip(VIP), API, &mut rng), Reached::Refused);
    }

    #[test]
    fn on_host_follows_the_output_rules_and_the_nodes_own_addresses() {
        let mut w = world(Cloud::Azure);
        let boot = ip("10.0.1.10");
        assert_eq!(w.on_host(1, boot, API), OnHost::Leaves);
        assert_eq!(w.on_host(0, boot, API), OnHost::Served, "its own address");
        w.nodes[1].run.up.insert(boot);
        assert_eq!(w.on_host(1, boot, API), OnHost::Served);
        w.nodes[1].apiserver = Apiserver::Down;
        assert_eq!(w.on_host(1, boot, API), OnHost::Refused);
        assert_eq!(
            w.on_host(4, ip(VIP), API),
            OnHost::Leaves,
            "Azure workers: no script"
        );
    }

    /// G2: the bootstrap VM's dial proves nothing (it is answered by itself, or dropped,
    /// whatever the masters do); the cloud's health check follows the masters' OVN-K and
    /// their apiservers.
    #[test]
    fn the_cloud_proves_what_a_dial_from_the_bootstrap_vm_cannot() {
        let mut w = world(Cloud::Gcp);
        let mut rng = Rng(5);
        assert_eq!(w.connect(0, ip(VIP), API, &mut rng), Reached::Node(0));
        assert!(w.cloud_proof(ip(VIP), API));
        for m in 1..=3 {
            w.nodes[m].apiserver = Apiserver::Down;
        }
        assert!(
            !w.cloud_proof(ip(VIP), API),
            "healthy backends, no endpoint"
        );
        assert_eq!(
            w.connect(0, ip(VIP), API, &mut rng),
            Reached::Node(0),
            "the dial passes anyway"
        );
        w.nodes[1].apiserver = Apiserver::Ready;
        for i in 1..w.nodes.len() {
            w.nodes[i].ovnk = false;
        }
        assert!(!w.cloud_proof(ip(VIP), API), "no backend passes the check");
        w.nodes[4].ovnk = true;
        assert!(
            w.cloud_proof(ip(VIP), API),
            "a healthy worker relays to master-0"
        );
    }

    #[test]
    fn with_no_healthy_backend_gce_fails_open_and_azure_drops() {
        let mut rng = Rng(4);
        for cloud in [Cloud::Gcp, Cloud::Azure] {
            let mut w = world(cloud);
            for n in &mut w.nodes {
                n.ovnk = false;
                // Each master's script redirects the VIP (GCP: forwarded; Azure: marked up).
                n.run.up.insert(ip(VIP));
            }
            // A client outside the cluster's nodes (a pod network client elsewhere).
            w.nodes
                .push(Node::new("client", Role::Worker, ip("10.0.9.9")));
            let client = w.nodes.len() - 1;
            let reached: Vec<Reached> = (0..50)
                .map(|_| w.connect(client, ip(VIP), API, &mut rng))
                .collect();
            let served = reached.iter().any(|r| matches!(r, Reached::Node(1..=3)));
            match cloud {
                Cloud::Gcp => assert!(served, "fail open: some flows reach a master"),
                Cloud::Azure => assert!(reached.iter().all(|r| *r == Reached::Dropped)),
            }
            // One healthy worker: every flow goes to it and OVN-K relays it to a master.
            w.nodes[4].ovnk = true;
            assert!(matches!(
                w.connect(client, ip(VIP), API, &mut rng),
                Reached::Node(1..=3)
            ));
        }
    }
}
