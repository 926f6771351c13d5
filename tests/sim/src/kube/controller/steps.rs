//! A Service's two steps: ingress (reconcile with the cloud until it gives the load balancer
//! its addresses, recording the controller's Events) and endpoints (from the matching pods,
//! kept in step and flapping if asked), and the status writes they make.

use super::super::endpoints;
use super::super::events::{self, Report};
use super::super::lb::{self, CloudOptions, Outcome};
use super::super::meta;
use super::super::store::Inner;
use super::finalizers::{add_finalizers, write_finalizers};
use super::{ControllerKnobs, Ctx, Id, is_lb, lock, service};
use serde_json::{Value, json};
use std::sync::Arc;

/// Ingress: reconcile with the cloud until it gives the load balancer its addresses.
pub(super) async fn provision(ctx: &Arc<Ctx>, ns: &str, name: &str, knobs: &ControllerKnobs) {
    let Some(svc) = service(&ctx.shared.store.lock(), ns, name) else {
        return;
    };
    if has_ingress(&svc, ctx.lbs.cloud()) && ctx.lbs.is_provisioned(&svc).await {
        return;
    }
    // No controller serves it (the AWS Load Balancer Controller is not installed, or does not
    // run: its Deployment has no available replica).
    if !lb::served(&svc, ctx.lbs.cloud())
        || (lb::needs_aws_lb_controller(&svc)
            && !super::super::aws_controller::serving(&ctx.shared.store.lock()))
    {
        return;
    }
    tokio::time::sleep(knobs.ingress_delay).await;
    add_finalizers(&mut ctx.shared.store.lock(), ns, name, ctx.lbs.cloud());
    loop {
        // Detached, so that a restart of this pipeline cannot cut a claim in the cloud in half.
        let (lbs, store) = (ctx.lbs.clone(), ctx.shared.store.clone());
        let (n, m) = (ns.to_string(), name.to_string());
        let Ok(outcome) = tokio::spawn(async move { lbs.reconcile(&store, &n, &m).await }).await
        else {
            return;
        };
        {
            let mut inner = ctx.shared.store.lock();
            let Some(svc) = service(&inner, ns, name) else {
                return;
            };
            match outcome {
                Outcome::Gone => return,
                Outcome::Provisioned(reports) => {
                    record(&mut inner, &svc, &reports);
                    set_ingress(&mut inner, ns, name, ctx.lbs.cloud());
                    return;
                }
                // The NLB exists without targets: its ingress stands, the controller requeues.
                Outcome::Unregistered(reports) => {
                    record(&mut inner, &svc, &reports);
                    set_ingress(&mut inner, ns, name, ctx.lbs.cloud());
                }
                Outcome::Refused(reports) => {
                    record(&mut inner, &svc, &reports);
                    clear_ingress(&mut inner, ns, name);
                }
            }
        }
        tokio::time::sleep(knobs.refusal_retry).await;
    }
}

fn record(inner: &mut Inner, svc: &Value, reports: &[Report]) {
    for r in reports {
        events::record(inner, svc, r);
    }
}

/// Endpoints: from the matching pods, then kept in step (and flapping, if asked).
pub(super) async fn publish_endpoints(
    ctx: &Arc<Ctx>,
    ns: &str,
    name: &str,
    knobs: &ControllerKnobs,
) {
    let id = (ns.to_string(), name.to_string());
    if knobs.ingress_without_endpoints {
        lock(&ctx.published).remove(&id);
        return;
    }
    let current = endpoints::is_current(&ctx.shared.store.lock(), ns, name, true);
    if !current {
        tokio::time::sleep(knobs.ingress_delay + knobs.endpoints_delay).await;
    }
    publish(ctx, &id, true);
    if let Some(period) = knobs.flapping {
        let mut ready = true;
        loop {
            tokio::time::sleep(period).await;
            ready = !ready;
            publish(ctx, &id, ready);
        }
    }
}

fn publish(ctx: &Ctx, id: &Id, gate_open: bool) {
    lock(&ctx.published).insert(id.clone(), gate_open);
    endpoints::sync(&mut ctx.shared.store.lock(), &id.0, &id.1, gate_open);
}

fn has_ingress(svc: &Value, cloud: &CloudOptions) -> bool {
    meta::get(svc, &["status", "loadBalancer", "ingress"]) == Some(&json!(lb::ingress(svc, cloud)))
}

fn write_status(inner: &mut Inner, ns: &str, name: &str, load_balancer: Value) {
    let Some(mut svc) = service(inner, ns, name) else {
        return;
    };
    meta::set(&mut svc, &["status", "loadBalancer"], load_balancer);
    write_finalizers(inner, ns, name, svc);
}

fn set_ingress(inner: &mut Inner, ns: &str, name: &str, cloud: &CloudOptions) {
    let Some(svc) = service(inner, ns, name) else {
        return;
    };
    if !is_lb(&svc) || has_ingress(&svc, cloud) {
        return;
    }
    write_status(
        inner,
        ns,
        name,
        json!({"ingress": lb::ingress(&svc, cloud)}),
    );
}

fn clear_ingress(inner: &mut Inner, ns: &str, name: &str) {
    if service(inner, ns, name)
        .is_some_and(|s| meta::get(&s, &["status", "loadBalancer", "ingress"]).is_some())
    {
        write_status(inner, ns, name, json!({}));
    }
}

/// A Service that is gone or no longer a LoadBalancer: no ingress, no endpoints.
pub(super) fn clear(inner: &mut Inner, ns: &str, name: &str, deleted: bool) {
    endpoints::clear(inner, ns, name);
    if !deleted {
        clear_ingress(inner, ns, name);
    }
}

/// Forces ingress and endpoints; false when there is no such LoadBalancer Service.
pub(super) fn make_ready_now(ctx: &Ctx, inner: &mut Inner, ns: &str, name: &str) -> bool {
    let Some(svc) = service(inner, ns, name) else {
        return false;
    };
    if !is_lb(&svc) {
        return false;
    }
    set_ingress(inner, ns, name, ctx.lbs.cloud());
    lock(&ctx.published).insert((ns.to_string(), name.to_string()), true);
    endpoints::sync(inner, ns, name, true);
    true
}
