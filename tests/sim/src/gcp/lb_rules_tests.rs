//! GCE's rules for the load-balancer resources a cloud-controller-manager makes (`lb_store`,
//! `lb_rules`, `zonal`), each as the fake answers the calls OpenShift's GCE provider sends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::http::{Reply, Req};
use super::{FakeOptions, World};
use hyper::Method;
use serde_json::{Value, json};

const P: &str = "projects/example-project";
const R: &str = "projects/example-project/regions/us-central1";
/// The subnetwork as OpenShift's provider builds it from a loopback `api-endpoint`.
const SUBNET: &str = "http://127.0.0.1:9/compute/v1/projects/example-project/regions/us-central1/subnetworks/mycluster-worker-subnet";
const IG: &str = "mycluster-7xk2p-master-us-central1-a";

fn world() -> World {
    World::new(FakeOptions {
        operation_delay: std::time::Duration::ZERO,
        ..FakeOptions::realistic()
    })
}

/// One call as the HTTP router dispatches it (path after `compute/v1/`).
fn call(w: &mut World, method: Method, path: &str, body: Value) -> Reply {
    let req = Req::for_test(method, &format!("compute/v1/{path}"), body);
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let rest: Vec<&str> = path.split('/').skip(1).collect();
    w.tick();
    super::zonal::route(w, &req, &rest)
        .or_else(|| super::lb_store::route(w, &req, &rest))
        .or_else(|| super::reads::route(w, &req, &rest))
        .or_else(|| super::instances::route(w, &req, &rest))
        .unwrap_or_else(|| super::compute::route(w, &req, &rest))
}

fn ok(reply: Reply) -> Value {
    let op = reply.unwrap();
    assert!(op["error"].is_null(), "{op}");
    op
}

fn reserve_shared_vip(w: &mut World, purpose: &str) -> String {
    let op = ok(call(
        w,
        Method::POST,
        &format!("{R}/addresses"),
        json!({"name": "mycluster-api-int", "addressType": "INTERNAL", "purpose": purpose,
               "subnetwork": SUBNET, "address": "10.0.128.5"}),
    ));
    assert_eq!(op["kind"], "compute#operation");
    "10.0.128.5".into()
}

/// The health check, backend service (on the first zone's master group) of an internal LB.
fn internal_backend(w: &mut World, name: &str) {
    if !w
        .lb
        .contains_key(&format!("{P}/global/healthChecks/k8s-c1-node"))
    {
        ok(call(
            w,
            Method::POST,
            &format!("{P}/global/healthChecks"),
            json!({"name": "k8s-c1-node", "type": "HTTP", "checkIntervalSec": 8, "timeoutSec": 1,
                   "healthyThreshold": 1, "unhealthyThreshold": 3,
                   "httpHealthCheck": {"port": 10256, "requestPath": "/healthz"}}),
        ));
    }
    ok(call(
        w,
        Method::POST,
        &format!("{R}/backendServices"),
        json!({"name": name, "protocol": "TCP", "loadBalancingScheme": "INTERNAL",
               "healthChecks": [format!("https://www.googleapis.com/compute/v1/{P}/global/healthChecks/k8s-c1-node")],
               "backends": [{"group": format!("https://www.googleapis.com/compute/v1/{P}/zones/us-central1-a/instanceGroups/{IG}")}]}),
    ));
}

fn internal_rule(w: &mut World, name: &str, ip: &str, port: &str) -> Reply {
    call(
        w,
        Method::POST,
        &format!("{R}/forwardingRules"),
        json!({"name": name, "IPAddress": ip, "IPProtocol": "TCP", "ports": [port],
               "loadBalancingScheme": "INTERNAL", "subnetwork": SUBNET,
               "backendService": format!("http://127.0.0.1:9/compute/v1/{R}/backendServices/{name}")}),
    )
}

