//! Operating the agent on AWS (moto + ministack, the local API server): the preflight
//! checklist, each check failing for its own reason, `run` refusing to change anything when
//! one fails; and the proof on the wire, which keeps the bootstrap IP in DNS while a load
//! balancer's TLS does not verify or its port is closed (a local TLS server stands in for it).
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::AwsPeers;
use bootstrap_sim::kube::{CloudOptions, Denied, KubeSim, KubeSimOptions};
use common::aws::*;
use common::*;
use serde_json::Value;

struct World {
    h: AwsHarness,
    kube: KubeSim,
}

impl World {
    async fn new() -> Self {
        Self::with(AwsHarness::new("aws").await, |_| {}).await
    }

    /// The AWS world with a local API server changed by `edit`.
    async fn with(mut h: AwsHarness, edit: impl FnOnce(&mut KubeSimOptions)) -> Self {
        let mut opts = KubeSimOptions {
            cloud: h.peers.lb_cloud(),
            ..Default::default()
        };
        edit(&mut opts);
        let kube = KubeSim::start(opts).await.unwrap();
        h.run_flags(kube.kubeconfig_path(), "60s");
        Self { h, kube }
    }

    /// `preflight --output json`: (exit code, report).
    async fn preflight(&mut self, flags: &[&str]) -> (Option<i32>, Value) {
        let mut args = vec!["preflight", "--output", "json"];
        args.extend_from_slice(flags);
        let kubeconfig = self.kube.kubeconfig_path().display().to_string();
        // `run`'s flags are not `preflight`'s.
        let run_flags = std::mem::take(&mut self.h.extra);
        let out = self
            .h
            .command(&args)
            .args(["--kubeconfig", &kubeconfig])
            .output()
            .await
            .unwrap();
        self.h.extra = run_flags;
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{e}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code(), report)
    }
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    preflight_line(report, name)
}

