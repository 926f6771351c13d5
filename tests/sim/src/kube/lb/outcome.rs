//! The outcome of one reconcile of a Service's load balancer and the events the controllers
//! record with it, under each controller's own recorder name and reasons.

use super::super::events::{EventType, Report};

/// The AWS Load Balancer Controller's event recorder name and reasons.
pub(super) const LBC: &str = "service";
/// The AWS Load Balancer Controller's TargetGroupBinding event recorder.
const TGB: &str = "targetGroupBinding";
/// The service controller of kube-controller-manager / cloud-controller-manager.
pub(super) const SERVICE_CONTROLLER: &str = "service-controller";
/// The outcome of one reconcile of a Service's load balancer.
#[derive(Debug)]
pub enum Outcome {
    /// The load balancer exists as asked; the events to record (may be empty).
    Provisioned(Vec<Report>),
    /// Refused: the events to record, the last one the Warning.
    Refused(Vec<Report>),
    /// AWS: the NLB exists (its ingress is reported) but registers no target: the events to
    /// record, the last one the Warning; the controller tries again later.
    Unregistered(Vec<Report>),
    /// The Service is gone, or not of type LoadBalancer.
    Gone,
}
pub(super) fn report(
    component: &'static str,
    typ: EventType,
    reason: &'static str,
    message: String,
) -> Report {
    Report {
        component,
        typ,
        reason,
        message,
    }
}

/// The service controller's refusal: `Ensuring`, then `SyncLoadBalancerFailed` with the
/// cloud provider's error.
pub(super) fn sync_failed(why: String) -> Outcome {
    Outcome::Refused(vec![
        ensuring(),
        report(
            SERVICE_CONTROLLER,
            EventType::Warning,
            "SyncLoadBalancerFailed",
            format!("Error syncing load balancer: failed to ensure load balancer: {why}"),
        ),
    ])
}

/// The AWS Load Balancer Controller's verdict on a deployed NLB: its Service reconciled, and,
/// when its targets cannot be registered (`why`), the TargetGroupBinding controller's
/// refusal. The sim keeps no TargetGroupBindings, so the Warning goes on the Service, with the
/// reason today's controller records on the TargetGroupBinding (`FailedNetworkReconcile`,
/// `pkg/targetgroupbinding/resource_manager.go`; v2.8 only logs the error and requeues).
pub(super) fn registered(done: Report, why: Option<&str>) -> Outcome {
    match why {
        None => Outcome::Provisioned(vec![done]),
        Some(why) => Outcome::Unregistered(vec![
            done,
            report(
                TGB,
                EventType::Warning,
                "FailedNetworkReconcile",
                why.to_string(),
            ),
        ]),
    }
}

/// The service controller's Normal events around a sync.
pub(super) fn ensuring() -> Report {
    report(
        SERVICE_CONTROLLER,
        EventType::Normal,
        "EnsuringLoadBalancer",
        "Ensuring load balancer".into(),
    )
}

pub(super) fn ensured() -> Report {
    report(
        SERVICE_CONTROLLER,
        EventType::Normal,
        "EnsuredLoadBalancer",
        "Ensured load balancer".into(),
    )
}