/// An INTERNAL address of `purpose` (its IP returned), backend services `a1` and `a2`, and
/// rule `a1` on the address (port 6443).
fn one_internal_rule_on_an_address_for(purpose: &str) -> (World, String) {
    let mut w = world();
    let ip = reserve_shared_vip(&mut w, purpose);
    internal_backend(&mut w, "a1");
    internal_backend(&mut w, "a2");
    ok(internal_rule(&mut w, "a1", &ip, "6443"));
    (w, ip)
}

#[test]
fn two_internal_rules_share_a_shared_loadbalancer_vip_address_and_both_become_its_users() {
    let (mut w, ip) = one_internal_rule_on_an_address_for("SHARED_LOADBALANCER_VIP");
    ok(internal_rule(&mut w, "a2", &ip, "22623"));
    let address = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/addresses/mycluster-api-int"),
        Value::Null,
    ));
    assert_eq!(address["status"], "IN_USE");
    assert_eq!(address["users"].as_array().unwrap().len(), 2, "{address}");
    internal_backend(&mut w, "a3");
    let clash = internal_rule(&mut w, "a3", &ip, "6443").unwrap_err();
    assert_eq!(clash.code, 400, "the same port twice on one IP: {clash:?}");
    let rule = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/forwardingRules/a1"),
        Value::Null,
    ));
    assert_eq!(rule["loadBalancingScheme"], "INTERNAL");
    assert_eq!(
        rule["subnetwork"], SUBNET,
        "links come back in the caller's form"
    );
}

#[test]
fn a_second_internal_rule_on_an_address_not_shared_is_refused() {
    let (mut w, ip) = one_internal_rule_on_an_address_for("GCE_ENDPOINT");
    let op = internal_rule(&mut w, "a2", &ip, "22623").unwrap();
    assert_eq!(op["httpErrorStatusCode"], 409, "the operation fails: {op}");
    assert_eq!(
        op["error"]["errors"][0]["code"],
        "IP_IN_USE_BY_ANOTHER_RESOURCE"
    );
    let e = call(
        &mut w,
        Method::GET,
        &format!("{R}/forwardingRules/a2"),
        Value::Null,
    )
    .unwrap_err();
    assert_eq!(e.code, 404, "nothing was created");
}

#[test]
fn an_address_insert_at_an_ip_already_held_fails_with_409_whatever_endpoint_names_the_subnetwork() {
    let mut w = world();
    let ip = reserve_shared_vip(&mut w, "SHARED_LOADBALANCER_VIP");
    let op = call(
        &mut w,
        Method::POST,
        &format!("{R}/addresses"),
        json!({"name": "a1", "addressType": "INTERNAL", "subnetwork": SUBNET, "address": ip}),
    )
    .unwrap();
    assert_eq!(op["httpErrorStatusCode"], 409, "{op}");
    assert_eq!(
        op["error"]["errors"][0]["code"],
        "IP_IN_USE_BY_ANOTHER_RESOURCE"
    );
    let found = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/addresses?filter=address eq 10.0.128.5"),
        Value::Null,
    ));
    assert_eq!(found["items"][0]["name"], "mycluster-api-int");
}

