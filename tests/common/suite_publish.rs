//! `publish --scope` on a cluster `run` made, written once for every cloud: External ->
//! Internal -> External, the admin's deletion (or `--auto-delete`), the condition in `status`
//! and the ConfigMap, SIGKILL at each step, a revert mid-change, and the user's public IP.

use super::agent::{API, API_INT};
use super::cloud::{Cloud, CloudWorld, Harness};
use bootstrap_sim::Hold;
use bootstrap_sim::kube::KubeSim;
use serde_json::Value;

pub(super) const EXTERNAL_LB: &str = "openshift-kube-apiserver/external-lb";

/// The flags of `publish` against the local API server (the wire proof dials it for every
/// load-balancer IP); no drain unless a test asks for one.
fn publish_flags(kube: &KubeSim) -> Vec<String> {
    vec![
        "--kubeconfig".into(),
        kube.kubeconfig_path().display().to_string(),
        "--wire-dial-override".into(),
        super::agent::wire_overrides(kube.kubeconfig_path()),
        "--drain-wait".into(),
        "0s".into(),
    ]
}

/// Our LoadBalancer Services in the local API server, `namespace/name`.
pub(super) fn our_services(kube: &KubeSim) -> Vec<String> {
    let mut names: Vec<String> = kube
        .list("", "v1", "services", None)
        .iter()
        .filter(|s| s["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "bootstrap-agent")
        .map(|s| {
            format!(
                "{}/{}",
                s["metadata"]["namespace"].as_str().unwrap_or_default(),
                s["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    names.sort();
    names
}

/// The admin deletes a Service, as `oc delete svc` does.
async fn admin_deletes(kube: &KubeSim, service: &str) {
    let (ns, name) = service.split_once('/').unwrap();
    let kc = kube::config::Kubeconfig::read_from(kube.kubeconfig_path()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let api: kube::Api<k8s_openapi::api::core::v1::Service> = kube::Api::namespaced(client, ns);
    api.delete(name, &Default::default()).await.unwrap();
}

/// ConfigMap kube-system/bootstrap-agent's data.
pub(super) fn config_map(kube: &KubeSim) -> Value {
    super::agent::signal(kube)
}

/// The one condition `publish` wrote into the ConfigMap.
fn published_condition(kube: &KubeSim) -> Value {
    let data = config_map(kube);
    let text = data["conditions.json"].as_str().unwrap_or("[]");
    let conditions: Value = serde_json::from_str(text).unwrap();
    conditions[0].clone()
}

/// A cluster `run` made, with another owner's reservations beside ours; the harness set up
/// for `publish`. What is not ours (without the load balancers' own interfaces, which come
/// and go with them), and the (public, private) IPs in DNS.
pub(super) async fn cluster_made_by_run<C: Cloud>()
-> (Harness<C>, KubeSim, Value, Vec<String>, Vec<String>) {
    cluster_made_by(false).await
}

/// [`cluster_made_by_run`]; `users`: on the public IPs the user made (UPI), which `run`
/// adopts, rather than ours.
async fn cluster_made_by<C: Cloud>(
    users: bool,
) -> (Harness<C>, KubeSim, Value, Vec<String>, Vec<String>) {
    let mut h = C::start().await;
    h.peers.create_foreign().await;
    let users = match users {
        true => Some(h.peers.create_user_public().await),
        false => None,
    };
    let cloud = h.peers.lb_cloud();
    let kube = h.local_api(cloud).await;
    h.run(&["run"]).await;
    let world = h.world().await;
    let foreign = not_ours(&world);
    // The private records' values: the load balancers' private IPs (on AWS handed over, so
    // no longer reservations the cloud shows).
    let mut public = users.unwrap_or_else(|| world.reserved_public());
    public.sort();
    let private = world.values("private", API);
    assert!(
        !public.is_empty() && !private.is_empty(),
        "{:#}",
        world.raw()
    );
    assert_eq!(world.values("public", API), public);
    h.extra = publish_flags(&kube);
    (h, kube, foreign, public, private)
}

/// What is not ours, without what the load balancers hold themselves (their interfaces
/// come and go with them; an AWS NLB's are `ELB net/...`).
pub(super) fn not_ours(world: &impl CloudWorld) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Array(items) => {
                items.retain(|i| {
                    !i["description"]
                        .as_str()
                        .is_some_and(|d| d.starts_with("ELB net/"))
                });
                items.iter_mut().for_each(strip);
            }
            Value::Object(map) => map.values_mut().for_each(strip),
            _ => {}
        }
    }
    let mut foreign = world.foreign();
    strip(&mut foreign);
    foreign
}

/// Starts `args` and SIGKILLs it at `hold` of the DNS (`dns`) or the addresses' proxy,
/// counting from now.
async fn kill_at<C: Cloud>(h: &Harness<C>, args: &[&str], dns: bool, hold: Hold) {
    h.peers.reset_counts();
    h.kill_in(args, dns, hold).await;
}

/// Private: the private records hold the reserved private IPs as `run` left them, and the
/// public `api` holds none of ours; no public IP of ours; no external Service.
pub(super) async fn assert_internal<C: Cloud>(h: &Harness<C>, kube: &KubeSim, private: &[String]) {
    let world = h.world().await;
    assert!(world.reserved_public().is_empty(), "{:#}", world.raw());
    assert!(world.values("public", API).is_empty(), "{:#}", world.raw());
    for name in [API, API_INT] {
        assert_eq!(world.values("private", name), private, "private {name}");
    }
    assert!(!our_services(kube).contains(&EXTERNAL_LB.to_string()));
}

/// Public again: as many public IPs of ours as `run` reserved, all in the public `api`, the
/// external Service holding them; the private side untouched.
pub(super) async fn assert_external<C: Cloud>(
    h: &Harness<C>,
    kube: &KubeSim,
    public_count: usize,
    private: &[String],
) -> Vec<String> {
    let world = h.world().await;
    let public = world.reserved_public();
    assert_eq!(public.len(), public_count, "{:#}", world.raw());
    assert_eq!(world.values("public", API), public);
    for name in [API, API_INT] {
        assert_eq!(world.values("private", name), private, "private {name}");
    }
    let (ns, name) = EXTERNAL_LB.split_once('/').unwrap();
    let svc = kube.get("", "v1", "services", Some(ns), name).unwrap();
    assert!(
        svc["status"]["loadBalancer"]["ingress"][0].is_object(),
        "the external load balancer serves: {svc}"
    );
    public
}

pub(super) fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// External -> Internal -> External on a cluster `run` made. Going private: `--dry-run` lists
/// every change and makes none; the public record goes first, then the agent waits for the
/// admin to delete the external Service (exit 4 past the deadline, the condition saying what
/// to delete and how to revert, in `status` and the ConfigMap); once deleted, the public IPs of
/// ours are released once the cloud lets go. Going public: new public IPs, the external
/// Service, the gate, then the public record. Each again changes nothing; nothing else touched.
pub async fn publish_round_trip_external_internal_external<C: Cloud>() {
    let (h, kube, foreign, public, private) = cluster_made_by_run::<C>().await;

    let out = h
        .assert_changes_nothing(
            &[&["publish", "--scope", "Internal", "--dry-run"]],
            "a dry run changes nothing",
        )
        .await;
    let plan = text(&out);
    assert!(
        plan.contains(&format!("  - service {EXTERNAL_LB}")),
        "{plan}"
    );
    assert!(
        plan.contains("  - dns ") && plan.contains("remove"),
        "{plan}"
    );
    for ip in &public {
        assert!(
            plan.contains(&format!(" {ip} [the API is published Internal now]")),
            "{plan}"
        );
    }
    assert!(
        plan.contains("revert with `bootstrap-agent publish --scope External`"),
        "{plan}"
    );

    let (_, stderr) = h
        .run_exits(
            &["publish", "--scope", "Internal", "--gate-timeout", "2s"],
            4,
        )
        .await;
    assert!(
        stderr.contains(
            "you must delete the service: `oc -n openshift-kube-apiserver delete svc/external-lb`"
        ) && stderr
            .contains("you can revert the change: `bootstrap-agent publish --scope External`"),
        "{stderr}"
    );
    let mid = h.world().await;
    assert!(
        mid.values("public", API).is_empty(),
        "the public record goes first: {:#}",
        mid.raw()
    );
    assert_eq!(
        mid.reserved_public(),
        public,
        "nothing released while its Service stands"
    );
    assert!(
        our_services(&kube).contains(&EXTERNAL_LB.to_string()),
        "the agent deleted no Service"
    );
    let status = h.status().await;
    let condition = &status["scope_change"]["condition"];
    assert_eq!(condition["type"], "Progressing", "{status:#}");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "ScopeChanged");
    assert_eq!(
        published_condition(&kube),
        *condition,
        "the ConfigMap says the same"
    );
    assert_eq!(config_map(&kube)["apiScope"], "Internal");
    assert_eq!(config_map(&kube)["phase"], "complete", "run's keys stay");

    admin_deletes(&kube, EXTERNAL_LB).await;
    let out = h.run(&["publish", "--scope", "Internal"]).await;
    assert!(
        text(&out).contains("publish: the API is published Internal"),
        "{}",
        text(&out)
    );
    assert_internal(&h, &kube, &private).await;
    let condition = published_condition(&kube);
    assert_eq!(
        (condition["status"].as_str(), condition["reason"].as_str()),
        (Some("False"), Some("AsExpected"))
    );
    kube.clear_request_log();
    h.assert_changes_nothing(
        &[&["publish", "--scope", "Internal"]],
        "private again changes nothing",
    )
    .await;
    let writes = super::agent::kube_mutations(&kube);
    assert!(writes.is_empty(), "nor the cluster: {writes:?}");

    let plan = text(
        &h.run(&["publish", "--scope", "External", "--dry-run"])
            .await,
    );
    assert!(plan.contains("+ reserve public-ipv4"), "{plan}");
    assert!(plan.contains(&format!("+ service {EXTERNAL_LB}")), "{plan}");
    h.run(&["publish", "--scope", "External"]).await;
    assert_external(&h, &kube, public.len(), &private).await;
    assert_eq!(config_map(&kube)["apiScope"], "External");
    h.assert_changes_nothing(
        &[&["publish", "--scope", "External"]],
        "public again changes nothing",
    )
    .await;
    assert_eq!(not_ours(&h.world().await), foreign, "nothing else touched");
}

/// Reverting mid-change: going private stopped while it waits for the admin (the public
/// record gone, the Service and its IPs still there); `publish --scope External` brings the
/// public record back on the same IPs, nothing reserved or released. And reverting a change
/// to public after its Service was applied releases what it reserved.
pub async fn publish_reverted_mid_change_returns_to_the_previous_state_with_nothing_leaked<
    C: Cloud,
>() {
    let (h, kube, foreign, public, private) = cluster_made_by_run::<C>().await;
    h.run_exits(
        &["publish", "--scope", "Internal", "--gate-timeout", "1s"],
        4,
    )
    .await;
    assert!(h.world().await.values("public", API).is_empty());
    let count = h.world().await.our_count();
    h.run(&["publish", "--scope", "External"]).await;
    let world = h.world().await;
    assert_eq!(
        world.reserved_public(),
        public,
        "the same public IPs, none new"
    );
    assert_eq!(world.our_count(), count, "nothing reserved or released");
    assert_eq!(world.values("public", API), public);
    let condition = published_condition(&kube);
    assert_eq!(condition["status"], "False", "{condition}");

    // Going private with --auto-delete, then public again but stopped after the Service was
    // applied (a gate that cannot pass: its deadline is shorter than the load balancer's
    // start), then reverted to private: the new public IPs are released.
    h.run(&["publish", "--scope", "Internal", "--auto-delete"])
        .await;
    assert_internal(&h, &kube, &private).await;
    h.run_exits(
        &["publish", "--scope", "External", "--gate-timeout", "1ms"],
        4,
    )
    .await;
    assert!(
        h.world().await.values("public", API).is_empty(),
        "no public record before its load balancer serves"
    );
    h.run(&["publish", "--scope", "Internal", "--auto-delete"])
        .await;
    assert_internal(&h, &kube, &private).await;
    assert_eq!(
        not_ours(&h.world().await),
        foreign,
        "nothing leaked, nothing else touched"
    );
}

/// SIGKILL at each step of a change (the public record's removal, the release of the public
/// IPs, their reservation, the public record's addition): a re-run completes the change with
/// nothing leaked or duplicated, and then changes nothing.
pub async fn publish_killed_at_each_step_resumes_without_leaks_or_duplicates<C: Cloud>() {
    let (h, kube, foreign, public, private) = cluster_made_by_run::<C>().await;
    let internal: &[&str] = &["publish", "--scope", "Internal", "--auto-delete"];
    let external: &[&str] = &["publish", "--scope", "External"];
    // In the withdrawal of the public record (before and after the write).
    for hold in [Hold::Before(1), Hold::After(1)] {
        kill_at(&h, internal, true, hold).await;
        h.run(external).await;
        assert_external(&h, &kube, public.len(), &private).await;
    }
    // In the release of the public IPs (our Service deleted already).
    kill_at(&h, internal, false, Hold::After(1)).await;
    h.run(internal).await;
    assert_internal(&h, &kube, &private).await;
    h.assert_changes_nothing(&[internal], "then nothing is left to do")
        .await;
    // In the reservation of the public IPs, then in the public record's addition.
    kill_at(&h, external, false, Hold::After(1)).await;
    h.run(external).await;
    assert_external(&h, &kube, public.len(), &private).await;
    h.run(internal).await;
    kill_at(&h, external, true, Hold::Before(1)).await;
    h.run(external).await;
    assert_external(&h, &kube, public.len(), &private).await;
    h.assert_changes_nothing(&[external], "then nothing is left to do")
        .await;
    h.peers.assert_nothing_made_twice();
    assert_eq!(not_ours(&h.world().await), foreign, "nothing else touched");
}

/// The user made the public IP(s) (UPI, by the seed's names) and `run` adopted them: going
/// private withdraws their values from the public record and deletes our external Service,
/// but leaves the IPs as they are, saying so; going public again adopts them again and
/// reserves nothing.
pub async fn publish_leaves_the_users_public_ip_untouched<C: Cloud>() {
    let (h, kube, _, public, private) = cluster_made_by::<C>(true).await;
    let status = text(&h.run(&["status"]).await);
    assert_eq!(
        status.matches("adopted (yours)").count(),
        public.len(),
        "run adopted the user's public IPs: {status}"
    );
    let out = h
        .run(&["publish", "--scope", "Internal", "--auto-delete"])
        .await;
    let said = text(&out);
    assert!(
        said.contains("is yours (adopted): the agent leaves it untouched"),
        "{said}"
    );
    let world = h.world().await;
    assert!(world.values("public", API).is_empty(), "{:#}", world.raw());
    let left = world.foreign().to_string();
    for ip in &public {
        assert!(
            left.contains(&format!("\"{ip}\"")),
            "the user's {ip} stays: {:#}",
            world.raw()
        );
    }
    assert!(!our_services(&kube).contains(&EXTERNAL_LB.to_string()));
    for name in [API, API_INT] {
        assert_eq!(world.values("private", name), private, "private {name}");
    }
    let count = world.our_count();
    h.run(&["publish", "--scope", "External"]).await;
    let world = h.world().await;
    assert!(
        world.reserved_public().is_empty(),
        "nothing reserved: {:#}",
        world.raw()
    );
    assert_eq!(world.our_count(), count);
    assert_eq!(
        world.values("public", API),
        public,
        "the user's IPs, adopted again"
    );
}
