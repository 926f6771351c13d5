//! Least privilege (issue 25), written once for the clouds whose fakes enforce the role the
//! agent prints (`bootstrap-agent permissions --cloud <cloud> --assets <the world's> --command
//! <command>`): the GCP fake checks every call against the caller's permissions per project
//! (`bootstrap_sim::gcp`'s `authz`), the Azure one every ARM call against its role assignments
//! (`bootstrap_sim::azure`'s `authorization`). [`permissions_suite!`] instantiates the three
//! tests in a cloud's test file. (AWS has its own, on moto's IAM, in `tests/operating.rs`.)
//!
//! - The printed role of `run` is enough for the whole `run`, that of `teardown-all` for
//!   `teardown --all`, and nothing of ours is left.
//! - Without any one permission of `run`'s role, `run` fails naming it: preflight exits 2
//!   before any change, or the step that needs it fails; `teardown --all` with its whole role
//!   then leaves nothing.
//! - The same for each permission of `teardown-all`'s role, after `reserve` + `dns seed` with
//!   another writer's value in the private `api` (so that one record set is replaced and
//!   another deleted).

use super::agent::{API, API_INT, OTHER_WRITER};
use super::cloud::{Cloud, CloudWorld};
use super::operating::PreflightWorld;
use bootstrap_cloud::permissions::Command;
use serde_json::Value;

/// A cloud whose fake enforces a role as the cloud does.
pub trait EnforcesRole: Cloud {
    /// The field of the printed role listing its permissions (GCP's `includedPermissions`,
    /// Azure's `Actions`).
    const PERMISSIONS: &'static str;

    /// The permissions of a printed role, in its order.
    fn permissions_of(role: &Value) -> Vec<String> {
        let listed = role[Self::PERMISSIONS].as_array().unwrap();
        listed
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect()
    }

    /// `role` less `permission`.
    fn without(role: &Value, permission: &str) -> Value {
        let mut role = role.clone();
        let listed = role[Self::PERMISSIONS].as_array_mut().unwrap();
        listed.retain(|p| p != permission);
        role
    }

    /// From now on the agent's caller holds exactly `role`, bound where the role says
    /// (GCP: the projects of its description; Azure: its assignable scopes).
    fn grant(&self, role: &Value);
}

type World<C> = PreflightWorld<C>;

/// The cloud's peers, the agent on its main fixture and a local API server.
async fn world<C: EnforcesRole>() -> World<C> {
    let h = C::start().await;
    let cloud = h.peers.lb_cloud();
    PreflightWorld::new(h, cloud, &[]).await
}

/// What `bootstrap-agent permissions --cloud <C> --assets <w's> --command <command>` prints
/// (the same function, with the command's default `--bootstrap-second-address host`, as
/// `run`'s).
fn printed<C: EnforcesRole>(w: &World<C>, command: Command) -> Value {
    let mut spec = bootstrap_agent::assets::load(&w.h.assets).unwrap();
    spec.second_bootstrap_address = bootstrap_agent::assets::SecondAddress::Host;
    bootstrap_agent::permissions::document(C::NAME, Some(&spec), &[command]).unwrap()
}