#[test]
fn an_external_rule_defaults_to_the_external_scheme_and_needs_a_reserved_address_of_its_tier() {
    let mut w = world();
    let address = ok(call(
        &mut w,
        Method::POST,
        &format!("{R}/addresses"),
        json!({"name": "ext"}),
    ));
    assert_eq!(address["status"], "DONE");
    let ip = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/addresses/ext"),
        Value::Null,
    ))["address"]
        .as_str()
        .unwrap()
        .to_string();
    ok(call(
        &mut w,
        Method::POST,
        &format!("{P}/global/httpHealthChecks"),
        json!({"name": "k8s-c1-node", "port": 10256, "requestPath": "/healthz"}),
    ));
    ok(call(
        &mut w,
        Method::POST,
        &format!("{R}/targetPools"),
        json!({"name": "a9", "instances": ["/zones/us-central1-a/instances/mycluster-7xk2p-master-0"],
               "healthChecks": [format!("http://127.0.0.1:9/compute/v1/{P}/global/httpHealthChecks/k8s-c1-node")]}),
    ));
    let pool = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/targetPools/a9"),
        Value::Null,
    ));
    assert!(
        pool["instances"][0]
            .as_str()
            .unwrap()
            .starts_with("https://www.googleapis.com/compute/v1/projects/"),
        "GCE stores full instance URLs: {pool}"
    );
    let rule = |ip: &str| {
        json!({"name": "a9", "IPAddress": ip, "IPProtocol": "TCP", "portRange": "6443-6443",
               "target": format!("http://127.0.0.1:9/compute/v1/{R}/targetPools/a9")})
    };
    let e = call(
        &mut w,
        Method::POST,
        &format!("{R}/forwardingRules"),
        rule("203.0.113.9"),
    )
    .unwrap_err();
    assert_eq!(e.code, 400, "not a reserved address: {e:?}");
    w.addresses.get_mut("ext").unwrap()["networkTier"] = json!("STANDARD");
    let e = call(
        &mut w,
        Method::POST,
        &format!("{R}/forwardingRules"),
        rule(&ip),
    )
    .unwrap_err();
    assert!(e.message.contains("network tier"), "{e:?}");
    w.addresses.get_mut("ext").unwrap()["networkTier"] = json!("PREMIUM");
    ok(call(
        &mut w,
        Method::POST,
        &format!("{R}/forwardingRules"),
        rule(&ip),
    ));
    let got = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/forwardingRules/a9"),
        Value::Null,
    ));
    assert_eq!(
        got["loadBalancingScheme"], "EXTERNAL",
        "filled in when not sent"
    );
    assert_eq!(got["networkTier"], "PREMIUM");
    let e = call(
        &mut w,
        Method::DELETE,
        &format!("{R}/targetPools/a9"),
        Value::Null,
    )
    .unwrap_err();
    assert_eq!(e.reason, "resourceInUseByAnotherResource");
}

#[test]
fn what_another_resource_uses_cannot_be_deleted_and_a_deleted_rule_frees_its_address() {
    let mut w = world();
    let ip = reserve_shared_vip(&mut w, "SHARED_LOADBALANCER_VIP");
    internal_backend(&mut w, "a1");
    ok(internal_rule(&mut w, "a1", &ip, "6443"));
    for path in [
        format!("{P}/global/healthChecks/k8s-c1-node"),
        format!("{R}/backendServices/a1"),
        format!("{P}/zones/us-central1-a/instanceGroups/{IG}"),
        format!("{R}/addresses/mycluster-api-int"),
    ] {
        let e = call(&mut w, Method::DELETE, &path, Value::Null).unwrap_err();
        assert_eq!(e.code, 400, "{path}: {e:?}");
    }
    ok(call(
        &mut w,
        Method::DELETE,
        &format!("{R}/forwardingRules/a1"),
        Value::Null,
    ));
    ok(call(
        &mut w,
        Method::DELETE,
        &format!("{R}/backendServices/a1"),
        Value::Null,
    ));
    ok(call(
        &mut w,
        Method::DELETE,
        &format!("{P}/global/healthChecks/k8s-c1-node"),
        Value::Null,
    ));
    ok(call(
        &mut w,
        Method::DELETE,
        &format!("{R}/addresses/mycluster-api-int"),
        Value::Null,
    ));
    let e = call(
        &mut w,
        Method::GET,
        &format!("{R}/forwardingRules/a1"),
        Value::Null,
    )
    .unwrap_err();
    assert_eq!(e.code, 404);
}

#[test]
fn a_backend_service_update_with_a_stale_fingerprint_is_refused_with_412() {
    let mut w = world();
    internal_backend(&mut w, "a1");
    let path = format!("{R}/backendServices/a1");
    let read = ok(call(&mut w, Method::GET, &path, Value::Null));
    let mut changed = read.clone();
    changed["description"] = json!("one");
    ok(call(&mut w, Method::PUT, &path, changed.clone()));
    changed["description"] = json!("two");
    let e = call(&mut w, Method::PUT, &path, changed).unwrap_err();
    assert_eq!((e.code, e.reason), (412, "conditionNotMet"));
    assert_eq!(
        ok(call(&mut w, Method::GET, &path, Value::Null))["description"],
        "one"
    );
}

