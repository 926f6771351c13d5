//! The AWS Load Balancer Controller as the cluster shows it, in the AWS world: its Deployment
//! and its webhook Service with an EndpointSlice, where its helm chart puts them
//! (kubernetes-sigs/aws-load-balancer-controller helm/aws-load-balancer-controller:
//! templates/deployment.yaml, service.yaml and _helpers.tpl; README.md installs it as release
//! `aws-load-balancer-controller` into `kube-system`). Not serving: the Deployment has no
//! available replica (`Available=False`, as the deployment controller reports a rollout
//! without ready pods) and the webhook's endpoint is not ready; then the simulated controller
//! acts on no `aws-load-balancer-type: external` Service, as a controller that does not run.

use super::meta;
use super::ops::{self, WriteCtx};
use super::resources::{DEPLOYMENTS, ENDPOINTSLICES};
use super::store::{Inner, Key};
use serde_json::{Value, json};

pub const NAMESPACE: &str = "kube-system";
pub const DEPLOYMENT: &str = "aws-load-balancer-controller";
pub const WEBHOOK_SERVICE: &str = "aws-load-balancer-webhook-service";
const SLICE: &str = "aws-load-balancer-webhook-service-sim01";
const LABELS: &str = "aws-load-balancer-controller";

fn deployment_status(serving: bool) -> Value {
    let (n, status, reason) = if serving {
        (2, "True", "MinimumReplicasAvailable")
    } else {
        (0, "False", "MinimumReplicasUnavailable")
    };
    json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
           "readyReplicas": n, "availableReplicas": n,
           "unavailableReplicas": 2 - n,
           "conditions": [{"type": "Available", "status": status, "reason": reason,
                           "message": format!("Deployment has {n} available replicas.")}]})
}

fn slice(serving: bool) -> Value {
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": SLICE, "namespace": NAMESPACE,
                     "labels": {"kubernetes.io/service-name": WEBHOOK_SERVICE,
                                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
        "addressType": "IPv4",
        "ports": [{"name": "webhook-server", "port": 9443, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["10.128.0.20"],
                       "conditions": {"ready": serving, "serving": serving, "terminating": false}}]
    })
}

/// The objects to seed: the Deployment (with its status), the webhook Service, its slice.
pub fn objects(serving: bool) -> Vec<Value> {
    let selector = json!({"app.kubernetes.io/name": LABELS, "app.kubernetes.io/instance": LABELS});
    vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": DEPLOYMENT, "namespace": NAMESPACE, "labels": selector},
            "spec": {"replicas": 2, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": selector},
                                  "spec": {"containers": [{"name": "aws-load-balancer-controller",
                                                           "image": "public.ecr.aws/eks/aws-load-balancer-controller"}]}}},
            "status": deployment_status(serving)
        }),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": WEBHOOK_SERVICE, "namespace": NAMESPACE,
                         "labels": {"app.kubernetes.io/component": "webhook"}},
            "spec": {"ports": [{"name": "webhook-server", "port": 443, "targetPort": "webhook-server"}],
                     "selector": selector}
        }),
        slice(serving),
    ]
}

/// Whether the controller serves now: its Deployment is available.
pub fn serving(inner: &Inner) -> bool {
    inner
        .get(&Key::new(DEPLOYMENTS, NAMESPACE, DEPLOYMENT))
        .is_some_and(|d| {
            meta::get(&d, &["status", "availableReplicas"])
                .and_then(Value::as_i64)
                .is_some_and(|n| n > 0)
        })
}

/// Brings the controller up or down: the Deployment's status and the webhook's endpoint.
pub fn set_serving(inner: &mut Inner, serving: bool) -> anyhow::Result<()> {
    let ctx = WriteCtx::internal("kube-controller-manager", false);
    let key = Key::new(DEPLOYMENTS, NAMESPACE, DEPLOYMENT);
    let Some(current) = inner.get(&key) else {
        anyhow::bail!(
            "no Deployment {NAMESPACE}/{DEPLOYMENT}: the AWS Load Balancer Controller is not installed"
        );
    };
    let mut updated = (*current).clone();
    updated["status"] = deployment_status(serving);
    ops::update(inner, &key, updated, super::apply::Scope::Status, &ctx)
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let key = Key::new(ENDPOINTSLICES, NAMESPACE, SLICE);
    let Some(current) = inner.get(&key) else {
        anyhow::bail!("no EndpointSlice {NAMESPACE}/{SLICE}");
    };
    let mut updated = (*current).clone();
    updated["endpoints"] = slice(serving)["endpoints"].clone();
    ops::update(inner, &key, updated, super::apply::Scope::Main, &ctx)
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    Ok(())
}
