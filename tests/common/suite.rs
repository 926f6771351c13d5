//! The behaviour every cloud must show, written once: each function is one test body, generic
//! over the [`Cloud`], and [`cloud_suite!`] instantiates all of them as `#[tokio::test]`s in a
//! cloud's test file (`cloud_suite!(AwsPeers);`). A new behaviour test is one function here
//! plus one line in the macro, and then runs on AWS, GCP and Azure.

use super::agent::{API, API_INT, BOOTSTRAP, OTHER_WRITER, fault_seed};
use super::cloud::{Cloud, CloudWorld, Harness, InstallerNetwork};
pub use super::suite_calls::*;
pub use super::suite_day2::*;
pub use super::suite_publish::*;
pub use super::suite_user_dns::*;
use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use bootstrap_sim::{Fault, Faults, Hold, Latency};

/// The slow network of the fault tests: one request in five waits 20 to 200 ms.
const SLOW: Latency = Latency {
    rate: 0.2,
    min_ms: 20,
    max_ms: 200,
};

/// The private records the shared tests look at (the public one is `api` only).
const PRIVATE: [&str; 2] = [API, API_INT];

fn sorted<S: ToString>(items: impl IntoIterator<Item = S>) -> Vec<String> {
    let mut v: Vec<String> = items.into_iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// `reserve` + `dns seed` on a fresh world make exactly the planned changes, which `plan`
/// listed without mutating anything.
pub async fn fresh_reserve_and_seed_create_exactly_the_planned_resources_and_records<C: Cloud>() {
    let h = C::start().await;
    let plan: serde_json::Value = serde_json::from_slice(
        &h.run(&["plan", "--stage", "reserve,seed-dns", "--output", "json"])
            .await
            .stdout,
    )
    .unwrap();
    assert_eq!(
        plan["changes"].as_array().unwrap().len(),
        C::PLANNED_CHANGES,
        "{plan:#}"
    );
    let calls = h.peers.mutating_calls();
    assert!(calls.is_empty(), "plan must not mutate: {calls:?}");

    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
    assert_eq!(
        h.peers.calls(),
        sorted(C::BOOTSTRAP_CALLS),
        "a fresh {} bootstrap makes exactly the planned calls",
        C::NAME
    );
}

pub async fn second_run_after_success_makes_zero_mutating_calls<C: Cloud>() {
    let h = C::start().await;
    h.bootstrap().await;
    h.assert_bootstrap_converged().await;
}

/// Another writer's value in our record set is kept by `dns seed`, `dns teardown` and
/// `teardown --all`; a set holding only our values is deleted.
pub async fn another_writers_value_survives_seed_and_teardown<C: Cloud>() {
    let h = C::start().await;
    h.peers
        .write_record(true, "api.mycluster.example.com", &[OTHER_WRITER])
        .await;
    h.bootstrap().await;
    let world = h.world().await;
    let reserved = world.reserved_private();
    let second = world.second_address();
    assert_eq!(second.is_some(), C::SECOND_ADDRESS, "{:#}", world.raw());
    let bootstrap_host = world.bootstrap_host_values(C::BOOTSTRAP_IP, API);
    let api = world.values("private", API);
    assert!(api.contains(&OTHER_WRITER.to_string()), "{api:?}");
    assert_eq!(
        api,
        sorted(
            reserved
                .iter()
                .chain(&bootstrap_host)
                .map(String::as_str)
                .chain([OTHER_WRITER])
        ),
        "other + the bootstrap host's addresses + the reserved private IPs"
    );
    assert_eq!(
        world.values("private", API_INT),
        sorted(
            reserved
                .iter()
                .chain(&world.bootstrap_host_values(C::BOOTSTRAP_IP, API_INT))
        ),
        "the bootstrap host's addresses + the reserved private IPs"
    );

    h.run(&["dns", "teardown"]).await;
    let world = h.world().await;
    assert_eq!(
        world.values("private", API),
        sorted(
            world
                .reserved_private()
                .into_iter()
                .chain([OTHER_WRITER.to_string()])
        ),
        "only the bootstrap host's addresses are removed"
    );

    h.run(&["teardown", "--all"]).await;
    let world = h.world().await;
    assert_eq!(world.values("private", API), vec![OTHER_WRITER.to_string()]);
    assert!(
        world.values("private", API_INT).is_empty(),
        "a set holding only our values is deleted"
    );
}

/// `dns teardown` removes the bootstrap host's addresses (its IP, and on GCP and Azure its
/// second address) from the private records, one change per record, then releases the second
/// address, and nothing else; again (and `teardown`) it changes nothing, and the load
/// balancers' reservations stay.
pub async fn dns_teardown_removes_only_the_bootstrap_hosts_addresses<C: Cloud>() {
    let h = C::start().await;
    h.bootstrap().await;
    let before = h.world().await;
    let second = before.second_address();
    assert_eq!(second.is_some(), C::SECOND_ADDRESS, "{:#}", before.raw());
    h.peers.reset_counts();
    h.run(&["dns", "teardown"]).await;
    let after = h.world().await;
    for name in PRIVATE {
        let expected: Vec<String> = before
            .values("private", name)
            .into_iter()
            .filter(|ip| ip != C::BOOTSTRAP_IP && Some(ip) != second.as_ref())
            .collect();
        assert_eq!(after.values("private", name), expected, "{name}");
    }
    assert_eq!(after.second_address(), None, "{:#}", after.raw());
    assert_eq!(after.values("public", API), before.values("public", API));
    assert_eq!(after.reserved_public(), before.reserved_public());
    assert_eq!(after.reserved_private(), before.reserved_private());
    assert_eq!(
        h.peers.calls(),
        sorted(C::DNS_TEARDOWN_CALLS),
        "one change for the private records (Azure: one request per record set), and the second address's release"
    );
    h.assert_changes_nothing(
        &[&["dns", "teardown"], &["teardown"]],
        "teardown again changes nothing",
    )
    .await;
    assert_eq!(
        h.world().await.our_count(),
        before.our_count() - usize::from(C::SECOND_ADDRESS),
        "teardown keeps the load balancers' reservations"
    );
}

/// The journal's reservation of the bootstrap host's second address (`status`), if any.
async fn journaled_second_address<C: Cloud>(h: &Harness<C>) -> Option<String> {
    let status = h.status().await;
    let ours: Vec<&serde_json::Value> = status["reservations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["key"]["scope"] == "bootstrap")
        .collect();
    assert!(ours.len() <= 1, "{status:#}");
    ours.first().map(|r| r["ip"].as_str().unwrap().to_string())
}

/// The bootstrap host's second address (issue 33): on GCP and Azure `plan` reserves it,
/// `reserve` puts it on the bootstrap VM (an alias IP on nic0; a secondary IP configuration on
/// its NIC), and after `dns seed` the private `api` holds exactly the bootstrap IP, that
/// address and the private VIP, and `api-int` the same but on Azure without the bootstrap IP. `dns teardown` takes both bootstrap addresses out of
/// DNS and the second one off the host. AWS gives the bootstrap host none: the bootstrap IP and
/// the VIPs alone.
pub async fn the_bootstrap_hosts_second_address_is_in_api_int_until_stage_3<C: Cloud>() {
    let h = C::start().await;
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    assert_eq!(
        plan.contains("+ reserve bootstrap-ipv4 mycluster-7xk2p-rsvd-bootstrap-ipv4"),
        C::SECOND_ADDRESS,
        "{plan}"
    );
    h.run(&["reserve"]).await;
    h.run(&["dns", "seed"]).await;
    let world = h.world().await;
    let second = world.second_address();
    let vips = world.reserved_private();
    assert!(!vips.is_empty(), "{:#}", world.raw());
    match &second {
        Some(second) => {
            assert!(C::SECOND_ADDRESS, "{:#}", world.raw());
            assert_ne!(second, C::BOOTSTRAP_IP);
            assert!(!vips.contains(second), "not a VIP: {second} {vips:?}");
            assert_eq!(
                journaled_second_address(&h).await.as_ref(),
                Some(second),
                "the journal knows the address the cloud shows on the host"
            );
        }
        None => assert!(!C::SECOND_ADDRESS, "none on the host: {:#}", world.raw()),
    }
    for name in PRIVATE {
        let expected = sorted(
            world
                .bootstrap_host_values(C::BOOTSTRAP_IP, name)
                .into_iter()
                .chain(vips.clone()),
        );
        assert_eq!(world.values("private", name), expected, "{name}");
    }
    // Azure's api-int: the second address without the bootstrap IP (issue 42).
    assert_eq!(
        world
            .values("private", API_INT)
            .contains(&C::BOOTSTRAP_IP.to_string()),
        !C::API_INT_WITHOUT_BOOTSTRAP_IP,
        "{:#}",
        world.raw()
    );

    h.run(&["dns", "teardown"]).await;
    let world = h.world().await;
    for name in PRIVATE {
        let values = world.values("private", name);
        assert!(!values.contains(&C::BOOTSTRAP_IP.to_string()), "{name}");
        if let Some(second) = &second {
            assert!(!values.contains(second), "{name}: {values:?}");
        }
        assert_eq!(values, vips, "{name}: the VIP alone");
    }
    assert_eq!(
        world.bootstrap_host_extra_addresses(),
        Vec::<String>::new(),
        "the second address left the host: {:#}",
        world.raw()
    );
    assert_eq!(journaled_second_address(&h).await, None);
}

/// `reserve` SIGKILLed right after the cloud added the bootstrap host's second address (the
/// alias IP; the IP configuration), before the journal recorded it: run again, the bootstrap
/// finds it and adds no second one; seeded with it, converged.
pub async fn sigkill_right_after_the_second_address_was_added_resumes_without_another<C: Cloud>() {
    let Some(nth) = C::SECOND_ADDRESS_MUTATION else {
        assert!(!C::SECOND_ADDRESS);
        return;
    };
    let h = C::start().await;
    h.peers.reset_counts();
    h.kill_in(&["reserve"], false, Hold::After(nth)).await;
    let status = h.status().await;
    let intents: Vec<&serde_json::Value> = status["mutations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["state"] == "intent")
        .collect();
    assert_eq!(intents.len(), 1, "{status:#}");
    assert_eq!(
        intents[0]["change"]["request"]["key"]["scope"], "bootstrap",
        "killed at the second address: {status:#}"
    );
    assert_eq!(journaled_second_address(&h).await, None, "not journaled");
    // The cloud had it when the agent was killed; it shows once its operation is done.
    let mut second = None;
    for _ in 0..100 {
        second = h.world().await.second_address();
        if second.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let second = second.expect("the cloud added it before the kill");

    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(&[]);
    assert_eq!(world.second_address(), Some(second.clone()), "the same one");
    assert_eq!(journaled_second_address(&h).await, Some(second));
    h.assert_changes_nothing(BOOTSTRAP, "bootstrap again changes nothing")
        .await;
}

/// `dns seed` by hand before `reserve`: the records it writes name addresses only `reserve`
/// makes, so it is refused naming `reserve` before any zone is written, no record holding half
/// of what it should. First with nothing reserved; then (GCP, Azure) with the VIPs reserved
/// but not the bootstrap host's second address (`reserve --bootstrap-second-address off`),
/// where the public zone could be written and the private one could not. Then `reserve` and
/// `dns seed` seed as usual.
pub async fn dns_seed_before_reserve_writes_all_or_nothing<C: Cloud>() {
    let h = C::start().await;
    let refused_with_nothing_written = || async {
        h.peers.reset_counts();
        let (_, stderr) = h.run_exits(&["dns", "seed"], 1).await;
        assert!(
            stderr.contains("does not exist yet; run `bootstrap-agent reserve` first"),
            "{stderr}"
        );
        assert_eq!(h.peers.mutating_calls(), Vec::<String>::new(), "{stderr}");
        let world = h.world().await;
        for (zone, name) in [("private", API), ("private", API_INT), ("public", API)] {
            assert!(
                world.values(zone, name).is_empty(),
                "{zone} {name}: {:#}",
                world.raw()
            );
        }
    };
    refused_with_nothing_written().await;
    h.run(&["reserve", "--bootstrap-second-address", "off"])
        .await;
    if C::SECOND_ADDRESS {
        refused_with_nothing_written().await;
        h.run(&["reserve"]).await;
    }
    h.run(&["dns", "seed"]).await;
    h.world().await.assert_seeded(&[]);
}

/// After `teardown --all`: no reservation and no DNS value of ours left, what is not ours as
/// it was (`foreign`), and no mutating call named a foreign resource.
async fn assert_all_ours_released<C: Cloud>(h: &Harness<C>, foreign: &serde_json::Value) {
    let world = h.world().await;
    assert_eq!(world.our_count(), 0, "ours released: {:#}", world.raw());
    assert!(world.reserved_private().is_empty() && world.reserved_public().is_empty());
    assert_eq!(world.foreign(), *foreign, "what is not ours is untouched");
    for (zone, name) in [("private", API), ("private", API_INT), ("public", API)] {
        assert!(world.values(zone, name).is_empty(), "{zone} {name}");
    }
    for call in h.peers.mutating_calls() {
        for other in C::FOREIGN_NAMES {
            assert!(!call.contains(other), "touched a foreign resource: {call}");
        }
    }
}

/// `teardown --all` releases everything of ours and touches nothing else; again it changes
/// nothing; a new install on the same state dir works.
pub async fn teardown_all_leaves_nothing_of_ours_and_nothing_else_is_touched<C: Cloud>() {
    let h = C::start().await;
    h.peers.create_foreign().await;
    let foreign = h.world().await.foreign();
    h.bootstrap().await;
    h.run(&["teardown", "--all"]).await;
    assert_all_ours_released(&h, &foreign).await;

    h.assert_changes_nothing(
        &[&["teardown", "--all"]],
        "teardown --all again changes nothing",
    )
    .await;

    // A new install on the same state dir starts a new token generation and works.
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
}

/// The LoadBalancer Services of ours in the local API server (the agent's labels), as
/// `namespace/name`, sorted.
fn our_services(kube: &KubeSim) -> Vec<String> {
    sorted(
        kube.list("", "v1", "services", None)
            .iter()
            .filter(|s| {
                s["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "bootstrap-agent"
            })
            .map(|s| {
                format!(
                    "{}/{}",
                    s["metadata"]["namespace"].as_str().unwrap(),
                    s["metadata"]["name"].as_str().unwrap()
                )
            }),
    )
}

/// Another owner's LoadBalancer Service beside ours (no labels of ours): `teardown --all`
/// must leave it.
fn foreign_service() -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "someone-elses-lb", "namespace": "openshift-kube-apiserver",
                     "labels": {"app.kubernetes.io/managed-by": "someone-else"}},
        "spec": {"type": "LoadBalancer", "selector": {"app": "nothing"},
                 "ports": [{"name": "https", "port": 8443, "targetPort": 8443}]}
    })
}

/// `run` whose gate times out while the load balancers are up (ingress, the cloud's addresses
/// in use by them, endpoints never ready): exit 4. The local API server.
async fn run_into_gate_timeout_with_load_balancers_up<C: Cloud>(
    h: &mut Harness<C>,
    release_delay: Option<std::time::Duration>,
) -> KubeSim {
    let mut cloud = h.peers.lb_cloud();
    if let Some(delay) = release_delay {
        cloud.release_delay = delay;
    }
    let kube = KubeSim::start(KubeSimOptions {
        controller: ControllerKnobs {
            ingress_without_endpoints: true,
            ..Default::default()
        },
        cloud,
        ..Default::default()
    })
    .await
    .unwrap();
    h.run_flags(kube.kubeconfig_path(), "3s");
    let (_, stderr) = h.run_exits(&["run"], 4).await;
    let mut changes = kube.changes("", "v1", "services").unwrap();
    let ours = our_services(&kube);
    assert!(!ours.is_empty(), "{stderr}");
    // GCP's provider builds one Service at a time, each Operation waited: on a loaded machine
    // the 3 s gate can end before the last is up. Teardown must find them all up.
    let up = |svc: &String| {
        let (ns, name) = svc.split_once('/').unwrap();
        let got = kube.get("", "v1", "services", Some(ns), name).unwrap();
        got["status"]["loadBalancer"]["ingress"][0].is_object()
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while !ours.iter().all(up) && changes.recv().await.is_some() {}
    })
    .await
    .unwrap_or_else(|_| panic!("our load balancers not all up within 60 s: {ours:?}"));
    assert!(ours.iter().all(up), "our load balancers are up: {ours:?}");
    kube.create(foreign_service()).unwrap();
    // `teardown --all` takes the kubeconfig, not the flags of `run`.
    h.extra = vec![
        "--kubeconfig".into(),
        kube.kubeconfig_path().display().to_string(),
    ];
    kube
}