#[test]
fn fingerprints_are_url_safe_base64_as_the_rust_client_decodes_them() {
    let mut w = world();
    let prints: Vec<String> = (0..64)
        .map(|_| super::lb_store::fingerprint(&mut w))
        .collect();
    for print in &prints {
        assert!(!print.contains('+') && !print.contains('/'), "{print}");
        use base64::Engine;
        assert_eq!(
            base64::engine::general_purpose::URL_SAFE
                .decode(print)
                .unwrap()
                .len(),
            8
        );
    }
    assert!(
        prints.iter().any(|p| p.contains('-') || p.contains('_')),
        "the alphabet's last two characters show up"
    );
}

#[test]
fn instance_groups_hold_vms_of_their_zone_once_each() {
    let mut w = world();
    let zone = format!("{P}/zones/us-central1-a");
    let op = ok(call(
        &mut w,
        Method::POST,
        &format!("{zone}/instanceGroups"),
        json!({"name": "k8s-ig--c1"}),
    ));
    assert!(
        op["zone"]
            .as_str()
            .unwrap()
            .ends_with("/zones/us-central1-a"),
        "a zonal operation"
    );
    let add = |vm: &str, zone_of_vm: &str| json!({"instances": [{"instance": format!("http://127.0.0.1:9/compute/v1/{P}/zones/{zone_of_vm}/instances/{vm}")}]});
    let worker = "mycluster-7xk2p-worker-a-x7k2p";
    let path = format!("{zone}/instanceGroups/k8s-ig--c1");
    ok(call(
        &mut w,
        Method::POST,
        &format!("{path}/addInstances"),
        add(worker, "us-central1-a"),
    ));
    let e = call(
        &mut w,
        Method::POST,
        &format!("{path}/addInstances"),
        add(worker, "us-central1-a"),
    )
    .unwrap_err();
    assert_eq!(e.reason, "memberAlreadyExists");
    let e = call(
        &mut w,
        Method::POST,
        &format!("{path}/addInstances"),
        add("mycluster-7xk2p-worker-b-x7k2p", "us-central1-b"),
    )
    .unwrap_err();
    assert_eq!(e.code, 400, "a VM of another zone: {e:?}");
    let listed = ok(call(
        &mut w,
        Method::POST,
        &format!("{path}/listInstances"),
        json!({"instanceState": "ALL"}),
    ));
    assert!(
        listed["items"][0]["instance"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/instances/{worker}"))
    );
    let e = call(
        &mut w,
        Method::POST,
        &format!("{zone}/instanceGroups"),
        json!({"name": "k8s-ig--c1"}),
    )
    .unwrap_err();
    assert_eq!(e.code, 409);
}

#[test]
fn instances_and_instance_groups_are_listed_by_re2_name_filters_and_zones_by_region() {
    let mut w = world();
    let zone = format!("{P}/zones/us-central1-a");
    let names = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["name"].as_str().unwrap().to_string())
            .collect()
    };
    let vms = ok(call(
        &mut w,
        Method::GET,
        &format!("{zone}/instances?filter=name eq mycluster-7xk2p.*"),
        Value::Null,
    ));
    assert_eq!(
        names(&vms).len(),
        3,
        "master, worker and bootstrap of the zone: {vms}"
    );
    let none = ok(call(
        &mut w,
        Method::GET,
        &format!("{zone}/instances?filter=name eq mycluster"),
        Value::Null,
    ));
    assert!(names(&none).is_empty(), "the whole name must match");
    let groups = ok(call(
        &mut w,
        Method::GET,
        &format!("{zone}/instanceGroups?filter=name eq mycluster-7xk2p.*"),
        Value::Null,
    ));
    assert_eq!(names(&groups), [IG]);
    let zones = ok(call(
        &mut w,
        Method::GET,
        &format!("{P}/zones"),
        Value::Null,
    ));
    assert_eq!(
        names(&zones),
        ["us-central1-a", "us-central1-b", "us-central1-c"]
    );
    assert!(
        zones["items"][0]["region"]
            .as_str()
            .unwrap()
            .ends_with("/regions/us-central1")
    );
}

