//! `run`, the daemon, end to end: moto + ministack for the cloud, the local API server with its
//! simulated controllers for the cluster (its NLBs claim their addresses in moto, endpoints
//! come from pods). Crash-and-resume at every step boundary, the gate's timeout path, flapping
//! endpoints and dropped watches, and the renderings a real cluster would refuse.
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions};
use bootstrap_sim::{Faults, Hold};
use common::aws::*;
use common::*;
use serde_json::Value;
use std::time::Duration;

/// Knobs of a cluster whose Services never get ready.
fn never_ready() -> ControllerKnobs {
    ControllerKnobs {
        never_ready: true,
        ..Default::default()
    }
}

struct World {
    h: AwsHarness,
    kube: KubeSim,
}

impl World {
    async fn new(knobs: ControllerKnobs) -> Self {
        Self::with_gate_timeout(knobs, "60s").await
    }

    async fn with_gate_timeout(knobs: ControllerKnobs, gate_timeout: &str) -> Self {
        Self::of_fixture("aws", knobs, gate_timeout).await
    }

    /// The AWS world of `fixture`, and a local API server whose simulated AWS Load Balancer
    /// Controller claims NLB addresses in that world's moto.
    async fn of_fixture(fixture: &str, knobs: ControllerKnobs, gate_timeout: &str) -> Self {
        let mut h = AwsHarness::new(fixture).await;
        let kube = KubeSim::start(KubeSimOptions {
            controller: knobs,
            cloud: h.peers.lb_cloud(),
            ..Default::default()
        })
        .await
        .unwrap();
        h.run_flags(kube.kubeconfig_path(), gate_timeout);
        Self { h, kube }
    }

    /// The AWS world of `fixture` and a local API server started with the options `edit`
    /// makes of the usual ones.
    async fn with_kube_options(
        fixture: &str,
        gate_timeout: &str,
        edit: impl FnOnce(&mut KubeSimOptions),
    ) -> Self {
        let mut h = AwsHarness::new(fixture).await;
        let mut options = KubeSimOptions {
            cloud: h.peers.lb_cloud(),
            ..Default::default()
        };
        edit(&mut options);
        let kube = KubeSim::start(options).await.unwrap();
        h.run_flags(kube.kubeconfig_path(), gate_timeout);
        Self { h, kube }
    }

    /// `run` with a 2 s gate deadline against a cluster whose Services never get ready: it must
    /// stop at the gate with exit 4 (after the hand-over).
    async fn run_into_gate_timeout(knobs: ControllerKnobs) -> (Self, std::process::Output) {
        Self::run_into_gate_timeout_with(knobs, &[]).await
    }

