//! Operating the agent on AWS (moto + ministack, the local API server): the preflight
//! checklist, each check failing for its own reason, `run` refusing to change anything when
//! one fails; and the proof on the wire, which keeps the bootstrap IP in DNS while a load
//! balancer's TLS does not verify or its port is closed (a local TLS server stands in for it).
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::AwsPeers;
use bootstrap_sim::kube::{CloudOptions, KubeSimOptions};
use common::aws::*;
use common::operating::{PreflightWorld, assert_line, line_text};
use common::*;

type World = PreflightWorld<AwsPeers>;

/// moto + ministack, the agent on the main fixture.
async fn world() -> World {
    world_with(AwsHarness::new("aws").await, |_| {}).await
}

/// `h` with a local API server changed by `edit`; preflight checks the cluster too.
async fn world_with(h: AwsHarness, edit: impl FnOnce(&mut KubeSimOptions)) -> World {
    let mut options = KubeSimOptions {
        cloud: h.peers.lb_cloud(),
        ..Default::default()
    };
    edit(&mut options);
    let aws_lines = &[
        "credentials",
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
        "permission-route53-change-record-sets",
        "quota-elastic-ips",
        "subnets",
        "private-zone-vpc",
        "control-plane-security-groups",
        "aws-lb-controller",
    ];
    let mut w = World::with_options(h, options, aws_lines).await;
    w.with_kubeconfig = true;
    w
}

#[tokio::test(flavor = "multi_thread")]
async fn preflight_passes_on_a_good_world_shows_the_identity_and_changes_nothing() {
    let mut w = world().await;
    // The identity is shown.
    let report = w
        .assert_preflight_passes(&[("credentials", &["arn:aws:"])])
        .await;
    assert_eq!(report["passed"], true);
    // No dry run without a resource: said, not passed.
    assert_line(&report, "permission-ec2-release", "warn", &[]);
    // The installer's masters: the controller's rule goes to `<infra-id>-lb`.
    assert_line(
        &report,
        "control-plane-security-groups",
        "pass",
        &["mycluster-7xk2p-master-0", "(mycluster-7xk2p-lb)"],
    );
}

