//! Least privilege on the cluster (issue 25): the agent's kube client runs as a user holding
//! exactly the ClusterRole `bootstrap-agent permissions --kube --command <c>` prints, and the
//! local API server enforces RBAC as kube-apiserver does (`bootstrap_sim::kube`'s `rbac`).
//! Each command succeeds with its printed role; with one verb less it fails, the API server's
//! refusal on stderr, and nothing is left half-done. One cloud (AWS: moto + ministack)
//! suffices: the cluster calls are the same code on every cloud, only the cloud's own
//! load-balancer controller differs, and the AWS one is the one preflight and the hand-over
//! read (its CRD and Deployment).
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_cloud::permissions::Command as Covered;
use bootstrap_sim::AwsPeers;
use bootstrap_sim::kube::KubeSimOptions;
use common::aws::*;
use common::operating::PreflightWorld;
use common::rbac::{self, Grant};
use serde_json::Value;

type World = PreflightWorld<AwsPeers>;

/// moto + ministack and a local API server whose kubeconfig is the user [`rbac::AGENT`]
/// holding `role`; preflight checks the cluster too.
async fn world_holding(role: &Value) -> World {
    let h = AwsHarness::new("aws").await;
    let mut options = KubeSimOptions {
        cloud: h.peers.lb_cloud(),
        ..Default::default()
    };
    rbac::as_agent_holding(&mut options, role);
    let mut w = World::with_options(h, options, &[]).await;
    w.with_kubeconfig = true;
    w
}

/// The admin gives the agent's user `role` instead of the one it holds.
fn grant(w: &World, role: &Value) {
    w.kube.create_or_replace(role.clone()).unwrap();
}