    async fn run_into_gate_timeout_with(
        knobs: ControllerKnobs,
        flags: &[&str],
    ) -> (Self, std::process::Output) {
        let w = Self::with_gate_timeout(knobs, "2s").await;
        let mut args = vec!["run"];
        args.extend_from_slice(flags);
        let out = w.h.command(&args).output().await.unwrap();
        assert_eq!(
            out.status.code(),
            Some(4),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (w, out)
    }

    /// `run` in the world of `fixture` until done: the world and `status`.
    async fn run_to_done(fixture: &str) -> (Self, Value) {
        let w = Self::of_fixture(fixture, ControllerKnobs::default(), "60s").await;
        w.h.run(&["run"]).await;
        let status = w.status().await;
        assert_eq!(status["run_step"], "done", "{status:#}");
        (w, status)
    }

    async fn status(&self) -> Value {
        self.h.status().await
    }

    /// `run` in the background, quiet: for tests that act on it while it runs.
    fn spawn_run(&self) -> tokio::process::Child {
        self.h
            .command(&["run"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }

    fn internal_lb(&self) -> Value {
        apiserver_service(&self.kube, "internal-lb")
    }

    fn kube_mutations(&self) -> Vec<(String, String)> {
        kube_mutations(&self.kube)
    }

    /// Step 3: ENIs handed over, EIPs kept, DNS holds only the LB IPs; Services applied and
    /// Ready; the gate result published.
    async fn assert_done(&self) {
        self.assert_done_keeping(&[]).await;
    }

    /// [`World::assert_done`], with `others` (another writer's values) still in both private
    /// records.
    async fn assert_done_keeping(&self, others: &[&str]) {
        let status = self.status().await;
        assert_eq!(status["run_step"], "done", "{status:#}");
        let world = self.h.world().await;
        assert_eq!(
            world.ours("eips").len(),
            3,
            "EIPs stay: the external NLB uses them"
        );
        assert!(
            world.ours("enis").is_empty(),
            "ENIs were handed over to the internal NLB"
        );
        let handed: Vec<String> = {
            let mut v: Vec<String> = string_fields(&status["handed_over"], "ip");
            v.sort();
            v
        };
        assert_eq!(handed.len(), 3);
        // In moto, each handed-over IP is held by the internal NLB's ENI, and each EIP is
        // associated with an ENI of the external NLB (what the real controller leaves behind).
        let enis = world.0["enis"].as_array().unwrap();
        for ip in &handed {
            let holders: Vec<&Value> = enis.iter().filter(|e| e["ip"] == ip.as_str()).collect();
            assert_eq!(holders.len(), 1, "{ip}: {holders:?}");
            assert!(
                holders[0]["description"]
                    .as_str()
                    .unwrap()
                    .starts_with("ELB net/k8s-openshif-internal-"),
                "{ip} is held by the internal NLB: {holders:?}"
            );
        }
        for eip in world.ours("eips") {
            let eni = enis
                .iter()
                .find(|e| e["id"] == eip["eni"])
                .unwrap_or_else(|| panic!("EIP not associated: {eip}"));
            assert!(
                eni["description"]
                    .as_str()
                    .unwrap()
                    .starts_with("ELB net/k8s-openshif-external-"),
                "{eni}"
            );
        }
        for name in [API, API_INT] {
            let mut got = world.record("private", name);
            got.sort();
            let mut expected = handed.clone();
            expected.extend(others.iter().map(|s| s.to_string()));
            expected.sort();
            assert_eq!(
                got, expected,
                "private {name}: the reserved IPs (and others' values) only, bootstrap removed"
            );
        }
        let mut public = world.record("public", API);
        public.sort();
        assert_eq!(public, world.ips("eips"));
        for (ns, name) in AWS_SERVICES {
            let svc = load_balancer_service(&self.kube, ns, name);
            let ingress = &svc["status"]["loadBalancer"]["ingress"];
            assert!(
                ingress[0]["hostname"]
                    .as_str()
                    .is_some_and(|h| h.ends_with(".elb.us-east-1.amazonaws.com"))
                    && ingress[0].get("ip").is_none(),
                "{ns}/{name}: an NLB reports its hostname only: {ingress}"
            );
        }
        let internal = self.internal_lb();
        let annotated: Vec<&str> = internal["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses"]
            .as_str()
            .unwrap()
            .split(',')
            .collect();
        let mut annotated: Vec<String> = annotated.iter().map(|s| s.to_string()).collect();
        annotated.sort();
        assert_eq!(
            annotated, handed,
            "the internal LB claims exactly the handed-over IPs"
        );
        let gated: Vec<(String, String)> = status["services"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["namespace"].as_str().unwrap().to_string(),
                    t["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            gated,
            AWS_SERVICES.map(|(ns, n)| (ns.to_string(), n.to_string())),
            "the AWS gate waits on exactly the external and the one internal Service"
        );
        agent::assert_gate_passed(&self.kube);
        // Hostname-only ingress on AWS: the gate asked EC2 and saw ELB interfaces hold every
        // reserved IP (3 EIPs on external-lb, 3 private IPs on internal-lb).
        for s in status["gate"]["services"].as_array().unwrap() {
            let proof = s["proof"].as_str().unwrap_or_default();
            assert!(
                proof.starts_with("cloud: load-balancer interfaces hold")
                    && proof.matches(" by eni-").count() == 3,
                "{}: {proof}",
                s["name"]
            );
        }
        let done: Value =
            serde_json::from_slice(&std::fs::read(self.h.done_file()).unwrap()).unwrap();
        assert_eq!(done["phase"], "complete");
        assert_eq!(done["bootstrapIpRemoved"], true);
        assert_eq!(done["gate"]["passed"], true);
        let cv = cluster_version(&self.kube).expect("ClusterVersion version");
        assert_eq!(
            cv["spec"]["capabilities"],
            serde_json::json!({
                "baselineCapabilitySet": "v4.14",
                "additionalEnabledCapabilities": ["marketplace", "Console"],
            }),
            "the fixture's install-config capabilities are in ClusterVersion"
        );
        assert!(
            cv.get("status").is_none(),
            "ClusterVersion status is the CVO's; the agent wrote {cv:#}"
        );
        assert!(
            !self.kube.request_log().iter().any(|(m, p)| m != "GET"
                && p.contains("clusterversions")
                && p.ends_with("/status")),
            "no status-subresource write"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn full_run_reaches_done_and_a_rerun_makes_zero_mutating_calls() {
    let w = World::new(ControllerKnobs::default()).await;
    // At trace: the whole run must not print a credential (cloud keys, the cluster's token).
    let out = w.h.run_at_trace(&["run"]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("TRACE"));
    w.h.assert_never_leaked(
        &[&out],
        &[
            ("fixture-secret-DO-NOT-LOG", "secret"),
            ("AKIAFIXTUREEXAMPLE00", "access key id"),
            (w.kube.token(), "the kubeconfig's bearer token"),
        ],
    );
    w.assert_done().await;

    w.kube.clear_request_log();
    w.h.assert_changes_nothing(&[&["run"]], "cloud").await;
    assert!(
        w.kube_mutations().is_empty(),
        "kube: {:?}",
        w.kube_mutations()
    );
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn at_20_percent_cloud_faults_run_reaches_done_with_nothing_leaked_or_duplicated() {
    let w = World::new(ControllerKnobs::default()).await;
    for name in ["api.mycluster.example.com", "api-int.mycluster.example.com"] {
        w.h.peers
            .write_record("private", name, &[OTHER_WRITER])
            .await
            .unwrap();
    }
    w.h.peers.reset_counts();
    w.h.peers.inject_faults(&Faults::new(0.2, fault_seed()));
    w.h.run_all(&[&["run"]]).await;
    let stats = w.h.peers.fault_stats();
    w.h.peers.stop_faults();
    eprintln!("aws run at 20%: {stats:?}");
    assert!(stats.injected() > 0, "{stats:?}");
    let released = w.h.peers.ec2_proxy.calls_named("ReleaseAddress");
    assert!(released.is_empty(), "no EIP was duplicated: {released:?}");
    w.assert_done_keeping(&[OTHER_WRITER]).await;
    w.h.assert_changes_nothing(&[&["run"]], "converged despite the faults")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gate_timeout_exits_4_and_a_later_run_finishes() {
    let (mut w, out) = World::run_into_gate_timeout(never_ready()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no ingress yet"),
        "the timeout says why: {stderr}"
    );
    let status = w.status().await;
    assert_eq!(status["run_step"], "gate");
    assert!(status["last_error"].as_str().unwrap().contains("timed out"));

    w.kube.set_knobs(ControllerKnobs::default());
    let last = w.h.extra.len() - 1;
    w.h.extra[last] = "60s".into();
    w.h.run(&["run"]).await;
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ingress_without_endpoints_is_not_ready() {
    let (_w, out) = World::run_into_gate_timeout(ControllerKnobs {
        ingress_without_endpoints: true,
        ..Default::default()
    })
    .await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 of 0 endpoints ready"));
}

#[tokio::test(flavor = "multi_thread")]
async fn flapping_endpoints_and_dropped_watches_still_pass_the_gate() {
    let w = World::new(ControllerKnobs {
        flapping: Some(Duration::from_millis(150)),
        drop_watches_every: Some(Duration::from_millis(200)),
        ..Default::default()
    })
    .await;
    w.h.run(&["run"]).await;
    let status = w.status().await;
    assert_eq!(status["run_step"], "done");
    assert_eq!(status["gate"]["passed"], true);
}

// SIGKILL at a step boundary, then `run` again: it ends Done with nothing duplicated or leaked.
common::suite::run_resumes_after_kill! { World::new(ControllerKnobs::default());
    resume_after_kill_during_reserve: false, Hold::After(4);
    resume_after_kill_during_dns_seed: true, Hold::After(2);
    // EC2 mutations: 3 AllocateAddress, 3 CreateNetworkInterface, then the hand-over deletes.
    resume_after_kill_during_hand_over: false, Hold::After(8);
    // Route53 mutations, one change per zone per phase: the seed (private zone: api and api-int,
    // bootstrap IP only), the joins (the private zone's api and api-int, the public zone's api,
    // at once), then the removal of the bootstrap IP.
    resume_after_kill_during_bootstrap_removal: true, Hold::Before(4);
    // The 2nd Route53 mutation is a join, after the bootstrap-only seed.
    resume_after_kill_during_a_progressive_join: true, Hold::Before(2);
}

/// Progressive DNS (the default): while no load balancer serves, the private records hold only
/// the bootstrap IP and there is no public record; `--dns-seeding all-at-once` seeds every
/// reserved IP at once, as the seed does.
#[tokio::test(flavor = "multi_thread")]
async fn progressive_dns_holds_back_ips_no_load_balancer_serves() {
    for (mode, all_at_once) in [("progressive", false), ("all-at-once", true)] {
        let (w, _) =
            World::run_into_gate_timeout_with(never_ready(), &["--dns-seeding", mode]).await;
        let world = w.h.world().await;
        let handed: Vec<String> = string_fields(&w.status().await["handed_over"], "ip");
        for name in [API, API_INT] {
            let mut expected = vec![BOOTSTRAP_IP.to_string()];
            if all_at_once {
                expected.extend(handed.iter().cloned());
            }
            expected.sort();
            let mut got = world.record("private", name);
            got.sort();
            assert_eq!(got, expected, "{mode}: private {name}");
        }
        assert_eq!(
            world.record("public", API).is_empty(),
            !all_at_once,
            "{mode}: the public api record exists only once an IP serves"
        );
        assert_eq!(
            w.status().await["serving"],
            if all_at_once {
                Value::Null
            } else {
                serde_json::json!([])
            },
            "{mode}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_after_kill_while_waiting_at_the_gate() {
    let w = World::new(never_ready()).await;
    let mut child = w.spawn_run();
    // The gate is reached once the Services exist; a watch is then open on them.
    loop {
        if AWS_SERVICES
            .iter()
            .all(|(ns, n)| w.kube.get("", "v1", "services", Some(ns), n).is_some())
        {
            break;
        }
        tokio::select! {
            status = child.wait() => panic!("agent exited early: {status:?}"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    w.kube.set_knobs(ControllerKnobs::default());
    w.h.run(&["run"]).await;
    w.assert_done().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn teardown_all_after_a_failed_gate_removes_the_handed_over_ips_from_dns() {
    let (mut w, _) = World::run_into_gate_timeout(never_ready()).await;
    let handed: Vec<String> = string_fields(&w.status().await["handed_over"], "ip");
    assert_eq!(handed.len(), 3, "the gate is reached after the hand-over");
    let run_flags = std::mem::take(&mut w.h.extra);
    w.h.run(&["teardown", "--all"]).await;
    w.h.extra = run_flags;
    let world = w.h.world().await;
    world.assert_no_address_of_ours("nothing of ours");
    for name in [API, API_INT] {
        let left = world.record("private", name);
        assert!(
            handed.iter().all(|ip| !left.contains(ip)),
            "{name} still holds a handed-over IP: {left:?}"
        );
        assert!(!left.contains(&BOOTSTRAP_IP.to_string()));
    }
    assert!(world.record("public", API).is_empty());
}

/// `complete` is signalled only after the bootstrap IP left DNS and the drain is over: killed
/// during the drain, the agent has said `gate-passed` and nothing more; the next run waits out
/// the rest of the drain and says `complete`.
#[tokio::test(flavor = "multi_thread")]
async fn complete_only_after_the_bootstrap_ip_left_dns_and_the_drain() {
    let mut w = World::new(ControllerKnobs::default()).await;
    let drain = w.h.extra.iter().position(|a| a == "--drain-wait").unwrap() + 1;
    w.h.extra[drain] = "30s".into();
    let mut child = w.spawn_run();
    let journal = w.h.state.join("journal.json");
    loop {
        let draining = std::fs::read(&journal)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|j| j.get("drain_until").is_some());
        if draining {
            break;
        }
        tokio::select! {
            status = child.wait() => panic!("agent exited early: {status:?}"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    let world = w.h.world().await;
    for name in [API, API_INT] {
        assert!(
            !world
                .record("private", name)
                .contains(&BOOTSTRAP_IP.to_string()),
            "the drain starts after the bootstrap IP left {name}"
        );
    }
    let done: Value = serde_json::from_slice(&std::fs::read(w.h.done_file()).unwrap()).unwrap();
    assert_eq!(done["phase"], "gate-passed", "{done:#}");
    assert_eq!(agent::signal(&w.kube)["phase"], "gate-passed");
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    // The rerun keeps the recorded end of the drain (a short one now, so the test is quick).
    let status = w.status().await;
    assert_eq!(status["run_step"], "remove-bootstrap");
    let mut journal_json: Value =
        serde_json::from_slice(&std::fs::read(&journal).unwrap()).unwrap();
    let soon =
        humantime::format_rfc3339_seconds(std::time::SystemTime::now() + Duration::from_secs(1));
    journal_json["drain_until"] = Value::from(soon.to_string());
    std::fs::write(&journal, serde_json::to_vec(&journal_json).unwrap()).unwrap();
    w.h.run(&["run"]).await;
    w.assert_done().await;
}

/// The AWS machine-config-server template as it was: a second internal NLB on the same
/// private IPs as `internal-lb`.
const TWO_INTERNAL_NLBS: &str = r#"apiVersion: v1
kind: Service
metadata:
  name: internal-lb-machine-config-server
  namespace: openshift-machine-config-operator
  labels: {{ labels | tojson }}
  annotations:
    service.beta.kubernetes.io/aws-load-balancer-type: external
    service.beta.kubernetes.io/aws-load-balancer-nlb-target-type: ip
    service.beta.kubernetes.io/aws-load-balancer-scheme: internal
    service.beta.kubernetes.io/aws-load-balancer-subnets: "{{ private | map(attribute='subnet') | join(',') }}"
    service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses: "{{ private | map(attribute='ip') | join(',') }}"
spec:
  type: LoadBalancer
  selector:
    k8s-app: machine-config-server
  ports:
  - name: machine-config-server
    protocol: TCP
    port: 22623
    targetPort: 22623
"#;

#[tokio::test(flavor = "multi_thread")]
async fn the_old_rendering_with_two_internal_nlbs_on_the_same_ips_fails_the_gate() {
    let mut w = World::with_gate_timeout(ControllerKnobs::default(), "5s").await;
    // The gate never passes.
    let stderr =
        w.h.run_into_the_gate_with_templates("aws", |name, text| {
            if name == "internal-lb-machine-config-server.yaml" {
                TWO_INTERNAL_NLBS.to_string()
            } else {
                text
            }
        })
        .await;
    // One of the two internal NLBs got the IPs; the other was refused, with the Event the AWS
    // Load Balancer Controller records, and has no ingress.
    let internal = [
        ("openshift-kube-apiserver", "internal-lb"),
        (
            "openshift-machine-config-operator",
            "internal-lb-machine-config-server",
        ),
    ];
    let refused: Vec<(&str, &str)> = internal
        .iter()
        .copied()
        .filter(|(ns, name)| {
            w.kube
                .service_events(ns, name)
                .iter()
                .any(|e| e["reason"] == "FailedDeployModel" && e["type"] == "Warning")
        })
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "exactly one internal NLB is refused: {refused:?}"
    );
    let (ns, name) = refused[0];
    let svc = w.kube.get("", "v1", "services", Some(ns), name).unwrap();
    assert_eq!(svc["status"]["loadBalancer"], serde_json::json!({}));
    assert!(
        stderr.contains(name),
        "the gate names the refused Service: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_selector_that_matches_no_real_pod_fails_the_gate() {
    let mut w = World::with_gate_timeout(ControllerKnobs::default(), "3s").await;
    // The seed's selector: real kube-apiserver pods are not labelled `app: kube-apiserver`.
    let stderr =
        w.h.run_into_the_gate_with_templates("aws", |_, text| {
            text.replace(
                "    app: openshift-kube-apiserver\n    apiserver: \"true\"\n",
                "    app: kube-apiserver\n",
            )
        })
        .await;
    assert!(
        stderr.contains("0 of 0 endpoints ready"),
        "no pod matches, so no endpoint: {stderr}"
    );
    let internal = w.internal_lb();
    assert_eq!(
        internal["spec"]["selector"],
        serde_json::json!({"app": "kube-apiserver"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn services_applied_before_the_hand_over_are_refused_while_the_enis_hold_the_ips() {
    let mut w = World::new(ControllerKnobs::default()).await;
    w.h.extra.clear();
    w.h.run(&["reserve"]).await;
    w.h.extra = vec![
        "--kubeconfig".into(),
        w.kube.kubeconfig_path().display().to_string(),
    ];
    let placeholders: Vec<String> =
        w.h.world()
            .await
            .ours("enis")
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
    assert_eq!(placeholders.len(), 3);
    w.h.run(&["apply"]).await;
    // The Event is written by the controller in the background: look until it is there.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let events = loop {
        let events: Vec<Value> = w
            .kube
            .service_events("openshift-kube-apiserver", "internal-lb")
            .into_iter()
            .filter(|e| e["reason"] == "FailedDeployModel")
            .collect();
        if !events.is_empty() || std::time::Instant::now() > deadline {
            break events;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!events.is_empty(), "no FailedDeployModel Event within 30 s");
    let message = events[0]["message"].as_str().unwrap();
    assert!(
        placeholders.iter().any(|id| message.contains(id.as_str())),
        "the refusal names the ENI that still holds the IP: {message}"
    );
    let out =
        w.h.command(&["wait", "--gate-timeout", "2s"])
            .output()
            .await
            .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("internal-lb: no ingress yet"));
}

#[tokio::test(flavor = "multi_thread")]
async fn publish_internal_gates_on_the_one_internal_service() {
    let (_w, status) = World::run_to_done("aws-internal").await;
    let services: Vec<(&str, &str)> = status["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["namespace"].as_str().unwrap(),
                s["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(services, [("openshift-kube-apiserver", "internal-lb")]);
    assert_eq!(
        status["services"][0]["claims"].as_array().unwrap().len(),
        3,
        "the gate proves the three private IPs"
    );
}

/// userProvisionedDNS: Enabled. `run` reserves, hands over, applies and gates the Services as
/// usual and completes, with not one Route53 call; the journal keeps the records to create.
#[tokio::test(flavor = "multi_thread")]
async fn user_provisioned_dns_run_completes_without_a_route53_call() {
    let (w, status) = World::run_to_done("aws-user-dns").await;
    assert_eq!(status["gate"]["passed"], true);
    assert_eq!(
        status["services"].as_array().unwrap().len(),
        2,
        "{status:#}"
    );
    let route53 = w.h.peers.route53_proxy.calls();
    assert!(route53.is_empty(), "no Route53 call at all: {route53:?}");
    let world = w.h.world().await;
    assert_eq!(world.ours("eips").len(), 3);
    assert!(
        world.ours("enis").is_empty(),
        "handed over to the internal NLB"
    );
    let mut handed: Vec<String> = string_fields(&status["handed_over"], "ip");
    handed.push(BOOTSTRAP_IP.to_string());
    handed.sort();
    let api_int = status["user_dns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["record"] == "api-int.mycluster.example.com A")
        .unwrap_or_else(|| panic!("{status:#}"));
    let mut values: Vec<String> = agent::strings(&api_int["values"]);
    values.sort();
    assert_eq!(values, handed, "the bootstrap IP and the handed-over IPs");
    agent::assert_gate_passed(&w.kube);

    w.h.assert_changes_nothing(&[&["run"]], "a second run")
        .await;
}

/// The cluster-version operator already wrote its status (every field the real CRD requires):
/// `run` still completes, writes only `spec.capabilities`, and leaves the status as it was.
#[tokio::test(flavor = "multi_thread")]
async fn run_completes_when_the_cvo_has_written_its_status_and_leaves_it_alone() {
    let w = World::new(ControllerKnobs::default()).await;
    let status = serde_json::json!({
        "availableUpdates": null,
        "desired": {"version": "4.18.0", "image": "quay.io/openshift-release-dev/ocp-release@sha256:0"},
        "observedGeneration": 1,
        "versionHash": "abc",
        "conditions": [{"type": "Available", "status": "False", "reason": "Installing",
                        "message": "installing", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    });
    w.kube
        .create(serde_json::json!({
            "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
            "metadata": {"name": "version"},
            "spec": {"clusterID": "0f1e2d3c-0000-4000-8000-000000000001", "channel": "stable-4.18"},
            "status": status,
        }))
        .unwrap();
    w.h.run(&["run"]).await;
    let cv = cluster_version(&w.kube).unwrap();
    assert_eq!(cv["status"], status, "the CVO's status is untouched");
    assert_eq!(cv["spec"]["channel"], "stable-4.18");
    assert_eq!(
        cv["spec"]["clusterID"],
        "0f1e2d3c-0000-4000-8000-000000000001"
    );
    assert_eq!(cv["spec"]["capabilities"]["baselineCapabilitySet"], "v4.14");
    assert!(
        !w.kube_mutations()
            .iter()
            .any(|(_, p)| p.contains("clusterversions") && p.ends_with("/status")),
        "{:?}",
        w.kube_mutations()
    );
    w.kube.clear_request_log();
    w.h.assert_changes_nothing(&[&["run"]], "cloud").await;
    assert!(w.kube_mutations().is_empty(), "{:?}", w.kube_mutations());
}

/// `pause` holds a running agent before its next step (it keeps its lock and says so in
/// `status`), across a restart; `resume` lets it finish.
#[tokio::test(flavor = "multi_thread")]
async fn a_paused_agent_waits_before_its_next_step_even_after_a_restart() {
    let mut w = World::new(ControllerKnobs::default()).await;
    let state = w.h.state.display().to_string();
    std::fs::create_dir_all(&w.h.state).unwrap();
    let pause = |verb: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"))
            .args([verb, "--state-dir", &state])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    pause("pause");
    for restart in 0..2 {
        let mut child = w.spawn_run();
        // It journals the step it is about to take, then holds.
        loop {
            let status = w.status().await;
            if status["run_step"] == "reserve" && status["paused"] == true {
                break;
            }
            tokio::select! {
                s = child.wait() => panic!("agent exited while paused: {s:?}"),
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
        assert_eq!(
            w.h.world().await.count("eips"),
            0,
            "restart {restart}: nothing reserved while paused"
        );
        let run_flags = std::mem::take(&mut w.h.extra);
        let locked = w.h.command(&["reserve"]).output().await.unwrap();
        w.h.extra = run_flags;
        assert_eq!(
            locked.status.code(),
            Some(3),
            "the paused agent keeps its lock: {}",
            String::from_utf8_lossy(&locked.stderr)
        );
        child.start_kill().unwrap();
        child.wait().await.unwrap();
    }
    pause("resume");
    w.h.run(&["run"]).await;
    w.assert_done().await;
    assert_eq!(w.status().await["paused"], false);
}

/// `gather` bundles what a person needs (journal, status, plan, Services, gate, cloud and
/// cluster views), even from a stuck install, and no secret: not the creds secret's keys, not
/// the kubeconfig's token. With the cluster unreachable it still writes a bundle and says why.
#[tokio::test(flavor = "multi_thread")]
async fn gather_bundles_a_stuck_install_without_any_secret() {
    let (mut w, _) = World::run_into_gate_timeout(never_ready()).await;
    let out = w.h.dir.path().join("bundle.tar.gz");
    let kubeconfig = w.kube.kubeconfig_path().display().to_string();
    let run_flags = std::mem::take(&mut w.h.extra);
    let gather = |extra: Vec<String>| {
        let mut args: Vec<String> =
            vec!["gather".into(), "--out".into(), out.display().to_string()];
        args.extend(extra);
        args
    };
    let args = gather(vec!["--kubeconfig".into(), kubeconfig]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    w.h.run(&args).await;
    let files = unpack_bundle(&out);
    for name in [
        "versions.json",
        "spec.json",
        "journal.json",
        "gate.json",
        "cloud.json",
        "plan.json",
        "services.json",
        "cluster.json",
        "errors.txt",
    ] {
        assert!(
            files.contains_key(name),
            "{name} missing: {:?}",
            files.keys()
        );
    }
    assert_eq!(files["errors.txt"], "everything was collected\n");
    let cluster: Value = serde_json::from_str(&files["cluster.json"]).unwrap();
    assert_eq!(
        cluster.as_array().unwrap().len(),
        2,
        "external-lb and internal-lb"
    );
    let secrets = [
        "AKIAFIXTUREEXAMPLE00".to_string(),
        "fixture-secret-DO-NOT-LOG".to_string(),
        w.kube.token().to_string(),
    ];
    for (name, text) in &files {
        for s in &secrets {
            assert!(!text.contains(s.as_str()), "{name} holds a secret");
        }
    }

    // The cluster gone: a bundle all the same, and errors.txt says what is missing.
    let dead = w.h.dir.path().join("dead-kubeconfig");
    std::fs::write(
        &dead,
        std::fs::read_to_string(w.kube.kubeconfig_path())
            .unwrap()
            .replace(&w.kube.url(), "https://127.0.0.1:9"),
    )
    .unwrap();
    let args = gather(vec!["--kubeconfig".into(), dead.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    w.h.run(&args).await;
    let files = unpack_bundle(&out);
    assert!(
        files["errors.txt"].contains("cluster.json"),
        "{}",
        files["errors.txt"]
    );
    assert!(files.contains_key("journal.json") && files.contains_key("plan.json"));
    w.h.extra = run_flags;
}

// ---- UPI, by hand: the docs/upi.md runbook, played by the user ---------------------------------------

/// The world's subnet ids whose CIDR starts with each prefix (setup lays out the fixture's
/// private subnets as 10.0.1-3.0/24 and its public ones as 10.0.4-6.0/24).
fn subnets(world: &AwsWorld, prefixes: &[&str]) -> Vec<String> {
    prefixes
        .iter()
        .map(|p| {
            world.0["subnets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["cidr"].as_str().unwrap().starts_with(p))
                .unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

const PRIVATE_CIDRS: [&str; 3] = ["10.0.1.", "10.0.2.", "10.0.3."];
const PUBLIC_CIDRS: [&str; 3] = ["10.0.4.", "10.0.5.", "10.0.6."];

/// The EC2 calls that make, release or tag an address or interface.
const ADDRESS_CALLS: &[&str] = &[
    "AllocateAddress",
    "ReleaseAddress",
    "CreateNetworkInterface",
    "DeleteNetworkInterface",
    "CreateTags",
    "DeleteTags",
];

/// The user's reservation of `purpose` for each of `subnets` (EIPs for `public-ipv4`, ENIs in
/// the subnet for `private-ipv4`), named as the seed says: the first with the subnet suffix,
/// the others without. Their (id, IP).
async fn user_reservations(
    h: &AwsHarness,
    purpose: &str,
    subnets: &[String],
) -> Vec<(String, String)> {
    let mut made = Vec::new();
    for (i, subnet) in subnets.iter().enumerate() {
        let plain = format!("mycluster-7xk2p-rsvd-{purpose}");
        let name = if i == 0 {
            format!("{plain}-{subnet}")
        } else {
            plain
        };
        let eni_subnet = (purpose == "private-ipv4").then_some(subnet.as_str());
        made.push(h.peers.create_named(&name, eni_subnet).await.unwrap());
    }
    made
}

/// The comma-separated annotation `key` of the Service `svc`, sorted.
fn annotation_list(svc: &Value, key: &str) -> Vec<String> {
    let mut items: Vec<String> = svc["metadata"]["annotations"][key]
        .as_str()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    items.sort();
    items
}

fn sorted(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut items: Vec<String> = items.collect();
    items.sort();
    items
}

/// The AWS world for the by-hand (UPI) commands: no `run` flags; its kubeconfig and its
/// (private, public) subnets.
async fn upi_world() -> (World, String, Vec<String>, Vec<String>) {
    upi_world_with(|_| {}).await
}

/// [`upi_world`] with a local API server started with the options `edit` makes.
async fn upi_world_with(
    edit: impl FnOnce(&mut KubeSimOptions),
) -> (World, String, Vec<String>, Vec<String>) {
    let mut w = World::with_kube_options("aws", "60s", edit).await;
    let kubeconfig = w.kube.kubeconfig_path().display().to_string();
    w.h.extra.clear();
    let world = w.h.world().await;
    let (private, public) = (
        subnets(&world, &PRIVATE_CIDRS),
        subnets(&world, &PUBLIC_CIDRS),
    );
    (w, kubeconfig, private, public)
}

#[tokio::test(flavor = "multi_thread")]
async fn upi_by_hand_adopts_the_users_eips_and_enis_and_teardown_all_leaves_them() {
    let (w, kubeconfig, private, public) = upi_world().await;
    // 1. The user allocates an EIP per public subnet and an ENI per private subnet, named as
    //    the seed says (with boto3): with the subnet suffix, or without it (EIPs then fill the
    //    public subnets in order; an ENI serves the subnet it lies in).
    let eips = user_reservations(&w.h, "public-ipv4", &public).await;
    let enis = user_reservations(&w.h, "private-ipv4", &private).await;
    w.h.peers.reset_counts();

    // 2. `plan` shows all six adopted, reserves nothing, and tells the user to delete the
    //    ENIs before the Services are applied.
    let plan = String::from_utf8(w.h.run(&["plan"]).await.stdout).unwrap();
    assert_eq!(plan.matches("adopted (yours)").count(), 6, "{plan}");
    assert!(
        !plan.contains("+ reserve") && !plan.contains("hand over"),
        "{plan}"
    );
    assert!(
        plan.contains("delete them right before the Services are applied"),
        "{plan}"
    );

    // 3. DNS, then the user's hand-over (deleting their ENIs), render, apply, wait, teardown.
    w.h.run(&["dns", "seed"]).await;
    for (id, _) in &enis {
        w.h.peers.delete_eni(id).await.unwrap();
    }
    let rendered = String::from_utf8(w.h.run(&["render"]).await.stdout).unwrap();
    for wanted in eips
        .iter()
        .map(|(id, _)| id)
        .chain(enis.iter().map(|(_, ip)| ip))
    {
        assert!(rendered.contains(wanted.as_str()), "{wanted}: {rendered}");
    }
    w.h.run(&["apply", "--kubeconfig", &kubeconfig]).await;
    w.h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    w.h.run(&["dns", "teardown"]).await;

    // The Services claim the user's addresses, and their load balancers hold them.
    let external = w
        .kube
        .get(
            "",
            "v1",
            "services",
            Some("openshift-kube-apiserver"),
            "external-lb",
        )
        .unwrap();
    let user_allocations = sorted(eips.iter().map(|(id, _)| id.clone()));
    assert_eq!(
        annotation_list(
            &external,
            "service.beta.kubernetes.io/aws-load-balancer-eip-allocations"
        ),
        user_allocations
    );
    let user_ips = sorted(enis.iter().map(|(_, ip)| ip.clone()));
    assert_eq!(
        annotation_list(
            &w.internal_lb(),
            "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses"
        ),
        user_ips
    );
    let world = w.h.world().await;
    for name in [API, API_INT] {
        let mut got = world.record("private", name);
        got.sort();
        assert_eq!(
            got, user_ips,
            "private {name}: the user's IPs, bootstrap removed"
        );
    }
    // Nothing of the agent's own: no EIP, no ENI, no tag.
    world.assert_no_address_of_ours("the user's reservations only");
    w.h.assert_no_mutating_call_naming(ADDRESS_CALLS);

    // `status` shows all six adopted. 4. `teardown --all` leaves the user's EIPs, and says so.
    w.h.assert_user_reservations_adopted_and_left(6).await;
    let world = w.h.world().await;
    let left = string_fields(&world.0["eips"], "id");
    for id in &user_allocations {
        assert!(left.contains(id), "{id} stays: {left:?}");
    }
    w.h.assert_no_mutating_call_naming(ADDRESS_CALLS);
}

// ---- zones: the installer's VPC with the control plane in one zone --------------------------

/// The control-plane machines of `aws-installer-vpc-one-zone-masters`: all in the private
/// subnet of us-east-1a (10.0.1.0/24 in the installer layout), as the install-config's
/// `controlPlane.platform.aws.zones: [us-east-1a]` places them.
const MASTERS: [&str; 3] = ["10.0.1.101", "10.0.1.102", "10.0.1.103"];

/// The installer's VPC (subnets in us-east-1a, -1b and -1c: the compute zones) with the
/// control plane in us-east-1a only: the masters' ENIs exist in moto, the local API server's
/// kube-apiserver pods run on their IPs, `reserve` has run, and the proof on the wire dials
/// each reserved IP through its own front door (an NLB node: it forwards only while the NLB
/// serves that IP on that port). `run` waits `gate_timeout` at the gate.
async fn one_zone_control_plane(gate_timeout: &str) -> (World, Vec<String>) {
    let (mut h, setup) = AwsHarness::with_layout(
        "aws-installer-vpc-one-zone-masters",
        &bootstrap_sim::VpcLayout::Installer,
    )
    .await;
    let private_subnets = strings(&setup["layout"]["private"]);
    assert_eq!(private_subnets.len(), 3, "{setup}");
    h.peers
        .create_enis(&private_subnets[0], &MASTERS, "control-plane machine")
        .await
        .unwrap();
    let kube = KubeSim::start(KubeSimOptions {
        cloud: h.peers.lb_cloud(),
        node_ips: MASTERS.iter().map(|ip| ip.parse().unwrap()).collect(),
        ..Default::default()
    })
    .await
    .unwrap();
    h.run(&["reserve"]).await;
    let world = h.world().await;
    let mut ips = world.reserved_private();
    ips.extend(world.reserved_public());
    assert_eq!(ips.len(), 6, "one IP per private and per public subnet");
    let mut doors = Vec::new();
    for ip in &ips {
        for port in [6443, 22623] {
            let door = kube.front_door(ip.parse().unwrap(), port).await.unwrap();
            doors.push(format!("{ip}:{port}={door}"));
        }
    }
    h.run_flags(kube.kubeconfig_path(), gate_timeout);
    // Before `--gate-timeout`, which tests replace by position: per-IP dials win over `*`.
    let at = h.extra.len() - 2;
    h.extra.splice(
        at..at,
        ["--wire-dial-override".to_string(), doors.join(",")],
    );
    (World { h, kube }, ips)
}

/// In the installer's VPC the private and public subnets of the compute-only zones hold
/// reserved IPs too. With cross-zone load balancing on (the templates), their NLB nodes
/// forward to the control plane in us-east-1a: `run` completes and every IP passed the proof.
#[tokio::test(flavor = "multi_thread")]
async fn control_plane_in_one_zone_of_three_completes_with_cross_zone_load_balancing() {
    let (w, ips) = one_zone_control_plane("60s").await;
    w.h.run(&["run"]).await;
    let status = w.status().await;
    assert_eq!(status["run_step"], "done", "{status:#}");
    let proof = status["wire_proof"].as_str().unwrap_or_default();
    assert!(proof.starts_with("passed"), "{status:#}");
    for ip in &ips {
        assert!(
            proof.contains(&format!("{ip}:6443 TLS verified")),
            "{ip}: {proof}"
        );
    }
    for svc in ["external-lb", "internal-lb"] {
        let svc = apiserver_service(&w.kube, svc);
        assert_eq!(
            svc["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-attributes"],
            "load_balancing.cross_zone.enabled=true"
        );
    }
    assert_eq!(
        w.kube.serving_ips().await.len(),
        6,
        "every reserved IP serves"
    );
}

/// The old templates, without cross-zone load balancing: the NLB nodes of us-east-1b and
/// -1c have no target in their zone and drop the traffic of their IPs, so the proof on the
/// wire never passes for them and `run` stops at the gate (exit 4), keeping the bootstrap IP
/// in DNS; the IPs of us-east-1a serve.
#[tokio::test(flavor = "multi_thread")]
async fn control_plane_in_one_zone_of_three_never_passes_the_proof_without_cross_zone() {
    let (mut w, ips) = one_zone_control_plane("15s").await;
    let stderr =
        w.h.run_into_the_gate_with_templates("aws", |_, text| {
            text.lines()
                .filter(|l| !l.contains("aws-load-balancer-attributes"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .await;
    assert!(
        stderr.contains("proof on the wire did not pass"),
        "{stderr}"
    );
    // The zone of each reserved IP: a private IP by its subnet (us-east-1a is 10.0.1.0/24),
    // an EIP by the subnet of the NLB interface it is associated with.
    let world = w.h.world().await;
    let enis = world.0["enis"].as_array().unwrap();
    let public_a = enis
        .iter()
        .find(|e| {
            e["ip"]
                .as_str()
                .is_some_and(|ip| ip.starts_with("10.0.11."))
        })
        .map(|e| e["subnet"].as_str().unwrap().to_string());
    let in_zone_a = |ip: &str| {
        ip.starts_with("10.0.1.")
            || world.0["eips"].as_array().unwrap().iter().any(|eip| {
                eip["ip"] == ip
                    && enis.iter().any(|e| {
                        e["id"] == eip["eni"]
                            && e["subnet"].as_str().map(str::to_string) == public_a
                    })
            })
    };
    let serving = w.kube.serving_ips().await;
    let zone_a: Vec<&String> = ips.iter().filter(|ip| in_zone_a(ip)).collect();
    assert_eq!(
        zone_a.len(),
        2,
        "one private IP and one EIP in us-east-1a: {:#}",
        world.0
    );
    for ip in &ips {
        let parsed: std::net::IpAddr = ip.parse().unwrap();
        assert_eq!(
            serving.contains(&parsed),
            in_zone_a(ip),
            "{ip} serves only in us-east-1a"
        );
        assert_eq!(
            stderr.contains(&format!("{ip}:6443 (dialled as")),
            !in_zone_a(ip),
            "{ip}: the proof fails exactly for the IPs of the zones without a master: {stderr}"
        );
    }
    let status = w.status().await;
    assert_ne!(status["run_step"], "done", "{status:#}");
}

/// The subnet of the world whose CIDR holds `ip`: (id, CIDR).
fn subnet_of(world: &AwsWorld, ip: &str) -> (String, String) {
    let ip: std::net::Ipv4Addr = ip.parse().unwrap();
    world.0["subnets"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| {
            let cidr = s["cidr"].as_str()?;
            let (net, len) = cidr.split_once('/')?;
            let (net, len): (std::net::Ipv4Addr, u32) = (net.parse().ok()?, len.parse().ok()?);
            let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
            (u32::from(ip) & mask == u32::from(net) & mask)
                .then(|| (s["id"].as_str().unwrap().to_string(), cidr.to_string()))
        })
        .unwrap_or_else(|| panic!("no subnet holds {ip}: {:#}", world.0["subnets"]))
}

/// Issue 23, point 4: the gate's EC2 proof is scoped to the cluster's VPC and to the Service's
/// own NLB. Here the local controller's NLB takes nothing in EC2 (it is not told moto's
/// endpoint), so nothing of ours ever holds the handed-over IPs. Then a VPC of the same CIDR
/// (a shared account) holds two of them on interfaces described exactly as the Service's own
/// NLB's would be, and another NLB's interface holds the third in our VPC: none of that is
/// proof, and the gate says why per IP. (Before, any `ELB ` interface holding the IP anywhere
/// in the account passed the gate.)
#[tokio::test(flavor = "multi_thread")]
async fn an_eni_of_another_vpc_or_of_another_nlb_is_no_proof_that_the_nlb_holds_the_ip() {
    let mut w = World::with_kube_options("aws-internal", "3s", |o| {
        o.cloud.aws_ec2_endpoint = None;
    })
    .await;
    w.h.run_exits(&["run"], 4).await;
    let mut handed: Vec<String> = string_fields(&w.status().await["handed_over"], "ip");
    handed.sort();
    assert_eq!(handed.len(), 3, "the gate is reached after the hand-over");
    let hostname = w.internal_lb()["status"]["loadBalancer"]["ingress"][0]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    // `<name>-<id>.elb.<region>.amazonaws.com` -> `ELB net/<name>/<id>`.
    let label = hostname.split('.').next().unwrap();
    let (name, id) = label.rsplit_once('-').unwrap();
    let own_description = format!("ELB net/{name}/{id}");

    let world = w.h.world().await;
    for ip in &handed[..2] {
        let (_, cidr) = subnet_of(&world, ip);
        let elsewhere = w.h.peers.create_subnet_in_another_vpc(&cidr).await.unwrap();
        w.h.peers
            .create_eni(&elsewhere, Some(ip), &own_description)
            .await
            .unwrap();
    }
    let (ours, _) = subnet_of(&world, &handed[2]);
    w.h.peers
        .create_eni(
            &ours,
            Some(&handed[2]),
            "ELB net/k8s-another-nlb/0123456789abcdef",
        )
        .await
        .unwrap();

    w.h.extra = vec![
        "--kubeconfig".into(),
        w.kube.kubeconfig_path().display().to_string(),
    ];
    // Not proof, so no pass.
    let (_, stderr) = w.h.run_exits(&["wait", "--gate-timeout", "3s"], 4).await;
    for ip in &handed[..2] {
        assert!(
            stderr.contains(&format!("{ip} is held by nothing yet")),
            "the other VPC's interface is not looked at: {stderr}"
        );
    }
    assert!(
        stderr.contains(&format!(
            "{} is held by eni-",
            handed[2]
        )) && stderr.contains(&format!(
            "(\"ELB net/k8s-another-nlb/0123456789abcdef\"), another load balancer than {hostname}"
        )),
        "another NLB's interface is not this Service's: {stderr}"
    );
}

/// Where a test reads what `run` tells systemd: a datagram socket as NOTIFY_SOCKET, read all
/// the time as systemd does (a full queue would block the sender).
struct NotifySocket {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl NotifySocket {
    fn bind() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify.sock");
        let socket = tokio::net::UnixDatagram::bind(&path).unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = socket.recv(&mut buf).await {
                let datagram = String::from_utf8_lossy(&buf[..n]).into_owned();
                sink.lock().unwrap().extend(
                    datagram
                        .lines()
                        .filter_map(|l| l.strip_prefix("STATUS="))
                        .map(str::to_string),
                );
            }
        });
        Self {
            _dir: dir,
            path,
            lines,
            reader,
        }
    }

    /// The first STATUS= line containing `text`, once one came (within `within`).
    async fn status_containing(&self, text: &str, within: Duration) -> String {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(line) = self.lines.lock().unwrap().iter().find(|l| l.contains(text)) {
                return line.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no STATUS= with {text:?} in {:#?}",
                self.lines.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for NotifySocket {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Issue 23, point 5: the AWS Load Balancer Controller is installed (its CRD exists) but does
/// not serve yet (its Deployment has no available replica, its webhook no ready endpoint).
/// `run` waits before the hand-over, says so in STATUS=, frees no ENI meanwhile; once the
/// controller serves, it hands over and completes.
#[tokio::test(flavor = "multi_thread")]
async fn the_hand_over_waits_until_the_aws_lb_controller_serves_and_says_so() {
    let w = World::with_kube_options("aws", "60s", |o| o.aws_lb_controller_down = true).await;
    let notify = NotifySocket::bind();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("run.stderr");
    let mut child =
        w.h.command(&["run"])
            .env("NOTIFY_SOCKET", &notify.path)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
    let stderr = || std::fs::read_to_string(&log).unwrap_or_default();
    let line = notify
        .status_containing(
            "waits for the AWS Load Balancer Controller",
            Duration::from_secs(60),
        )
        .await;
    for said in [
        "kube-system/aws-load-balancer-controller: Deployment 0/2 available",
        "webhook Service aws-load-balancer-webhook-service has no ready endpoint",
        "aws-load-balancer-operator/aws-load-balancer-controller-cluster: no Deployment",
    ] {
        assert!(line.contains(said), "{said:?} in {line}");
    }
    // A while later: still waiting, every ENI still holds its IP, no Service applied.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "run waits for the controller"
    );
    let deleted = w.h.peers.ec2_proxy.calls_named("DeleteNetworkInterface");
    assert!(deleted.is_empty(), "no ENI released: {deleted:?}");
    assert_eq!(w.h.world().await.ours("enis").len(), 3);
    assert_eq!(w.status().await["run_step"], "hand-over");
    assert!(
        w.kube
            .get(
                "",
                "v1",
                "services",
                Some("openshift-kube-apiserver"),
                "internal-lb"
            )
            .is_none()
    );

    w.kube.set_aws_lb_controller_serving(true).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .unwrap_or_else(|_| panic!("run finishes once the controller serves: {}", stderr()))
        .unwrap();
    assert!(status.success(), "{status:?}: {}", stderr());
    w.assert_done().await;
}

/// The controller never serves: `run` stops before the hand-over with exit 4, saying what it
/// waited for, and nothing was handed over.
#[tokio::test(flavor = "multi_thread")]
async fn a_controller_that_never_serves_stops_run_before_the_hand_over() {
    let w = World::with_kube_options("aws", "2s", |o| o.aws_lb_controller_down = true).await;
    let (_, stderr) = w.h.run_exits(&["run"], 4).await;
    assert!(
        stderr.contains("the AWS Load Balancer Controller did not serve within 2s")
            && stderr.contains("no private IP was handed over"),
        "{stderr}"
    );
    assert_eq!(w.h.world().await.ours("enis").len(), 3);
    assert!(
        w.status().await["handed_over"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
}

/// The EIP `allocation` as moto has it now: the interface it is associated with, if any
/// (moto answers an empty id for none).
fn eip_holder(world: &AwsWorld, allocation: &str) -> Option<String> {
    world.0["eips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == allocation)
        .and_then(|e| e["eni"].as_str().filter(|id| !id.is_empty()))
        .map(str::to_string)
}

/// The AWS Load Balancer Controller never changes the addresses of an existing NLB (it
/// compares subnets only; the simulated one does the same). A UPI user who swaps one of their
/// EIPs for another (`--reservations` names the new allocation) and runs `apply` again gets the
/// external Service replaced: deleted, its NLB waited out (the Service gone, no ELB interface
/// left on the claimed IPs), applied anew, so the new NLB holds the new EIP and `wait` passes.
/// `plan --kubeconfig` shows the replacement first. A second swap whose `apply` is killed
/// while the old NLB is being deleted (2 s here) resumes: the Service being deleted is waited
/// out, not deleted again.
#[tokio::test(flavor = "multi_thread")]
async fn upi_swapping_an_eip_replaces_the_external_service_so_its_nlb_takes_the_new_one() {
    let (mut w, kubeconfig, private, public) = upi_world_with(|o| {
        o.cloud.nlb_deletion = std::time::Duration::from_secs(2);
    })
    .await;
    // The user's EIPs and ENIs, named by id in --reservations.
    let mut eips = Vec::new();
    for _ in &public {
        eips.push(w.h.peers.allocate_eip().await.unwrap());
    }
    let mut enis = Vec::new();
    for (i, subnet) in private.iter().enumerate() {
        let name = format!("user-eni-{i}");
        enis.push(w.h.peers.create_named(&name, Some(subnet)).await.unwrap());
    }
    let file = w.h.dir.path().join("reservations.yaml");
    let write = |eips: &[(String, String)]| {
        let mut text = String::new();
        for (subnet, (id, _)) in public.iter().zip(eips) {
            text.push_str(&format!("public-ipv4@{subnet}: {{id: {id}}}\n"));
        }
        for (subnet, (id, _)) in private.iter().zip(&enis) {
            text.push_str(&format!("private-ipv4@{subnet}: {{id: {id}}}\n"));
        }
        std::fs::write(&file, text).unwrap();
    };
    write(&eips);
    w.h.extra = vec!["--reservations".into(), file.display().to_string()];
    w.h.run(&["dns", "seed"]).await;
    for (id, _) in &enis {
        w.h.peers.delete_eni(id).await.unwrap();
    }
    w.h.run(&["apply", "--kubeconfig", &kubeconfig]).await;
    w.h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    let external = || apiserver_service(&w.kube, "external-lb");
    let before = external()["metadata"]["uid"].clone();
    let (old, _) = eips[0].clone();
    assert!(
        eip_holder(&w.h.world().await, &old).is_some(),
        "the NLB holds the user's first EIP"
    );

    // The user swaps the first EIP for a new one, and the by-hand steps follow: DNS first
    // (the public record gets the new IP, the journal the new adoption), then the Services.
    let swapped = w.h.peers.allocate_eip().await.unwrap();
    eips[0] = swapped.clone();
    write(&eips);
    w.h.run(&["dns", "seed"]).await;
    let plan = text_of(
        w.h.run(&[
            "plan",
            "--step",
            "apply-services",
            "--kubeconfig",
            &kubeconfig,
        ])
        .await,
    );
    assert!(
        plan.contains("-/+ service openshift-kube-apiserver/external-lb")
            && plan.contains("aws-load-balancer-eip-allocations changed"),
        "{plan}"
    );
    assert!(
        !plan.contains("-/+ service openshift-kube-apiserver/internal-lb"),
        "the internal Service keeps its addresses: {plan}"
    );
    let said = text_of(w.h.run(&["apply", "--kubeconfig", &kubeconfig]).await);
    assert!(
        said.contains("openshift-kube-apiserver/external-lb: replaced"),
        "{said}"
    );
    w.h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    let after = external();
    assert_ne!(after["metadata"]["uid"], before, "a new Service");
    assert!(
        annotation_list(
            &after,
            "service.beta.kubernetes.io/aws-load-balancer-eip-allocations"
        )
        .contains(&swapped.0)
    );
    let world = w.h.world().await;
    assert!(
        eip_holder(&world, &swapped.0).is_some(),
        "the new NLB holds the new EIP: {:#}",
        world.raw()
    );
    assert_eq!(
        eip_holder(&world, &old),
        None,
        "the old EIP is free again, the user's to release"
    );
    assert!(
        world.values("public", API).contains(&swapped.1),
        "{:#}",
        world.raw()
    );
    // Applied again, nothing is replaced.
    let said = text_of(w.h.run(&["apply", "--kubeconfig", &kubeconfig]).await);
    assert!(!said.contains("replaced"), "{said}");

    // The second swap: `apply` killed once the old Service is being deleted.
    let before = external()["metadata"]["uid"].clone();
    let again = w.h.peers.allocate_eip().await.unwrap();
    eips[0] = again.clone();
    write(&eips);
    w.h.run(&["dns", "seed"]).await;
    let mut child =
        w.h.command(&["apply", "--kubeconfig", &kubeconfig])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    while !external()["metadata"]["deletionTimestamp"].is_string() {
        tokio::select! {
            status = child.wait() => panic!("apply exited before the deletion: {status:?}"),
            _ = tokio::time::sleep(std::time::Duration::from_millis(5)) => {}
        }
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    w.kube.clear_request_log();
    let said = text_of(w.h.run(&["apply", "--kubeconfig", &kubeconfig]).await);
    assert!(
        said.contains("openshift-kube-apiserver/external-lb: replaced"),
        "{said}"
    );
    let deletions: Vec<_> = common::agent::kube_mutations(&w.kube)
        .into_iter()
        .filter(|(method, _)| method == "DELETE")
        .collect();
    assert_eq!(deletions, Vec::new(), "being deleted: waited out: {said}");
    w.h.run(&["wait", "--kubeconfig", &kubeconfig, "--gate-timeout", "60s"])
        .await;
    let after = external();
    assert_ne!(after["metadata"]["uid"], before, "a new Service");
    let world = w.h.world().await;
    assert!(eip_holder(&world, &again.0).is_some(), "{:#}", world.raw());
    assert_eq!(eip_holder(&world, &swapped.0), None, "{:#}", world.raw());
}

fn text_of(out: std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
