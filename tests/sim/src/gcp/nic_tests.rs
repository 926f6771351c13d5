//! `instances.get`, `instances.updateNetworkInterface` and zonal operations: the shapes, the
//! happy paths and each refusal (see `instances` for the rules and their sources).

use super::http::{ApiError, Req};
use super::{FakeOptions, GcpFake, Seed, World, compute, instances, reads};
use hyper::Method;
use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ZONE: &str = "compute/v1/projects/example-project/zones/us-central1-a";
const BOOTSTRAP: &str = "mycluster-7xk2p-bootstrap";

fn world(delay: Duration) -> World {
    World::new(FakeOptions {
        operation_delay: delay,
        ..FakeOptions::default()
    })
}

fn call(
    w: &mut World,
    method: Method,
    path: &str,
    query: &[(&str, &str)],
    body: Value,
) -> Result<Value, ApiError> {
    let mut req = Req::for_test(method, path, body);
    req.query = query
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let segments = req.segments.clone();
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    w.tick();
    match reads::route(w, &req, &s[3..]) {
        Some(reply) => reply,
        None => match instances::route(w, &req, &s[3..]) {
            Some(reply) => reply,
            None => compute::route(w, &req, &s[3..]),
        },
    }
}

fn get(w: &mut World, name: &str) -> Result<Value, ApiError> {
    call(
        w,
        Method::GET,
        &format!("{ZONE}/instances/{name}"),
        &[],
        Value::Null,
    )
}

fn nic(w: &mut World) -> Value {
    get(w, BOOTSTRAP).unwrap()["networkInterfaces"][0].clone()
}

fn update(w: &mut World, body: Value) -> Result<Value, ApiError> {
    let path = format!("{ZONE}/instances/{BOOTSTRAP}/updateNetworkInterface");
    call(
        w,
        Method::PATCH,
        &path,
        &[("networkInterface", "nic0")],
        body,
    )
}

/// An update of the aliases with the current fingerprint.
fn set_aliases(w: &mut World, ranges: &[&str]) -> Result<Value, ApiError> {
    let fingerprint = nic(w)["fingerprint"].clone();
    let ranges: Vec<Value> = ranges.iter().map(|r| json!({"ipCidrRange": r})).collect();
    update(
        w,
        json!({"fingerprint": fingerprint, "aliasIpRanges": ranges}),
    )
}

fn aliases(w: &mut World) -> Value {
    nic(w).get("aliasIpRanges").cloned().unwrap_or(json!([]))
}

fn ip(text: &str) -> Ipv4Addr {
    text.parse().unwrap()
}

/// The operation failed with GCE's in-use error for `range`, and nothing changed.
fn assert_in_use(w: &mut World, ranges: &[&str], range: &str) {
    let before = nic(w);
    let op = set_aliases(w, ranges).unwrap();
    assert_eq!(op["status"], "DONE", "{op}");
    assert_eq!(
        op["error"]["errors"][0],
        json!({"code": "IP_IN_USE_BY_ANOTHER_RESOURCE",
               "message": format!("IP '{range}' is already being used by another resource.")}),
        "{ranges:?}"
    );
    assert_eq!(nic(w), before, "{ranges:?}: nothing changed");
}

#[test]
fn every_seed_puts_the_bootstrap_vm_at_the_tests_bootstrap_ip_in_its_control_plane_subnet() {
    for seed in [
        Seed::default(),
        Seed::installer_network(),
        Seed::shared_vpc(),
    ] {
        assert_eq!(instances::check_seed(&seed), Ok(()));
        let vm = seed.instances.iter().find(|i| i.name == BOOTSTRAP).unwrap();
        assert_eq!(vm.network_ip, Some(ip("10.0.1.10")));
        assert_eq!(
            vm.subnetwork, seed.subnetworks[0].name,
            "the control-plane subnet"
        );
        let master = seed
            .instances
            .iter()
            .find(|i| i.name.ends_with("master-1"))
            .unwrap();
        assert_eq!(master.network_ip, Some(ip("10.0.1.21")));
        let mut w = World::new(FakeOptions {
            seed,
            ..FakeOptions::default()
        });
        assert_eq!(w.instance_addresses(BOOTSTRAP), [ip("10.0.1.10")]);
    }
}

#[test]
fn a_seed_with_an_address_outside_its_subnetwork_or_shared_is_refused() {
    for (address, refusal) in [
        ("10.0.200.1", "not a usable address"),
        ("10.0.1.10", "taken by another VM"),
    ] {
        let mut seed = Seed::default();
        seed.instances[0].network_ip = Some(ip(address));
        let err = instances::check_seed(&seed).unwrap_err();
        assert!(err.contains(refusal), "{address}: {err}");
    }
}