#[test]
fn global_operations_have_no_region_and_are_found_by_their_self_link() {
    let mut w = world();
    let op = ok(call(
        &mut w,
        Method::POST,
        &format!("{P}/global/firewalls"),
        json!({"name": "k8s-fw-a1", "network": "http://127.0.0.1:9/compute/v1/projects/example-project/global/networks/mycluster-network",
               "sourceRanges": ["0.0.0.0/0"], "allowed": [{"IPProtocol": "tcp", "ports": ["6443"]}]}),
    ));
    assert!(op["region"].is_null() && op["zone"].is_null(), "{op}");
    let name = op["name"].as_str().unwrap();
    let got = ok(call(
        &mut w,
        Method::GET,
        &format!("{P}/global/operations/{name}"),
        Value::Null,
    ));
    assert_eq!(got["status"], "DONE");
    let fw = ok(call(
        &mut w,
        Method::GET,
        &format!("{P}/global/firewalls/k8s-fw-a1"),
        Value::Null,
    ));
    assert_eq!(
        (fw["direction"].clone(), fw["priority"].clone()),
        (json!("INGRESS"), json!(1000))
    );
    let e = call(
        &mut w,
        Method::POST,
        &format!("{P}/global/firewalls"),
        json!({"name": "k8s-fw-a2", "network": "global/networks/mycluster-network", "sourceRanges": ["nonsense"],
               "allowed": [{"IPProtocol": "tcp"}]}),
    )
    .unwrap_err();
    assert_eq!(e.code, 400);
}