/// After a gate timeout with the load balancers up (each holding our reserved addresses,
/// which no cloud releases while in use), `teardown --all` deletes our Services, waits until
/// the cloud lets go of the addresses, and releases everything ours: no reservation, no DNS
/// value of ours left; another owner's Service and reservations untouched. Again, it changes
/// nothing.
pub async fn teardown_all_after_a_gate_timeout_with_the_load_balancers_up_releases_everything_ours<
    C: Cloud,
>() {
    let mut h = C::start().await;
    h.peers.create_foreign().await;
    let foreign = h.world().await.foreign();
    let kube = run_into_gate_timeout_with_load_balancers_up(&mut h, None).await;
    let deleted = our_services(&kube);

    // Without the cluster, nothing deletes the load balancers: it waits, saying for what,
    // until the step deadline, and releases nothing in use.
    let with_cluster = std::mem::take(&mut h.extra);
    let (_, stderr) = h
        .run_exits(&["teardown", "--all", "--step-timeout", "3s"], 1)
        .await;
    assert!(
        stderr.contains("waiting for the cloud to let go of")
            && stderr.contains("did not finish within 3s"),
        "{stderr}"
    );
    assert!(
        h.world().await.our_count() > 0,
        "nothing in use is released"
    );
    assert_eq!(
        our_services(&kube),
        deleted,
        "no Service deleted without the cluster"
    );
    h.extra = with_cluster;

    let out = h.run(&["teardown", "--all"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for svc in &deleted {
        assert!(
            stdout.contains(&format!("- service {svc} (ours")),
            "{svc}: {stdout}"
        );
    }
    assert!(
        stderr.contains("waiting for the load balancer of Service"),
        "each Service is held by its controller's finalizer until its load balancer is gone: {stderr}"
    );
    assert!(our_services(&kube).is_empty(), "our Services are gone");
    assert!(
        kube.get(
            "",
            "v1",
            "services",
            Some("openshift-kube-apiserver"),
            "someone-elses-lb"
        )
        .is_some(),
        "another owner's Service stays"
    );
    assert_all_ours_released(&h, &foreign).await;
    kube.clear_request_log();
    h.assert_changes_nothing(
        &[&["teardown", "--all"]],
        "teardown --all again changes nothing",
    )
    .await;
    assert!(
        super::agent::kube_mutations(&kube).is_empty(),
        "nor the cluster: {:?}",
        super::agent::kube_mutations(&kube)
    );

    // A new install on the same state dir: `dns seed` puts every new reserved IP in DNS (the
    // first install's `run` journaled which IPs served; they left with the install).
    h.extra.clear();
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
}

/// A new state dir for the same cluster after `teardown --all` (a new bootstrap host, the
/// infra id kept) installs afresh: its idempotency tokens are new, so no cloud answers with
/// the first install's released resources (GCE returns the earlier operation for a reused
/// `requestId`).
pub async fn a_new_state_dir_for_the_same_cluster_after_teardown_all_installs_afresh<C: Cloud>() {
    let mut h = C::start().await;
    h.bootstrap().await;
    h.run(&["teardown", "--all"]).await;
    assert_eq!(h.world().await.our_count(), 0);
    h.state = h.dir.path().join("state-new-host");
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
}

/// `teardown --all` SIGKILLed once it deleted our Services, while their load balancers are
/// being deleted (on GCP and Azure the Services stand, held by their controllers' finalizers,
/// until then; on AWS the NLBs' interfaces hold the addresses a while after the Services went):
/// run again, it deletes nothing again (a Service still being deleted is only waited out), and
/// releases everything ours, nothing leaked.
pub async fn teardown_all_killed_while_waiting_for_the_load_balancers_resumes<C: Cloud>() {
    let mut h = C::start().await;
    let foreign = h.world().await.foreign();
    // GCP's and Azure's controllers hold a deleted Service until they released its load
    // balancer (`release_delay`): 4 s, not the default 1 s, so the re-run below finds it still
    // being deleted even on a loaded machine (with 1 s, whether it did was a race).
    let kube = run_into_gate_timeout_with_load_balancers_up(
        &mut h,
        Some(std::time::Duration::from_secs(4)),
    )
    .await;
    let mut child = h
        .command(&["teardown", "--all"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Every Service of ours deleted: being deleted, or gone. The load balancers let go of the
    // addresses the controllers' release delay (4 s here) after.
    let being_deleted = |kube: &KubeSim| {
        our_services(kube)
            .iter()
            .filter(|svc| {
                let (ns, name) = svc.split_once('/').unwrap();
                kube.get("", "v1", "services", Some(ns), name)
                    .is_some_and(|s| s["metadata"]["deletionTimestamp"].is_string())
            })
            .count()
    };
    while being_deleted(&kube) < our_services(&kube).len() {
        tokio::select! {
            status = child.wait() => panic!("teardown --all exited early: {status:?}"),
            _ = tokio::time::sleep(std::time::Duration::from_millis(5)) => {}
        }
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(
        h.world().await.our_count() > 0,
        "killed before everything was released"
    );
    let still_there = !our_services(&kube).is_empty();
    kube.clear_request_log();
    let out = h.run(&["teardown", "--all"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        super::agent::kube_mutations(&kube),
        Vec::<(String, String)>::new(),
        "no Service deleted twice"
    );
    if still_there {
        assert!(stdout.contains("being deleted already"), "{stdout}");
    }
    assert!(our_services(&kube).is_empty(), "our Services are gone");
    let world = h.world().await;
    assert_eq!(world.our_count(), 0, "ours released: {:#}", world.raw());
    assert_eq!(
        world.foreign(),
        foreign,
        "nothing else touched, nothing leaked"
    );
    h.assert_changes_nothing(&[&["teardown", "--all"]], "then nothing is left to do")
        .await;
}

/// After `dns teardown`, `dns seed` never puts the bootstrap IP back, nor gives the bootstrap
/// host a second address again (and changes nothing).
pub async fn seeding_after_stage_3_never_puts_the_bootstrap_ip_back<C: Cloud>() {
    let h = C::start().await;
    h.bootstrap().await;
    h.run(&["dns", "teardown"]).await;
    h.assert_changes_nothing(
        &[&["dns", "seed"], &["reserve"]],
        "the bootstrap IP stays removed",
    )
    .await;
    let world = h.world().await;
    assert_eq!(world.second_address(), None, "{:#}", world.raw());
    for name in PRIVATE {
        assert!(
            !world
                .values("private", name)
                .contains(&C::BOOTSTRAP_IP.to_string()),
            "{name}"
        );
        assert_eq!(
            world.values("private", name),
            world.reserved_private(),
            "{name} keeps the reserved IPs"
        );
    }
}

/// A bootstrap IP other than the seeded one is refused (exit 2, naming the command that
/// removes the seeded one), with no mutating call.
pub async fn seeding_a_different_bootstrap_ip_than_the_seeded_one_is_refused<C: Cloud>() {
    let mut h = C::start().await;
    h.bootstrap().await;
    h.peers.reset_counts();
    h.bootstrap_ip = C::OTHER_BOOTSTRAP_IP;
    let out = h.command(&["dns", "seed"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("dns teardown --bootstrap-ip {}", C::BOOTSTRAP_IP)),
        "{stderr}"
    );
    assert!(h.peers.mutating_calls().is_empty());
}

/// Another writer's values in both private records, which every command must keep.
/// `dns verify` asks the zone: ok after seeding (another writer's value is reported, not a
/// difference); a value of ours that left the zone is a difference (exit 1, named); after
/// `dns seed` puts it back, ok again. It makes no mutating call.
pub async fn dns_verify_names_a_value_of_ours_that_left_the_zone<C: Cloud>() {
    let h = C::start().await;
    plant_other_writer(&h.peers).await;
    h.bootstrap().await;
    let verify = async || {
        let out = h.command(&["dns", "verify"]).output().await.unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, stdout, stderr) = verify().await;
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains(&format!("{API_INT}: ok (")), "{stdout}");
    assert!(
        stdout.contains(&format!("also answers (another writer's) {OTHER_WRITER}")),
        "{stdout}"
    );
    // Someone rewrites api-int with the bootstrap IP alone: our reserved IPs are gone.
    h.peers
        .write_record(true, "api-int.mycluster.example.com", &[C::BOOTSTRAP_IP])
        .await;
    let lost = h.world().await.reserved_private();
    h.peers.reset_counts();
    let (code, stdout, stderr) = verify().await;
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.contains(API_INT))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("MISSING"), "{stdout}");
    for ip in &lost {
        assert!(line.contains(ip.as_str()), "{ip} named: {stdout}");
    }
    assert!(
        stderr.contains("1 record set(s) differ from the journal"),
        "{stderr}"
    );
    assert!(h.peers.mutating_calls().is_empty(), "verify only reads");
    h.run(&["dns", "seed"]).await;
    let (code, stdout, _) = verify().await;
    assert_eq!(code, Some(0), "repaired: {stdout}");
}

/// A CNAME where our `api-int` A record goes (issue 23 point 8): `dns seed` stops at once
/// with an error that names the record and the CNAME, and does not retry it as a lost
/// compare-and-swap (old code: Route53's "conflicting RRSet of type CNAME ... already exists"
/// and Cloud DNS's 409 were retried as conflicts, 9 writes per try and the step's retries on
/// top). Nothing else is touched: the CNAME stays.
pub async fn a_cname_where_our_record_goes_is_reported_not_retried<C: Cloud>() {
    let h = C::start().await;
    let name = "api-int.mycluster.example.com";
    h.peers
        .write_cname(true, name, "somewhere.example.net")
        .await;
    h.run(&["reserve"]).await;
    h.peers.reset_counts();
    let started = std::time::Instant::now();
    let (_, stderr) = h.run_exits(&["dns", "seed"], 1).await;
    assert!(
        stderr.contains(&format!("{name} A cannot be written"))
            && stderr.contains(&format!("a CNAME record {name} exists")),
        "names the record and the CNAME: {stderr}"
    );
    let (dns_proxy, _) = h.peers.dns_and_address_proxies();
    let writes = dns_proxy.mutating_calls();
    assert!(
        writes.len() <= 3,
        "one write per zone (Azure: per record set), never retried: {writes:?}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "fatal at once, not after the step's retries: {:?}",
        started.elapsed()
    );
    let status = h.status().await;
    assert!(
        status.to_string().contains("CNAME"),
        "the journal keeps why: {status:#}"
    );
}

async fn plant_other_writer<C: Cloud>(peers: &C) {
    for name in ["api.mycluster.example.com", "api-int.mycluster.example.com"] {
        peers.write_record(true, name, &[OTHER_WRITER]).await;
    }
}

/// After `teardown --all`: nothing of ours, the other writer's values as they were.
fn assert_torn_down(world: &impl CloudWorld) {
    assert_eq!(world.our_count(), 0, "nothing of ours: {:#}", world.raw());
    assert!(world.reserved_private().is_empty());
    for name in PRIVATE {
        assert_eq!(world.values("private", name), vec![OTHER_WRITER], "{name}");
    }
    assert!(world.values("public", API).is_empty());
}

/// At 20% injected faults (the cloud's own throttling, 500s, lost answers; and latency on one
/// request in five besides) the bootstrap and
/// `teardown --all` complete without help, with nothing leaked or duplicated.
pub async fn at_20_percent_faults_bootstrap_and_teardown_complete_with_nothing_leaked_or_duplicated<
    C: Cloud,
>() {
    let h = C::start().await;
    plant_other_writer(&h.peers).await;
    h.peers.reset_counts();
    h.peers
        .inject_faults(&Faults::new(0.2, fault_seed()).with_latency(SLOW));
    h.run_all(BOOTSTRAP).await;
    let stats = h.peers.fault_stats();
    eprintln!("{} bootstrap at 20%: {stats:?}", C::NAME);
    assert!(
        stats.throttled > 0
            && stats.server_errors > 0
            && stats.lost_answers > 0
            && stats.delayed > 0,
        "every kind of fault was injected, and latency: {stats:?}"
    );
    h.peers.assert_nothing_made_twice();
    h.peers.stop_faults();
    h.world().await.assert_seeded(&[OTHER_WRITER]);
    h.assert_changes_nothing(BOOTSTRAP, "converged despite the faults")
        .await;

    h.peers
        .inject_faults(&Faults::new(0.2, fault_seed() + 1).with_latency(SLOW));
    h.run_all(&[&["teardown", "--all"]]).await;
    eprintln!(
        "{} teardown --all at 20%: {:?}",
        C::NAME,
        h.peers.fault_stats()
    );
    h.peers.stop_faults();
    assert_torn_down(&h.world().await);
}

/// At 40% faults each command completes or stops with a clear resumable error, never a leak;
/// a re-run without faults converges.
pub async fn at_40_percent_faults_commands_complete_or_stop_resumably_and_never_leak<C: Cloud>() {
    let h = C::start().await;
    plant_other_writer(&h.peers).await;
    h.peers.reset_counts();
    h.peers
        .inject_faults(&Faults::new(0.4, fault_seed()).with_latency(SLOW));
    let completed = h.run_all_or_stop_resumably(BOOTSTRAP).await;
    eprintln!(
        "{} bootstrap at 40%: completed={completed} {:?}",
        C::NAME,
        h.peers.fault_stats()
    );
    h.peers.assert_nothing_made_twice();
    h.peers.stop_faults();
    // Whatever exists now is at most what the plan wants: a re-run without faults completes
    // with exactly the planned reservations.
    h.world().await.assert_at_most_planned();
    h.run_all(BOOTSTRAP).await;
    h.world().await.assert_seeded(&[OTHER_WRITER]);

    h.peers
        .inject_faults(&Faults::new(0.4, fault_seed() + 1).with_latency(SLOW));
    let completed = h.run_all_or_stop_resumably(&[&["teardown", "--all"]]).await;
    eprintln!(
        "{} teardown --all at 40%: completed={completed} {:?}",
        C::NAME,
        h.peers.fault_stats()
    );
    h.peers.stop_faults();
    h.run_all(&[&["teardown", "--all"]]).await;
    assert_torn_down(&h.world().await);
}

/// Every call throttled: the step stops at its deadline with a resumable error, and a re-run
/// without throttling completes.
pub async fn throttled_past_its_deadline_a_step_stops_resumably_and_a_rerun_completes<C: Cloud>() {
    let mut h = C::start().await;
    h.peers.inject_faults(&Faults {
        kinds: vec![Fault::Throttle],
        ..Faults::new(1.0, fault_seed())
    });
    // Long enough for the SDK's own retries (about 3 s) to give up at least once, so the
    // runner retries and counts it, even on a loaded machine.
    h.extra = vec!["--step-timeout".into(), "8s".into()];
    let completed = h.run_all_or_stop_resumably(&[&["reserve"]]).await;
    assert!(
        !completed,
        "every call was throttled: reserve cannot complete"
    );
    C::assert_throttling_counted(&h.status().await);
    h.peers.stop_faults();
    h.extra.clear();
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
}

/// `reserve`, `dns seed` and `status` at trace: no secret of the fixture is printed or
/// journaled.
pub async fn the_fixture_secrets_are_never_printed_even_at_trace<C: Cloud>() {
    let h = C::start().await;
    h.assert_reserve_never_leaks(C::FIXTURE_SECRETS).await;
}

/// `plan` says which default names the agent uses on the installer's network; the bootstrap
/// (its reservations in the installer's subnets, the only ones the fake knows) makes exactly the
/// planned calls and converges.
pub async fn installer_default_network_is_used_by_its_default_names<C: InstallerNetwork>() {
    // The cloud's fixture that names no network.
    let fixture = format!("{}-default-network", C::NAME);
    let h = C::start_on_installer_network(&fixture).await;
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    for line in C::DEFAULT_NAMES {
        assert!(plan.contains(line), "{line}\n{plan}");
    }
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
    assert_eq!(h.peers.calls(), sorted(C::BOOTSTRAP_CALLS));
    h.assert_bootstrap_converged().await;
}

/// Control for the test above: the installer's network has none of the bring-your-own names
/// of the main fixture, so an agent that ignored the defaults would fail there.
pub async fn the_installer_network_refuses_the_bring_your_own_names<C: InstallerNetwork>() {
    let h = C::start_on_installer_network(C::NAME).await;
    let (_, stderr) = h.run_exits(&["reserve"], 1).await;
    assert!(stderr.contains(C::BRING_YOUR_OWN_REFUSAL), "{stderr}");
}

/// SIGKILL at `hold` in the DNS changes of `dns seed` (`in_seed`, after `reserve`) or in the
/// reservations of `reserve`: the killed mutation is journaled as an intent, and the bootstrap
/// then completes with the seeded picture, nothing duplicated or leaked, and converges.
pub async fn sigkill_and_resume<C: Cloud>(in_seed: bool, hold: Hold) {
    let h = C::start().await;
    let foreign = h.world().await.foreign();
    if in_seed {
        h.run(&["reserve"]).await;
        h.kill_in(&["dns", "seed"], true, hold).await;
    } else {
        h.kill_in(&["reserve"], false, hold).await;
    }
    h.assert_killed_mutation_journaled().await;

    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(&[]);
    assert_eq!(
        world.foreign(),
        foreign,
        "no duplicate, no leaked reservation: {:#}",
        world.raw()
    );
    h.assert_changes_nothing(BOOTSTRAP, "bootstrap again changes nothing")
        .await;
}

/// The SIGKILL tests of a cloud whose DNS and addresses sit behind separate proxies: the two
/// in `dns seed`, and one `name: hold` test in `reserve` per entry (holds count the cloud's
/// own address mutations).
macro_rules! sigkill_suite {
    ($cloud:ty; $($name:ident: $hold:expr),* $(,)?) => {
        $crate::common::suite::sigkill_suite!(@test $cloud;
            sigkill_after_a_record_change_resumes_without_duplicate_values: true, bootstrap_sim::Hold::After(1));
        $crate::common::suite::sigkill_suite!(@test $cloud;
            sigkill_before_a_record_change_resumes: true, bootstrap_sim::Hold::Before(2));
        $(
            $crate::common::suite::sigkill_suite!(@test $cloud; $name: false, $hold);
        )*
    };
    (@test $cloud:ty; $name:ident: $in_seed:expr, $hold:expr) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn $name() {
            $crate::common::suite::sigkill_and_resume::<$cloud>($in_seed, $hold).await;
        }
    };
}
pub(crate) use sigkill_suite;

/// One test per `name: dns, hold` for `run` end to end: in the world `$world` makes (an
/// expression, awaited; it has the harness `h` and `assert_done`), `run` SIGKILLed at `hold`
/// of the DNS (`dns`) or the addresses' proxy, then run again, reaches done.
macro_rules! run_resumes_after_kill {
    ($world:expr; $($name:ident: $dns:expr, $hold:expr;)*) => {
        $(
            #[tokio::test(flavor = "multi_thread")]
            async fn $name() {
                let w = $world.await;
                w.h.kill_in(&["run"], $dns, $hold).await;
                w.h.run(&["run"]).await;
                w.assert_done().await;
            }
        )*
    };
}
pub(crate) use run_resumes_after_kill;

/// The shared behaviour tests as `#[tokio::test]`s for the cloud whose peers are `$cloud`
/// (put `cloud_suite!(AwsPeers);` in the cloud's test file); `cloud_suite!(installer_network
/// GcpPeers)` adds the tests of [`InstallerNetwork`].
macro_rules! cloud_suite {
    ($cloud:ty) => {
        $crate::common::suite::cloud_suite!(@tests $cloud;
            fresh_reserve_and_seed_create_exactly_the_planned_resources_and_records,
            second_run_after_success_makes_zero_mutating_calls,
            another_writers_value_survives_seed_and_teardown,
            dns_teardown_removes_only_the_bootstrap_hosts_addresses,
            teardown_all_leaves_nothing_of_ours_and_nothing_else_is_touched,
            teardown_all_after_a_gate_timeout_with_the_load_balancers_up_releases_everything_ours,
            teardown_all_killed_while_waiting_for_the_load_balancers_resumes,
            a_new_state_dir_for_the_same_cluster_after_teardown_all_installs_afresh,
            seeding_after_stage_3_never_puts_the_bootstrap_ip_back,
            seeding_a_different_bootstrap_ip_than_the_seeded_one_is_refused,
            at_20_percent_faults_bootstrap_and_teardown_complete_with_nothing_leaked_or_duplicated,
            at_40_percent_faults_commands_complete_or_stop_resumably_and_never_leak,
            throttled_past_its_deadline_a_step_stops_resumably_and_a_rerun_completes,
            dns_verify_names_a_value_of_ours_that_left_the_zone,
            a_cname_where_our_record_goes_is_reported_not_retried,
            the_fixture_secrets_are_never_printed_even_at_trace,
            the_bootstrap_hosts_second_address_is_in_api_int_until_stage_3,
            sigkill_right_after_the_second_address_was_added_resumes_without_another,
            dns_seed_before_reserve_writes_all_or_nothing,
            with_dns_wait_the_agent_moves_on_once_a_late_writer_created_the_records,
            with_dns_wait_a_wrong_value_keeps_it_waiting_until_the_deadline,
            publish_round_trip_external_internal_external,
            publish_reverted_mid_change_returns_to_the_previous_state_with_nothing_leaked,
            publish_killed_at_each_step_resumes_without_leaks_or_duplicates,
            publish_leaves_the_users_public_ip_untouched,
            publish_from_an_admins_machine_with_only_a_kubeconfig_round_trips,
            publish_from_an_admins_machine_killed_mid_change_resumes,
            reserve_sends_the_dns_api_nothing,
        );
    };
    (installer_network $cloud:ty) => {
        $crate::common::suite::cloud_suite!(@tests $cloud;
            installer_default_network_is_used_by_its_default_names,
            the_installer_network_refuses_the_bring_your_own_names,
        );
    };
    (@tests $cloud:ty; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread")]
            async fn $name() {
                $crate::common::suite::$name::<$cloud>().await;
            }
        )*
    };
}
pub(crate) use cloud_suite;
