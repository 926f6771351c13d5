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

    // Every line's name is one the validation pass knows for AWS (it refuses the others).
    let names = common::agent::preflight_line_names(&report);
    let (code, report) = w.preflight(&["--skip-preflight", &names]).await;
    assert_eq!(code, Some(0), "{report}");
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
    assert!(
        stderr.contains("no such preflight check on aws")
            && stderr.contains("BOOTSTRAP_AGENT_SKIP_PREFLIGHT"),
        "{stderr}"
    );
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
    let (code, report, _) = w.h.preflight_json(&[]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(check(&report, "kube-api")["verdict"], "warn");
}

// ---------------------------------------------------------------- IAM enforced

/// The creds secret of the asset dir holds `key` and `secret` (the installer's shape).
fn use_keys(h: &AwsHarness, key: &str, secret: &str) {
    std::fs::write(
        h.assets.join("openshift/99_cloud-creds-secret.yaml"),
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: aws-creds\n  namespace: kube-system\ntype: Opaque\nstringData:\n  aws_access_key_id: {key}\n  aws_secret_access_key: {secret}\n"
        ),
    )
    .unwrap();
}

/// STS straight to moto (ministack's STS accepts any key), then moto's IAM enforcement on:
/// from now on this world's moto answers only requests signed with an IAM user's key and
/// allowed by its policies. Each test starts its own peers, so no other test is affected.
async fn enforce_iam(w: &mut World) {
    let moto = w.h.peers.ec2.url();
    for (name, value) in &mut w.h.env {
        if name == "AWS_ENDPOINT_URL_STS" {
            *value = moto.clone();
        }
    }
    w.h.peers.enforce_iam(true).await.unwrap();
}

/// `run` stops at the checklist with `failed` among its FAIL lines: exit 2, no mutating call,
/// no journal.
async fn assert_run_refused(w: &mut World, failed: &[&str]) {
    w.h.assert_run_refused_by_preflight(failed).await;
}

/// The fixture's key is no IAM user's: STS refuses the identity, and EC2 every dry run.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_key_fails_credentials_and_the_dry_runs_and_run_changes_nothing() {
    let mut w = World::new().await;
    enforce_iam(&mut w).await;
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    let credentials = check(&report, "credentials");
    assert_eq!(credentials["verdict"], "fail", "{credentials}");
    assert!(
        credentials["reason"]
            .as_str()
            .unwrap()
            .contains("InvalidClientTokenId"),
        "{credentials}"
    );
    assert!(
        credentials["fix"]
            .as_str()
            .unwrap()
            .contains("working AWS credentials"),
        "{credentials}"
    );
    for name in [
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
    ] {
        let c = check(&report, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        assert!(c["reason"].as_str().unwrap().contains("AuthFailure"), "{c}");
    }
    assert_run_refused(&mut w, &["credentials", "permission-ec2-allocate-address"]).await;
}

