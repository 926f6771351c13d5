//! Objects the server creates itself, as manager `kube-sim` with their status: the namespaces,
//! the `default/kubernetes` Service, the CRDs and the RBAC bootstrap policy at start, and a
//! test's own objects.

use super::store::Key;
use super::{Shared, apply, discovery, meta, ops, rbac, resources};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The index in [`resources::RESOURCES`] of `obj`'s apiVersion and kind.
pub(super) fn resource_of(obj: &Value) -> Result<usize> {
    let api_version = meta::get_str(obj, &["apiVersion"]).unwrap_or("");
    let kind = meta::get_str(obj, &["kind"]).unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    match resources::RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.kind == kind)
    {
        Some(res) => Ok(res),
        None => bail!("kube-sim does not serve {api_version} {kind}"),
    }
}

pub(super) fn create_object(shared: &Shared, obj: Value) -> Result<Value> {
    let res = resource_of(&obj)?;
    let ctx = ops::WriteCtx::internal("kube-sim", false);
    let mut inner = shared.store.lock();
    let ns = meta::namespace(&obj).to_string();
    let created = ops::create(&mut inner, res, &ns, obj.clone(), &ctx)
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    match obj.get("status") {
        Some(status) if resources::RESOURCES[res].status => {
            let key = Key::new(res, &ns, meta::name(&created));
            let mut with_status = created;
            with_status["status"] = status.clone();
            ops::update(&mut inner, &key, with_status, apply::Scope::Status, &ctx)
                .map_err(|e| anyhow::anyhow!("{}", e.message))
        }
        _ => Ok(created),
    }
}

pub(super) fn seed(shared: &Shared, extra: &[Value]) -> Result<()> {
    let mut objects: Vec<Value> = ["default", "kube-system", "kube-public", "kube-node-lease"]
        .iter()
        .map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}))
        .collect();
    objects.push(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "172.30.0.1",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}
    }));
    objects.extend(discovery::crds());
    objects.extend(rbac::bootstrap_policy());
    objects.extend(extra.iter().cloned());
    for o in objects {
        let what = format!(
            "{} {}",
            meta::get_str(&o, &["kind"]).unwrap_or("?"),
            meta::name(&o)
        );
        create_object(shared, o).with_context(|| format!("cannot seed {what}"))?;
    }
    Ok(())
}