#[test]
fn a_vm_seeded_without_an_address_gets_the_lowest_free_one() {
    let mut seed = Seed::default();
    for vm in &mut seed.instances {
        vm.network_ip = None;
    }
    seed.instances[0].network_ip = Some(ip("10.0.0.2"));
    let w = World::new(FakeOptions {
        seed: seed.clone(),
        ..FakeOptions::default()
    });
    let second = w
        .instances
        .values()
        .map(|i| i.network_ip)
        .filter(|a| *a == ip("10.0.0.3"));
    assert_eq!(
        second.count(),
        1,
        "the next VM of the subnet skips the seeded one"
    );
}

#[test]
fn instances_get_shows_the_instance_as_compute_v1_does() {
    let mut w = world(Duration::ZERO);
    let vm = get(&mut w, BOOTSTRAP).unwrap();
    let base = "https://www.googleapis.com/compute/v1/projects/example-project";
    assert_eq!(vm["kind"], "compute#instance");
    assert_eq!(vm["name"], BOOTSTRAP);
    assert_eq!(vm["status"], "RUNNING");
    assert_eq!(vm["zone"], format!("{base}/zones/us-central1-a"));
    assert_eq!(
        vm["selfLink"],
        format!("{base}/zones/us-central1-a/instances/{BOOTSTRAP}")
    );
    assert!(vm["id"].as_str().unwrap().parse::<u64>().is_ok());
    let nic = &vm["networkInterfaces"][0];
    assert_eq!(nic["kind"], "compute#networkInterface");
    assert_eq!(nic["name"], "nic0");
    assert_eq!(
        nic["network"],
        format!("{base}/global/networks/mycluster-network")
    );
    assert_eq!(
        nic["subnetwork"],
        format!("{base}/regions/us-central1/subnetworks/mycluster-master-subnet")
    );
    assert_eq!(nic["networkIP"], "10.0.1.10");
    assert_eq!(nic["stackType"], "IPV4_ONLY");
    assert!(nic["fingerprint"].as_str().unwrap().ends_with('='));
    assert!(
        nic.get("aliasIpRanges").is_none(),
        "absent when empty: {nic}"
    );
}

#[test]
fn instances_get_of_an_unknown_name_or_another_zone_is_404() {
    let mut w = world(Duration::ZERO);
    let e = get(&mut w, "nope").unwrap_err();
    assert_eq!((e.code, e.reason), (404, "notFound"));
    assert_eq!(
        e.message,
        "The resource 'projects/example-project/zones/us-central1-a/instances/nope' was not found"
    );
    let other = "compute/v1/projects/example-project/zones/us-central1-b/instances";
    let e = call(
        &mut w,
        Method::GET,
        &format!("{other}/{BOOTSTRAP}"),
        &[],
        Value::Null,
    );
    assert_eq!(e.unwrap_err().code, 404);
}

