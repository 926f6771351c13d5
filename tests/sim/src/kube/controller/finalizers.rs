//! The load-balancer controllers' finalizers on a Service: put on before its load balancer
//! is made, taken off once it is deleted (the cloud provider's first), each a write of
//! `services/status` as the service controller makes it.

use super::super::apply::Scope;
use super::super::lb::{self, CloudOptions};
use super::super::meta;
use super::super::ops::{self, WriteCtx};
use super::super::resources::SERVICES;
use super::super::store::{Inner, Key};
use super::{Ctx, Id, lock, service};
use serde_json::{Value, json};
use std::sync::Arc;

const CCM: &str = "cloud-controller-manager";

/// Whether the Service carries the finalizer of a load-balancer controller (see
/// [`lb::finalizer`]).
pub(super) fn holds_finalizer(svc: &Value) -> bool {
    meta::get(svc, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .is_some_and(|f| {
            f.iter()
                .any(|f| f.as_str().is_some_and(|f| lb::FINALIZERS.contains(&f)))
        })
}

/// A deleted Service (or one no longer a LoadBalancer) whose controller holds it by its
/// finalizer: the load balancer is deleted, then the finalizers come off (for an NLB once the
/// NLB is deleted, ELB freeing its interfaces after; on GCP the provider's own first, at the
/// end of `EnsureLoadBalancerDeleted`, then the service controller's), and with them a
/// deleted Service goes.
pub(super) async fn let_go(ctx: Arc<Ctx>, id: Id, uid: String, finalizer_first: bool) {
    if finalizer_first {
        tokio::time::sleep(ctx.lbs.cloud().nlb_deletion).await;
        remove_finalizers(&mut ctx.shared.store.lock(), &id, &uid);
    }
    ctx.lbs.release(&id.0, &id.1, &uid).await;
    if !finalizer_first {
        remove_finalizers(&mut ctx.shared.store.lock(), &id, &uid);
    }
    lock(&ctx.cleaning).remove(&(id, uid));
}

/// Puts the Service's controller's finalizer on it, then the cloud provider's own (each a
/// write of `services/status`, as `servicehelper.PatchService` makes it; not on a Service
/// being deleted: the API server refuses a new finalizer there).
pub(super) fn add_finalizers(inner: &mut Inner, ns: &str, name: &str, cloud: &CloudOptions) {
    let Some(svc) = service(inner, ns, name) else {
        return;
    };
    let wanted = [lb::finalizer(&svc), lb::provider_finalizer(&svc, cloud)];
    for finalizer in wanted.into_iter().flatten() {
        let Some(mut svc) = service(inner, ns, name) else {
            return;
        };
        if meta::get(&svc, &["metadata", "deletionTimestamp"]).is_some() {
            return;
        }
        let mut finalizers = finalizers_of(&svc);
        if finalizers.iter().any(|f| f == finalizer) {
            continue;
        }
        finalizers.push(json!(finalizer));
        meta::set(&mut svc, &["metadata", "finalizers"], json!(finalizers));
        write_finalizers(inner, ns, name, svc);
    }
}

fn finalizers_of(svc: &Value) -> Vec<Value> {
    meta::get(svc, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Takes the controllers' finalizers off the Service `id` with `uid` (one re-created under its
/// name keeps its own): the cloud provider's first, then the service controller's, each its
/// own write.
fn remove_finalizers(inner: &mut Inner, id: &Id, uid: &str) {
    let provider = [lb::ILB_FINALIZER, lb::NETLB_FINALIZER];
    let steps: [&dyn Fn(&str) -> bool; 2] =
        [&|f| provider.contains(&f), &|f| lb::FINALIZERS.contains(&f)];
    for goes in steps {
        let Some(mut svc) = service(inner, &id.0, &id.1).filter(|s| meta::uid(s) == uid) else {
            return;
        };
        let finalizers = finalizers_of(&svc);
        let kept: Vec<Value> = finalizers
            .iter()
            .filter(|f| !f.as_str().is_some_and(goes))
            .cloned()
            .collect();
        if kept.len() == finalizers.len() {
            continue;
        }
        meta::set(&mut svc, &["metadata", "finalizers"], json!(kept));
        write_finalizers(inner, &id.0, &id.1, svc);
    }
}

/// A finalizer or status change as the service controller and the GCE provider write it:
/// through `services/status` (`servicehelper.PatchService`), which keeps the Service's
/// metadata.
pub(super) fn write_finalizers(inner: &mut Inner, ns: &str, name: &str, svc: Value) {
    let ctx = WriteCtx::internal(CCM, false);
    let _ = ops::update(
        inner,
        &Key::new(SERVICES, ns, name),
        svc,
        Scope::Status,
        &ctx,
    );
}
