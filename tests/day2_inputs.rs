//! Day 2 from an admin's machine, the refusals: with no asset dir, `publish` reads its inputs
//! from the cluster, and a cluster it cannot work on is refused with exit 2 naming the object
//! and what is missing, before anything is written: no request that changes the cluster, no
//! state dir, no cloud call (the clouds' endpoints lead nowhere). The local API server serves
//! OpenShift's real Infrastructure and DNS CRDs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::kube::{KubeSim, KubeSimOptions, User};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const FIXTURE: &str = "tests/fixtures/assets/aws";

/// A cluster the installer made from the AWS fixture (its documents in the API server), and
/// `edit` applied to those documents first: (file, document) -> document or None (absent).
async fn cluster(
    user: Option<User>,
    edit: impl Fn(&str, Value) -> Option<Value>,
    made_by_agent: bool,
) -> KubeSim {
    cluster_with(user, edit, made_by_agent, None).await
}

/// [`cluster`] made by the agent, with `edit` applied to the one document whose file name
/// contains `part`.
async fn cluster_editing(part: &str, edit: impl Fn(&mut Value)) -> KubeSim {
    let edit_one = |file: &str, mut d: Value| {
        if file.contains(part) {
            edit(&mut d);
        }
        Some(d)
    };
    cluster(None, edit_one, true).await
}

/// [`cluster`], with `record` as the `record.json` `run` left.
async fn cluster_with(
    user: Option<User>,
    edit: impl Fn(&str, Value) -> Option<Value>,
    made_by_agent: bool,
    record: Option<Value>,
) -> KubeSim {
    let kube = KubeSim::start(KubeSimOptions {
        user,
        ..Default::default()
    })
    .await
    .unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    for file in [
        "manifests/cluster-config.yaml",
        "manifests/cluster-infrastructure-02-config.yml",
        "openshift/99_cloud-creds-secret.yaml",
    ] {
        let mut doc: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(fixture.join(file)).unwrap()).unwrap();
        if let Some(m) = doc["metadata"].as_object_mut() {
            m.remove("creationTimestamp");
        }
        if let Some(doc) = edit(file, doc) {
            kube.create(doc).unwrap();
        }
    }
    if made_by_agent {
        kube.create(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bootstrap-agent", "namespace": "kube-system"},
            "data": match &record {
                Some(r) => json!({"phase": "complete", "record.json": r.to_string()}),
                None => json!({"phase": "complete"}),
            },
        }))
        .unwrap();
    }
    kube.clear_request_log();
    kube
}

/// `publish --scope Internal` with only the kubeconfig, on an admin's machine with no cloud
/// credentials in the environment: (exit code, stderr), and the state home it would use.
async fn publish(kube: &KubeSim, env: &[(&str, &str)]) -> (Option<i32>, String, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let state_home = home.path().join("state");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"))
        .args(["publish", "--scope", "Internal", "--kubeconfig"])
        .arg(kube.kubeconfig_path())
        .env("XDG_STATE_HOME", &state_home)
        .env("HOME", home.path())
        .env_remove("BOOTSTRAP_AGENT_ASSETS")
        .env_remove("BOOTSTRAP_AGENT_STATE_DIR")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_PROFILE")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/dev/null")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!state_home.exists(), "nothing written: {stderr}");
    let writes = common::kube_mutations(kube);
    assert!(
        writes.is_empty(),
        "nothing changed in the cluster: {writes:?}"
    );
    (out.status.code(), stderr, state_home)
}

/// `publish` on `kube` is refused (exit 2) as a bad input saying `says`, printing no
/// credential: its stderr.
async fn publish_refused(kube: &KubeSim, says: &str) -> String {
    let (code, stderr, _) = publish(kube, &[]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(says), "expected {says:?} in: {stderr}");
    assert!(
        !stderr.contains("QUtJQUZJWFRVUkVFWEFNUExFMDA") && !stderr.contains("AKIAFIXTUREEXAMPLE00"),
        "no credential printed: {stderr}"
    );
    stderr
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_bootstrap_agent_did_not_install_is_refused() {
    let kube = cluster(None, |_, d| Some(d), false).await;
    publish_refused(
        &kube,
        "ConfigMap kube-system/bootstrap-agent: (object): not found: this cluster was not installed by bootstrap-agent",
    )
    .await;
    // Installed by another version or run that left no record: said as well.
    let kube = cluster(None, |_, d| Some(d), true).await;
    publish_refused(
        &kube,
        "ConfigMap kube-system/bootstrap-agent: record.json: missing: bootstrap-agent did not complete an install of this cluster",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_infrastructure_of_another_platform_is_refused() {
    let kube = cluster_editing("infrastructure", |d| {
        d["status"]["platformStatus"] = json!({"type": "BareMetal"});
        d["status"]["platform"] = json!("BareMetal");
    })
    .await;
    publish_refused(
        &kube,
        "Infrastructure cluster: status.platformStatus.type: is BareMetal; expected AWS, GCP or Azure",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_cloud_credentials_are_refused_naming_the_secret_and_what_would_do() {
    let kube = cluster(None, |file, d| (!file.contains("creds")).then_some(d), true).await;
    publish_refused(
        &kube,
        "Secret kube-system/aws-creds: (object): not found (the cluster's credentials are in manual or STS mode), and the environment gives none; expected AWS_ACCESS_KEY_ID",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_install_config_in_the_cluster_is_named_as_the_asset_dirs_would_be() {
    let kube = cluster_editing("cluster-config", |d| {
        let text = d["data"]["install-config"].as_str().unwrap().to_string();
        d["data"]["install-config"] = json!(text.replace("publish: External", "publish: Sideways"));
    })
    .await;
    publish_refused(
        &kube,
        "ConfigMap kube-system/cluster-config-v1: data.install-config: publish:",
    )
    .await;
    let kube = cluster(
        None,
        |file, d| (!file.contains("cluster-config")).then_some(d),
        true,
    )
    .await;
    publish_refused(
        &kube,
        "ConfigMap kube-system/cluster-config-v1: (object): not found; expected the install-config",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kubeconfig_without_the_rights_is_refused_naming_what_it_may_not_read() {
    let kube = cluster(Some(User::new("someone", &[])), |_, d| Some(d), true).await;
    let stderr = publish_refused(
        &kube,
        "ConfigMap kube-system/cluster-config-v1: (object): the kubeconfig's user may not do this",
    )
    .await;
    assert!(
        stderr.contains("cannot get resource \"configmaps\""),
        "kube-apiserver's words: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_admin_is_kept_out_while_another_holds_the_lease() {
    let record = json!({
        "version": 1, "infraId": "mycluster-7xk2p", "apiScope": "External", "generation": 1,
        "reservations": [], "records": [],
    });
    let kube = cluster_with(None, |_, d| Some(d), true, Some(record)).await;
    let renewed = humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string();
    kube.create(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "bootstrap-agent-publish", "namespace": "kube-system"},
        "spec": {"holderIdentity": "alice@laptop /home/alice/.local/state/bootstrap-agent/mycluster-7xk2p",
                 "leaseDurationSeconds": 60, "renewTime": renewed},
    }))
    .unwrap();
    kube.clear_request_log();
    let (code, stderr, _) = publish(&kube, &[]).await;
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("another day-2 change of this cluster is under way: Lease kube-system/bootstrap-agent-publish is held by alice@laptop"),
        "{stderr}"
    );
}
