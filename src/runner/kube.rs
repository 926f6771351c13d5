//! The cluster's steps: write the capabilities into ClusterVersion, apply the LoadBalancer
//! Services. Planned from what the journal knows of the reservations (not the cloud: the
//! hand-over window must stay tiny, and the handed-over IPs are only in the journal anyway),
//! then applied change by change like the cloud's, each journaled before and after.

use super::replace::replace_service;
use super::services::{apply_service, live_addresses, live_ours};
use super::{Kubernetes, Runner, StepReport};
use crate::assets::ClusterSpec;
use crate::capabilities::cluster_version;
use crate::capabilities::selection::Selection;
use crate::cluster::apply;
use crate::plan::{Capabilities, Change, KubeWants, Observed, Plan, Step, Value, WantedService};
use crate::render::{self, Rendered};
use anyhow::{Context, Result, bail};
use bootstrap_cloud::{IpFamily, Reservation};
use std::net::IpAddr;
use std::path::Path;

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
                    let replaced = replace_service(
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

#[cfg(test)]
#[path = "kube_tests.rs"]
mod tests;
