//! The cluster's steps: write the capabilities into ClusterVersion, apply the LoadBalancer
//! Services. Planned from what the journal knows of the reservations (not the cloud: the
//! hand-over window must stay tiny, and the handed-over IPs are only in the journal anyway),
//! then applied change by change like the cloud's, each journaled before and after.

use super::{Runner, StepReport};
use crate::assets::ClusterSpec;
use crate::capabilities::cluster_version::{self, CvoOverrides};
use crate::capabilities::selection::Selection;
use crate::cluster::apply::{self, Outcome};
use crate::plan::{
    Capabilities, Change, DoomedService, KubeWants, LiveService, Observed, Plan, Step, Value,
    WantedService,
};
use crate::render::{self, Rendered, ServiceClaim};
use anyhow::{Context, Result, bail};
use bootstrap_cloud::{IpFamily, Reservation};
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Preconditions};
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

/// The cluster and what `run` wants of it.
pub struct Kubernetes<'a> {
    pub client: &'a kube::Client,
    /// None: a command that writes no capability (`teardown --all`, which deletes Services).
    pub capabilities: Option<&'a Selection>,
    /// The installer's `manifests/cvo-overrides.yaml`, when present: ClusterVersion is created
    /// from it when it does not exist yet.
    pub overrides: Option<&'a CvoOverrides>,
    pub templates: Option<&'a Path>,
    /// How long to wait for ClusterVersion `version` when it does not exist and there is no
    /// cvo-overrides.yaml.
    pub wait: Duration,
}

/// The reservations to render with: the ones that exist (observed or handed over) and, for a
/// wanted one not reserved yet, a stand-in from the documentation ranges (RFC 5737/3849), so
/// a plan made before `reserve` shows every Service and the checks of a template run early.
pub fn stand_ins(spec: &ClusterSpec, observed: &Observed) -> Vec<Reservation> {
    let kept = observed.kept();
    crate::plan::wanted_reservations(spec)
        .into_iter()
        .enumerate()
        .map(|(i, w)| match kept.get(&w.key) {
            Some(r) => r.clone(),
            None => Reservation {
                id: format!("stand-in-{i}"),
                ip: match w.key.family {
                    IpFamily::Ipv4 => IpAddr::from([192, 0, 2, (i % 250) as u8 + 1]),
                    IpFamily::Ipv6 => IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, i as u16 + 1]),
                },
                name: w.name,
                key: w.key,
            },
        })
        .collect()
}

/// What the Kubernetes steps want, and the Services rendered for it (from the reservations
/// that exist; stand-ins for the others).
pub fn kube_wants(
    spec: &ClusterSpec,
    observed: &Observed,
    capabilities: Option<&Selection>,
    templates: Option<&Path>,
) -> Result<(KubeWants, Vec<Rendered>)> {
    let reservations = stand_ins(spec, observed);
    let rendered = render::services(spec, &reservations, templates)?;
    let mut services = Vec::new();
    for r in &rendered {
        let meta = &r.service.metadata;
        services.push(WantedService {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            template: r.template.clone(),
            delete: apply::wants_delete(meta.annotations.as_ref(), &r.template)?,
            claims: render::claimed_ips(&r.service, &reservations)
                .into_iter()
                .map(|ip| {
                    reservations
                        .iter()
                        .find(|res| res.ip == ip)
                        .map_or(Value::Ip(ip), |res| Value::Reserved(res.key.clone()))
                })
                .collect(),
            addresses: render::fixed_addresses(meta.annotations.as_ref()),
        });
    }
    let wants = KubeWants {
        capabilities: capabilities.map(|s| Capabilities {
            baseline: s.baseline.clone(),
            additional: s.additional.clone(),
        }),
        services,
        ours_live: None,
        live_addresses: None,
        replacing: Default::default(),
    };
    Ok((wants, rendered))
}

/// `teardown --all`: what it wants of the cluster, the rendered Services it holds with our
/// labels looked up (GET each; one without our labels, or absent, is left alone).
pub(super) async fn teardown_wants(
    kube: &Kubernetes<'_>,
    spec: &ClusterSpec,
    observed: &Observed,
) -> Result<KubeWants> {
    let (mut wants, _) = kube_wants(spec, observed, None, kube.templates)?;
    // During a scope change to private, the external Service may still stand: ours too.
    let unwanted = unwanted_services(spec, observed, kube.templates)?;
    wants.services.extend(unwanted.services);
    wants.ours_live = Some(live_ours(kube, spec, &wants).await?);
    Ok(wants)
}

/// `publish --scope`: the Services the prior publishing rendered that the current one does
/// not (the external load balancer when the API goes private), looked up in the cluster when
/// it is at hand (`templates`: Some) like `teardown --all` does: only ours are deleted.
pub fn unwanted_services(
    spec: &ClusterSpec,
    observed: &Observed,
    templates: Option<&Path>,
) -> Result<KubeWants> {
    let Some(prior) = spec.prior_publish.filter(|p| *p != spec.publish) else {
        return Ok(KubeWants::default());
    };
    let mut before = spec.clone();
    before.publish = prior;
    let (now, _) = kube_wants(spec, observed, None, templates)?;
    let (mut wants, _) = kube_wants(&before, observed, None, templates)?;
    wants.services.retain(|s| {
        !now.services
            .iter()
            .any(|n| n.namespace == s.namespace && n.name == s.name)
    });
    Ok(wants)
}