#[test]
fn a_netmask_alias_gets_a_free_address_shown_once_the_operation_is_done() {
    let mut w = world(Duration::from_millis(80));
    let before = nic(&mut w);
    let op = set_aliases(&mut w, &["/32"]).unwrap();
    assert_eq!(op["kind"], "compute#operation");
    assert_eq!(op["status"], "RUNNING");
    assert_eq!(op["operationType"], "updateNetworkInterface");
    assert!(
        op["zone"]
            .as_str()
            .unwrap()
            .ends_with("/zones/us-central1-a")
    );
    assert!(
        op["targetLink"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/instances/{BOOTSTRAP}"))
    );
    assert_eq!(nic(&mut w), before, "nothing shows while RUNNING");
    assert_eq!(w.instance_addresses(BOOTSTRAP), [ip("10.0.1.10")]);
    std::thread::sleep(Duration::from_millis(100));
    let path = format!("{ZONE}/operations/{}", op["name"].as_str().unwrap());
    let done = call(&mut w, Method::GET, &path, &[], Value::Null).unwrap();
    assert_eq!(done["status"], "DONE");
    assert!(done.get("error").is_none(), "{done}");
    // The first usable address of 10.0.0.0/17 that nothing holds.
    assert_eq!(aliases(&mut w), json!([{"ipCidrRange": "10.0.0.2/32"}]));
    assert_ne!(
        nic(&mut w)["fingerprint"],
        before["fingerprint"],
        "the fingerprint changed"
    );
    assert_eq!(
        w.instance_addresses(BOOTSTRAP),
        [ip("10.0.1.10"), ip("10.0.0.2")]
    );
}

#[test]
fn an_explicit_alias_in_either_form_is_shown_in_cidr_form() {
    for asked in ["10.0.1.11", "10.0.1.11/32"] {
        let mut w = world(Duration::ZERO);
        let op = set_aliases(&mut w, &[asked]).unwrap();
        assert_eq!(
            (op["status"].clone(), op.get("error")),
            (json!("DONE"), None)
        );
        assert_eq!(
            aliases(&mut w),
            json!([{"ipCidrRange": "10.0.1.11/32"}]),
            "{asked}"
        );
    }
}

#[test]
fn removing_the_alias_frees_the_address() {
    let mut w = world(Duration::ZERO);
    set_aliases(&mut w, &["10.0.1.11"]).unwrap();
    let address = json!({"name": "vip", "addressType": "INTERNAL", "address": "10.0.1.11",
        "subnetwork": "regions/us-central1/subnetworks/mycluster-master-subnet"});
    let insert = "compute/v1/projects/example-project/regions/us-central1/addresses";
    let op = call(&mut w, Method::POST, insert, &[], address.clone()).unwrap();
    assert_eq!(
        op["error"]["errors"][0]["code"],
        "IP_IN_USE_BY_ANOTHER_RESOURCE"
    );
    // An update that leaves the aliases out keeps them (PATCH semantics).
    let fingerprint = nic(&mut w)["fingerprint"].clone();
    update(&mut w, json!({"fingerprint": fingerprint})).unwrap();
    assert_eq!(aliases(&mut w), json!([{"ipCidrRange": "10.0.1.11/32"}]));
    set_aliases(&mut w, &[]).unwrap();
    assert!(nic(&mut w).get("aliasIpRanges").is_none());
    assert_eq!(w.instance_addresses(BOOTSTRAP), [ip("10.0.1.10")]);
    let op = call(&mut w, Method::POST, insert, &[], address).unwrap();
    assert!(op.get("error").is_none(), "free again: {op}");
}

#[test]
fn internal_addresses_never_take_an_address_a_vm_holds() {
    let mut w = world(Duration::ZERO);
    set_aliases(&mut w, &["/32"]).unwrap();
    assert_eq!(aliases(&mut w), json!([{"ipCidrRange": "10.0.0.2/32"}]));
    let insert = "compute/v1/projects/example-project/regions/us-central1/addresses";
    let body = json!({"name": "vip", "addressType": "INTERNAL",
        "subnetwork": "regions/us-central1/subnetworks/mycluster-master-subnet"});
    call(&mut w, Method::POST, insert, &[], body).unwrap();
    let vip = call(
        &mut w,
        Method::GET,
        &format!("{insert}/vip"),
        &[],
        Value::Null,
    )
    .unwrap();
    assert_eq!(vip["address"], "10.0.0.3");
    // A VM's primary address likewise.
    let body = json!({"name": "other", "addressType": "INTERNAL", "address": "10.0.1.20",
        "subnetwork": "regions/us-central1/subnetworks/mycluster-master-subnet"});
    let op = call(&mut w, Method::POST, insert, &[], body).unwrap();
    assert_eq!(
        op["error"]["errors"][0]["code"],
        "IP_IN_USE_BY_ANOTHER_RESOURCE"
    );
}

#[test]
fn an_alias_another_holder_has_fails_the_operation_with_ip_in_use() {
    let mut w = world(Duration::ZERO);
    // A master's primary address; the VM's own primary address.
    assert_in_use(&mut w, &["10.0.1.20"], "10.0.1.20/32");
    assert_in_use(&mut w, &["10.0.1.10"], "10.0.1.10/32");
    // An INTERNAL address resource.
    let insert = "compute/v1/projects/example-project/regions/us-central1/addresses";
    let body = json!({"name": "vip", "addressType": "INTERNAL", "address": "10.0.0.9",
        "subnetwork": "regions/us-central1/subnetworks/mycluster-master-subnet"});
    call(&mut w, Method::POST, insert, &[], body).unwrap();
    assert_in_use(&mut w, &["10.0.0.9"], "10.0.0.9/32");
    // A forwarding rule's IP (no address resource behind it).
    w.forwarding_rule_ips
        .entry("10.0.0.7".parse().unwrap())
        .or_default()
        .insert("a0123".into());
    assert_in_use(&mut w, &["10.0.0.7/32"], "10.0.0.7/32");
    // Another VM's alias.
    let master = w.instances.get_mut("mycluster-7xk2p-master-0").unwrap();
    master.aliases.push(super::ipam::Block {
        start: ip("10.0.0.12"),
        prefix: 32,
    });
    assert_in_use(&mut w, &["10.0.0.12"], "10.0.0.12/32");
    // The same address twice in one request.
    assert_in_use(&mut w, &["10.0.1.11", "10.0.1.11/32"], "10.0.1.11/32");
    // Keeping its own alias is no conflict.
    set_aliases(&mut w, &["10.0.1.11"]).unwrap();
    let op = set_aliases(&mut w, &["10.0.1.11", "/32"]).unwrap();
    assert!(op.get("error").is_none(), "{op}");
    assert_eq!(
        aliases(&mut w),
        json!([{"ipCidrRange": "10.0.1.11/32"}, {"ipCidrRange": "10.0.0.2/32"}])
    );
}

#[test]
fn an_alias_outside_the_primary_range_or_on_a_reserved_address_is_invalid() {
    let mut w = world(Duration::ZERO);
    let rows = [
        (
            "10.0.200.1",
            "is not within the subnetwork's primary range 10.0.0.0/17",
        ),
        ("10.0.0.0", "contains addresses reserved"),
        ("10.0.0.1/32", "contains addresses reserved"),
        ("10.0.127.254", "contains addresses reserved"),
        ("10.0.127.255", "contains addresses reserved"),
        ("10.0.0.0/30", "contains addresses reserved"),
        ("10.0.1.9/30", "has host bits set"),
        ("10.0.1.x", "Invalid IPCidrRange: 10.0.1.x."),
        ("/33", "Invalid IPCidrRange: /33."),
        ("/16", "is larger than the subnetwork's range"),
    ];
    for (asked, why) in rows {
        let e = set_aliases(&mut w, &[asked]).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "invalid"), "{asked}");
        assert!(
            e.message.starts_with(&format!(
                "Invalid value for field 'resource.aliasIpRanges[0].ipCidrRange': '{asked}'."
            )) && e.message.contains(why),
            "{asked}: {}",
            e.message
        );
    }
    let fingerprint = nic(&mut w)["fingerprint"].clone();
    let body = json!({"fingerprint": fingerprint,
        "aliasIpRanges": [{"ipCidrRange": "/32", "subnetworkRangeName": "pods"}]});
    let e = update(&mut w, body).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "invalid"));
    assert!(e.message.contains("subnetworkRangeName"), "{}", e.message);
    assert!(
        nic(&mut w).get("aliasIpRanges").is_none(),
        "nothing changed"
    );
}