/// A user whose policy lacks ec2:AllocateAddress and ec2:CreateNetworkInterface: the dry runs
/// answer UnauthorizedOperation, as EC2 does, and `run` refuses. A user whose policy has them
/// passes the same lines.
#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_fails_without_the_permission_and_passes_with_it() {
    let mut w = World::new().await;
    let reader =
        w.h.peers
            .create_iam_user("reader", &["ec2:Describe*"])
            .await
            .unwrap();
    let installer =
        w.h.peers
            .create_iam_user(
                "installer",
                &[
                    "ec2:Describe*",
                    "ec2:AllocateAddress",
                    "ec2:CreateNetworkInterface",
                ],
            )
            .await
            .unwrap();
    enforce_iam(&mut w).await;

    use_keys(&w.h, &reader.access_key_id, &reader.secret_access_key);
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    let credentials = check(&report, "credentials");
    assert_eq!(credentials["verdict"], "pass", "{credentials}");
    assert!(
        credentials["reason"]
            .as_str()
            .unwrap()
            .contains(&reader.arn),
        "{credentials}"
    );
    for (name, action) in [
        ("permission-ec2-allocate-address", "ec2:AllocateAddress"),
        (
            "permission-ec2-create-network-interface",
            "ec2:CreateNetworkInterface",
        ),
    ] {
        let c = check(&report, name);
        assert_eq!(c["verdict"], "fail", "{name}: {c}");
        let reason = c["reason"].as_str().unwrap();
        assert!(reason.contains("UnauthorizedOperation"), "{c}");
        assert!(reason.contains(action), "{c}");
        assert!(
            c["fix"]
                .as_str()
                .unwrap()
                .contains(&format!("allow {action}")),
            "{c}"
        );
    }
    assert_eq!(check(&report, "quota-elastic-ips")["verdict"], "pass");
    assert_run_refused(
        &mut w,
        &[
            "permission-ec2-allocate-address",
            "permission-ec2-create-network-interface",
        ],
    )
    .await;

    use_keys(&w.h, &installer.access_key_id, &installer.secret_access_key);
    w.h.peers.reset_counts();
    let (code, report) = w.preflight(&[]).await;
    for name in [
        "credentials",
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
    ] {
        assert_eq!(check(&report, name)["verdict"], "pass", "{name}: {report}");
    }
    assert_eq!(code, Some(0), "{report}");
    assert!(
        w.h.peers.mutating_calls().is_empty(),
        "dry runs only: {:?}",
        w.h.peers.mutating_calls()
    );
}

/// One subnet of the install-config lies in another VPC: the subnets line fails, the zone's
/// association cannot be judged without the VPC, and `run` refuses.
#[tokio::test(flavor = "multi_thread")]
async fn a_subnet_of_another_vpc_fails_the_subnets_line() {
    let mut w = World::new().await;
    let elsewhere = w.h.peers.create_subnet_elsewhere().await.unwrap();
    let path = w.h.assets.join("manifests/cluster-config.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let first = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|word| word.starts_with("subnet-"))
        .unwrap()
        .to_string();
    std::fs::write(&path, text.replace(&first, &elsewhere)).unwrap();
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    let subnets = check(&report, "subnets");
    assert_eq!(subnets["verdict"], "fail", "{subnets}");
    assert!(
        subnets["reason"]
            .as_str()
            .unwrap()
            .contains("the subnets are in 2 VPCs"),
        "{subnets}"
    );
    assert_eq!(check(&report, "private-zone-vpc")["verdict"], "warn");
    assert_run_refused(&mut w, &["subnets"]).await;
}

/// The DNS manifest names a private zone of the cluster's name that is associated with another
/// VPC only: the cluster's machines would not resolve api-int.
#[tokio::test(flavor = "multi_thread")]
async fn a_private_zone_of_another_vpc_fails_the_private_zone_vpc_line() {
    let mut w = World::new().await;
    let zone =
        w.h.peers
            .create_private_zone_tagged("mycluster.example.com", true, &[])
            .await
            .unwrap();
    std::fs::write(
        w.h.assets.join("manifests/cluster-dns-02-config.yml"),
        format!(
            "apiVersion: config.openshift.io/v1\nkind: DNS\nmetadata:\n  name: cluster\nspec:\n  baseDomain: mycluster.example.com\n  privateZone:\n    id: {zone}\n"
        ),
    )
    .unwrap();
    let (code, report) = w.preflight(&[]).await;
    assert_eq!(code, Some(2), "{report}");
    let association = check(&report, "private-zone-vpc");
    assert_eq!(association["verdict"], "fail", "{association}");
    let reason = association["reason"].as_str().unwrap();
    assert!(reason.contains(&zone), "{association}");
    assert!(
        reason.contains("not with the cluster's vpc-"),
        "{association}"
    );
    assert!(
        association["fix"]
            .as_str()
            .unwrap()
            .contains("AssociateVPCWithHostedZone"),
        "{association}"
    );
    assert_run_refused(&mut w, &["private-zone-vpc"]).await;
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
