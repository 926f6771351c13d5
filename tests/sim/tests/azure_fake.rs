//! Fidelity of the local ARM fake, with the official Python management clients
//! (azure-mgmt-network, azure-mgmt-dns, azure-mgmt-privatedns) as oracles: they are pointed at
//! the fake (through the counting proxy) and must see Azure's behaviour: long-running PUT and
//! DELETE followed to the end, addresses assigned on success, nextLink paging, ETags with
//! If-Match / If-None-Match -> 412, the ARM error envelope, the region's usages, a private
//! zone's virtual network links, and the refusals of RBAC (403) and of the public IP limit.
//! ResourceGroups_List is read over plain HTTP (azure-mgmt-resource is not among the oracle
//! clients).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::Proxy;
use bootstrap_sim::azure::{AzureSim, AzureSimOptions, RoleAssignment};
use serde_json::Value;
use std::time::Duration;

async fn oracle(arm: &str, token: &str) -> Value {
    oracle_with(arm, token, &[]).await
}

async fn oracle_with(arm: &str, token: &str, extra: &[&str]) -> Value {
    let args = [&["--arm", arm, "--token", token][..], extra].concat();
    bootstrap_sim::venv::run_json("azure_oracle.py", &args)
        .await
        .unwrap()
}

/// The fake, each long-running operation done after `delay`.
async fn sim_provisioning_in(delay: Duration) -> AzureSim {
    AzureSim::start(AzureSimOptions {
        provisioning_delay: delay,
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_clients_see_azure_semantics() {
    let sim = AzureSim::start(AzureSimOptions {
        provisioning_delay: Duration::from_millis(150),
        retry_after: 0,
        page_size: 3,
        ..Default::default()
    })
    .await
    .unwrap();
    let proxy = Proxy::start(sim.arm_addr, bootstrap_sim::proxy::Service::Arm)
        .await
        .unwrap();
    let token = sim.issue_token();
    let r = oracle(&proxy.url(), &token).await;

    // Public IPs: the PUT is followed to Succeeded and the final GET carries the address.
    let net = &r["network"];
    for name in ["oracle-v4", "oracle-a", "oracle-b"] {
        let pip = &net["created"][name];
        assert_eq!(pip["state"], "Succeeded", "{name}: {pip}");
        assert_eq!(pip["sku"], "Standard");
        let ip: std::net::Ipv4Addr = pip["ip"].as_str().unwrap().parse().unwrap();
        assert!(!ip.is_private(), "{ip}");
    }
    let v6: std::net::Ipv6Addr = net["created"]["oracle-v6"]["ip"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(v6.segments()[0], 0x2603);
    assert_eq!(net["get_ip"], net["created"]["oracle-v4"]["ip"]);
    assert_eq!(
        net["listed"],
        serde_json::json!(["oracle-a", "oracle-b", "oracle-v4", "oracle-v6"]),
        "four items over two pages (nextLink)"
    );
    assert_eq!(net["after_delete"]["status"], 404);
    assert_eq!(net["after_delete"]["code"], "ResourceNotFound");
    assert_eq!(
        net["delete_absent"]["status"], "no error",
        "DELETE of nothing is 204"
    );
    assert_eq!(net["dynamic_standard"]["status"], 400);
    assert_eq!(net["no_location"]["status"], 400);
    assert_eq!(net["no_location"]["code"], "LocationRequired");
    assert_eq!(net["check_taken"]["available"], false);
    assert_eq!(
        net["check_taken"]["suggestions"],
        serde_json::json!(["10.0.1.6", "10.0.1.7", "10.0.1.8", "10.0.1.9", "10.0.1.11"])
    );
    assert_eq!(net["check_free"]["available"], true);
    assert_eq!(net["check_reserved"]["available"], false);
    assert_eq!(net["check_reserved"]["platform"], true);
    assert_eq!(net["subnet_prefix"], "10.0.1.0/24");
    assert_eq!(net["missing_rg"]["code"], "ResourceGroupNotFound");
    // The region's network usages: three public IPs left (Standard, static), the limits.
    let usages = &net["usages"];
    assert_eq!(
        usages["PublicIPAddresses"],
        serde_json::json!([3, 1000, "Count"])
    );
    assert_eq!(
        usages["StandardSkuPublicIpAddresses"],
        serde_json::json!([3, 1000, "Count"])
    );
    assert_eq!(usages["StaticPublicIPAddresses"][0], 3);

    // Azure DNS (public): ETags and conditional writes.
    let dns = &r["dns"];
    assert_eq!(dns["zone"]["type"], "Public");
    assert_eq!(dns["create"]["values"], serde_json::json!(["192.0.2.1"]));
    assert_eq!(dns["create"]["fqdn"], "oracle.example.com.");
    assert_eq!(dns["create"]["ttl"], 60);
    for case in ["create_again", "stale_update", "stale_delete"] {
        assert_eq!(dns[case]["status"], 412, "{case}: {}", dns[case]);
        assert_eq!(dns[case]["code"], "PreconditionFailed");
    }
    assert_eq!(dns["etag_changed"], true);
    assert_eq!(dns["get"], serde_json::json!(["192.0.2.1", "192.0.2.2"]));
    assert_eq!(dns["after_delete"]["status"], 404);
    assert_eq!(dns["aaaa"], serde_json::json!(["2001:db8::1"]));
    assert_eq!(dns["missing_zone"]["status"], 404);

    // Azure Private DNS: the same contract with its own casing.
    let p = &r["private"];
    assert_eq!(p["zone"], "mycluster.example.com");
    assert_eq!(p["create"]["values"], serde_json::json!(["10.0.1.99"]));
    assert_eq!(p["create"]["fqdn"], "oracle.mycluster.example.com.");
    for case in ["create_again", "stale_update", "stale_delete"] {
        assert_eq!(p[case]["status"], 412, "{case}: {}", p[case]);
    }
    assert_eq!(p["get"], serde_json::json!(["10.0.1.98", "10.0.1.99"]));
    assert_eq!(p["after_delete"]["status"], 404);
    assert_eq!(
        p["links"],
        serde_json::json!([{
            "name": "mycluster-7xk2p-network-link",
            "vnet": "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/network-rg/providers/Microsoft.Network/virtualNetworks/mycluster-vnet",
            "state": "Completed",
            "registration": false,
        }]),
        "the private zone is linked to the cluster's vnet"
    );

    assert_eq!(r["bad_token"]["status"], 401);
    assert_eq!(r["bad_token"]["code"], "InvalidAuthenticationToken");

    // Long-running-operation URLs point back through the proxy: the polls were counted there.
    let calls = proxy.calls();
    assert!(
        calls
            .iter()
            .any(|c| !c.mutating && c.action.contains("/operations/")),
        "Azure-AsyncOperation polled through the proxy: {calls:?}"
    );

    // The fake's own view agrees with what the clients saw.
    let world = sim.inspect();
    let names: Vec<&str> = world["public_ips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["oracle-a", "oracle-v4", "oracle-v6"]);
    assert!(world["zones"]["public"]["oracle.example.com A"].is_null());
}

/// A dual-stack subnet reads as Azure reports one with several prefixes: `addressPrefixes`
/// with the IPv4 and the IPv6 /64, no `addressPrefix`. CheckIPAddressAvailability refuses an
/// IPv6 (its IPv6 behaviour is undocumented; the agent must not depend on it).
#[tokio::test(flavor = "multi_thread")]
async fn a_dual_stack_subnet_reports_both_prefixes_to_the_official_client() {
    let sim = AzureSim::start(AzureSimOptions {
        dual_stack: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let token = sim.issue_token();
    let r = oracle_with(&sim.arm_url(), &token, &["--dual-stack"]).await;
    assert_eq!(r["address_prefix"], Value::Null, "{r}");
    assert_eq!(
        r["address_prefixes"],
        serde_json::json!(["10.0.1.0/24", "fd00:10:0:2::/64"])
    );
    assert_eq!(r["check_ipv6"]["status"], 400, "{r}");
    assert_eq!(
        sim.compute_subnet_range_ipv6().map(|c| c.to_string()),
        Some("fd00:10:0:2::/64".into())
    );
}

/// A caller whose roles do not allow the PUT gets 403 AuthorizationFailed (reads still pass),
/// and a PUT beyond the region's Standard public IP limit 400 PublicIPCountLimitReached.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_client_meets_rbac_and_quota_refusals() {
    use bootstrap_sim::azure::PublicIpQuota;
    let sim = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    let token = sim.issue_token();
    sim.set_roles(vec![RoleAssignment::custom(None, &["*/read"])]);
    let r = oracle_with(&sim.arm_url(), &token, &["--refusal"]).await;
    assert_eq!(r["create"]["status"], 403, "{r}");
    assert_eq!(r["create"]["code"], "AuthorizationFailed");
    assert_eq!(r["read"]["status"], "no error", "{r}");

    sim.set_roles(vec![RoleAssignment::contributor()]);
    sim.set_public_ip_quota(PublicIpQuota {
        total: 1000,
        standard: 0,
    });
    let r = oracle_with(&sim.arm_url(), &token, &["--refusal"]).await;
    assert_eq!(r["create"]["status"], 400, "{r}");
    assert_eq!(r["create"]["code"], "PublicIPCountLimitReached");
    assert!(sim.inspect()["public_ips"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_resources_are_seeded_as_documented() {
    // The integration tests rely on these: three public IPs that are not ours, and a
    // resource-group tag of someone else.
    let sim = sim_provisioning_in(Duration::from_secs(30)).await;
    sim.create_foreign();
    let world = sim.inspect();
    assert_eq!(world["public_ips"].as_array().unwrap().len(), 3);
    assert_eq!(
        world["resource_group_tags"]["mycluster-7xk2p-rg"]["owner"],
        "platform-team"
    );
}

/// `GET` of `path_and_query` on the fake's ARM listener with `token`: (status, body).
async fn arm_get(sim: &AzureSim, token: &str, path_and_query: &str) -> (u16, Value) {
    use http_body_util::{BodyExt, Empty};
    let stream = tokio::net::TcpStream::connect(sim.arm_addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let request = hyper::Request::get(path_and_query)
        .header("host", sim.arm_addr.to_string())
        .header("authorization", format!("Bearer {token}"))
        .body(Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap())
}

/// ResourceGroups_List as the 2021-04-01 spec writes it: `value[]` of `{id, name, type,
/// location, properties.provisioningState, tags}` (no `tags` on an untagged group), paged by
/// `nextLink`, `$top` a page's size (1 to 1000, as ARM). What the fake does not implement
/// (`$filter`) is refused, not ignored.
#[tokio::test(flavor = "multi_thread")]
async fn resource_groups_are_listed_with_their_tags_and_paged() {
    let sim = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    sim.set_resource_group_tag("other-rg", "other-x-rsvd-private-ipv4", "claim:10.0.1.9");
    let token = sim.issue_token();
    let sub = bootstrap_sim::azure::SUBSCRIPTION;
    let mut url = format!("/subscriptions/{sub}/resourcegroups?api-version=2021-04-01");
    let mut groups = Vec::new();
    let mut pages = 0;
    loop {
        let (status, page) = arm_get(&sim, &token, &url).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        groups.extend(page["value"].as_array().unwrap().iter().cloned());
        match page["nextLink"].as_str() {
            Some(next) => {
                let next = url::Url::parse(next).unwrap();
                url = format!("{}?{}", next.path(), next.query().unwrap());
            }
            None => break,
        }
    }
    assert_eq!(
        groups.len(),
        4,
        "the fixture's three and other-rg: {groups:#?}"
    );
    assert_eq!(pages, 2, "three per page");
    let other = groups.iter().find(|g| g["name"] == "other-rg").unwrap();
    assert_eq!(
        other["id"],
        format!("/subscriptions/{sub}/resourceGroups/other-rg")
    );
    assert_eq!(other["type"], "Microsoft.Resources/resourceGroups");
    assert_eq!(other["properties"]["provisioningState"], "Succeeded");
    assert_eq!(other["tags"]["other-x-rsvd-private-ipv4"], "claim:10.0.1.9");
    let dns = groups.iter().find(|g| g["name"] == "dns-rg").unwrap();
    assert!(dns.get("tags").is_none(), "{dns}");

    let (status, body) = arm_get(
        &sim,
        &token,
        &format!(
            "/subscriptions/{sub}/resourcegroups?api-version=2021-04-01&$filter=tagName%20eq%20'a'"
        ),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "InvalidQueryParameter");

    // `$top` is the page size, carried on by `nextLink`; 1000 at most.
    let first = format!("/subscriptions/{sub}/resourcegroups?api-version=2021-04-01&$top=2");
    let (status, page) = arm_get(&sim, &token, &first).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["value"].as_array().unwrap().len(), 2, "{page}");
    let next = url::Url::parse(page["nextLink"].as_str().unwrap()).unwrap();
    assert!(next.query().unwrap().contains("$top=2"), "{next}");
    let (_, page) = arm_get(
        &sim,
        &token,
        &format!("{}?{}", next.path(), next.query().unwrap()),
    )
    .await;
    assert_eq!(page["value"].as_array().unwrap().len(), 2, "{page}");
    assert!(
        page.get("nextLink").is_none(),
        "four groups, two pages of two: {page}"
    );
    let (status, page) = arm_get(&sim, &token, &first.replace("$top=2", "$top=1000")).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["value"].as_array().unwrap().len(),
        4,
        "all in one page: {page}"
    );
    assert!(page.get("nextLink").is_none(), "{page}");
    for top in ["1001", "0", "x"] {
        let (status, body) = arm_get(
            &sim,
            &token,
            &first.replace("$top=2", &format!("$top={top}")),
        )
        .await;
        assert_eq!(status, 400, "$top={top}: {body}");
        assert_eq!(body["error"]["code"], "InvalidTopInQueryString");
    }
    let (status, body) = arm_get(
        &sim,
        &token,
        &format!("/subscriptions/{sub}/resourcegroups"),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "MissingApiVersionParameter");
}

/// ARM filters ResourceGroups_List by the caller's roles: a role on two groups lists those two
/// and no other cluster's group (nor its tags), with no error.
#[tokio::test(flavor = "multi_thread")]
async fn resource_groups_listed_are_the_ones_the_roles_may_read() {
    let sim = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    sim.set_resource_group_tag("other-rg", "other-x-rsvd-private-ipv4", "claim:10.0.1.9");
    sim.set_roles(vec![
        RoleAssignment::custom(Some("dns-rg"), &["*"]),
        RoleAssignment::custom(Some("mycluster-7xk2p-rg"), &["*/read"]),
        RoleAssignment::custom(Some("other-rg"), &["Microsoft.Network/*"]),
    ]);
    let token = sim.issue_token();
    let sub = bootstrap_sim::azure::SUBSCRIPTION;
    let list = format!("/subscriptions/{sub}/resourcegroups?api-version=2021-04-01");
    let (status, page) = arm_get(&sim, &token, &list).await;
    assert_eq!(status, 200, "{page}");
    let mut names: Vec<&str> = page["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["dns-rg", "mycluster-7xk2p-rg"], "{page}");

    sim.set_roles(vec![RoleAssignment::custom(None, &["*/read"])]);
    let (_, page) = arm_get(&sim, &token, &list).await;
    assert_eq!(
        page["value"].as_array().unwrap().len(),
        3,
        "first page of four"
    );
}

/// A public IP a load balancer frontend uses (the local API server's service controller marks
/// it so) shows the frontend in `ipConfiguration`, and its DELETE is refused with 400
/// `PublicIPAddressCannotBeDeleted`, as the official client hears it; the address stays.
/// Once the frontend is gone, it can be deleted.
#[tokio::test(flavor = "multi_thread")]
async fn a_public_ip_a_frontend_uses_cannot_be_deleted() {
    let sim = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    sim.create_foreign();
    let token = sim.issue_token();
    let world = sim.inspect();
    let pip = &world["public_ips"][0];
    let (name, ip) = (pip["name"].as_str().unwrap(), pip["ip"].as_str().unwrap());
    let ip: std::net::IpAddr = ip.parse().unwrap();
    let book = sim.address_book();
    book.0.attach(ip, "a0123456789abcdef0123456789abcde");
    let r = oracle_with(&sim.arm_url(), &token, &["--in-use", name]).await;
    assert_eq!(
        r["ip_configuration"],
        "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Network/loadBalancers/mycluster-7xk2p/frontendIPConfigurations/a0123456789abcdef0123456789abcde",
        "{r}"
    );
    assert_eq!(r["delete"]["status"], 400, "{r}");
    assert_eq!(r["delete"]["code"], "PublicIPAddressCannotBeDeleted", "{r}");
    assert_eq!(r["after"], "Succeeded", "the address stays: {r}");
    book.0.detach(ip, "a0123456789abcdef0123456789abcde");
    let r = oracle_with(&sim.arm_url(), &token, &["--in-use", name]).await;
    assert_eq!(r["ip_configuration"], Value::Null, "{r}");
    assert_eq!(r["delete"]["status"], "no error", "{r}");
}

/// The bootstrap VM's NIC as azure-mgmt-network models it: its primary ipConfiguration
/// `pipConfig` at 10.0.1.10 (Dynamic); a Dynamic secondary added by a whole PUT (the
/// long-running operation followed to `Succeeded`) gets the subnet's next free address, which
/// CheckIPAddressAvailability then reports taken; the PUT without it frees it.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_client_adds_and_removes_a_secondary_ip_configuration() {
    use bootstrap_sim::azure::{BOOTSTRAP_NIC, COMPUTE_SUBNET};
    let sim = sim_provisioning_in(Duration::from_millis(150)).await;
    let token = sim.issue_token();
    let r = oracle_with(&sim.arm_url(), &token, &["--nic", BOOTSTRAP_NIC]).await;
    let config = |ip: &str, name: &str, primary: bool| {
        serde_json::json!({"name": name, "ip": ip, "method": "Dynamic", "version": "IPv4",
            "primary": primary, "subnet": COMPUTE_SUBNET, "state": "Succeeded"})
    };
    assert_eq!(
        r["before"],
        serde_json::json!([config("10.0.1.10", "pipConfig", true)]),
        "{r}"
    );
    assert_eq!(r["etag"], true, "{r}");
    assert_eq!(r["added_state"], "Succeeded", "{r}");
    assert_eq!(
        r["added"],
        serde_json::json!([
            config("10.0.1.10", "pipConfig", true),
            config("10.0.1.6", "bootstrap-vip", false)
        ]),
        "{r}"
    );
    assert_eq!(
        r["removed"],
        serde_json::json!([config("10.0.1.10", "pipConfig", true)]),
        "{r}"
    );
    assert_eq!(r["missing"]["status"], 404, "{r}");
    assert_eq!(r["missing"]["code"], "ResourceNotFound", "{r}");
    assert_eq!(
        sim.nic_private_addresses(BOOTSTRAP_NIC),
        ["10.0.1.10".parse::<std::net::Ipv4Addr>().unwrap()]
    );
}

/// Load balancers as cloud-provider-azure makes them, seen by azure-mgmt-network: a PUT
/// completes at once (`Succeeded`, with an etag and ids on every child); a second Service's
/// rule joins the first one's frontend with a PUT conditional on the etag, and a stale etag
/// is refused 412; a node's NIC naming the pool shows in the pool's
/// `backendIPConfigurations`; a rule naming a probe the body lacks is refused
/// `InvalidResourceReference`, a frontend on an address a NIC holds
/// `PrivateIPAddressIsAllocated`; a public frontend shows in its public IP's `ipConfiguration`
/// until the load balancer goes, and its pool from the NICs; the cluster's NSG has Azure's six default rules and takes a
/// rule with its etag, a stale etag refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_client_builds_load_balancers_as_arm_does() {
    let sim = sim_provisioning_in(Duration::from_millis(100)).await;
    sim.add_machine("master-0", "10.0.0.5".parse().unwrap());
    sim.create_user_public_ip(
        "mycluster-7xk2p-rg",
        "user-api-pip",
        "52.1.2.3".parse().unwrap(),
    );
    let token = sim.issue_token();
    let r = oracle_with(
        &sim.arm_url(),
        &token,
        &["--load-balancer", "master-0-nic", "user-api-pip"],
    )
    .await;
    assert_eq!(r["made"]["state"], "Succeeded", "{r}");
    assert_eq!(r["made"]["frontend_state"], "Succeeded", "{r}");
    assert_eq!(r["made"]["etag"], true, "{r}");
    assert!(
        r["made"]["frontend"]
            .as_str()
            .unwrap()
            .ends_with("/loadBalancers/mycluster-7xk2p-internal/frontendIPConfigurations/afront"),
        "{r}"
    );
    assert_eq!(
        r["shared_frontend_rules"],
        serde_json::json!(["afront-TCP-6443", "bsecond-TCP-22623"]),
        "{r}"
    );
    assert_eq!(r["stale"]["status"], 412, "{r}");
    assert_eq!(r["stale"]["code"], "PreconditionFailed", "{r}");
    assert_eq!(
        r["pool_members"],
        serde_json::json!(["master-0-nic/ipConfigurations/pipConfig"]),
        "{r}"
    );
    assert_eq!(r["missing_probe"]["status"], 400, "{r}");
    assert_eq!(
        r["missing_probe"]["code"], "InvalidResourceReference",
        "{r}"
    );
    assert_eq!(
        r["held_by_a_nic"]["code"], "PrivateIPAddressIsAllocated",
        "{r}"
    );
    assert_eq!(
        r["pip_user"],
        serde_json::json!(["mycluster-7xk2p", "frontendIPConfigurations", "apublic"]),
        "{r}"
    );
    assert_eq!(
        r["listed"],
        serde_json::json!(["mycluster-7xk2p", "mycluster-7xk2p-internal"]),
        "{r}"
    );
    assert_eq!(r["pip_user_after_delete"], Value::Null, "{r}");
    assert_eq!(r["missing"]["status"], 404, "{r}");
    assert_eq!(
        r["nic_pools_after_delete"],
        serde_json::json!([]),
        "a deleted load balancer's pool is gone from its NICs: {r}"
    );
    assert_eq!(r["nsg_defaults"].as_array().unwrap().len(), 6, "{r}");
    assert_eq!(
        r["nsg_rules"],
        serde_json::json!([["k8s-azure-lb_allow_IPv4_x", ["52.1.2.3"]]]),
        "{r}"
    );
    assert_eq!(r["nsg_stale"]["status"], 412, "{r}");
    // The simulated controller reads the same rules.
    assert_eq!(
        sim.security_rules().unwrap()[0]["destinationAddressPrefixes"],
        serde_json::json!(["52.1.2.3"])
    );
}

/// What cloud-provider-azure reads besides the network: the Compute provider's zones (its
/// start-up zone sync), a Node's VM with its primary NIC (404 once the machine is gone, so
/// its node lifecycle controller deletes the Node), and `/metadata/endpoints` at the
/// api-version it asks (2019-05-01: an array naming the fake's ARM and authority, no token).
#[tokio::test(flavor = "multi_thread")]
async fn compute_reads_and_the_cloud_list_are_served_as_the_ccm_reads_them() {
    let sim = AzureSim::start(AzureSimOptions::default()).await.unwrap();
    sim.add_machine("master-1", "10.0.0.6".parse().unwrap());
    let token = sim.issue_token();
    let sub = "/subscriptions/00000000-0000-0000-0000-000000000001";
    let (status, provider) = arm_get(
        &sim,
        &token,
        &format!("{sub}/providers/Microsoft.Compute?api-version=2021-04-01"),
    )
    .await;
    assert_eq!(status, 200, "{provider}");
    assert_eq!(
        provider["resourceTypes"][0]["zoneMappings"][0]["zones"],
        serde_json::json!(["1", "2", "3"])
    );
    let vm_path = format!(
        "{sub}/resourceGroups/mycluster-7xk2p-rg/providers/Microsoft.Compute/virtualMachines/master-1?api-version=2025-04-01&$expand=instanceView"
    );
    let (status, vm) = arm_get(&sim, &token, &vm_path).await;
    assert_eq!(status, 200, "{vm}");
    assert!(
        vm["properties"]["networkProfile"]["networkInterfaces"][0]["id"]
            .as_str()
            .unwrap()
            .ends_with("/networkInterfaces/master-1-nic")
    );
    assert_eq!(
        vm["properties"]["instanceView"]["statuses"][1]["code"],
        "PowerState/running"
    );
    sim.remove_machine("master-1");
    let (status, gone) = arm_get(&sim, &token, &vm_path).await;
    assert_eq!(status, 404, "{gone}");
    assert_eq!(gone["error"]["code"], "ResourceNotFound");
    let (status, clouds) = arm_get(&sim, "", "/metadata/endpoints?api-version=2019-05-01").await;
    assert_eq!(status, 200, "{clouds}");
    assert_eq!(clouds[0]["name"], "AzureCloud");
    assert_eq!(clouds[0]["resourceManager"], format!("{}/", sim.arm_url()));
    assert_eq!(
        clouds[0]["authentication"]["loginEndpoint"],
        format!("{}/", sim.login_url())
    );
}