#[test]
fn the_fingerprint_is_required_and_must_be_current() {
    let mut w = world(Duration::ZERO);
    let e = update(&mut w, json!({"aliasIpRanges": [{"ipCidrRange": "/32"}]})).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "required"));
    let stale = nic(&mut w)["fingerprint"].clone();
    set_aliases(&mut w, &["/32"]).unwrap();
    let body = json!({"fingerprint": stale, "aliasIpRanges": []});
    let e = update(&mut w, body).unwrap_err();
    assert_eq!(
        (e.code, e.reason, e.message.as_str()),
        (412, "conditionNotMet", "Invalid fingerprint.")
    );
    assert_eq!(aliases(&mut w), json!([{"ipCidrRange": "10.0.0.2/32"}]));
}

#[test]
fn only_the_aliases_may_change_fields_equal_to_the_current_ones_are_accepted() {
    let mut w = world(Duration::ZERO);
    let current = nic(&mut w);
    // The whole interface as read back, partial URLs included, with a new alias.
    let mut body = current.clone();
    body["network"] = json!("global/networks/mycluster-network");
    body["subnetwork"] = json!("regions/us-central1/subnetworks/mycluster-master-subnet");
    body["aliasIpRanges"] = json!([{"ipCidrRange": "10.0.1.11"}]);
    body["accessConfigs"] = json!([]);
    let op = update(&mut w, body).unwrap();
    assert!(op.get("error").is_none(), "{op}");
    let fingerprint = nic(&mut w)["fingerprint"].clone();
    for (field, value) in [
        ("networkIP", json!("10.0.1.12")),
        ("stackType", json!("IPV4_IPV6")),
        (
            "subnetwork",
            json!("regions/us-central1/subnetworks/mycluster-worker-subnet"),
        ),
        ("accessConfigs", json!([{"type": "ONE_TO_ONE_NAT"}])),
    ] {
        let mut body = json!({"fingerprint": fingerprint});
        body[field] = value;
        let e = update(&mut w, body).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "invalid"), "{field}");
        assert!(
            e.message
                .starts_with(&format!("Invalid value for field 'resource.{field}': '"))
                && e.message.ends_with("Updating this field is not supported."),
            "{field}: {}",
            e.message
        );
    }
    assert_eq!(aliases(&mut w), json!([{"ipCidrRange": "10.0.1.11/32"}]));
}

