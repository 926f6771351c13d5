//! Our Services in the cluster, one at a time: read as the cluster holds them (only those with
//! our labels), applied from what was rendered, deleted and waited out until their load
//! balancer is gone. The cluster's steps (`kube`) and the replacement of a Service whose load
//! balancer keeps its addresses (`replace`) are both made of these.

use super::Kubernetes;
use crate::assets::ClusterSpec;
use crate::cluster::apply::{self, Outcome};
use crate::plan::{DoomedService, KubeWants, LiveService, Observed, WantedService};
use crate::render::{self, Rendered, ServiceClaim};
use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Preconditions};

/// The Services of `wants` the cluster holds with our labels (GET each; one without our
/// labels, or absent, is left alone), but for those a template deletes.
pub async fn live_ours(
    kube: &Kubernetes<'_>,
    spec: &ClusterSpec,
    wants: &KubeWants,
) -> Result<Vec<LiveService>> {
    live(
        kube.client,
        spec,
        wants.services.iter().filter(|s| !s.delete),
    )
    .await
}

/// `apply-services`: of `wants`, those that fix their load balancer's addresses
/// ([`render::fixed_addresses`]) as the cluster holds them, when ours (one absent or without
/// our labels is left to the apply).
pub async fn live_addresses(
    client: &kube::Client,
    spec: &ClusterSpec,
    wants: &KubeWants,
) -> Result<Vec<LiveService>> {
    let fixing = wants.services.iter().filter(|s| !s.addresses.is_empty());
    live(client, spec, fixing).await
}

/// Each of `services` the cluster holds with our labels, as it holds it (GET each).
async fn live(
    client: &kube::Client,
    spec: &ClusterSpec,
    services: impl Iterator<Item = &WantedService>,
) -> Result<Vec<LiveService>> {
    let mut live = Vec::new();
    for s in services {
        let Some(found) = get_ours(client, spec, &s.namespace, &s.name).await? else {
            continue;
        };
        live.push(LiveService {
            namespace: s.namespace.clone(),
            name: s.name.clone(),
            uid: found.metadata.uid.clone().unwrap_or_default(),
            deleting: found.metadata.deletion_timestamp.is_some(),
            addresses: render::fixed_addresses(found.metadata.annotations.as_ref()),
        });
    }
    Ok(live)
}

/// The Service `namespace/name` when the cluster holds it with our labels (one without them is
/// not ours: left in place, and said so).
pub(super) async fn get_ours(
    client: &kube::Client,
    spec: &ClusterSpec,
    namespace: &str,
    name: &str,
) -> Result<Option<Service>> {
    let api: Api<Service> = Api::namespaced(client.clone(), namespace);
    let found = api
        .get_opt(name)
        .await
        .with_context(|| format!("cannot read Service {namespace}/{name}"))?;
    Ok(found.filter(|found| {
        let ours = render::is_ours(found.metadata.labels.as_ref(), &spec.infra_id);
        if !ours {
            tracing::warn!(
                namespace,
                name,
                "a Service of this name exists without the agent's labels: not ours, left in place"
            );
        }
        ours
    }))
}

/// Deletes one of our Services (only the one the lookup saw, `uid`) and, as `kubectl delete`
/// does, waits until it is gone: its load-balancer controller holds it by a finalizer until the
/// load balancer is deleted. One deleted already (a resume) is only waited out.
pub(super) async fn delete_service(
    kube: &Kubernetes<'_>,
    service: &DoomedService,
) -> Result<(bool, serde_json::Value)> {
    let api: Api<Service> = Api::namespaced(kube.client.clone(), &service.namespace);
    let params = DeleteParams {
        preconditions: service.uid.clone().map(|uid| Preconditions {
            uid: Some(uid),
            resource_version: None,
        }),
        ..Default::default()
    };
    let outcome = if service.deleting {
        "being-deleted"
    } else {
        match api.delete(&service.name, &params).await {
            Ok(_) => "deleted",
            // Gone already (a resume after a crash), or re-created by someone else since the
            // lookup (the precondition failed): not ours to delete.
            Err(kube::Error::Api(e)) if e.code == 404 => "already-absent",
            Err(kube::Error::Api(e)) if e.code == 409 => "replaced-not-ours",
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "cannot delete Service {}/{}",
                        service.namespace, service.name
                    )
                });
            }
        }
    };
    tracing::info!(namespace = %service.namespace, name = %service.name, outcome, "service");
    if matches!(outcome, "deleted" | "being-deleted") {
        wait_gone(kube, api, service).await?;
    }
    Ok((
        outcome == "deleted",
        serde_json::json!({ "outcome": outcome }),
    ))
}

/// Until the Service `doomed` names is gone (or another object stands under its name): a
/// watch, bounded by the step's wait.
async fn wait_gone(kube: &Kubernetes<'_>, api: Api<Service>, doomed: &DoomedService) -> Result<()> {
    let uid = doomed.uid.clone().unwrap_or_default();
    let gone = kube::runtime::wait::await_condition(
        api,
        &doomed.name,
        kube::runtime::wait::conditions::is_deleted(&uid),
    );
    let line = format!(
        "waiting for the load balancer of Service {}/{} to be deleted (its controller's finalizer)",
        doomed.namespace, doomed.name
    );
    crate::notify::status(&line);
    tracing::info!("{line}");
    match tokio::time::timeout(kube.wait, gone).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e).with_context(|| {
            format!(
                "cannot watch Service {}/{} being deleted",
                doomed.namespace, doomed.name
            )
        }),
        Err(_) => bail!(
            "Service {}/{} is still there after {:?}: its load balancer controller has not let go of it (a finalizer); see its Events",
            doomed.namespace,
            doomed.name,
            kube.wait
        ),
    }
}

/// Applies (or deletes) one Service; one that stands afterwards joins `claims`.
pub(super) async fn apply_service(
    kube: &Kubernetes<'_>,
    rendered: &[Rendered],
    service: &WantedService,
    known: &Observed,
    claims: &mut Vec<ServiceClaim>,
) -> Result<(bool, serde_json::Value)> {
    let r = rendered_for(rendered, service)?;
    let applied = apply::apply_services(kube.client, std::slice::from_ref(r)).await?;
    let outcome = applied.first().map(|a| a.outcome);
    if matches!(outcome, Some(Outcome::Applied | Outcome::Unchanged)) {
        let reservations: Vec<_> = known.kept().into_values().collect();
        claims.push(ServiceClaim::for_service(
            &r.service,
            render::claimed_ips(&r.service, &reservations),
        ));
    }
    let wrote = matches!(outcome, Some(Outcome::Applied | Outcome::Deleted));
    Ok((wrote, serde_json::json!({ "outcome": outcome })))
}

/// The rendered Service `service` names.
pub(super) fn rendered_for<'r>(
    rendered: &'r [Rendered],
    service: &WantedService,
) -> Result<&'r Rendered> {
    rendered
        .iter()
        .find(|r| {
            r.service.metadata.namespace.as_deref() == Some(&service.namespace)
                && r.service.metadata.name.as_deref() == Some(&service.name)
        })
        .with_context(|| format!("{} was not rendered", service.id()))
}
