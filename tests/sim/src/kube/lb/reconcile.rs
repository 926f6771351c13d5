//! One reconcile of a Service's load balancer: give back what it held if that changed, check
//! the cloud, then claim what it asks for or refuse, per controller (the AWS Load Balancer
//! Controller's NLBs, the internal frontends of GCP and Azure, the others).

use super::super::events::EventType;
use super::super::meta;
use super::super::resources::SERVICES;
use super::super::store::{Key, Store};
use super::outcome::{
    LBC, Outcome, SERVICE_CONTROLLER, ensured, ensuring, registered, report, sync_failed,
};
use super::service_kind::{Kind, kind};
use super::{
    CloudOptions, Held, Holding, LoadBalancers, aws, azure, frontends, gce, gce_build, internal,
};
use crate::azure::AzureLbView;
use serde_json::Value;

/// What the cloud provider checks of the cloud before it builds the load balancer of a
/// Service of `kind` (the GCP and Azure ones, when the fake is known).
fn cloud_checks(cloud: &CloudOptions, kind: Kind, svc: &Value) -> Result<(), String> {
    match (kind, &cloud.gcp, &cloud.azure) {
        (Kind::GcpInternal, Some(gcp), _) => gce::ensure_internal_instance_groups(gcp).map(drop),
        (Kind::Other, Some(gcp), _) => gce::verify_user_requested_ip(gcp, svc),
        (Kind::Other, None, Some(azure)) => azure::ensure_public(azure, svc),
        _ => Ok(()),
    }
}