/// Harness-level `preflight` without the kube part (no kubeconfig).
async fn preflight_of(h: &mut AwsHarness, flags: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["preflight", "--output", "json"];
    args.extend_from_slice(flags);
    let run_flags = std::mem::take(&mut h.extra);
    let out = h.command(&args).output().await.unwrap();
    h.extra = run_flags;
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn preflight_passes_on_a_good_world_shows_the_identity_and_changes_nothing() {
    let mut w = World::new().await;
    w.h.peers.reset_counts();
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["passed"], true);
    let credentials = check(&report, "credentials");
    assert_eq!(credentials["verdict"], "pass");
    assert!(
        credentials["reason"].as_str().unwrap().contains("arn:aws:"),
        "the identity is shown: {credentials}"
    );
    for name in [
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
        "quota-elastic-ips",
        "subnets",
        "private-zone-vpc",
        "dns-zones",
        "reservations",
        "bootstrap-ip",
        "kube-api",
        "kube-services-apply",
        "kube-clusterversion-write",
        "aws-lb-controller",
    ] {
        assert_eq!(check(&report, name)["verdict"], "pass", "{name}: {report}");
    }
    assert_eq!(
        check(&report, "permission-ec2-release")["verdict"],
        "warn",
        "no dry run without a resource: said, not passed"
    );
    assert!(
        w.h.peers.mutating_calls().is_empty(),
        "dry runs and reads only: {:?}",
        w.h.peers.mutating_calls()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_elastic_ip_quota_fails_preflight_and_run_changes_nothing() {
    // Three public subnets want three EIPs; the account allows two.
    let peers = AwsPeers::start_with_eip_limit(2).await.unwrap();
    let h = AwsHarness::with_peers(peers, "aws").await;
    let mut w = World::with(h, |_| {}).await;
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    let quota = check(&report, "quota-elastic-ips");
    assert_eq!(quota["verdict"], "fail", "{quota}");
    assert!(
        quota["reason"]
            .as_str()
            .unwrap()
            .contains("vpc-max-elastic-ips 2")
    );
    assert!(quota["fix"].as_str().unwrap().contains("quota"), "{quota}");

    w.h.peers.reset_counts();
    let out = w.h.command(&["run"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("FAIL  quota-elastic-ips"),
        "the checklist: {stderr}"
    );
    assert!(
        stderr.contains("preflight failed: quota-elastic-ips"),
        "{stderr}"
    );
    assert!(
        w.h.peers.mutating_calls().is_empty(),
        "{:?}",
        w.h.peers.mutating_calls()
    );
    assert!(!w.h.state.join("journal.json").exists(), "nothing written");

    // Skipped, the run goes on, and EC2 (moto_server.py, as EC2) refuses the third EIP.
    let out =
        w.h.command(&["run", "--skip-preflight", "quota-elastic-ips"])
            .output()
            .await
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("skip  quota-elastic-ips"), "{stderr}");
    assert!(stderr.contains("AddressLimitExceeded"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bootstrap_ip_outside_the_machine_network_or_unknown_skip_name_is_refused() {
    let mut w = World::new().await;
    w.h.bootstrap_ip = "192.168.77.7";
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    let ip = check(&report, "bootstrap-ip");
    assert_eq!(ip["verdict"], "fail");
    assert!(
        ip["reason"]
            .as_str()
            .unwrap()
            .contains("outside the machine network (10.0.0.0/16)"),
        "{ip}"
    );

    w.h.extra.clear();
    let out =
        w.h.command(&["preflight", "--skip-preflight", "no-such-check"])
            .output()
            .await
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no such check"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_kube_checks_fail_without_permission_or_without_the_lb_controller() {
    let mut w = World::with(AwsHarness::new("aws").await, |o| {
        o.denied = vec![
            Denied::new("patch", "config.openshift.io", "clusterversions"),
            Denied::new("create", "", "services"),
        ];
        o.cloud = CloudOptions {
            aws_lb_controller: false,
            ..o.cloud.clone()
        };
    })
    .await;
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    assert_eq!(check(&report, "kube-api")["verdict"], "pass");
    for name in [
        "kube-services-apply",
        "kube-clusterversion-write",
        "aws-lb-controller",
    ] {
        let c = check(&report, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        assert!(c["fix"].is_string(), "{c}");
    }
    // Without a kubeconfig the cluster is "not checked", never a pass.
    let (code, report) = preflight_of(&mut w.h, &[]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(check(&report, "kube-api")["verdict"], "warn");
}

// ---------------------------------------------------------------- proof on the wire

impl World {
    /// Every dial of the proof on the wire goes to `to` instead.
    fn dial_everything_to(&mut self, to: std::net::SocketAddr) {
        let at = self
            .h
            .extra
            .iter()
            .position(|a| a == "--wire-dial-override")
            .unwrap();
        self.h.extra[at + 1] = format!("*:6443={to},*:22623={to}");
    }

    /// `run` under a short gate deadline: it must stop (exit 4) with the bootstrap IP still
    /// in DNS and the reason in `status`.
    async fn assert_bootstrap_ip_kept(&mut self, why: &str) {
        let at = self
            .h
            .extra
            .iter()
            .position(|a| a == "--gate-timeout")
            .unwrap();
        self.h.extra[at + 1] = "5s".into();
        let out = self.h.command(&["run"]).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert!(
            stderr.contains("proof on the wire did not pass"),
            "{stderr}"
        );
        let world = self.h.world().await;
        assert!(
            world
                .record("private", API_INT)
                .contains(&BOOTSTRAP_IP.to_string()),
            "the bootstrap IP stays: {:?}",
            world.record("private", API_INT)
        );
        let status = self.h.status().await;
        let wire = status["wire_proof"].as_str().unwrap_or_default();
        assert!(wire.contains("keeping the bootstrap IP in DNS"), "{status}");
        assert!(wire.contains(why), "{wire}");
        assert_eq!(status["bootstrap_removed"], false);
        let text = self.h.run(&["status"]).await;
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(
            text.contains("wire proof: keeping the bootstrap IP"),
            "{text}"
        );
    }
}

/// A TLS server answering `GET /readyz` with `ok`, whose certificate comes from a CA the
/// cluster does not know: a load balancer that forwards somewhere else.
async fn impostor() -> std::net::SocketAddr {
    let pki =
        bootstrap_sim::pki::generate("not-the-cluster-ca", "impostor", &["127.0.0.1"]).unwrap();
    bootstrap_sim::pki::serve_readyz(pki.server).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_load_balancer_whose_certificate_does_not_verify_keeps_the_bootstrap_ip() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let mut w = World::new().await;
    w.dial_everything_to(impostor().await);
    w.assert_bootstrap_ip_kept("TLS handshake failed").await;
    // The load balancer serves the cluster's API again: the same run goes on and completes.
    let api = w.kube.url().trim_start_matches("https://").parse().unwrap();
    w.dial_everything_to(api);
    w.h.run(&["run"]).await;
    let status = w.h.status().await;
    assert_eq!(status["bootstrap_removed"], true, "{status}");
    assert!(
        status["wire_proof"]
            .as_str()
            .unwrap()
            .starts_with("passed: "),
        "{status}"
    );
    assert!(
        !w.h.world()
            .await
            .record("private", API_INT)
            .contains(&BOOTSTRAP_IP.to_string())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_port_keeps_the_bootstrap_ip() {
    let mut w = World::new().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    w.dial_everything_to(closed);
    w.assert_bootstrap_ip_kept("TCP connect failed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wire_proof_can_be_turned_off_and_says_so() {
    let mut w = World::new().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    w.dial_everything_to(closed);
    w.h.extra
        .extend(["--wire-proof".to_string(), "off".to_string()]);
    w.h.run(&["run"]).await;
    let status = w.h.status().await;
    assert_eq!(status["bootstrap_removed"], true);
    assert!(
        status["wire_proof"]
            .as_str()
            .unwrap()
            .contains("off (--wire-proof off)"),
        "{status}"
    );
}

// ---------------------------------------------------------------- status --watch

#[tokio::test(flavor = "multi_thread")]
async fn status_watch_redraws_while_run_runs_and_ends_when_it_is_done() {
    let w = World::new().await;
    let watch =
        w.h.command(&["status", "--watch"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
    // Before the daemon: no journal yet, and the watch goes on waiting.
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    w.h.run(&["run"]).await;
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), watch.wait_with_output())
        .await
        .expect("the watch ends once run is done")
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.starts_with("no journal in"), "{text}");
    let pictures = text.matches("cluster mycluster-7xk2p").count();
    assert!(pictures >= 2, "one picture per change, {pictures}: {text}");
    assert!(text.trim_end().contains("run: at Done"), "{text}");
    assert!(
        text.rfind("run: at Done") > text.find("cluster mycluster-7xk2p"),
        "{text}"
    );
}
