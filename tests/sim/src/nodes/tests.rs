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