impl LoadBalancers {
    /// Reconciles the load balancer of the Service `ns/name` as it is stored now: gives back
    /// what it held if that changed, then claims what it asks for, or refuses.
    pub async fn reconcile(&self, store: &Store, ns: &str, name: &str) -> Outcome {
        let id = (ns.to_string(), name.to_string());
        // GCE and Azure: the service controller syncs one Service at a time (see `gce_build`).
        let _one_at_a_time = match (&self.cloud.gcp, &self.cloud.azure) {
            (None, None) => None,
            _ => Some(self.sync_queue.lock().await),
        };
        let nic_references = self.cloud.azure.as_ref().map(AzureLbView::pool_references);
        let mut held = self.held.lock().await;
        let svc = store
            .lock()
            .get(&Key::new(SERVICES, ns, name))
            .map(|s| (*s).clone())
            .filter(|s| meta::get_str(s, &["spec", "type"]) == Some("LoadBalancer"));
        let Some(svc) = svc else {
            if let Some(gone) = held.remove(&id) {
                self.give_back(&gone.held).await;
            }
            return Outcome::Gone;
        };
        let holder = format!("{ns}/{name}");
        let uid = meta::uid(&svc).to_string();
        if held.get(&id).is_some_and(|h| h.uid != uid)
            && let Some(stale) = held.remove(&id)
        {
            self.give_back(&stale.held).await;
        }
        match kind(&svc) {
            Kind::AwsLoadBalancerController => {
                let model = match aws::build(&svc) {
                    // An existing NLB's addresses never change.
                    Ok(m) => match held.get(&id) {
                        Some(Holding {
                            held: Held::Nlb(nlb),
                            ..
                        }) => aws::as_kept(&nlb.model, m),
                        _ => m,
                    },
                    Err(why) => {
                        return Outcome::Refused(vec![report(
                            LBC,
                            EventType::Warning,
                            "FailedBuildModel",
                            format!("Failed build model due to {why}"),
                        )]);
                    }
                };
                let done = report(
                    LBC,
                    EventType::Normal,
                    "SuccessfullyReconciled",
                    "Successfully reconciled".into(),
                );
                if let Some(Holding {
                    held: Held::Nlb(nlb),
                    ..
                }) = held.get_mut(&id)
                    && nlb.model == model
                {
                    if nlb.unregistered.is_some() {
                        nlb.unregistered = self.unregistered(store, &svc).await;
                    }
                    return registered(done, nlb.unregistered.as_deref());
                }
                if let Some(old) = held.remove(&id) {
                    self.give_back(&old.held).await;
                }
                let others: Vec<&aws::Nlb> = held
                    .values()
                    .filter_map(|h| match &h.held {
                        Held::Nlb(n) => Some(n.as_ref()),
                        Held::Frontends(_) => None,
                    })
                    .collect();
                match aws::deploy(self.ec2.as_ref(), &model, &holder, &others).await {
                    Ok(mut nlb) => {
                        nlb.unregistered = self.unregistered(store, &svc).await;
                        let outcome = registered(done, nlb.unregistered.as_deref());
                        held.insert(
                            id,
                            Holding {
                                uid,
                                held: Held::Nlb(Box::new(nlb)),
                            },
                        );
                        outcome
                    }
                    Err(why) => Outcome::Refused(vec![report(
                        LBC,
                        EventType::Warning,
                        "FailedDeployModel",
                        format!("Failed deploy model due to {why}"),
                    )]),
                }
            }
            Kind::GcpInternal | Kind::AzureInternal => {
                let ensuring = ensuring();
                let refused = |why: String| {
                    Outcome::Refused(vec![
                        ensuring.clone(),
                        report(
                            SERVICE_CONTROLLER,
                            EventType::Warning,
                            "SyncLoadBalancerFailed",
                            format!(
                                "Error syncing load balancer: failed to ensure load balancer: {why}"
                            ),
                        ),
                    ])
                };
                let wanted = match self.frontends(&svc) {
                    Ok(w) => w,
                    Err(why) => return refused(why),
                };
                if let Err(why) = cloud_checks(&self.cloud, kind(&svc), &svc) {
                    return refused(why);
                }
                if let Some(old) = held.remove(&id) {
                    self.give_back(&old.held).await;
                }
                if !wanted.is_empty() {
                    let others: Vec<&frontends::Frontend> = held
                        .values()
                        .filter_map(|h| match &h.held {
                            Held::Frontends(f) => Some(f),
                            Held::Nlb(_) => None,
                        })
                        .flatten()
                        .collect();
                    if let Some(subnet) = self.subnet(&svc)
                        && let Err(why) = internal::check(
                            &self.cloud,
                            &subnet,
                            kind(&svc),
                            &svc,
                            &wanted,
                            &others,
                        )
                    {
                        return refused(why);
                    }
                    held.insert(
                        id.clone(),
                        Holding {
                            uid,
                            held: Held::Frontends(wanted.clone()),
                        },
                    );
                    // The calls take their time; the queue keeps other Services out.
                    match (kind(&svc), &self.cloud.gcp, &self.cloud.azure) {
                        (Kind::GcpInternal, Some(gcp), _) => {
                            drop(held);
                            if let Err(why) = gce_build::ensure_internal(gcp, &svc, &wanted).await {
                                self.held.lock().await.remove(&id);
                                return refused(why);
                            }
                        }
                        (Kind::AzureInternal, _, Some(azure)) => {
                            if let Err(why) = azure::ensure_internal(azure, &svc, &wanted) {
                                held.remove(&id);
                                return refused(why);
                            }
                            drop(held);
                            self.wait_nic_updates(nic_references).await;
                        }
                        _ => {}
                    }
                }
                self.uses(&id, &svc);
                Outcome::Provisioned(vec![ensuring, ensured()])
            }
            Kind::AwsInTree | Kind::Other => {
                if let Some(old) = held.remove(&id) {
                    self.give_back(&old.held).await;
                }
                if let Err(why) = cloud_checks(&self.cloud, kind(&svc), &svc) {
                    return sync_failed(why);
                }
                drop(held);
                if let (Kind::Other, Some(gcp)) = (kind(&svc), &self.cloud.gcp)
                    && let Err(why) = gce_build::ensure_external(gcp, &svc).await
                {
                    return sync_failed(why);
                }
                self.wait_nic_updates(nic_references).await;
                self.uses(&id, &svc);
                Outcome::Provisioned(vec![ensuring(), ensured()])
            }
        }
    }
}
