//! Replacing a Service whose load balancer never changes the addresses it was made with
//! (the AWS Load Balancer Controller's NLBs): read ours as the cluster holds them, delete,
//! wait until the controller removed the load balancer, apply anew (docs/clouds.md, "An
//! NLB's addresses are fixed when it is made").

use super::Kubernetes;
use super::services::{apply_service, delete_service, live_addresses, rendered_for};
use crate::assets::ClusterSpec;
use crate::plan::{Change, DoomedService, KubeWants, Observed, WantedService};
use crate::render::{self, Rendered, ServiceClaim};
use anyhow::{Result, bail};
use bootstrap_cloud::Reservation;
use std::net::IpAddr;
use std::time::Duration;

/// Replaces one Service whose load balancer would keep other addresses: [`let_go`], then
/// applies it. A resume repeats what is left: the deletion finds it gone, the waits pass at
/// once.
pub(super) async fn replace_service(
    kube: &Kubernetes<'_>,
    providers: &crate::providers::Providers,
    rendered: &[Rendered],
    (service, uid, deleting): (&WantedService, Option<&str>, bool),
    known: &Observed,
    claims: &mut Vec<ServiceClaim>,
) -> Result<(bool, serde_json::Value)> {
    let reservations: Vec<_> = known.kept().into_values().collect();
    let (deleted, found) = let_go(
        kube,
        providers,
        rendered,
        (service, uid, deleting),
        &reservations,
    )
    .await?;
    let (applied, outcome) = apply_service(kube, rendered, service, known, claims).await?;
    Ok((
        deleted || applied,
        serde_json::json!({ "deleted": found["outcome"], "applied": outcome["outcome"] }),
    ))
}

/// The first half of a replacement: deletes the Service (only the one the lookup saw, `uid`;
/// None: gone already; `deleting`: deleted already, only waited out), waits until it is gone (the controller drops its finalizer once the
/// load balancer is deleted) and until no load-balancer interface holds an IP it claims (the
/// cloud frees them a moment after). Whether it deleted, and what the deletion found.
async fn let_go(
    kube: &Kubernetes<'_>,
    providers: &crate::providers::Providers,
    rendered: &[Rendered],
    (service, uid, deleting): (&WantedService, Option<&str>, bool),
    reservations: &[Reservation],
) -> Result<(bool, serde_json::Value)> {
    let doomed = DoomedService {
        namespace: service.namespace.clone(),
        name: service.name.clone(),
        template: service.template.clone(),
        uid: uid.map(str::to_string),
        deleting,
    };
    let (deleted, found) = match uid {
        Some(_) => delete_service(kube, &doomed).await?,
        None => (false, serde_json::json!({ "outcome": "already-absent" })),
    };
    if found["outcome"] == "replaced-not-ours" {
        bail!(
            "Service {}: re-created by someone else since it was read; left in place (run again to replace it)",
            service.id()
        );
    }
    let r = rendered_for(rendered, service)?;
    let ips = render::claimed_ips(&r.service, reservations);
    wait_interfaces_gone(providers, &service.id(), &ips).await?;
    Ok((deleted, found))
}

/// Until no load-balancer interface holds any of `ips` (clouds that report the holders:
/// AWS), so the new load balancer can take them.
async fn wait_interfaces_gone(
    providers: &crate::providers::Providers,
    service: &str,
    ips: &[IpAddr],
) -> Result<()> {
    let operation = format!("wait for the load balancer of {service} to let go of its addresses");
    let mut poll = bootstrap_cloud::poll::Poll::change(&operation, Duration::from_millis(250));
    loop {
        let held: Vec<String> = match providers.addresses.holders(ips).await {
            None => return Ok(()),
            Some(found) => found?
                .into_iter()
                .filter(|(_, h)| h.is_load_balancer())
                .map(|(ip, h)| format!("{ip} ({}, {})", h.id, h.description))
                .collect(),
        };
        if held.is_empty() {
            return Ok(());
        }
        tracing::info!(service, held = %held.join(", "), "the old load balancer's interfaces still hold addresses");
        poll.wait(None).await?;
    }
}

/// The UPI step `apply` (no journal): replaces each rendered Service of ours whose load
/// balancer would keep other addresses, as `apply-services` does, before the apply of all.
/// The `namespace/name` of each replaced. Run again after a failure, it finds the Service
/// gone or replaced already and waits out what is left.
pub async fn replace_where_fixed(
    client: &kube::Client,
    providers: &crate::providers::Providers,
    spec: &ClusterSpec,
    rendered: &[Rendered],
    reservations: &[Reservation],
    wait: Duration,
) -> Result<Vec<String>> {
    let kube = Kubernetes {
        client,
        capabilities: None,
        overrides: None,
        templates: None,
        wait,
    };
    let mut wants = KubeWants {
        services: rendered
            .iter()
            .map(|r| WantedService {
                namespace: r.service.metadata.namespace.clone().unwrap_or_default(),
                name: r.service.metadata.name.clone().unwrap_or_default(),
                template: r.template.clone(),
                delete: false,
                claims: Vec::new(),
                addresses: render::fixed_addresses(r.service.metadata.annotations.as_ref()),
            })
            .collect(),
        ..KubeWants::default()
    };
    wants.live_addresses = Some(live_addresses(client, spec, &wants).await?);
    let mut replaced = Vec::new();
    for change in crate::plan::replacements(&wants) {
        let Change::ReplaceService {
            service,
            uid,
            deleting,
            ..
        } = change
        else {
            continue;
        };
        let_go(
            &kube,
            providers,
            rendered,
            (&service, uid.as_deref(), deleting),
            reservations,
        )
        .await?;
        replaced.push(service.id());
    }
    Ok(replaced)
}
