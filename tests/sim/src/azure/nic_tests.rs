//! The bootstrap VM's network interface: its shape, a Dynamic and a Static secondary
//! ipConfiguration, removal, and each refusal of `nic_put`.

use super::arm::{Call, Reply};
use super::authorization::RoleAssignment;
use super::nic::{BOOTSTRAP_NIC, nic_id};
use super::world::{CLUSTER_RG, World};
use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::time::Duration;

const SUB: &str = "subscriptions/00000000-0000-0000-0000-000000000001";

fn world(delay: Duration) -> World {
    World::fixture(delay, false, false)
}

fn call(w: &mut World, method: &str, path: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
    let mut map = hyper::HeaderMap::new();
    for (k, v) in headers {
        map.insert(
            hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let mut q: std::collections::BTreeMap<String, String> =
        url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
    q.insert("api-version".into(), "2024-05-01".into());
    let c = Call {
        method,
        segments: path.split('/').filter(|s| !s.is_empty()).collect(),
        query: q,
        headers: &map,
        body: &bytes,
        origin: "http://127.0.0.1:1".into(),
    };
    w.handle(&c)
}

fn nic_path() -> String {
    format!(
        "{SUB}/resourceGroups/{CLUSTER_RG}/providers/Microsoft.Network/networkInterfaces/{BOOTSTRAP_NIC}"
    )
}

fn get(w: &mut World) -> Value {
    let r = call(w, "GET", &nic_path(), &[], &Value::Null);
    assert_eq!(r.status, 200);
    r.body.unwrap()
}

fn put(w: &mut World, body: &Value) -> Reply {
    call(w, "PUT", &nic_path(), &[], body)
}

fn subnet_id(subnet: &str) -> String {
    format!(
        "/{SUB}/resourceGroups/network-rg/providers/Microsoft.Network/virtualNetworks/mycluster-vnet/subnets/{subnet}"
    )
}

/// The NIC as read, with `extra` ipConfigurations after its own.
fn with_configs(w: &mut World, extra: &[Value]) -> Value {
    let mut nic = get(w);
    let configs = nic["properties"]["ipConfigurations"]
        .as_array_mut()
        .unwrap();
    configs.extend(extra.iter().cloned());
    nic
}

fn secondary(name: &str, allocation: &str, ip: Option<&str>, subnet: &str) -> Value {
    let mut c = json!({"name": name, "properties": {
        "privateIPAllocationMethod": allocation, "primary": false,
        "subnet": {"id": subnet_id(subnet)}}});
    if let Some(ip) = ip {
        c["properties"]["privateIPAddress"] = json!(ip);
    }
    c
}

fn error(r: &Reply) -> (u16, String, String) {
    let body = r.body.clone().unwrap_or_default();
    (
        r.status,
        body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn ip(text: &str) -> Ipv4Addr {
    text.parse().unwrap()
}

fn available(w: &mut World, address: &str) -> bool {
    let path = format!(
        "{SUB}/resourceGroups/network-rg/providers/Microsoft.Network/virtualNetworks/mycluster-vnet/CheckIPAddressAvailability?ipAddress={address}"
    );
    let r = call(w, "GET", &path, &[], &Value::Null);
    r.body.unwrap()["available"] == true
}

#[test]
fn the_bootstrap_nic_is_as_capz_makes_it_and_its_address_is_taken() {
    let mut w = world(Duration::ZERO);
    let nic = get(&mut w);
    assert_eq!(nic["name"], BOOTSTRAP_NIC);
    assert_eq!(nic["id"], nic_id(CLUSTER_RG, BOOTSTRAP_NIC));
    assert_eq!(nic["type"], "Microsoft.Network/networkInterfaces");
    assert!(nic["etag"].as_str().unwrap().starts_with("W/\""));
    assert_eq!(nic["properties"]["provisioningState"], "Succeeded");
    let configs = nic["properties"]["ipConfigurations"].as_array().unwrap();
    assert_eq!(configs.len(), 1);
    let c = &configs[0];
    assert_eq!(c["name"], "pipConfig");
    assert_eq!(
        c["id"],
        format!("{}/ipConfigurations/pipConfig", nic["id"].as_str().unwrap())
    );
    let p = &c["properties"];
    assert_eq!(
        (
            &p["privateIPAddress"],
            &p["privateIPAllocationMethod"],
            &p["privateIPAddressVersion"],
            &p["primary"]
        ),
        (
            &json!("10.0.1.10"),
            &json!("Dynamic"),
            &json!("IPv4"),
            &json!(true)
        )
    );
    assert_eq!(p["subnet"]["id"], subnet_id("mycluster-worker-subnet"));
    assert_eq!(p["provisioningState"], "Succeeded");
    assert_eq!(w.nic_addresses(BOOTSTRAP_NIC), [ip("10.0.1.10")]);
    assert!(
        !available(&mut w, "10.0.1.10"),
        "the NIC's address is in use"
    );
}

#[test]
fn an_unknown_nic_is_404() {
    let mut w = world(Duration::ZERO);
    let path = format!(
        "{SUB}/resourceGroups/{CLUSTER_RG}/providers/Microsoft.Network/networkInterfaces/nope"
    );
    let r = call(&mut w, "GET", &path, &[], &Value::Null);
    assert_eq!(error(&r).0, 404);
    assert_eq!(error(&r).1, "ResourceNotFound");
}

#[test]
fn a_dynamic_secondary_gets_the_next_free_address_and_its_removal_frees_it() {
    let mut w = world(Duration::from_millis(60));
    let before = get(&mut w);
    let body = with_configs(
        &mut w,
        &[secondary(
            "bootstrap-vip",
            "Dynamic",
            None,
            "mycluster-worker-subnet",
        )],
    );
    let r = put(&mut w, &body);
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(
        r.headers
            .iter()
            .any(|(k, v)| k == "Azure-AsyncOperation" && v.contains("/operations/"))
    );
    let nic = r.body.unwrap();
    assert_eq!(nic["properties"]["provisioningState"], "Updating");
    let configs = nic["properties"]["ipConfigurations"].as_array().unwrap();
    assert_eq!(
        configs[0]["properties"]["privateIPAddress"], "10.0.1.10",
        "the primary keeps its address"
    );
    // 10.0.1.4 and .5 are taken (worker NICs): the first free usable address.
    assert_eq!(configs[1]["name"], "bootstrap-vip");
    assert_eq!(configs[1]["properties"]["privateIPAddress"], "10.0.1.6");
    assert_eq!(configs[1]["properties"]["primary"], false);
    assert_eq!(
        w.nic_addresses(BOOTSTRAP_NIC),
        [ip("10.0.1.10"), ip("10.0.1.6")]
    );
    assert!(!available(&mut w, "10.0.1.6"));
    std::thread::sleep(Duration::from_millis(80));
    let done = get(&mut w);
    assert_eq!(done["properties"]["provisioningState"], "Succeeded");
    assert_ne!(done["etag"], before["etag"]);
    // Removal: the body without it.
    let r = put(&mut w, &before);
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(w.nic_addresses(BOOTSTRAP_NIC), [ip("10.0.1.10")]);
    assert!(available(&mut w, "10.0.1.6"), "freed");
}

#[test]
fn a_static_secondary_takes_its_address_and_dynamic_ones_go_around_it() {
    let mut w = world(Duration::ZERO);
    let body = with_configs(
        &mut w,
        &[
            secondary("dyn", "Dynamic", None, "mycluster-worker-subnet"),
            secondary(
                "fixed",
                "Static",
                Some("10.0.1.6"),
                "mycluster-worker-subnet",
            ),
        ],
    );
    let r = put(&mut w, &body);
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        w.nic_addresses(BOOTSTRAP_NIC),
        [ip("10.0.1.10"), ip("10.0.1.7"), ip("10.0.1.6")],
        "body order, the Dynamic one around the Static one"
    );
    // A secondary in the other subnet of the same network is fine.
    let body = with_configs(
        &mut w,
        &[secondary(
            "cp",
            "Static",
            Some("10.0.0.50"),
            "mycluster-master-subnet",
        )],
    );
    assert_eq!(put(&mut w, &body).status, 200);
}

#[test]
fn a_static_address_taken_outside_reserved_or_malformed_is_refused_and_nothing_changes() {
    let mut w = world(Duration::ZERO);
    let rows = [
        (
            "10.0.1.4",
            "PrivateIPAddressIsAllocated",
            "is using the private IP address 10.0.1.4 which is already allocated to resource",
        ),
        (
            "10.0.1.10",
            "PrivateIPAddressIsAllocated",
            "already allocated to resource /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/networkInterfaces/mycluster-7xk2p-bootstrap-nic/ipConfigurations/pipConfig",
        ),
        (
            "10.0.0.50",
            "PrivateIPAddressNotInSubnet",
            "does not belong to the range of subnet prefix 10.0.1.0/24",
        ),
        ("10.0.1.1", "PrivateIPAddressInReservedRange", "10.0.1.0/24"),
        ("10.0.1.3", "PrivateIPAddressInReservedRange", "10.0.1.0/24"),
        (
            "10.0.1.255",
            "PrivateIPAddressInReservedRange",
            "10.0.1.0/24",
        ),
        ("10.0.1.x", "InvalidPrivateIPAddressFormat", "10.0.1.x"),
    ];
    for (address, code, words) in rows {
        let body = with_configs(
            &mut w,
            &[secondary(
                "vip",
                "Static",
                Some(address),
                "mycluster-worker-subnet",
            )],
        );
        let (status, got, message) = error(&put(&mut w, &body));
        assert_eq!((status, got.as_str()), (400, code), "{address}: {message}");
        assert!(message.contains(words), "{address}: {message}");
        assert_eq!(
            w.nic_addresses(BOOTSTRAP_NIC),
            [ip("10.0.1.10")],
            "{address}"
        );
    }
    // Another NIC's address.
    let other = format!(
        "{SUB}/resourceGroups/{CLUSTER_RG}/providers/Microsoft.Network/networkInterfaces/other-nic"
    );
    let body = json!({"location": "eastus", "properties": {"ipConfigurations": [
        {"name": "ipconfig1", "properties": {"privateIPAllocationMethod": "Static",
         "privateIPAddress": "10.0.1.10", "subnet": {"id": subnet_id("mycluster-worker-subnet")}}}]}});
    let (status, code, _) = error(&call(&mut w, "PUT", &other, &[], &body));
    assert_eq!(
        (status, code.as_str()),
        (400, "PrivateIPAddressIsAllocated")
    );
}

#[test]
fn the_primary_rule_duplicate_names_and_unknown_subnets_are_refused() {
    let mut w = world(Duration::ZERO);
    // No primary among several.
    let mut body = with_configs(
        &mut w,
        &[secondary("vip", "Dynamic", None, "mycluster-worker-subnet")],
    );
    body["properties"]["ipConfigurations"][0]["properties"]["primary"] = json!(false);
    let (status, code, message) = error(&put(&mut w, &body));
    assert_eq!(
        (status, code.as_str()),
        (400, "NetworkInterfaceMustHaveOneOneIPConfigAsPrimary")
    );
    assert_eq!(
        message,
        format!(
            "Network Interface {BOOTSTRAP_NIC} specifies multiple IPConfigurations but none of the IPConfigurations is specified as Primary."
        )
    );
    // Two primaries.
    let mut body = with_configs(
        &mut w,
        &[secondary("vip", "Dynamic", None, "mycluster-worker-subnet")],
    );
    body["properties"]["ipConfigurations"][1]["properties"]["primary"] = json!(true);
    assert_eq!(
        error(&put(&mut w, &body)).1,
        "NetworkInterfaceMustHaveOneOneIPConfigAsPrimary"
    );
    // The primary dropped, or renamed.
    let mut body = get(&mut w);
    body["properties"]["ipConfigurations"] =
        json!([secondary("vip", "Dynamic", None, "mycluster-worker-subnet")]);
    let (status, code, message) = error(&put(&mut w, &body));
    assert_eq!((status, code.as_str()), (400, "IpConfigDeleteNotSupported"));
    assert_eq!(
        message,
        "IP Configuration pipConfig cannot be deleted. Deletion and renaming of primary IP Configuration is not supported"
    );
    let mut body = get(&mut w);
    body["properties"]["ipConfigurations"][0]["name"] = json!("ipconfig1");
    assert_eq!(error(&put(&mut w, &body)).1, "IpConfigDeleteNotSupported");
    // Two of one name (ARM names are case-insensitive).
    let body = with_configs(
        &mut w,
        &[secondary(
            "PIPCONFIG",
            "Dynamic",
            None,
            "mycluster-worker-subnet",
        )],
    );
    let (status, code, message) = error(&put(&mut w, &body));
    assert_eq!((status, code.as_str()), (400, "DuplicateResourceName"));
    assert!(
        message.ends_with("has two child resources with the same name (PIPCONFIG)."),
        "{message}"
    );
    // A subnet that does not exist, and one of another virtual network.
    for subnet in [
        subnet_id("nope"),
        format!(
            "/{SUB}/resourceGroups/network-rg/providers/Microsoft.Network/virtualNetworks/other-vnet/subnets/mycluster-worker-subnet"
        ),
    ] {
        let mut extra = secondary("vip", "Dynamic", None, "x");
        extra["properties"]["subnet"]["id"] = json!(subnet);
        let body = with_configs(&mut w, &[extra]);
        let (status, code, message) = error(&put(&mut w, &body));
        assert_eq!(
            (status, code.as_str()),
            (400, "InvalidResourceReference"),
            "{subnet}"
        );
        assert!(
            message.starts_with(&format!("Resource {subnet} referenced by resource ")),
            "{message}"
        );
    }
    assert_eq!(w.nic_addresses(BOOTSTRAP_NIC), [ip("10.0.1.10")]);
}

#[test]
fn if_match_must_name_the_current_etag() {
    let mut w = world(Duration::ZERO);
    let nic = get(&mut w);
    let etag = nic["etag"].as_str().unwrap().to_string();
    let body = with_configs(
        &mut w,
        &[secondary("vip", "Dynamic", None, "mycluster-worker-subnet")],
    );
    let stale = "W/\"00000000-0000-0000-0000-000000000000\"";
    let (status, code, _) = error(&call(
        &mut w,
        "PUT",
        &nic_path(),
        &[("if-match", stale)],
        &body,
    ));
    assert_eq!((status, code.as_str()), (412, "PreconditionFailed"));
    let (status, code, _) = error(&call(
        &mut w,
        "PUT",
        &nic_path(),
        &[("if-none-match", "*")],
        &body,
    ));
    assert_eq!((status, code.as_str()), (412, "PreconditionFailed"));
    assert_eq!(w.nic_addresses(BOOTSTRAP_NIC), [ip("10.0.1.10")]);
    let r = call(&mut w, "PUT", &nic_path(), &[("if-match", &etag)], &body);
    assert_eq!(r.status, 200, "{:?}", r.body);
    // The etag changed with the write: the old one no longer matches.
    let (status, _, _) = error(&call(
        &mut w,
        "PUT",
        &nic_path(),
        &[("if-match", &etag)],
        &body,
    ));
    assert_eq!(status, 412);
}

#[test]
fn reads_writes_and_joining_a_subnet_need_their_permissions() {
    let mut w = world(Duration::ZERO);
    let body = with_configs(
        &mut w,
        &[secondary("vip", "Dynamic", None, "mycluster-worker-subnet")],
    );
    w.roles = vec![RoleAssignment::custom(
        None,
        &["Microsoft.Network/networkInterfaces/write"],
    )];
    let (status, code, message) = error(&call(&mut w, "GET", &nic_path(), &[], &Value::Null));
    assert_eq!((status, code.as_str()), (403, "AuthorizationFailed"));
    assert!(
        message.contains("'Microsoft.Network/networkInterfaces/read'"),
        "{message}"
    );
    let (status, code, message) = error(&put(&mut w, &body));
    assert_eq!((status, code.as_str()), (403, "LinkedAuthorizationFailed"));
    assert!(
        message.contains("'Microsoft.Network/virtualNetworks/subnets/join/action' on the linked scope(s) '/subscriptions/")
            && message.contains("/subnets/mycluster-worker-subnet' (respectively)"),
        "{message}"
    );
    // Rewriting the NIC as it is joins nothing new.
    let mut same = body.clone();
    same["properties"]["ipConfigurations"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    assert_eq!(put(&mut w, &same).status, 200);
    w.roles = vec![RoleAssignment::custom(
        None,
        &["Microsoft.Network/networkInterfaces/read"],
    )];
    let (status, code, message) = error(&put(&mut w, &body));
    assert_eq!((status, code.as_str()), (403, "AuthorizationFailed"));
    assert!(
        message.contains("'Microsoft.Network/networkInterfaces/write'"),
        "{message}"
    );
    w.roles = vec![RoleAssignment::custom(
        None,
        &[
            "Microsoft.Network/networkInterfaces/write",
            "Microsoft.Network/virtualNetworks/subnets/join/action",
        ],
    )];
    assert_eq!(put(&mut w, &body).status, 200);
    assert_eq!(
        w.nic_addresses(BOOTSTRAP_NIC),
        [ip("10.0.1.10"), ip("10.0.1.6")]
    );
}