/// A second security group of the masters tagged for the cluster (as an additional group
/// tagged by other tooling would be): the AWS Load Balancer Controller could not choose, so
/// the line fails naming the groups and quoting its refusal, and `run` changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_security_group_tagged_for_the_cluster_fails_preflight_in_the_controllers_words() {
    let mut w = world().await;
    let cp = w.h.peers.control_plane().unwrap();
    let key = format!("kubernetes.io/cluster/{}", cp.infra_id);
    w.h.peers
        .tag_security_group(&cp.groups["controlplane"], &key, Some("owned"))
        .await
        .unwrap();
    let mut tagged = [cp.groups["lb"].as_str(), cp.groups["controlplane"].as_str()];
    tagged.sort_unstable();
    let got = format!(
        "got: [{} {}] (clusterName: {})",
        tagged[0], tagged[1], cp.infra_id
    );
    let report = w.preflight_exits(2).await;
    assert_line(
        &report,
        "control-plane-security-groups",
        "fail",
        &[
            "expected exactly one securityGroup tagged with kubernetes.io/cluster/mycluster-7xk2p for eni eni-",
            &got,
            "mycluster-7xk2p-controlplane",
            "mycluster-7xk2p-node",
            "mycluster-7xk2p-master-2",
        ],
    );
    assert_run_refused(&mut w, &["control-plane-security-groups"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_elastic_ip_quota_fails_preflight_and_run_changes_nothing() {
    // Three public subnets want three EIPs; the account allows two.
    let peers = AwsPeers::start_with_eip_limit(2).await.unwrap();
    let h = AwsHarness::with_peers(peers, "aws").await;
    let mut w = world_with(h, |_| {}).await;
    let report = w.preflight_exits(2).await;
    assert_line(
        &report,
        "quota-elastic-ips",
        "fail",
        &["vpc-max-elastic-ips 2"],
    );
    assert!(
        line_text(&report, "quota-elastic-ips", "fix").contains("quota"),
        "{report}"
    );

    w.h.peers.reset_counts();
    let stderr = w.stderr_of(&["run"], 2).await;
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
    let stderr = w
        .stderr_of(&["run", "--skip-preflight", "quota-elastic-ips"], 1)
        .await;
    assert!(stderr.contains("skip  quota-elastic-ips"), "{stderr}");
    assert!(stderr.contains("AddressLimitExceeded"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bootstrap_ip_outside_the_machine_network_or_unknown_skip_name_is_refused() {
    let mut w = world().await;
    w.h.bootstrap_ip = "192.168.77.7";
    let report = w.preflight_exits(2).await;
    assert_line(
        &report,
        "bootstrap-ip",
        "fail",
        &["outside the machine network (10.0.0.0/16)"],
    );

    w.h.extra.clear();
    let stderr = w
        .stderr_of(&["preflight", "--skip-preflight", "no-such-check"], 2)
        .await;
    assert!(
        stderr.contains("no such preflight check on aws")
            && stderr.contains("BOOTSTRAP_AGENT_SKIP_PREFLIGHT"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_kube_checks_fail_without_permission_or_without_the_lb_controller() {
    let mut w = world_with(AwsHarness::new("aws").await, |o| {
        // The printed role of `run` less these two verbs.
        let mut role = rbac::printed_role(&[Covered::Run]);
        for (verb, group, resource) in [
            ("patch", "config.openshift.io", "clusterversions"),
            ("create", "", "services"),
        ] {
            let grant = rbac::Grant {
                group: group.into(),
                resource: resource.into(),
                verb: verb.into(),
            };
            role = rbac::without(&role, &grant);
        }
        rbac::as_agent_holding(o, &role);
        o.cloud = CloudOptions {
            aws_lb_controller: false,
            ..o.cloud.clone()
        };
    })
    .await;
    let report = w.preflight_exits(2).await;
    assert_line(&report, "kube-api", "pass", &[]);
    for name in [
        "kube-services-apply",
        "kube-clusterversion-write",
        "aws-lb-controller",
    ] {
        assert_line(&report, name, "fail", &[]);
        assert!(!line_text(&report, name, "fix").is_empty(), "{report}");
    }
    // Without a kubeconfig the cluster is "not checked", never a pass.
    w.with_kubeconfig = false;
    let report = w.preflight_exits(0).await;
    assert_line(&report, "kube-api", "warn", &[]);
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
    let mut w = world().await;
    enforce_iam(&mut w).await;
    let report = w.preflight_exits(2).await;
    assert_line(&report, "credentials", "fail", &["InvalidClientTokenId"]);
    assert!(
        line_text(&report, "credentials", "fix").contains("working AWS credentials"),
        "{report}"
    );
    for name in [
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
    ] {
        assert_line(&report, name, "fail", &["AuthFailure"]);
    }
    assert_run_refused(&mut w, &["credentials", "permission-ec2-allocate-address"]).await;
}

/// A user whose policy lacks ec2:AllocateAddress and ec2:CreateNetworkInterface: the dry runs
/// answer UnauthorizedOperation, as EC2 does, and `run` refuses. One that has them but not
/// ec2:CreateTags fails too: the dry runs tag on create as the real calls do, and EC2 then
/// authorizes ec2:CreateTags as well (the local moto does so too, see moto_server.py). A user
/// whose policy has all three passes the same lines.
#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_fails_without_the_permission_and_passes_with_it() {
    // The two permission checks of an address (an EIP, an ENI).
    const ADDRESS_CHECKS: [&str; 2] = [
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
    ];
    let mut w = world().await;
    let reader =
        w.h.peers
            .create_iam_user("reader", &["ec2:Describe*"])
            .await
            .unwrap();
    let untagged =
        w.h.peers
            .create_iam_user(
                "untagged",
                &[
                    "ec2:Describe*",
                    "ec2:AllocateAddress",
                    "ec2:CreateNetworkInterface",
                ],
            )
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
                    "ec2:CreateTags",
                    // Route53 is authorized too (the zone lines): all of it, this test is
                    // about EC2's dry runs.
                    "route53:*",
                ],
            )
            .await
            .unwrap();
    enforce_iam(&mut w).await;
    w.never_shown.extend([
        reader.secret_access_key.clone(),
        untagged.secret_access_key.clone(),
        installer.secret_access_key.clone(),
    ]);

    // Allowed to create, not to tag: the tagged dry runs fail on ec2:CreateTags, so `run`
    // refuses before `reserve` would fail on it.
    use_keys(&w.h, &untagged.access_key_id, &untagged.secret_access_key);
    let report = w.preflight_exits(2).await;
    for name in ADDRESS_CHECKS {
        assert_line(
            &report,
            name,
            "fail",
            &["UnauthorizedOperation", "ec2:CreateTags"],
        );
        assert!(
            line_text(&report, name, "fix").contains("ec2:CreateTags"),
            "{report}"
        );
    }
    assert_run_refused(&mut w, &ADDRESS_CHECKS).await;

    use_keys(&w.h, &reader.access_key_id, &reader.secret_access_key);
    let report = w.preflight_exits(2).await;
    assert_line(&report, "credentials", "pass", &[&reader.arn]);
    for (name, action) in [
        ("permission-ec2-allocate-address", "ec2:AllocateAddress"),
        (
            "permission-ec2-create-network-interface",
            "ec2:CreateNetworkInterface",
        ),
    ] {
        assert_line(&report, name, "fail", &["UnauthorizedOperation", action]);
        assert!(
            line_text(&report, name, "fix").contains(&format!("allow {action}")),
            "{report}"
        );
    }
    assert_line(&report, "quota-elastic-ips", "pass", &[]);
    assert_run_refused(&mut w, &ADDRESS_CHECKS).await;

    use_keys(&w.h, &installer.access_key_id, &installer.secret_access_key);
    w.h.peers.reset_counts();
    let (code, report) = w.preflight().await;
    for name in [
        "credentials",
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
    ] {
        assert_line(&report, name, "pass", &[]);
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
    let mut w = world().await;
    let elsewhere = w.h.peers.create_subnet_elsewhere().await.unwrap();
    let path = w.h.assets.join("manifests/cluster-config.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let first = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|word| word.starts_with("subnet-"))
        .unwrap()
        .to_string();
    std::fs::write(&path, text.replace(&first, &elsewhere)).unwrap();
    let report = w.preflight_exits(2).await;
    assert_line(&report, "subnets", "fail", &["the subnets are in 2 VPCs"]);
    assert_line(&report, "private-zone-vpc", "warn", &[]);
    assert_run_refused(&mut w, &["subnets"]).await;
}

/// The DNS manifest names a private zone of the cluster's name that is associated with another
/// VPC only: the cluster's machines would not resolve api-int.
#[tokio::test(flavor = "multi_thread")]
async fn a_private_zone_of_another_vpc_fails_the_private_zone_vpc_line() {
    let mut w = world().await;
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
    let report = w.preflight_exits(2).await;
    assert_line(
        &report,
        "private-zone-vpc",
        "fail",
        &[&zone, "not with the cluster's vpc-"],
    );
    assert!(
        line_text(&report, "private-zone-vpc", "fix").contains("AssociateVPCWithHostedZone"),
        "{report}"
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
        let stderr = self.stderr_of(&["run"], 4).await;
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
        let wire = wire_proof(&status);
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

/// An address where nothing listens, for as long as the returned socket lives: bound, never
/// listening, and without SO_REUSEADDR, so no other test's server can take the port meanwhile
/// (a port bound and released could be).
fn closed_port() -> (std::net::SocketAddr, tokio::net::TcpSocket) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    (socket.local_addr().unwrap(), socket)
}

/// What `status` (JSON) says of the proof on the wire.
fn wire_proof(status: &serde_json::Value) -> &str {
    status["wire_proof"]
        .as_str()
        .unwrap_or_else(|| panic!("no wire_proof: {status}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_load_balancer_whose_certificate_does_not_verify_keeps_the_bootstrap_ip() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let mut w = world().await;
    w.dial_everything_to(impostor().await);
    w.assert_bootstrap_ip_kept("TLS handshake failed").await;
    // The load balancer serves the cluster's API again: the same run goes on and completes.
    let api = w.kube.url().trim_start_matches("https://").parse().unwrap();
    w.dial_everything_to(api);
    w.h.run(&["run"]).await;
    let status = w.h.status().await;
    assert_eq!(status["bootstrap_removed"], true, "{status}");
    assert!(wire_proof(&status).starts_with("passed: "), "{status}");
    assert!(
        !w.h.world()
            .await
            .record("private", API_INT)
            .contains(&BOOTSTRAP_IP.to_string())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_port_keeps_the_bootstrap_ip() {
    let mut w = world().await;
    let (closed, _held) = closed_port();
    w.dial_everything_to(closed);
    w.assert_bootstrap_ip_kept("TCP connect failed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_wire_proof_can_be_turned_off_and_says_so() {
    let mut w = world().await;
    let (closed, _held) = closed_port();
    w.dial_everything_to(closed);
    w.h.extra
        .extend(["--wire-proof".to_string(), "off".to_string()]);
    w.h.run(&["run"]).await;
    let status = w.h.status().await;
    assert_eq!(status["bootstrap_removed"], true);
    assert!(
        wire_proof(&status).contains("off (--wire-proof off)"),
        "{status}"
    );
}

// ---------------------------------------------------------------- status --watch

#[tokio::test(flavor = "multi_thread")]
async fn status_watch_redraws_while_run_runs_and_ends_when_it_is_done() {
    let w = world().await;
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

/// Without a creds secret the agent uses the SDK's default chain; on the bootstrap host that
/// is the instance's role, which the installer grants none of the agent's mutations. Here an
/// IAM user's keys in the environment stand in for that role: preflight names the case on the
/// identity line and in every missing permission's fix.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_creds_secret_preflight_names_the_instance_role() {
    let mut w = world().await;
    let role =
        w.h.peers
            .create_iam_user("bootstrap-role", &["ec2:Describe*", "ec2:CreateTags"])
            .await
            .unwrap();
    enforce_iam(&mut w).await;
    w.never_shown.push(role.secret_access_key.clone());
    std::fs::remove_file(w.h.assets.join("openshift/99_cloud-creds-secret.yaml")).unwrap();
    w.h.env.extend([
        ("AWS_ACCESS_KEY_ID".to_string(), role.access_key_id.clone()),
        (
            "AWS_SECRET_ACCESS_KEY".to_string(),
            role.secret_access_key.clone(),
        ),
    ]);
    let report = w.preflight_exits(2).await;
    assert_line(
        &report,
        "credentials",
        "pass",
        &[&role.arn, "no creds secret", "the instance's role"],
    );
    for name in [
        "permission-ec2-allocate-address",
        "permission-ec2-create-network-interface",
    ] {
        assert_line(&report, name, "fail", &["UnauthorizedOperation"]);
        let fix = line_text(&report, name, "fix");
        assert!(
            fix.contains("the instance's role") && fix.contains("creds secret"),
            "{fix}"
        );
    }
}

/// Route53 cannot dry-run: preflight proves route53:ChangeResourceRecordSets with a DELETE of
/// a record that does not exist, which Route53 (here ministack) refuses whole after
/// authorizing it. Nothing changes: both zones hold exactly what they held.
#[tokio::test(flavor = "multi_thread")]
async fn the_route53_write_permission_is_proven_by_a_change_that_cannot_apply() {
    let mut w = world().await;
    let before = w.h.world().await.0["zones_by_id"].clone();
    let report = w.preflight_exits(0).await;
    assert_line(
        &report,
        "permission-route53-change-record-sets",
        "pass",
        &["InvalidChangeBatch", "nothing changed"],
    );
    assert_eq!(w.h.world().await.0["zones_by_id"], before);
    let posts: Vec<String> =
        w.h.peers
            .route53_proxy
            .calls()
            .into_iter()
            .filter(|c| c.action.starts_with("POST"))
            .map(|c| c.action)
            .collect();
    assert_eq!(posts.len(), 2, "one probe per zone: {posts:?}");
}

// ---------------------------------------------------------------- the printed policy

use bootstrap_cloud::permissions::Command as Covered;
use serde_json::Value;

/// Route53 (ministack, which knows no IAM) is authorized as Route53 does while IAM is
/// enforced: the counting proxy has moto evaluate the caller's policies on the call's hosted
/// zone ARN (tests/sim/py/moto_server.py). A user allowed ListResourceRecordSets on one zone
/// lists it; the other zone is refused with Route53's own 403 AccessDenied naming the user,
/// the action and the zone's ARN, answered by the proxy; an unknown key and a wrong
/// secret are refused as Route53 refuses them; with enforcement off, anything goes again.
#[tokio::test(flavor = "multi_thread")]
async fn route53_refuses_what_the_policy_does_not_allow_as_route53_does() {
    let mut w = world().await;
    let peers = &w.h.peers;
    let mine = peers.create_zone("mine.example.org", false).await.unwrap();
    let other = peers.create_zone("other.example.org", false).await.unwrap();
    let policy = serde_json::json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Action": ["route53:ListResourceRecordSets"],
            "Resource": [format!("arn:aws:route53:::hostedzone/{mine}")],
        }],
    });
    let user = w.user_with("lister", &policy).await;
    enforce_iam(&mut w).await;
    let peers = &w.h.peers;
    let listed = peers.list_records_as(&mine, &user).await.unwrap();
    assert!(listed["records"].as_u64().is_some(), "{listed}");

    peers.route53_proxy.reset();
    let refused = peers.list_records_as(&other, &user).await.unwrap();
    assert_eq!(refused["status"], 403, "{refused}");
    assert_eq!(refused["code"], "AccessDenied", "{refused}");
    assert_eq!(
        refused["message"],
        format!(
            "User: {} is not authorized to perform: route53:ListResourceRecordSets on resource: arn:aws:route53:::hostedzone/{other}",
            user.arn
        ),
        "{refused}"
    );
    assert_eq!(
        peers.route53_proxy.calls().len(),
        1,
        "seen by the proxy only"
    );

    let unknown = bootstrap_sim::IamUser {
        access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
        ..user.clone()
    };
    let refused = peers.list_records_as(&mine, &unknown).await.unwrap();
    assert_eq!(
        (&refused["status"], &refused["code"]),
        (&Value::from(403), &Value::from("InvalidClientTokenId")),
        "{refused}"
    );
    let forged = bootstrap_sim::IamUser {
        secret_access_key: "not-the-secret".into(),
        ..user.clone()
    };
    let refused = peers.list_records_as(&mine, &forged).await.unwrap();
    assert_eq!(refused["code"], "SignatureDoesNotMatch", "{refused}");

    peers.enforce_iam(false).await.unwrap();
    let listed = peers.list_records_as(&other, &user).await.unwrap();
    assert!(listed["records"].as_u64().is_some(), "{listed}");
}

/// What `bootstrap-agent permissions --cloud aws --assets <the world's> --command <commands>`
/// prints (the same function).
fn printed_policy(w: &World, commands: &[Covered]) -> Value {
    let spec = bootstrap_agent::assets::load(&w.h.assets).unwrap();
    bootstrap_agent::permissions::document("aws", Some(&spec), commands).unwrap()
}

/// `policy` with `action` taken out of every statement (a statement left with none goes).
fn without(policy: &Value, action: &str) -> Value {
    let mut policy = policy.clone();
    let statements = policy["Statement"].as_array_mut().unwrap();
    for s in statements.iter_mut() {
        let actions = s["Action"].as_array_mut().unwrap();
        actions.retain(|a| a != action);
    }
    statements.retain(|s| !s["Action"].as_array().unwrap().is_empty());
    policy
}

/// The actions of `policy` of one service (`ec2:`, `route53:`: moto authorizes both, Route53's
/// through the counting proxy in front of ministack).
fn actions_of(policy: &Value, service: &str) -> Vec<String> {
    policy["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["Action"].as_array().unwrap())
        .filter_map(Value::as_str)
        .filter(|a| a.starts_with(service))
        .map(str::to_string)
        .collect()
}

impl World {
    /// A user in moto holding exactly `policy`, its secret never shown.
    async fn user_with(&mut self, name: &str, policy: &Value) -> bootstrap_sim::IamUser {
        let user = self
            .h
            .peers
            .create_iam_user_with_policy(name, policy)
            .await
            .unwrap();
        self.never_shown.push(user.secret_access_key.clone());
        user
    }

    /// `teardown --all` (deleting our Services first) as `user`: its exit code and stderr.
    async fn teardown_all_as(&mut self, user: &bootstrap_sim::IamUser) -> (Option<i32>, String) {
        use_keys(&self.h, &user.access_key_id, &user.secret_access_key);
        let kubeconfig = self.kube.kubeconfig_path().display().to_string();
        let run_flags =
            std::mem::replace(&mut self.h.extra, vec!["--kubeconfig".into(), kubeconfig]);
        let out = self
            .h
            .command(&["teardown", "--all"])
            .output()
            .await
            .unwrap();
        self.h.extra = run_flags;
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// With IAM enforcement off: no Elastic IP and no ENI of ours is left, and the records we
    /// wrote (`api`, `api-int`) hold nothing.
    async fn assert_nothing_left(&self, why: &str) {
        self.h.peers.enforce_iam(false).await.unwrap();
        let world = self.h.world().await;
        world.assert_no_address_of_ours(why);
        for (zone, name) in [("private", API), ("private", API_INT), ("public", API)] {
            let left = world.record(zone, name);
            assert!(left.is_empty(), "{why}: {zone} {name} keeps {left:?}");
        }
    }
}

/// The Route53 IAM action of a call as the counting proxy saw it (`METHOD /path`).
fn route53_action(call: &str) -> String {
    let (method, path) = call.split_once(' ').unwrap();
    let path = path.split('?').next().unwrap();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let operation = match (method, parts.as_slice()) {
        ("GET", [_, "hostedzonesbyname"]) => "ListHostedZonesByName",
        ("GET", [_, "tags", "hostedzone", _]) => "ListTagsForResource",
        ("GET", [_, "hostedzone", _]) => "GetHostedZone",
        ("GET", [_, "hostedzone", _, "rrset"]) => "ListResourceRecordSets",
        ("POST", [_, "hostedzone", _, "rrset"]) => "ChangeResourceRecordSets",
        ("GET", [_, "change", _]) => "GetChange",
        _ => panic!("a Route53 call the table does not know: {call}"),
    };
    format!("route53:{operation}")
}

/// The Route53 calls the proxy saw are each an action of `policy`, and each Route53 action of
/// `policy` was called (none printed for nothing).
fn assert_route53_calls_are_the_policys(w: &World, policy: &Value, what: &str) {
    let called: std::collections::BTreeSet<String> =
        w.h.peers
            .route53_proxy
            .calls()
            .iter()
            .map(|c| route53_action(&c.action))
            .collect();
    let printed: std::collections::BTreeSet<String> =
        actions_of(policy, "route53:").into_iter().collect();
    assert_eq!(called, printed, "{what}: Route53 actions called vs printed");
}

/// The whole `run` as a user holding exactly the printed policy of `run` (not `*`), then
/// `teardown --all` as one holding exactly that of `teardown-all`: both succeed and nothing is
/// left. moto authorizes each EC2 call on its resource's ARN and tags (moto_server.py), so the
/// ownership conditions and the tag-on-create condition are evaluated, not skipped.
#[tokio::test(flavor = "multi_thread")]
async fn the_printed_policy_is_enough_for_run_and_teardown_all() {
    let mut w = world().await;
    let run_policy = printed_policy(&w, &[Covered::Run]);
    let teardown_policy = printed_policy(&w, &[Covered::TeardownAll]);
    assert!(
        run_policy
            .to_string()
            .contains("aws:ResourceTag/kubernetes.io/cluster/"),
        "{run_policy}"
    );
    let runner = w.user_with("runner", &run_policy).await;
    let remover = w.user_with("remover", &teardown_policy).await;
    enforce_iam(&mut w).await;
    use_keys(&w.h, &runner.access_key_id, &runner.secret_access_key);
    w.h.peers.reset_counts();
    w.h.run_exits(&["run"], 0).await;
    assert_route53_calls_are_the_policys(&w, &run_policy, "run");
    w.h.peers.reset_counts();
    let (code, stderr) = w.teardown_all_as(&remover).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_route53_calls_are_the_policys(&w, &teardown_policy, "teardown --all");
    w.assert_nothing_left("teardown --all").await;
}

/// The preflight line that proves `action`, as the agent's table says (None: the step that
/// calls it fails naming it).
fn preflight_line_of(action: &str) -> Option<&'static str> {
    use bootstrap_cloud::permissions::{AWS, Proof};
    AWS.iter()
        .filter(|g| g.action == action)
        .find_map(|g| match g.proof {
            Proof::Preflight(line) => Some(line),
            Proof::Step(_) => None,
        })
}

/// The EC2 and Route53 actions of a printed policy.
fn ec2_and_route53_actions(policy: &Value) -> Vec<String> {
    [actions_of(policy, "ec2:"), actions_of(policy, "route53:")].concat()
}

/// For each EC2 and Route53 action of `run`'s printed policy: a user with the policy less that
/// one action cannot do `run`. Preflight fails naming it before any change (exit 2), or, where
/// preflight cannot ask (DescribeNetworkInterfaces, DeleteNetworkInterface at the hand-over,
/// Route53's reads and GetChange), the step fails naming it; then `teardown --all` with its
/// own printed policy leaves nothing behind.
#[tokio::test(flavor = "multi_thread")]
async fn run_without_any_one_printed_action_fails_naming_it_and_leaks_nothing() {
    let probe = world().await;
    let actions = ec2_and_route53_actions(&printed_policy(&probe, &[Covered::Run]));
    drop(probe);
    assert!(actions.len() >= 6, "{actions:?}");
    assert!(
        actions.contains(&"route53:ChangeResourceRecordSets".to_string()),
        "{actions:?}"
    );
    for action in actions {
        let mut w = world().await;
        let run_policy = printed_policy(&w, &[Covered::Run]);
        let lacking = w.user_with("lacking", &without(&run_policy, &action)).await;
        let remover = w
            .user_with("remover", &printed_policy(&w, &[Covered::TeardownAll]))
            .await;
        enforce_iam(&mut w).await;
        use_keys(&w.h, &lacking.access_key_id, &lacking.secret_access_key);
        w.h.peers.reset_counts();
        let out = w.h.command(&["run"]).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_ne!(out.status.code(), Some(0), "{action}: {stderr}");
        assert!(stderr.contains(&action), "{action} is not named: {stderr}");
        // Where the table says preflight proves it, preflight's line of that name fails.
        if let Some(line) = preflight_line_of(&action) {
            assert_eq!(out.status.code(), Some(2), "{action}: {stderr}");
            assert!(
                stderr.contains(&format!("FAIL  {line}")),
                "{action}: {stderr}"
            );
        }
        if out.status.code() == Some(2) {
            assert!(stderr.contains("FAIL  "), "{action}: {stderr}");
            let calls = w.h.peers.mutating_calls();
            assert!(calls.is_empty(), "{action}: {calls:?}");
        }
        let (code, teardown) = w.teardown_all_as(&remover).await;
        assert_eq!(code, Some(0), "{action}: {teardown}");
        w.assert_nothing_left(&action).await;
    }
}

/// For each EC2 and Route53 action of `teardown-all`'s printed policy: after an install that failed
/// before the hand-over (`reserve` and `dns seed` done: the ENIs still hold the private IPs,
/// the EIPs are reserved), a user with that policy less one action cannot finish
/// `teardown --all`, which names the action; a second `teardown --all` with the whole policy
/// leaves nothing behind. (After a whole `run` the hand-over already deleted the ENIs.)
#[tokio::test(flavor = "multi_thread")]
async fn teardown_all_without_any_one_printed_action_fails_naming_it() {
    let probe = world().await;
    let actions = ec2_and_route53_actions(&printed_policy(&probe, &[Covered::TeardownAll]));
    drop(probe);
    assert!(
        actions.contains(&"ec2:ReleaseAddress".to_string())
            && actions.contains(&"route53:ChangeResourceRecordSets".to_string()),
        "{actions:?}"
    );
    for action in actions {
        let mut w = world().await;
        let teardown_policy = printed_policy(&w, &[Covered::TeardownAll]);
        let lacking = w
            .user_with("lacking", &without(&teardown_policy, &action))
            .await;
        let remover = w.user_with("remover", &teardown_policy).await;
        let run_flags = std::mem::take(&mut w.h.extra);
        w.h.run(&["reserve"]).await;
        w.h.run(&["dns", "seed"]).await;
        w.h.extra = run_flags;
        let seeded = w.h.world().await.record("private", API_INT);
        assert!(!seeded.is_empty(), "{action}: dns seed wrote api-int");
        enforce_iam(&mut w).await;
        let (code, stderr) = w.teardown_all_as(&lacking).await;
        assert_ne!(code, Some(0), "{action}: {stderr}");
        assert!(stderr.contains(&action), "{action} is not named: {stderr}");
        let (code, stderr) = w.teardown_all_as(&remover).await;
        assert_eq!(code, Some(0), "{action}: {stderr}");
        w.assert_nothing_left(&action).await;
    }
}

/// The ownership condition is evaluated, not skipped: a user holding exactly the printed
/// `teardown-all` policy may not release an Elastic IP that lacks our ownership tag (EC2
/// answers UnauthorizedOperation on its ARN), and the address stays.
#[tokio::test(flavor = "multi_thread")]
async fn the_printed_policy_cannot_release_what_is_not_ours() {
    let mut w = world().await;
    let (foreign, _) = w.h.peers.allocate_eip().await.unwrap();
    let remover = w
        .user_with("remover", &printed_policy(&w, &[Covered::TeardownAll]))
        .await;
    enforce_iam(&mut w).await;
    let refused = w.h.peers.release_eip_as(&foreign, &remover).await;
    let error = format!("{:#}", refused.unwrap_err());
    assert!(
        error.contains("UnauthorizedOperation") && error.contains("ec2:ReleaseAddress"),
        "{error}"
    );
    w.h.peers.enforce_iam(false).await.unwrap();
    let eips = w.h.world().await.0["eips"].clone();
    assert!(eips.to_string().contains(&foreign), "{eips}");
}

/// Day-2 `publish --scope Internal --auto-delete`, then `--scope External`, on a cluster `run`
/// made, as a user holding exactly the printed policy of `publish` in EC2 (moto enforcing IAM)
/// and exactly its printed ClusterRole in the cluster (the local API server enforcing RBAC):
/// both succeed (the public IPs released, then reserved and published again), and the
/// Route53 actions called are the printed ones.
#[tokio::test(flavor = "multi_thread")]
async fn the_printed_policy_and_cluster_role_are_enough_for_publish() {
    let mut w = world_with(AwsHarness::new("aws").await, |o| {
        rbac::as_agent_holding(o, &rbac::printed_role(&[Covered::Run]));
    })
    .await;
    w.h.run_exits(&["run"], 0).await;
    let public = w.h.world().await.ours("eips").len();
    assert!(public > 0);
    w.kube
        .create_or_replace(rbac::printed_role(&[Covered::Publish]))
        .unwrap();
    let policy = printed_policy(&w, &[Covered::Publish]);
    assert!(
        actions_of(&policy, "ec2:").contains(&"ec2:ReleaseAddress".to_string())
            && actions_of(&policy, "ec2:").contains(&"ec2:AllocateAddress".to_string()),
        "{policy}"
    );
    let publisher = w.user_with("publisher", &policy).await;
    enforce_iam(&mut w).await;
    use_keys(&w.h, &publisher.access_key_id, &publisher.secret_access_key);
    let kubeconfig = w.kube.kubeconfig_path();
    w.h.extra = vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--wire-dial-override".into(),
        wire_overrides(kubeconfig),
        "--drain-wait".into(),
        "0s".into(),
    ];
    w.h.peers.reset_counts();
    for (args, eips) in [
        (&["publish", "--scope", "Internal", "--auto-delete"][..], 0),
        (&["publish", "--scope", "External"][..], public),
    ] {
        let out = w.h.command(args).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("forbidden"), "{args:?}: {stderr}");
        w.h.peers.enforce_iam(false).await.unwrap();
        assert_eq!(w.h.world().await.ours("eips").len(), eips, "{args:?}");
        w.h.peers.enforce_iam(true).await.unwrap();
    }
    assert_route53_calls_are_the_policys(&w, &policy, "publish");
}