#[test]
fn a_second_update_while_one_is_running_is_not_ready_and_a_request_id_replays() {
    let mut w = world(Duration::from_secs(60));
    let fingerprint = nic(&mut w)["fingerprint"].clone();
    let body = json!({"fingerprint": fingerprint, "aliasIpRanges": [{"ipCidrRange": "/32"}]});
    let path = format!("{ZONE}/instances/{BOOTSTRAP}/updateNetworkInterface");
    let id = "0f4c5a1e-2b3d-4c5e-8f90-123456789abc";
    let query = [("networkInterface", "nic0"), ("requestId", id)];
    let op = call(&mut w, Method::PATCH, &path, &query, body.clone()).unwrap();
    let again = call(&mut w, Method::PATCH, &path, &query, body.clone()).unwrap();
    assert_eq!(op["name"], again["name"], "same requestId, same operation");
    let e = update(&mut w, body).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "resourceNotReady"));
}

#[test]
fn only_nic0_and_a_named_interface_are_accepted() {
    let mut w = world(Duration::ZERO);
    let fingerprint = nic(&mut w)["fingerprint"].clone();
    let path = format!("{ZONE}/instances/{BOOTSTRAP}/updateNetworkInterface");
    let body = json!({"fingerprint": fingerprint});
    let e = call(&mut w, Method::PATCH, &path, &[], body.clone()).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "required"));
    let e = call(
        &mut w,
        Method::PATCH,
        &path,
        &[("networkInterface", "nic1")],
        body,
    )
    .unwrap_err();
    assert_eq!((e.code, e.reason), (400, "invalid"));
    let path = format!("{ZONE}/instances/nope/updateNetworkInterface");
    let e = call(
        &mut w,
        Method::PATCH,
        &path,
        &[("networkInterface", "nic0")],
        json!({}),
    );
    assert_eq!(e.unwrap_err().code, 404);
}

#[test]
fn a_zone_operation_is_found_only_in_its_zone_and_not_among_the_regions() {
    let mut w = world(Duration::from_secs(60));
    let op = set_aliases(&mut w, &["/32"]).unwrap();
    let name = op["name"].as_str().unwrap();
    let other = "compute/v1/projects/example-project/zones/us-central1-b/operations";
    let e = call(
        &mut w,
        Method::GET,
        &format!("{other}/{name}"),
        &[],
        Value::Null,
    );
    assert_eq!(e.unwrap_err().code, 404);
    let region = "compute/v1/projects/example-project/regions/us-central1/operations";
    let e = call(
        &mut w,
        Method::GET,
        &format!("{region}/{name}"),
        &[],
        Value::Null,
    );
    assert_eq!(e.unwrap_err().code, 404);
}

#[tokio::test]
async fn zone_operations_wait_returns_once_the_update_is_done() {
    let world = Arc::new(Mutex::new(world(Duration::from_millis(60))));
    let op = {
        let mut w = world.lock().unwrap();
        set_aliases(&mut w, &["/32"]).unwrap()
    };
    let name = op["name"].as_str().unwrap();
    let done = instances::wait_operation(&world, "example-project", "us-central1-a", name)
        .await
        .unwrap();
    assert_eq!(done["status"], "DONE");
    let mut w = world.lock().unwrap();
    assert_eq!(
        w.instance_addresses(BOOTSTRAP),
        [ip("10.0.1.10"), ip("10.0.0.2")]
    );
}

#[tokio::test]
async fn the_fake_refuses_a_seed_whose_vm_addresses_do_not_fit() {
    let mut seed = Seed::default();
    seed.instances[0].network_ip = Some(ip("192.168.0.5"));
    let refused = GcpFake::start(FakeOptions {
        seed,
        ..FakeOptions::default()
    })
    .await;
    assert!(refused.is_err());
}

#[test]
fn fingerprints_are_url_safe_base64_as_gce_sends_them() {
    // The standard alphabet would write these bytes `+/8AAAAAAAA=`, which the official Rust
    // client refuses ("Invalid symbol 43"): it decodes `fingerprint` as URL-safe base64.
    assert_eq!(
        instances::fingerprint_text(0xfbff_0000_0000_0000),
        "-_8AAAAAAAA="
    );
    let mut w = world(Duration::ZERO);
    for ranges in [&["/32"][..], &[], &["/32"], &[]] {
        set_aliases(&mut w, ranges).unwrap();
        let shown = nic(&mut w)["fingerprint"].as_str().unwrap().to_string();
        assert!(
            !shown.contains(['+', '/']) && shown.len() == 12 && shown.ends_with('='),
            "{shown}"
        );
    }
}