/// The agent with `args` (and only `--kubeconfig`, for `teardown --all`'s Services): its
/// exit code and stderr.
async fn agent<C: EnforcesRole>(w: &mut World<C>, args: &[&str]) -> (Option<i32>, String) {
    let kubeconfig = w.kube.kubeconfig_path().display().to_string();
    let run_flags = if args[0] == "run" {
        None
    } else {
        Some(std::mem::replace(
            &mut w.h.extra,
            vec!["--kubeconfig".into(), kubeconfig],
        ))
    };
    let out = w.h.command(args).output().await.unwrap();
    if let Some(flags) = run_flags {
        w.h.extra = flags;
    }
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `teardown --all` as a caller holding exactly `teardown-all`'s printed role succeeds, and
/// nothing of ours is left: no reservation, none of our values in the records (another
/// writer's stays).
async fn teardown_leaves_nothing<C: EnforcesRole>(w: &mut World<C>, why: &str) {
    let role = printed(w, Command::TeardownAll);
    w.h.peers.grant(&role);
    let (code, stderr) = agent(w, &["teardown", "--all"]).await;
    assert_eq!(code, Some(0), "{why}: {stderr}");
    let world = w.h.world().await;
    assert_eq!(world.our_count(), 0, "{why}: {:#}", world.raw());
    for (zone, name) in [("private", API), ("private", API_INT), ("public", API)] {
        let left: Vec<String> = world
            .values(zone, name)
            .into_iter()
            .filter(|v| v != OTHER_WRITER)
            .collect();
        assert!(left.is_empty(), "{why}: {zone} {name} keeps {left:?}");
    }
}

/// The whole `run` as a caller holding exactly the printed role of `run`, then
/// `teardown --all` as one holding exactly that of `teardown-all`: both succeed, nothing is
/// left.
pub async fn the_printed_role_is_enough_for_run_and_teardown_all<C: EnforcesRole>() {
    let mut w = world::<C>().await;
    let role = printed(&w, Command::Run);
    assert!(C::permissions_of(&role).len() >= 8, "{role:#}");
    w.h.peers.grant(&role);
    let (code, stderr) = agent(&mut w, &["run"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    teardown_leaves_nothing(&mut w, "after run").await;
}

/// For each permission of `run`'s printed role: a caller with the role less that one cannot
/// do `run`, which names it. Preflight fails before any change (exit 2), or the step that
/// needs it fails; then `teardown --all` with its own printed role leaves nothing.
pub async fn run_without_any_one_printed_permission_fails_naming_it<C: EnforcesRole>() {
    let probe = world::<C>().await;
    let permissions = C::permissions_of(&printed(&probe, Command::Run));
    drop(probe);
    let mut unneeded = Vec::new();
    for permission in permissions {
        let started = std::time::Instant::now();
        let mut w = world::<C>().await;
        let role = printed(&w, Command::Run);
        w.h.peers.grant(&C::without(&role, &permission));
        w.h.peers.reset_counts();
        let (code, stderr) = agent(&mut w, &["run"]).await;
        if code == Some(2) {
            assert!(stderr.contains("FAIL  "), "{permission}: {stderr}");
            let calls = w.h.peers.mutating_calls();
            assert!(calls.is_empty(), "{permission}: {calls:?}");
        }
        refused_naming(&permission, code, &stderr, &mut unneeded);
        teardown_leaves_nothing(&mut w, &permission).await;
        eprintln!("run without {permission}: {:?}", started.elapsed());
    }
    assert!(unneeded.is_empty(), "run succeeded without {unneeded:?}");
}

/// A command without `permission` exited `code`: a failure names it. A success is one only
/// when a preflight line, unable to check, warned naming it (Azure's `permissions` line reads
/// the caller's permissions with `Microsoft.Authorization/permissions/read`); else the role
/// holds it for nothing (pushed to `unneeded`, so that one run lists them all).
fn refused_naming(permission: &str, code: Option<i32>, stderr: &str, unneeded: &mut Vec<String>) {
    if code == Some(0) {
        let warned = stderr
            .lines()
            .any(|l| l.trim_start().starts_with("warn ") && l.contains(permission));
        if !warned {
            unneeded.push(permission.to_string());
        }
    } else {
        assert!(
            stderr.contains(permission),
            "{permission} is not named: {stderr}"
        );
    }
}

/// For each permission of `teardown-all`'s printed role: after an install that stopped
/// after `reserve` and `dns seed`, a caller with that role less one cannot finish
/// `teardown --all`, which names it; a second one with the whole role leaves nothing but
/// another writer's values. Another writer's value is in the private `api` (so one record set
/// there is replaced, `api-int` deleted); a permission the teardown does without is tried
/// again with another writer's value in the public `api` too (replaced, not deleted).
pub async fn teardown_all_without_any_one_printed_permission_fails_naming_it<C: EnforcesRole>() {
    let probe = world::<C>().await;
    let permissions = C::permissions_of(&printed(&probe, Command::TeardownAll));
    drop(probe);
    assert!(!permissions.is_empty());
    let mut unneeded = Vec::new();
    for permission in permissions {
        let (mut code, mut stderr) = teardown_all_without::<C>(&permission, false).await;
        if code == Some(0) {
            (code, stderr) = teardown_all_without::<C>(&permission, true).await;
        }
        refused_naming(&permission, code, &stderr, &mut unneeded);
    }
    assert!(
        unneeded.is_empty(),
        "teardown --all succeeded without {unneeded:?}"
    );
}

/// A fresh world after `reserve` + `dns seed` (another writer's value in the private `api`,
/// and in the public one when `public_shared`); `teardown --all` without `permission`: its
/// exit code and stderr. Then one with the whole role leaves nothing of ours.
async fn teardown_all_without<C: EnforcesRole>(
    permission: &str,
    public_shared: bool,
) -> (Option<i32>, String) {
    let mut w = world::<C>().await;
    let peers = &w.h.peers;
    peers
        .write_record(true, "api.mycluster.example.com", &[OTHER_WRITER])
        .await;
    if public_shared {
        peers
            .write_record(false, "api.mycluster.example.com", &[OTHER_WRITER])
            .await;
    }
    let run_flags = std::mem::take(&mut w.h.extra);
    w.h.bootstrap().await;
    w.h.extra = run_flags;
    let role = printed(&w, Command::TeardownAll);
    w.h.peers.grant(&C::without(&role, permission));
    let refused = agent(&mut w, &["teardown", "--all"]).await;
    teardown_leaves_nothing(&mut w, permission).await;
    let api = w.h.world().await.values("private", API);
    assert_eq!(api, vec![OTHER_WRITER.to_string()], "{permission}");
    refused
}

/// The tests above as `#[tokio::test]`s for `$peers` (an [`EnforcesRole`]).
macro_rules! permissions_suite {
    ($peers:ty) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn the_printed_role_is_enough_for_run_and_teardown_all() {
            common::suite_permissions::the_printed_role_is_enough_for_run_and_teardown_all::<$peers>().await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn run_without_any_one_printed_permission_fails_naming_it() {
            common::suite_permissions::run_without_any_one_printed_permission_fails_naming_it::<$peers>().await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn teardown_all_without_any_one_printed_permission_fails_naming_it() {
            common::suite_permissions::teardown_all_without_any_one_printed_permission_fails_naming_it::<$peers>().await;
        }
    };
}
pub(crate) use permissions_suite;
