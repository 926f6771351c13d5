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
    world_in(role, Situation::Default).await
}

/// A world where `run`, holding exactly its printed role, succeeded.
async fn world_run_holding_its_printed_role() -> World {
    let w = world_holding(&rbac::printed_role(&[Covered::Run])).await;
    let (code, stderr) = agent(&w, &["run"]).await;
    assert_eq!(code, Some(0), "{stderr}");
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

/// The agent with `args` as an admin runs it, without an asset dir: exit code and stderr.
async fn admin(w: &World, args: &[&str]) -> (Option<i32>, String) {
    let out = w.h.admin_command(args, None).output().await.unwrap();
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
    w.h.world().await.assert_no_address_of_ours(why);
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

/// `capabilities apply` as the user holding `role`: with cvo-overrides.yaml (it creates
/// `version` with a server-side apply), or without (it watches until the CVO creates it, then
/// writes the spec). Exit code, stderr, and whether `version`'s spec holds the capabilities.
async fn capabilities_apply_holding(role: &Value, overrides: bool) -> (Option<i32>, String, bool) {
    let w = world_holding(role).await;
    if !overrides {
        std::fs::remove_file(w.h.assets.join("manifests/cvo-overrides.yaml")).unwrap();
    }
    // The CVO's bootstrap pod creates `version` once the agent watches for it.
    let cvo = async {
        if !overrides {
            when_watched(&w, "clusterversions", || cvo_creates_version(&w)).await;
        }
    };
    let (code, stderr) = alongside(capabilities_apply(&w), cvo).await;
    let written = w
        .kube
        .get(
            "config.openshift.io",
            "v1",
            "clusterversions",
            None,
            "version",
        )
        .is_some_and(|v| !v["spec"]["capabilities"].is_null());
    (code, stderr, written)
}

/// `capabilities apply` as the user holding exactly the printed role of `capabilities-apply`
/// writes the spec, with cvo-overrides.yaml and without; with any one verb less it fails in
/// one of the two, the API server's refusal on stderr, the spec not written.
#[tokio::test(flavor = "multi_thread")]
async fn capabilities_apply_needs_each_verb_of_its_printed_role() {
    let role = rbac::printed_role(&[Covered::CapabilitiesApply]);
    for overrides in [true, false] {
        let (code, stderr, written) = capabilities_apply_holding(&role, overrides).await;
        assert_eq!(code, Some(0), "overrides {overrides}: {stderr}");
        assert!(written, "overrides {overrides}");
    }
    let mut superfluous = Vec::new();
    for g in rbac::grants(&role) {
        let mut refused = false;
        for overrides in [true, false] {
            let (code, stderr, written) =
                capabilities_apply_holding(&rbac::without(&role, &g), overrides).await;
            if code == Some(0) {
                continue;
            }
            assert!(
                stderr.contains("forbidden"),
                "without {g} (overrides {overrides}): {stderr}"
            );
            assert!(!written, "without {g}: half-done");
            refused = true;
        }
        if !refused {
            superfluous.push(g.to_string());
        }
    }
    assert!(
        superfluous.is_empty(),
        "printed for nothing: {superfluous:?}"
    );
}

/// The world a verb of `run`'s role is called in (most are called in every `run`; some only
/// when the cluster is not there yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Situation {
    /// The fixture's world.
    Default,
    /// The AWS Load Balancer Controller does not serve when `run` starts, and comes up once
    /// the agent watches its Deployment (the hand-over waits for it).
    ControllerLate,
    /// No cvo-overrides.yaml: the CVO creates ClusterVersion `version` once the agent watches
    /// for it.
    CvoLate,
}

/// Where `g` is called.
fn situation(g: &Grant) -> Situation {
    match (g.group.as_str(), g.resource.as_str(), g.verb.as_str()) {
        ("apps", "deployments", "watch") => Situation::ControllerLate,
        ("config.openshift.io", "clusterversions", "list" | "watch") => Situation::CvoLate,
        _ => Situation::Default,
    }
}

/// Called by `run` only for a Service template carrying `release.openshift.io/delete`
/// (`cluster::apply`), which the embedded templates do not: not exercised here (the same
/// call is `teardown --all`'s, proven below).
const NOT_EXERCISED: &[(&str, &str, &str)] = &[("", "services", "delete")];

/// `command`'s outcome, `late` going on beside it until it is done (or `command` is).
async fn alongside<T>(
    command: impl std::future::Future<Output = T>,
    late: impl std::future::Future<Output = ()>,
) -> T {
    tokio::pin!(command);
    tokio::pin!(late);
    tokio::select! {
        out = &mut command => out,
        () = &mut late => command.await,
    }
}

/// Once the agent watches `resource` (within a minute), `then`.
async fn when_watched(w: &World, resource: &str, then: impl FnOnce()) {
    for _ in 0..6000 {
        let watching = w
            .kube
            .request_log()
            .iter()
            .any(|(_, p)| p.contains(resource) && p.contains("watch=true"));
        if watching {
            then();
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The CVO's bootstrap pod creates ClusterVersion `version`.
fn cvo_creates_version(w: &World) {
    w.kube
        .create(serde_json::json!({
            "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
            "metadata": {"name": "version"},
            "spec": {"clusterID": "0f1e2d3c-0000-4000-8000-000000000001"}}))
        .unwrap();
}

/// `world_holding(role)` made for `situation`.
async fn world_in(role: &Value, situation: Situation) -> World {
    let h = AwsHarness::new("aws").await;
    let mut options = KubeSimOptions {
        cloud: h.peers.lb_cloud(),
        aws_lb_controller_down: situation == Situation::ControllerLate,
        ..Default::default()
    };
    rbac::as_agent_holding(&mut options, role);
    if situation == Situation::CvoLate {
        std::fs::remove_file(h.assets.join("manifests/cvo-overrides.yaml")).unwrap();
    }
    let mut w = World::with_options(h, options, &[]).await;
    w.with_kubeconfig = true;
    w
}

/// `run` in `situation` (what comes late comes once the agent watches for it): exit code and
/// stderr.
async fn run_in(w: &World, situation: Situation) -> (Option<i32>, String) {
    let late = async {
        match situation {
            Situation::Default => {}
            Situation::ControllerLate => {
                when_watched(w, "deployments", || {
                    w.kube.set_aws_lb_controller_serving(true).unwrap()
                })
                .await
            }
            Situation::CvoLate => {
                when_watched(w, "clusterversions", || cvo_creates_version(w)).await
            }
        }
    };
    alongside(agent(w, &["run"]), late).await
}

/// Whether `stderr` carries the API server's refusal of `g`: the authorization filter's
/// message, or, for `create` by a server-side apply that creates, the patch handler's
/// `<resource> "<name>" is forbidden` (its reason is RBAC's, empty); or preflight's FAIL line
/// from its SelfSubjectAccessReview.
fn names(stderr: &str, g: &Grant) -> bool {
    let qualified = if g.group.is_empty() {
        g.resource.clone()
    } else {
        format!("{}.{}", g.resource, g.group)
    };
    stderr.contains(&g.refusal())
        || (g.verb == "create"
            && stderr.contains(&format!("{qualified} \""))
            && stderr.contains("is forbidden"))
        || stderr
            .lines()
            .any(|l| l.contains("FAIL") && l.contains(&g.verb) && l.contains(&qualified))
}

/// `run` holding exactly its printed role succeeds in each situation; for each verb of it, a
/// user with the role less that verb cannot do `run` where that verb is called: preflight
/// fails before any change (exit 2), or the step fails, the API server's refusal naming the
/// verb on stderr; `teardown --all` holding its printed role then leaves nothing behind.
#[tokio::test(flavor = "multi_thread")]
async fn run_without_any_one_printed_verb_fails_naming_it_and_leaks_nothing() {
    let role = rbac::printed_role(&[Covered::Run]);
    for situation in [Situation::ControllerLate, Situation::CvoLate] {
        let w = world_in(&role, situation).await;
        let (code, stderr) = run_in(&w, situation).await;
        assert_eq!(code, Some(0), "{situation:?}: {stderr}");
    }
    let grants = rbac::grants(&role);
    assert!(grants.len() >= 10, "{grants:?}");
    let mut failures = Vec::new();
    for g in grants {
        if NOT_EXERCISED.contains(&(g.group.as_str(), g.resource.as_str(), g.verb.as_str())) {
            continue;
        }
        let situation = situation(&g);
        let mut w = world_in(&rbac::without(&role, &g), situation).await;
        w.h.peers.reset_counts();
        let (code, stderr) = run_in(&w, situation).await;
        if code == Some(0) || !names(&stderr, &g) {
            failures.push(format!(
                "without {g} ({situation:?}): exit {code:?}: {stderr}"
            ));
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

/// For each verb of `teardown-all`'s printed role: after a whole `run`, a user with the role
/// less that verb cannot finish `teardown --all` (the refusal on stderr); with the whole role
/// it then leaves nothing behind.
#[tokio::test(flavor = "multi_thread")]
async fn teardown_all_without_any_one_printed_verb_fails_naming_it() {
    let role = rbac::printed_role(&[Covered::TeardownAll]);
    assert_every_grant_is_needed(&role, async |w, g| {
        grant(w, &rbac::without(&role, g));
        let (code, stderr) = teardown_all(w).await;
        let refused = code != Some(0);
        if refused {
            assert!(stderr.contains(&g.refusal()), "without {g}: {stderr}");
        }
        grant(w, &role);
        let (code, stderr) = teardown_all(w).await;
        assert_eq!(code, Some(0), "without {g}: {stderr}");
        assert_nothing_left(w, &format!("without {g}")).await;
        refused
    })
    .await;
}

/// For each grant of `role`, on a world where `run` succeeded holding its printed role:
/// `refused_without` takes the grant away, checks the refusal and what follows, and says
/// whether anything was refused; a grant nothing needs is printed for nothing.
async fn assert_every_grant_is_needed(
    role: &Value,
    refused_without: impl AsyncFn(&mut World, &rbac::Grant) -> bool,
) {
    let mut superfluous = Vec::new();
    for g in rbac::grants(role) {
        let mut w = world_run_holding_its_printed_role().await;
        if !refused_without(&mut w, &g).await {
            superfluous.push(g.to_string());
        }
    }
    assert!(
        superfluous.is_empty(),
        "printed for nothing: {superfluous:?}"
    );
}

/// The flags of `publish` against the local API server (see `suite_publish`).
fn publish_flags(w: &World) -> Vec<String> {
    let kubeconfig = w.kube.kubeconfig_path();
    vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--wire-dial-override".into(),
        common::wire_overrides(kubeconfig),
        "--drain-wait".into(),
        "0s".into(),
    ]
}

/// For each verb of `publish`'s printed ClusterRole: on a cluster `run` made, from an admin's
/// machine once the bootstrap host is gone (the inputs and what `run` left read from the
/// cluster, the Lease), the round trip `publish --scope Internal --auto-delete` then `--scope
/// External`, holding the role less that verb, fails with the API server's refusal naming it;
/// holding the whole role, the same command then finishes the change (nothing is left
/// half-done that a re-run cannot finish).
#[tokio::test(flavor = "multi_thread")]
async fn publish_without_any_one_printed_verb_fails_naming_it() {
    let role = rbac::printed_role(&[Covered::Publish]);
    assert_every_grant_is_needed(&role, async |w, g| {
        w.h.extra = publish_flags(w);
        common::suite_day2::installer_left_in_the_cluster(&w.kube, &w.h.assets);
        w.h.destroy_bootstrap_host();
        grant(w, &rbac::without(&role, g));
        for args in [
            &["publish", "--scope", "Internal", "--auto-delete"][..],
            &["publish", "--scope", "External"],
        ] {
            let (code, stderr) = admin(w, args).await;
            if code == Some(0) {
                continue;
            }
            assert!(names(&stderr, g), "without {g}: {args:?}: {stderr}");
            grant(w, &role);
            let (code, stderr) = admin(w, args).await;
            assert_eq!(
                code,
                Some(0),
                "without {g}, then with it: {args:?}: {stderr}"
            );
            return true;
        }
        false
    })
    .await;
}