/// [`unwanted_services`], each looked up: only those the cluster holds with our labels.
pub(super) async fn unpublish_wants(
    kube: &Kubernetes<'_>,
    spec: &ClusterSpec,
    observed: &Observed,
) -> Result<KubeWants> {
    let mut wants = unwanted_services(spec, observed, kube.templates)?;
    wants.ours_live = Some(live_ours(kube, spec, &wants).await?);
    Ok(wants)
}

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

impl Runner<'_> {
    pub(super) async fn execute_kube(&mut self, step: Step) -> Result<StepReport> {
        let kube = self
            .kube
            .context("a Kubernetes step needs the cluster (--kubeconfig)")?;
        let known = Observed {
            reservations: self.journal.state.reservations.clone(),
            handed_over: self.journal.state.handed_over.clone(),
            adopted: self.journal.state.adopted.clone(),
            ..Default::default()
        };
        let (mut wants, rendered) =
            kube_wants(self.spec, &known, kube.capabilities, kube.templates)?;
        if step == Step::ApplyServices {
            wants.live_addresses = Some(live_addresses(kube.client, self.spec, &wants).await?);
            wants.replacing = self.journal.state.replacing.clone();
            let missing = known.missing_claimed_reservations(self.spec);
            if !missing.is_empty() {
                bail!(
                    "the journal holds no reservation for {}: no Service can claim it",
                    missing.join(", ")
                );
            }
        }
        let plan = Plan::calculate_with(
            self.spec,
            &known,
            &wants,
            &[step],
            self.journal.state.generation,
        );
        tracing::info!(step = step.name(), changes = plan.changes.len(), "planned");
        let mut mutations = 0;
        let mut claims = Vec::new();
        for change in &plan.changes {
            let seq = self.journal.intent(step.name(), change)?;
            let result = match change {
                Change::SetCapabilities { .. } => set_capabilities(kube).await,
                Change::ApplyService { service } => {
                    apply_service(kube, &rendered, service, &known, &mut claims).await
                }
                Change::ReplaceService {
                    service,
                    uid,
                    deleting,
                    ..
                } => {
                    self.journal.state.replacing.insert(service.id());
                    self.journal.save()?;
                    let replaced = super::replace::replace_service(
                        kube,
                        self.providers,
                        &rendered,
                        (service, uid.as_deref(), *deleting),
                        &known,
                        &mut claims,
                    )
                    .await;
                    if replaced.is_ok() {
                        self.journal.state.replacing.remove(&service.id());
                    }
                    replaced
                }
                other => bail!("{other:?} is not a change of the cluster"),
            };
            match result {
                Ok((wrote, value)) => {
                    mutations += u32::from(wrote);
                    self.journal.outcome(seq, Ok(value))?;
                }
                Err(e) => {
                    self.journal
                        .outcome(seq, Err(crate::error::render_chain(&e)))?;
                    return Err(e);
                }
            }
        }
        if step == Step::ApplyServices {
            // The Services the gate waits for.
            self.journal.state.services = claims;
            self.journal.save()?;
        }
        Ok(StepReport {
            step: step.name(),
            plan,
            mutations,
            after: known,
        })
    }
}

/// Writes `spec.capabilities`; whether it wrote, and what it found.
async fn set_capabilities(kube: &Kubernetes<'_>) -> Result<(bool, serde_json::Value)> {
    let selection = kube
        .capabilities
        .context("set-capabilities needs the capability selection (a `run`)")?;
    let request = cluster_version::Request {
        selection,
        overrides: kube.overrides,
        wait: kube.wait,
    };
    let applied = cluster_version::apply(kube.client, &request, |line| {
        tracing::info!("{line}");
    })
    .await?;
    tracing::info!(
        baseline = %selection.baseline,
        additional = %applied.additional.join(","),
        kept = %crate::capabilities::list(&applied.kept),
        mutations = applied.mutations,
        "ClusterVersion version: spec.capabilities in place (status is the CVO's)"
    );
    Ok((applied.mutations > 0, serde_json::to_value(&applied)?))
}

/// Applies (or deletes) one Service; one that stands afterwards joins `claims`.
pub(super) async fn apply_service(
    kube: &Kubernetes<'_>,
    rendered: &[Rendered],
    service: &WantedService,
    known: &Observed,
    claims: &mut Vec<ServiceClaim>,
) -> Result<(bool, serde_json::Value)> {
    let r = super::replace::rendered_for(rendered, service)?;
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

#[cfg(test)]
#[path = "kube_tests.rs"]
mod tests;
