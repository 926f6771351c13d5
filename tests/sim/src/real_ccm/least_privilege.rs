//! `real-ccm --kubeconfig FILE --least-privilege`: the agent runs on the real kube-apiserver's
//! RBAC with only the ClusterRole it documents (`bootstrap-agent permissions --kube --command
//! run,teardown-all`, scoped by the assets), held by a ServiceAccount of its own through a
//! ClusterRoleBinding, with a token from the TokenRequest API. The harness and the CCM keep
//! the kubeconfig's (admin) identity. What this makes is labelled and removed with the rest (`real_cluster::finish`).

use super::real_cluster::labelled;
use super::real_kube::RealKube;
use anyhow::{Context, Result, bail};
use hyper::Method;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The agent's ServiceAccount: namespace, name.
const SERVICE_ACCOUNT: (&str, &str) = ("kube-system", "bootstrap-agent-real-ccm");

/// Makes the agent's ClusterRole, ServiceAccount and binding; a kubeconfig in `work` naming
/// the same server and CA with the ServiceAccount's token (the file is the agent's only).
pub async fn agent_kubeconfig(
    kube: &RealKube,
    agent: &Path,
    assets: &Path,
    work: &Path,
) -> Result<PathBuf> {
    let out = tokio::process::Command::new(agent)
        .args([
            "permissions",
            "--kube",
            "--command",
            "run,teardown-all",
            "--assets",
        ])
        .arg(assets)
        .output()
        .await
        .with_context(|| format!("cannot run {}", agent.display()))?;
    if !out.status.success() {
        bail!(
            "bootstrap-agent permissions --kube: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let role: Value = serde_json::from_slice(&out.stdout)
        .context("bootstrap-agent permissions --kube: not a JSON ClusterRole")?;
    let role_name = role["metadata"]["name"]
        .as_str()
        .context("the ClusterRole has no metadata.name")?
        .to_string();
    let (ns, name) = SERVICE_ACCOUNT;
    // Not someone else's role of that name (the harness's own left by an earlier run is gone:
    // `prepare` removes what carries its label).
    let existing = format!("/apis/rbac.authorization.k8s.io/v1/clusterroles/{role_name}");
    if kube.get(&existing).await?.is_some() {
        bail!(
            "the ClusterRole {role_name} exists already: the agent's role must be the one printed"
        );
    }
    kube.create(labelled(role)).await?;
    kube.create(labelled(
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": name, "namespace": ns}}),
    ))
    .await?;
    kube.create(labelled(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
    })))
    .await?;
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                         "spec": {"expirationSeconds": 3600}});
    let path = format!("/api/v1/namespaces/{ns}/serviceaccounts/{name}/token");
    let answer = kube.call(Method::POST, &path, Some(&request)).await?;
    let token = answer["status"]["token"]
        .as_str()
        .context("the TokenRequest's answer holds no status.token")?;
    let admin = kube.kubeconfig_path();
    let text = std::fs::read_to_string(admin)
        .with_context(|| format!("cannot read {}", admin.display()))?;
    let mut doc: Value =
        serde_saphyr::from_str(&text).with_context(|| format!("{}: not YAML", admin.display()))?;
    for user in doc["users"].as_array_mut().into_iter().flatten() {
        user["user"] = json!({"token": token});
    }
    let file = work.join("agent.kubeconfig");
    write_private(&file, &serde_json::to_vec_pretty(&doc)?)?;
    Ok(file)
}

/// Writes `bytes` to `file`, readable by its owner only (it holds a token).
fn write_private(file: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("cannot create {}", file.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("cannot write {}", file.display()))
}
