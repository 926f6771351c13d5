//! Fidelity of the GCP fake, judged by the official google-api-python-client (built from the
//! discovery documents it ships) pointed at it: responses parse, operations poll to DONE,
//! errors arrive in Google's envelope with the documented status and reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::gcp::{FakeOptions, GcpFake};
use bootstrap_sim::venv;
use serde_json::{Value, json};

async fn oracle() -> Value {
    let fake = GcpFake::start(FakeOptions::realistic()).await.unwrap();
    venv::run_json("gcp_oracle.py", &["--endpoint", &fake.url()])
        .await
        .unwrap()
}

/// Google's error kinds: code, reason, status.
const NOT_FOUND: (u16, &str, &str) = (404, "notFound", "NOT_FOUND");
const ALREADY_EXISTS: (u16, &str, &str) = (409, "alreadyExists", "ALREADY_EXISTS");
const INVALID: (u16, &str, &str) = (400, "invalid", "INVALID_ARGUMENT");
const CONDITION_NOT_MET: (u16, &str, &str) = (412, "conditionNotMet", "FAILED_PRECONDITION");
const FORBIDDEN: (u16, &str, &str) = (403, "forbidden", "PERMISSION_DENIED");

fn error(code: u16, reason: &str, status: &str) -> Value {
    json!({"code": code, "reason": reason, "status": status})
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_client_sees_the_fake_as_compute_cloud_dns_and_resource_manager() {
    let o = oracle().await;

    // compute.v1 addresses + regionOperations
    assert_eq!(o["insert_kind"], "compute#operation");
    assert_eq!(o["insert_first_status"], "RUNNING", "operations take time");
    assert_eq!(
        o["insert_statuses"].as_array().unwrap().last().unwrap(),
        "DONE"
    );
    assert_eq!(o["replay_same_operation"], true, "requestId is idempotent");
    assert_eq!(o["external"]["status"], "RESERVED");
    assert_eq!(o["external"]["addressType"], "EXTERNAL");
    assert_eq!(o["external"]["networkTier"], "PREMIUM");
    assert!(
        o["external"]["address"]
            .as_str()
            .unwrap()
            .parse::<std::net::Ipv4Addr>()
            .is_ok()
    );
    assert_eq!(o["wait_status"], "DONE", "wait blocks until DONE");
    assert_eq!(
        o["internal"]["address"], "10.0.0.2",
        "first usable IP of 10.0.0.0/17"
    );
    assert_eq!(o["internal"]["purpose"], "SHARED_LOADBALANCER_VIP");
    assert!(o["internal"]["subnetwork"].as_str().unwrap().ends_with(
        "/projects/example-project/regions/us-central1/subnetworks/mycluster-master-subnet"
    ));
    assert_eq!(
        o["wrong_project_subnetwork"],
        json!({
            "code": 400, "reason": "invalid", "status": "INVALID_ARGUMENT",
            "message": "Invalid value for field 'resource.subnetwork': 'projects/other-project/regions/us-central1/subnetworks/mycluster-master-subnet'. The referenced subnetwork resource cannot be found.",
        }),
        "a subnetwork belongs to one project"
    );
    assert_eq!(o["wrong_project_created"], false);
    assert_eq!(o["in_use_error"], "IP_IN_USE_BY_ANOTHER_RESOURCE");
    assert_eq!(o["in_use_created"], false);
    assert_eq!(o["filtered"], json!(["oracle-ext"]), "label filter");
    assert_eq!(
        o["paged"],
        json!(["oracle-ext", "oracle-int"]),
        "pagination"
    );

    // compute.v1 projects, regions, subnetworks (preflight's reads)
    assert_eq!(
        o["project"],
        json!({"kind": "compute#project", "name": "example-project"})
    );
    assert_eq!(
        o["quotas"],
        json!({"STATIC_ADDRESSES": [100.0, 1.0], "INTERNAL_ADDRESSES": [200.0, 1.0]}),
        "usage counts the addresses that exist"
    );
    assert_eq!(
        o["subnetwork"],
        json!({"kind": "compute#subnetwork",
               "network": "https://www.googleapis.com/compute/v1/projects/example-project/global/networks/mycluster-network",
               "ipCidrRange": "10.0.0.0/17"})
    );
    assert_eq!(
        o["private_networks"],
        json!([
            "https://www.googleapis.com/compute/v1/projects/example-project/global/networks/mycluster-network"
        ])
    );

    // dns.v1 managedZones + resourceRecordSets + changes
    assert_eq!(
        o["zones"],
        json!([
            ["mycluster-7xk2p-private-zone", "private"],
            ["mycluster-example-com-public", "public"]
        ])
    );
    assert_eq!(o["change_first_status"], "pending");
    assert_eq!(
        o["rrsets"],
        json!([{"kind": "dns#resourceRecordSet", "name": "api.mycluster.example.com.",
                "type": "A", "ttl": 60, "rrdatas": ["10.0.0.5"]}])
    );
    assert_eq!(o["atomic"], true, "a rejected change applies nothing");
    assert_eq!(o["replaced"], json!(["10.0.0.5", "10.0.0.7"]));

    // cloudresourcemanager.v1 projects.testIamPermissions: the subset held, in the order asked;
    // wildcards and unknown permissions are refused, an unknown project is not revealed (below).
    assert_eq!(
        o["iam_held"],
        json!({"permissions": ["dns.changes.create", "compute.subnetworks.use"]})
    );

    // Every refusal arrives in Google's error envelope with the documented code, reason and
    // status of its kind.
    let refusals = [
        // compute.v1 addresses
        ("duplicate_name", ALREADY_EXISTS),
        ("missing", NOT_FOUND),
        ("bad_request_id", INVALID),
        ("bad_label", INVALID),
        ("deleted", NOT_FOUND),
        // compute.v1 subnetworks
        ("missing_subnetwork", NOT_FOUND),
        // dns.v1 changes and zones
        ("stale_deletion", CONDITION_NOT_MET),
        ("stale_ttl", CONDITION_NOT_MET),
        ("missing_deletion", NOT_FOUND),
        ("existing_addition", ALREADY_EXISTS),
        ("missing_zone", NOT_FOUND),
        // projects.testIamPermissions
        ("iam_wildcard", INVALID),
        ("iam_unknown_permission", INVALID),
        ("iam_unknown_project", FORBIDDEN),
    ];
    for (case, (code, reason, status)) in refusals {
        assert_eq!(o[case], error(code, reason, status), "{case}");
    }
}

/// An address a forwarding rule uses (the local API server's service controller marks it so)
/// shows the rule in `users`, is `IN_USE`, and addresses.delete is refused with
/// `resourceInUseByAnotherResource` (400), as the official client hears it; the address stays.
/// Once the rule is gone, the address is `RESERVED` again.
#[tokio::test(flavor = "multi_thread")]
async fn an_address_a_forwarding_rule_uses_cannot_be_deleted() {
    let fake = GcpFake::start(FakeOptions::realistic()).await.unwrap();
    let address = fake.create_address("in-use", false, &[]).unwrap();
    let ip: std::net::IpAddr = address["address"].as_str().unwrap().parse().unwrap();
    let book = fake.address_book();
    book.0.attach(ip, "a0123456789abcdef0123456789abcde");
    let o = venv::run_json(
        "gcp_oracle.py",
        &["--endpoint", &fake.url(), "--in-use", "in-use"],
    )
    .await
    .unwrap();
    assert_eq!(o["status"], "IN_USE", "{o}");
    assert_eq!(
        o["users"],
        json!([
            "https://www.googleapis.com/compute/v1/projects/example-project/regions/us-central1/forwardingRules/a0123456789abcdef0123456789abcde"
        ]),
        "{o}"
    );
    assert_eq!(
        o["delete"],
        error(400, "resourceInUseByAnotherResource", "INVALID_ARGUMENT"),
        "{o}"
    );
    assert_eq!(o["after"], "IN_USE", "the address stays: {o}");
    book.0.detach(ip, "a0123456789abcdef0123456789abcde");
    let now: Vec<Value> = fake
        .addresses()
        .into_iter()
        .filter(|a| a["name"] == "in-use")
        .collect();
    assert_eq!(now[0]["status"], "RESERVED");
    assert!(now[0].get("users").is_none(), "{}", now[0]);
}

/// The bootstrap VM as the official client reads it, and an alias IP range added through
/// `instances.updateNetworkInterface` (PATCH, `networkInterface=nic0`): the operation is
/// RUNNING first, `zoneOperations.wait` returns it DONE, the VM then shows the /32 GCE picked
/// and a new fingerprint, and the old fingerprint is refused (412 `conditionNotMet`).
#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_client_adds_an_alias_ip_to_the_bootstrap_vm() {
    let fake = GcpFake::start(FakeOptions::realistic()).await.unwrap();
    let o = venv::run_json(
        "gcp_oracle.py",
        &[
            "--endpoint",
            &fake.url(),
            "--instance",
            "mycluster-7xk2p-bootstrap",
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        o["before"],
        json!({"name": "nic0", "networkIP": "10.0.1.10", "aliasIpRanges": null,
               "stackType": "IPV4_ONLY"}),
        "{o}"
    );
    assert_eq!(o["status"], "RUNNING", "{o}");
    assert_eq!(o["first_status"], "RUNNING", "{o}");
    assert_eq!(o["wait_status"], "DONE", "{o}");
    assert_eq!(o["after"], json!([{"ipCidrRange": "10.0.0.2/32"}]), "{o}");
    assert_eq!(o["fingerprint_changed"], true, "{o}");
    assert_eq!(
        o["stale"],
        error(412, "conditionNotMet", "FAILED_PRECONDITION"),
        "{o}"
    );
    assert_eq!(o["missing"], error(404, "notFound", "NOT_FOUND"), "{o}");
    let addresses: Vec<String> = fake
        .instance_addresses("mycluster-7xk2p-bootstrap")
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(addresses, ["10.0.1.10", "10.0.0.2"]);
}

/// A VM added after the start (a new worker, `add_instance`: the real-CCM harness's node
/// change) as the official client reads it and puts it behind load balancers as the GCE CCM
/// does for a new Node: `instanceGroups.addInstances` to an unmanaged group of its zone and
/// `targetPools.addInstance`, each awaited through its operation; a second add is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_client_puts_a_vm_added_after_the_start_in_a_group_and_a_target_pool() {
    let fake = GcpFake::start(FakeOptions::realistic()).await.unwrap();
    let vm = "mycluster-7xk2p-worker-a-n4v8q";
    let ip = fake
        .add_instance(vm, "us-central1-a", "mycluster-worker-subnet")
        .unwrap();
    let o = venv::run_json(
        "gcp_oracle.py",
        &["--endpoint", &fake.url(), "--node-change", vm],
    )
    .await
    .unwrap();
    assert_eq!(o["networkIP"], ip.to_string(), "{o}");
    assert_eq!(o["add_to_group"], "DONE", "{o}");
    assert_eq!(o["group_members"], json!([vm]), "{o}");
    assert_eq!(o["group_again"]["code"], 400, "{o}");
    assert_eq!(o["group_again"]["reason"], "memberAlreadyExists", "{o}");
    assert_eq!(o["add_to_pool"], "DONE", "{o}");
    assert_eq!(o["pool_members"], json!([vm]), "{o}");
    assert_eq!(o["pool_again"]["code"], 400, "{o}");
    let holding = fake.backends_holding(vm);
    assert!(
        holding
            .iter()
            .any(|(path, holds)| path.ends_with("/targetPools/a-oracle-pool") && *holds),
        "{holding:?}"
    );
}
