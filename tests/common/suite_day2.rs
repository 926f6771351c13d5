//! Day 2 from an admin's machine, written once for every cloud: after `run`, the bootstrap
//! host is destroyed (its asset dir and journal gone) and `publish --scope` runs with only the
//! kubeconfig (and the clouds' endpoints): the inputs from the cluster, the journal started
//! from what `run` left there, in the admin's own state dir.

use super::cloud::{Cloud, CloudWorld, Harness};
use super::suite_publish::{
    EXTERNAL_LB, assert_external, assert_internal, cluster_made_by_run, config_map, not_ours,
    our_services, text,
};
use bootstrap_sim::Hold;
use bootstrap_sim::kube::KubeSim;
use serde_json::{Value, json};
use std::path::PathBuf;

/// What the installer leaves in the cluster of the asset dir (cluster-bootstrap applies its
/// manifests): ConfigMap kube-system/cluster-config-v1, Infrastructure `cluster` (with its
/// status), DNS `cluster` and the creds Secret in kube-system. The infra id.
pub fn installer_left_in_the_cluster(kube: &KubeSim, assets: &std::path::Path) -> String {
    let read = |file: &str| -> Value {
        serde_saphyr::from_str(&std::fs::read_to_string(assets.join(file)).unwrap()).unwrap()
    };
    let config = read("manifests/cluster-config.yaml");
    let install_config: Value =
        serde_saphyr::from_str(config["data"]["install-config"].as_str().unwrap()).unwrap();
    kube.create(config).unwrap();
    let mut infra = read("manifests/cluster-infrastructure-02-config.yml");
    infra["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    let infra_id = infra["status"]["infrastructureName"]
        .as_str()
        .unwrap()
        .to_string();
    kube.create(infra).unwrap();
    let domain = format!(
        "{}.{}",
        install_config["metadata"]["name"].as_str().unwrap(),
        install_config["baseDomain"].as_str().unwrap()
    );
    kube.create(json!({
        "apiVersion": "config.openshift.io/v1",
        "kind": "DNS",
        "metadata": {"name": "cluster"},
        "spec": {"baseDomain": domain},
    }))
    .unwrap();
    if assets.join("openshift/99_cloud-creds-secret.yaml").exists() {
        kube.create(read("openshift/99_cloud-creds-secret.yaml"))
            .unwrap();
    }
    infra_id
}

/// A cluster `run` made, the installer's documents in it, the bootstrap host destroyed.
async fn after_the_bootstrap_host_is_gone<C: Cloud>()
-> (Harness<C>, KubeSim, Value, Vec<String>, Vec<String>, String) {
    let (h, kube, foreign, public, private) = cluster_made_by_run::<C>().await;
    let infra_id = installer_left_in_the_cluster(&kube, &h.assets);
    h.destroy_bootstrap_host();
    (h, kube, foreign, public, private, infra_id)
}

/// `args --kubeconfig K` as an admin runs it (no asset dir, no state dir), which must
/// succeed: its stdout.
async fn admin_reads<C: Cloud>(h: &Harness<C>, kube: &KubeSim, args: &[&str]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kube.kubeconfig_path())
        .envs(h.env.iter().map(|(k, v)| (k, v)))
        .env("XDG_STATE_HOME", h.admin_state_home())
        .env_remove("BOOTSTRAP_AGENT_STATE_DIR")
        .env_remove("BOOTSTRAP_AGENT_ASSETS")
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `gather` with only the kubeconfig: the bundle holds what `run` left and the journal started
/// from it, our reservations as the cloud shows them, and no credential of the creds Secret.
async fn gather_from_the_cluster<C: Cloud>(h: &Harness<C>, kube: &KubeSim, infra_id: &str) {
    let out_file = h.dir.path().join("day2-gather.tar.gz");
    let out_path = out_file.display().to_string();
    admin_reads(h, kube, &["gather", "--out", &out_path]).await;
    let files = super::unpack_bundle(&out_file);
    let record: Value = serde_json::from_str(&files["record.json"]).unwrap();
    assert_eq!(record["infraId"], infra_id);
    let journal: Value = serde_json::from_str(&files["journal.json"]).unwrap();
    assert_eq!(journal["run_step"], "done", "the journal `run` left");
    assert!(
        files["cloud.json"].contains(infra_id),
        "{}",
        files["cloud.json"]
    );
    let secret = kube
        .list("", "v1", "secrets", Some("kube-system"))
        .into_iter()
        .flat_map(|s| {
            s["data"]
                .as_object()
                .into_iter()
                // The credentials proper; a subscription or tenant id is in every ARM id.
                .flat_map(|d| {
                    d.iter()
                        .filter(|(k, _)| {
                            ["access_key", "secret", "service_account"]
                                .iter()
                                .any(|c| k.contains(c))
                        })
                        .filter_map(|(_, v)| v.as_str().map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .flat_map(|encoded| {
                    use base64::Engine;
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(&encoded)
                        .map(|b| String::from_utf8_lossy(&b).to_string())
                        .unwrap_or_default();
                    [encoded, decoded]
                })
                .filter(|v| v.len() >= 8)
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>();
    for (name, text) in &files {
        for value in &secret {
            assert!(!text.contains(value.as_str()), "{name} holds a credential");
        }
    }
    assert!(!h.admin_state_home().exists(), "gather writes no journal");
}

/// `record.json` of ConfigMap kube-system/bootstrap-agent.
fn record(kube: &KubeSim) -> Value {
    let data = config_map(kube);
    serde_json::from_str(data["record.json"].as_str().unwrap_or("null")).unwrap()
}

/// Who holds the day-2 Lease now (None: nobody; released, or never taken).
fn lease_holder(kube: &KubeSim) -> Option<String> {
    kube.get(
        "coordination.k8s.io",
        "v1",
        "leases",
        Some("kube-system"),
        "bootstrap-agent-publish",
    )
    .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
}

/// After `run`, with the bootstrap host's asset dir and journal gone: `publish --scope Internal
/// --auto-delete` and back to External with only the kubeconfig. The journal starts from what
/// `run` left in the cluster, in the admin's default state dir; no Lease is left behind; the
/// record follows the scope, so a second admin on a fresh state dir goes private and public
/// again from it; again changes nothing; nothing else is touched.
pub async fn publish_from_an_admins_machine_with_only_a_kubeconfig_round_trips<C: Cloud>() {
    let (h, kube, foreign, public, private, infra_id) =
        after_the_bootstrap_host_is_gone::<C>().await;
    assert_eq!(record(&kube)["apiScope"], "External", "run left its record");
    assert_eq!(record(&kube)["infraId"], infra_id.as_str());
    gather_from_the_cluster(&h, &kube, &infra_id).await;
    let status: Value =
        serde_json::from_str(&admin_reads(&h, &kube, &["status", "--output", "json"]).await)
            .unwrap();
    assert_eq!(status["run_step"], "done", "what `run` left: {status:#}");
    assert_eq!(status["infra_id"], infra_id.as_str());

    let internal: &[&str] = &["publish", "--scope", "Internal", "--auto-delete"];
    let external: &[&str] = &["publish", "--scope", "External"];
    h.peers.reset_counts();
    let plan = text(
        &h.admin_run(&["publish", "--scope", "Internal", "--dry-run"], None)
            .await,
    );
    assert!(
        plan.contains(&format!("  - service {EXTERNAL_LB}")),
        "{plan}"
    );
    for ip in &public {
        assert!(plan.contains(&format!(" {ip} ")), "{ip} leaves: {plan}");
    }
    assert!(
        h.peers.mutating_calls().is_empty(),
        "a dry run changes nothing"
    );
    assert!(!h.admin_state_home().exists(), "nor writes a journal");
    let out = h.admin_run(internal, None).await;
    let journal_dir = h.admin_state_home().join("bootstrap-agent").join(&infra_id);
    assert!(
        text(&out).contains(&format!(
            "journal in {} (started from what `run` left)",
            journal_dir.display()
        )),
        "{}",
        text(&out)
    );
    assert!(journal_dir.join("journal.json").is_file());
    assert!(
        !h.assets.exists() || !h.assets.starts_with(h.dir.path()),
        "no asset dir of the bootstrap host's was needed"
    );
    assert_internal(&h, &kube, &private).await;
    assert_eq!(config_map(&kube)["apiScope"], "Internal");
    assert_eq!(record(&kube)["apiScope"], "Internal");
    assert_eq!(lease_holder(&kube), None, "the Lease is released");
    let status = admin_reads(&h, &kube, &["status"]).await;
    assert!(
        status.contains(&format!("cluster {infra_id}")) && status.contains("Internal"),
        "status shows the day-2 journal: {status}"
    );

    h.admin_run(external, None).await;
    let now_public = assert_external(&h, &kube, public.len(), &private).await;
    assert_eq!(record(&kube)["apiScope"], "External");
    h.peers.reset_counts();
    h.admin_run(external, None).await;
    let calls = h.peers.mutating_calls();
    assert!(calls.is_empty(), "public again changes nothing: {calls:?}");

    // Another admin, another machine: a fresh state dir, the record the first one left.
    let other = h.dir.path().join("second-admin");
    h.admin_run(internal, Some(&other)).await;
    assert_internal(&h, &kube, &private).await;
    assert!(!our_services(&kube).contains(&EXTERNAL_LB.to_string()));
    h.admin_run(external, Some(&other)).await;
    let again = assert_external(&h, &kube, public.len(), &private).await;
    assert_eq!(again.len(), now_public.len());
    assert_eq!(not_ours(&h.world().await), foreign, "nothing else touched");
}

/// SIGKILL during a day-2 change from the admin's machine (the public record's withdrawal,
/// the reservation of the public IPs): a re-run with the same kubeconfig and state dir takes
/// the Lease back at once and completes the change, nothing made twice.
pub async fn publish_from_an_admins_machine_killed_mid_change_resumes<C: Cloud>() {
    let (h, kube, foreign, public, private, _) = after_the_bootstrap_host_is_gone::<C>().await;
    let internal: &[&str] = &["publish", "--scope", "Internal", "--auto-delete"];
    let external: &[&str] = &["publish", "--scope", "External"];
    let state: PathBuf = h.dir.path().join("admin-journal");
    h.admin_kill_in(internal, Some(&state), true, Hold::After(1))
        .await;
    let holder = lease_holder(&kube).expect("the killed change held the Lease");
    assert!(holder.ends_with(&state.display().to_string()), "{holder}");
    h.admin_run(internal, Some(&state)).await;
    assert_internal(&h, &kube, &private).await;
    h.admin_kill_in(external, Some(&state), false, Hold::After(1))
        .await;
    h.admin_run(external, Some(&state)).await;
    assert_external(&h, &kube, public.len(), &private).await;
    h.peers.assert_nothing_made_twice();
    assert_eq!(lease_holder(&kube), None);
    assert_eq!(not_ours(&h.world().await), foreign, "nothing else touched");
}