/// `getHealth` of a backend service: nothing passes before the node check's first interval
/// (8 s) after the backend service was made; then a VM that is a Node passes (ovnkube-node
/// answers :10256) and the bootstrap VM does not. A group that is not a backend is refused.
#[test]
fn nodes_pass_the_node_health_check_after_its_first_interval_the_bootstrap_vm_never() {
    let mut w = world();
    internal_backend(&mut w, "a1");
    let group = |name: &str| json!({"group": format!("https://www.googleapis.com/compute/v1/{P}/zones/us-central1-a/instanceGroups/{name}")});
    let states = |answer: Value| -> Vec<(String, String)> {
        answer["healthStatus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let vm = s["instance"].as_str().unwrap().rsplit('/').next().unwrap();
                (
                    vm.to_string(),
                    s["healthState"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let health = format!("{R}/backendServices/a1/getHealth");
    let (master, bootstrap) = ("mycluster-7xk2p-master-0", "mycluster-7xk2p-bootstrap");
    let state = |vm: &str, s: &str| (vm.to_string(), s.to_string());
    let fresh = states(ok(call(&mut w, Method::POST, &health, group(IG))));
    assert_eq!(
        fresh,
        [state(master, "UNHEALTHY"), state(bootstrap, "UNHEALTHY")]
    );
    let made = std::time::Instant::now()
        .checked_sub(std::time::Duration::from_secs(9))
        .unwrap();
    w.lb_built.insert(format!("{R}/backendServices/a1"), made);
    let checked = states(ok(call(&mut w, Method::POST, &health, group(IG))));
    assert_eq!(
        checked,
        [state(master, "HEALTHY"), state(bootstrap, "UNHEALTHY")]
    );
    let other = group("mycluster-7xk2p-master-us-central1-b");
    let e = call(&mut w, Method::POST, &health, other).unwrap_err();
    assert_eq!(e.code, 400, "{e:?}");
}

#[test]
fn a_vm_added_after_the_start_is_an_instance_its_zones_group_and_the_target_pool_take() {
    let mut w = world();
    let vm = "mycluster-7xk2p-worker-a-n4v8q";
    let ip = w
        .add_instance(vm, "us-central1-a", "mycluster-worker-subnet")
        .unwrap();
    let others: Vec<_> = w
        .instances
        .iter()
        .filter(|(n, _)| *n != vm)
        .map(|(_, i)| i.network_ip)
        .collect();
    assert!(!others.contains(&ip), "a free address: {ip}");
    assert_eq!(
        ip.octets()[..2],
        [10, 0],
        "in the worker subnetwork 10.0.128.0/17: {ip}"
    );
    assert!(ip.octets()[2] >= 128, "{ip}");
    let got = ok(call(
        &mut w,
        Method::GET,
        &format!("{P}/zones/us-central1-a/instances/{vm}"),
        Value::Null,
    ));
    assert_eq!(got["networkInterfaces"][0]["networkIP"], ip.to_string());
    let listed = ok(call(
        &mut w,
        Method::GET,
        &format!("{P}/zones/us-central1-a/instances?filter=name eq mycluster-7xk2p-worker.*"),
        Value::Null,
    ));
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == vm),
        "{listed}"
    );

    // The internal load balancer's own group of the zone and its backend service.
    let zone = format!("{P}/zones/us-central1-a");
    ok(call(
        &mut w,
        Method::POST,
        &format!("{zone}/instanceGroups"),
        json!({"name": "k8s-ig--c1"}),
    ));
    internal_backend(&mut w, "a1");
    let group = format!("https://www.googleapis.com/compute/v1/{zone}/instanceGroups/k8s-ig--c1");
    let mut service = ok(call(
        &mut w,
        Method::GET,
        &format!("{R}/backendServices/a1"),
        Value::Null,
    ));
    service["backends"]
        .as_array_mut()
        .unwrap()
        .push(json!({"group": group}));
    ok(call(
        &mut w,
        Method::PUT,
        &format!("{R}/backendServices/a1"),
        service,
    ));
    // The external one's target pool, with a VM of the install.
    ok(call(
        &mut w,
        Method::POST,
        &format!("{R}/targetPools"),
        json!({"name": "a9", "instances": ["/zones/us-central1-a/instances/mycluster-7xk2p-master-0"]}),
    ));
    let before = w.backends_holding(vm);
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(before.iter().all(|(_, holds)| !holds), "{before:?}");

    let link = json!({"instances": [{"instance": format!("https://www.googleapis.com/compute/v1/{zone}/instances/{vm}")}]});
    ok(call(
        &mut w,
        Method::POST,
        &format!("{zone}/instanceGroups/k8s-ig--c1/addInstances"),
        link.clone(),
    ));
    let half = w.backends_holding(vm);
    assert!(
        half.iter()
            .any(|(p, holds)| p.contains("/backendServices/a1") && *holds),
        "{half:?}"
    );
    assert!(
        half.iter()
            .any(|(p, holds)| p.contains("/targetPools/a9") && !*holds),
        "{half:?}"
    );
    ok(call(
        &mut w,
        Method::POST,
        &format!("{R}/targetPools/a9/addInstance"),
        link.clone(),
    ));
    assert!(w.backends_holding(vm).iter().all(|(_, holds)| *holds));
    let e = call(
        &mut w,
        Method::POST,
        &format!("{R}/targetPools/a9/addInstance"),
        link,
    )
    .unwrap_err();
    assert_eq!(e.code, 400, "a member twice: {e:?}");

    // What the fake refuses to add.
    assert!(
        w.add_instance(vm, "us-central1-a", "mycluster-worker-subnet")
            .is_err(),
        "a name it has"
    );
    assert!(
        w.add_instance("vm2", "europe-west1-b", "mycluster-worker-subnet")
            .is_err(),
        "another region's zone"
    );
    assert!(
        w.add_instance("vm2", "us-central1-a", "no-such-subnet")
            .is_err(),
        "an unknown subnetwork"
    );
}