/// The agent with `args` (the run flags, the kubeconfig among them): exit code and stderr.
async fn agent(w: &World, args: &[&str]) -> (Option<i32>, String) {
    let out = w.h.command(args).output().await.unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `teardown --all` with only the kubeconfig flag: exit code and stderr.
async fn teardown_all(w: &mut World) -> (Option<i32>, String) {
    let kubeconfig = w.kube.kubeconfig_path().display().to_string();
    let flags = std::mem::replace(&mut w.h.extra, vec!["--kubeconfig".into(), kubeconfig]);
    let out = agent(w, &["teardown", "--all"]).await;
    w.h.extra = flags;
    out
}

/// `capabilities apply --assets <the world's> --kubeconfig <the agent's> --wait 2s`: exit
/// code and stderr.
async fn capabilities_apply(w: &World) -> (Option<i32>, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"))
        .args(["capabilities", "apply", "--assets"])
        .arg(&w.h.assets)
        .arg("--kubeconfig")
        .arg(w.kube.kubeconfig_path())
        .args(["--wait", "2s"])
        .env_remove("BOOTSTRAP_AGENT_ASSETS")
        .env_remove("BOOTSTRAP_AGENT_KUBECONFIG")
        .env_remove("BOOTSTRAP_AGENT_STATE_DIR")
        .output()
        .await
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// No Elastic IP, no ENI and no Service of ours is left.
async fn assert_nothing_left(w: &World, why: &str) {
    let world = w.h.world().await;
    assert!(
        world.ours("eips").is_empty() && world.ours("enis").is_empty(),
        "{why}: left {:?} {:?}",
        world.ours("eips"),
        world.ours("enis")
    );
    let services: Vec<Value> = w
        .kube
        .list("", "v1", "services", None)
        .into_iter()
        .filter(|s| s["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "bootstrap-agent")
        .collect();
    assert!(services.is_empty(), "{why}: left {services:?}");
}

/// `run` as the user holding exactly the printed role of `run`, then `teardown --all` holding
/// exactly that of `teardown-all`, then `capabilities apply` holding that of
/// `capabilities-apply`: each succeeds, and nothing is left.
#[tokio::test(flavor = "multi_thread")]
async fn the_printed_cluster_role_is_enough_for_run_teardown_all_and_capabilities_apply() {
    let mut w = world_holding(&rbac::printed_role(&[Covered::Run])).await;
    let (code, stderr) = agent(&w, &["run"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("forbidden"), "{stderr}");
    grant(&w, &rbac::printed_role(&[Covered::CapabilitiesApply]));
    let (code, stderr) = capabilities_apply(&w).await;
    assert_eq!(code, Some(0), "{stderr}");
    grant(&w, &rbac::printed_role(&[Covered::TeardownAll]));
    let (code, stderr) = teardown_all(&mut w).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_nothing_left(&w, "teardown --all").await;
}

/// `capabilities apply` on a cluster without ClusterVersion `version` (it creates it from
/// cvo-overrides.yaml, a server-side apply that creates) as the user holding exactly the
/// printed role of `capabilities-apply`; with any one verb less it fails naming the object
/// the API server refused.
#[tokio::test(flavor = "multi_thread")]
async fn capabilities_apply_needs_each_verb_of_its_printed_role() {
    let role = rbac::printed_role(&[Covered::CapabilitiesApply]);
    for lacking in std::iter::once(None).chain(rbac::grants(&role).into_iter().map(Some)) {
        let held = match &lacking {
            Some(g) => rbac::without(&role, g),
            None => role.clone(),
        };
        let w = world_holding(&held).await;
        let (code, stderr) = capabilities_apply(&w).await;
        let version = w.kube.get(
            "config.openshift.io",
            "v1",
            "clusterversions",
            None,
            "version",
        );
        match lacking {
            None => {
                assert_eq!(code, Some(0), "{stderr}");
                assert!(version.is_some());
            }
            Some(g) => {
                assert_ne!(code, Some(0), "without {g}: {stderr}");
                assert!(stderr.contains("forbidden"), "without {g}: {stderr}");
                assert!(version.is_none(), "without {g}: half-done");
            }
        }
    }
}

/// For each verb of `run`'s printed role: a user with the role less that verb cannot do
/// `run`; preflight fails naming it before any change (exit 2), or the step fails with the
/// API server's refusal naming it on stderr; `teardown --all` with its printed role then
/// leaves nothing behind.
#[tokio::test(flavor = "multi_thread")]
async fn run_without_any_one_printed_verb_fails_naming_it_and_leaks_nothing() {
    let role = rbac::printed_role(&[Covered::Run]);
    let grants = rbac::grants(&role);
    assert!(grants.len() >= 10, "{grants:?}");
    let mut failures = Vec::new();
    for g in grants {
        let mut w = world_holding(&rbac::without(&role, &g)).await;
        w.h.peers.reset_counts();
        let (code, stderr) = agent(&w, &["run"]).await;
        let named = stderr.contains(&g.refusal()) || names_the_preflight_line(&stderr, &g);
        if code == Some(0) || !named {
            failures.push(format!("without {g}: exit {code:?}: {stderr}"));
        }
        if code == Some(2) {
            let calls = w.h.peers.mutating_calls();
            assert!(calls.is_empty(), "without {g}: {calls:?}");
        }
        grant(&w, &rbac::printed_role(&[Covered::TeardownAll]));
        let (code, teardown) = teardown_all(&mut w).await;
        assert_eq!(code, Some(0), "without {g}: {teardown}");
        assert_nothing_left(&w, &format!("without {g}")).await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Preflight's FAIL line for a missing `g` (its SelfSubjectAccessReview answer).
fn names_the_preflight_line(stderr: &str, g: &Grant) -> bool {
    stderr.lines().any(|l| {
        l.contains("FAIL")
            && l.contains(&g.verb)
            && (l.contains(&g.resource) || l.contains(&singular(&g.resource)))
    })
}

fn singular(resource: &str) -> String {
    resource.trim_end_matches('s').to_string()
}

/// For each verb of `teardown-all`'s printed role: after a whole `run`, a user with the role
/// less that verb cannot finish `teardown --all` (the refusal on stderr); with the whole role
/// it then leaves nothing behind.
#[tokio::test(flavor = "multi_thread")]
async fn teardown_all_without_any_one_printed_verb_fails_naming_it() {
    let role = rbac::printed_role(&[Covered::TeardownAll]);
    for g in rbac::grants(&role) {
        let mut w = world_holding(&rbac::printed_role(&[Covered::Run])).await;
        let (code, stderr) = agent(&w, &["run"]).await;
        assert_eq!(code, Some(0), "{stderr}");
        grant(&w, &rbac::without(&role, &g));
        let (code, stderr) = teardown_all(&mut w).await;
        assert_ne!(code, Some(0), "without {g}: {stderr}");
        assert!(stderr.contains(&g.refusal()), "without {g}: {stderr}");
        grant(&w, &role);
        let (code, stderr) = teardown_all(&mut w).await;
        assert_eq!(code, Some(0), "without {g}: {stderr}");
        assert_nothing_left(&w, &format!("without {g}")).await;
    }
}
