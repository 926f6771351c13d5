//! `bootstrap-sim real-ccm --simulated --upi` on GCP and Azure: the harness's sequence (`run`,
//! a second `run`, `teardown --all`) with the local API server's simulated load-balancer
//! controller, the user having made the addresses first (docs/upi.md). What CI can run of the
//! harness: the same code as with the real CCMs (which CI does not build), less the CCM.
#![cfg(all(feature = "gcp", feature = "azure"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::real_ccm::{Args, harness};
use std::path::Path;

async fn upi_leaves_the_users_addresses_as_they_were(cloud: &str, user_addresses: usize) {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let work = tempfile::tempdir().unwrap();
    let args = Args::parse(&[cloud, "--simulated", "--upi"]).unwrap();
    let agent = Path::new(env!("CARGO_BIN_EXE_bootstrap-agent"));
    let report = harness(&args, agent, work.path()).await.unwrap();
    let json = report.to_json();
    let shown = serde_json::to_string_pretty(&json).unwrap();
    let exits = (
        report.run_exit,
        report.second_run_exit,
        report.teardown_exit,
    );
    assert_eq!(exits, (0, 0, 0), "{shown}");
    assert_eq!(report.second_run_mutations, 0, "{shown}");
    assert!(report.left_ours.is_empty(), "{shown}");
    assert!(report.left_ccm.is_empty(), "{shown}");
    let upi = report.upi.as_ref().unwrap();
    assert_eq!(upi.before.len(), user_addresses, "{shown}");
    // The Services asked for the user's IPs (adopted, nothing reserved in their place), and
    // after `teardown --all` each address is there as the user made it.
    assert!(upi.adopted(), "{shown}");
    assert_eq!(upi.changes(), Vec::<String>::new(), "{shown}");
    assert_eq!(json["upi"]["untouched"], true, "{shown}");
    // GCP makes the node change with the simulated controller too (a fourth worker: its VM
    // in the fake, its Node in the API server); as the real service controller does on a
    // Node add (k8s.io/cloud-provider `controllers/service/controller.go:160-186`), the
    // simulated one puts the VM in every load balancer's backend side: the internal ones'
    // `k8s-ig--` group of its zone, the external one's target pool. Azure only with a real CCM.
    let change = &json["node_change"];
    if cloud == "gcp" {
        assert!(
            change["node"]
                .as_str()
                .unwrap()
                .ends_with("-worker-a-n4v8q"),
            "{shown}"
        );
        let backends = change["backends_holding_it"].as_object().unwrap();
        assert!(
            backends.keys().any(|b| b.contains("/backendServices/"))
                && backends.keys().any(|b| b.contains("/targetPools/")),
            "the internal and external load balancers are there to look at: {shown}"
        );
        assert!(
            backends.values().all(|holds| holds == true),
            "the new node is in every backend side: {shown}"
        );
        assert!(change["in_backends_ms"].is_u64(), "{shown}");
        let updated = json["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e.as_str().unwrap().contains(" UpdatedLoadBalancer: "))
            .count();
        assert_eq!(updated, 3, "an UpdatedLoadBalancer per Service: {shown}");
    } else {
        assert!(change.is_null(), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gcp_upi_run_and_teardown_leave_the_users_two_addresses_untouched() {
    upi_leaves_the_users_addresses_as_they_were("gcp", 2).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_upi_run_and_teardown_leave_the_users_public_ip_untouched() {
    upi_leaves_the_users_addresses_as_they_were("azure", 1).await;
}
