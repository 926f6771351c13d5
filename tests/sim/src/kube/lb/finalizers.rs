//! The controllers' finalizers: which one a Service's controller puts on, the cloud
//! provider's own, and which goes first when the load balancer is deleted.

use super::service_kind::{Kind, kind};
use super::{CloudOptions, aws};
use serde_json::Value;

/// The AWS Load Balancer Controller's finalizer (aws-load-balancer-controller
/// `controllers/service/service_controller.go`, `serviceFinalizer`).
const LBC_FINALIZER: &str = "service.k8s.aws/resources";
/// The service controller's finalizer (k8s.io/cloud-provider `controllers/service/controller.go`,
/// `servicehelper.LoadBalancerCleanupFinalizer`).
const CLEANUP_FINALIZER: &str = "service.kubernetes.io/load-balancer-cleanup";

/// OpenShift's GCE provider's own finalizers, put on by `EnsureLoadBalancer` after the service
/// controller's and taken off at the end of `EnsureLoadBalancerDeleted`, before the service
/// controller takes its own off (openshift/cloud-provider-gcp 30cc04797f50:
/// `providers/gce/gce_loadbalancer_internal.go:46,95,452-453`,
/// `gce_loadbalancer_external.go:100,424-425`, `gce_util.go:56`). Both go through
/// `servicehelper.PatchService`, a strategic-merge PATCH of `/status`
/// (`vendor/k8s.io/cloud-provider/service/helpers/helper.go:133-143`).
pub const ILB_FINALIZER: &str = "gke.networking.io/l4-ilb-v1";
pub const NETLB_FINALIZER: &str = "gke.networking.io/l4-netlb-v1";

/// Every controller finalizer, as a controller that deletes a load balancer takes them off.
pub const FINALIZERS: [&str; 4] = [
    LBC_FINALIZER,
    CLEANUP_FINALIZER,
    ILB_FINALIZER,
    NETLB_FINALIZER,
];

/// The cloud provider's own finalizer, put on after [`finalizer`]'s: GCE's for an internal
/// Service, and for any other once the GCE fake is known (the provider is GCE's).
pub fn provider_finalizer(svc: &Value, cloud: &CloudOptions) -> Option<&'static str> {
    match kind(svc) {
        Kind::GcpInternal => Some(ILB_FINALIZER),
        Kind::Other if cloud.gcp.is_some() => Some(NETLB_FINALIZER),
        _ => None,
    }
}

/// The finalizer the Service's controller puts on it before it makes a load balancer, and takes
/// off once it deleted it, so that a deleted Service outlives its load balancer: the AWS Load
/// Balancer Controller's once it built a model (`reconcileLoadBalancerResources`: a
/// `FailedBuildModel` adds none), else the service controller's (`syncLoadBalancerIfNeeded`:
/// `addFinalizer` before `ensureLoadBalancer`, refused or not).
pub fn finalizer(svc: &Value) -> Option<&'static str> {
    match kind(svc) {
        Kind::AwsLoadBalancerController => aws::build(svc).is_ok().then_some(LBC_FINALIZER),
        _ => Some(CLEANUP_FINALIZER),
    }
}

/// Whether the controller takes its finalizer off before the cloud lets go of the addresses:
/// the AWS Load Balancer Controller once ELB deleted the NLB (`cleanupLoadBalancerResources`),
/// whose interfaces, and with them its IPs, go a while later; the service controller only once
/// `EnsureLoadBalancerDeleted` deleted the forwarding rules or frontends holding them.
pub fn finalizer_goes_first(svc: &Value) -> bool {
    kind(svc) == Kind::AwsLoadBalancerController
}
