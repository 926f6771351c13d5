//! The simulated load-balancer controllers: which controller serves a Service (from its
//! annotations), whether the cloud lets it have the addresses it asks for, and the ingress
//! it then reports. A refusal is an Event on the Service, as the real controller records it,
//! and no ingress.
//!
//! | Service | controller | ingress | refused when |
//! | --- | --- | --- | --- |
//! | `aws-load-balancer-type: external` | AWS Load Balancer Controller (`service`) | NLB hostname only | see `aws` and `nlb_config`: `FailedBuildModel`, `FailedDeployModel`; targets whose ENI has no or several tagged security groups: `FailedNetworkReconcile` (`targetGroupBinding`), the NLB serves nothing |
//! | other `aws-load-balancer-*` | in-tree AWS provider (`service-controller`) | ELB hostname | never |
//! | GCP / Azure internal | service controller + cloud provider | the IP per family | see `frontends` (subnet, ports) and `internal`: on GCP `gce` (the installer's instance groups), the address manager's reservation, an IP another rule or a VM uses without a `SHARED_LOADBALANCER_VIP` address; on Azure an IP a NIC holds, no network security group: `SyncLoadBalancerFailed` |
//! | GCP other (with the fake known) | service controller + GCE provider | the requested IP | see `gce`: a static address of another network tier, `SyncLoadBalancerFailed` |
//! | Azure other (with the fake known) | service controller + Azure provider | the IP per family | see `azure`: no such public IP in the cluster's or the annotated resource group, a Basic one ARM will not upgrade, no network security group, `SyncLoadBalancerFailed`; else an `Internet` rule to the IP |
//! | anything else | service controller | the requested IP per family, else a hostname | never |
//!
//! Whom they forward to (`backends`): every node not labelled
//! `exclude-from-external-load-balancers`, healthy while its service proxy answers the
//! probes; an Azure (Standard) frontend serves only while some backend is healthy, a GCE one
//! fails open. Refusal texts are the providers' own where their sources give them; each
//! module says where the wording could not be established.
//!
//! "Per family": cloud-provider-azure makes one frontend per family in `spec.ipFamilies` and
//! takes each family's address from its annotation (`azure-load-balancer-ipv4` / `-ipv6`), else
//! from `spec.loadBalancerIP` when that is of the family (`getIPFamiliesEnabled`,
//! `getServiceLoadBalancerIP` in its `pkg/provider/azure_utils.go`). So a dual-stack Service
//! gets two ingress IPs, and an IPv6 annotation on a single-stack Service is ignored.
//!
//! Every claim goes through one async mutex, so two Services never race for an address, and
//! each Service's claims are remembered so that a change or a deletion gives them back.
//!
//! A deleted Service's load balancer lets go of its addresses only after
//! [`CloudOptions::release_delay`], as the real ones do: ELB deletes an NLB's interfaces (and
//! with them its Elastic IP associations) some time after the load balancer itself, and a GCE
//! forwarding rule or an Azure frontend is deleted by the service controller's next sync. Until
//! then the cloud refuses to release the address (moto_server.py for EC2; the GCP and Azure
//! fakes through [`AddressUsers`], which this module tells who uses which address).

mod aws;
mod azure;
mod backends;
mod cidr;
pub(crate) mod ec2;
mod frontends;
mod gce;
mod gce_build;
mod internal;
mod nlb_config;
mod node_sync;
mod release;

pub use cidr::{Ipv4Cidr, Ipv6Cidr};
pub use frontends::gcp_no_address;

use super::events::{EventType, Report};
use super::meta;
use super::resources::SERVICES;
use super::store::{Key, Store};
use crate::azure::AzureLbView;
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

const AZURE_IPV4: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
const AZURE_IPV6: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv6";
const AZURE_INTERNAL: &str = "service.beta.kubernetes.io/azure-load-balancer-internal";
const GKE_TYPE: &str = "networking.gke.io/load-balancer-type";
const GCE_TYPE: &str = "cloud.google.com/load-balancer-type";
const AWS_PREFIX: &str = "service.beta.kubernetes.io/aws-load-balancer-";

/// The AWS Load Balancer Controller's event recorder name and reasons.
const LBC: &str = "service";
/// The AWS Load Balancer Controller's TargetGroupBinding event recorder.
const TGB: &str = "targetGroupBinding";
/// The service controller of kube-controller-manager / cloud-controller-manager.
const SERVICE_CONTROLLER: &str = "service-controller";

/// What the simulated load-balancer controllers know of the cloud behind them. Each rule that
/// needs a fact of the cloud is enforced only when that fact is given.
#[derive(Clone, Debug)]
pub struct CloudOptions {
    /// AWS: the EC2 endpoint of moto (`http://127.0.0.1:PORT`, not a counting proxy). When set,
    /// the simulated AWS Load Balancer Controller checks and claims its NLBs' addresses there
    /// (see `aws`); without it, only against the other Services' NLBs.
    pub aws_ec2_endpoint: Option<String>,
    /// AWS: the region, for moto's backend and the NLB hostnames.
    pub aws_region: String,
    /// GCP: the range of the cloud-config subnetwork (the compute subnet), where internal
    /// forwarding rules live.
    pub gcp_compute_subnet: Option<Ipv4Cidr>,
    /// Azure: the range of the subnet the internal load balancer uses (the compute subnet).
    pub azure_compute_subnet: Option<Ipv4Cidr>,
    /// Azure: that subnet's IPv6 prefix, when it is dual stack. With `azure_compute_subnet`
    /// known and this None, the subnet has no IPv6 and an internal IPv6 frontend is refused.
    pub azure_compute_subnet_ipv6: Option<Ipv6Cidr>,
    /// AWS: the AWS Load Balancer Controller is installed (its TargetGroupBinding CRD exists
    /// and it serves `aws-load-balancer-type: external` Services). Without it such a Service
    /// stays without ingress, as on a cluster without the controller.
    pub aws_lb_controller: bool,
    /// GCP / Azure: the cloud's address resources, told which load balancer uses which of
    /// them (a GCE address's `users`, an Azure public IP's `ipConfiguration`), so that the
    /// cloud refuses to delete an address in use as the real one does.
    pub addresses: Option<AddressBook>,
    /// How long after its Service is deleted a load balancer still holds its addresses (an
    /// NLB: after it was deleted, see `nlb_deletion`).
    pub release_delay: Duration,
    /// How long the AWS Load Balancer Controller takes to delete an NLB (the load balancer,
    /// then its target groups) before it takes its finalizer off the Service; ELB frees the
    /// NLB's interfaces `release_delay` after.
    pub nlb_deletion: Duration,
    /// AWS: the controller's `--cluster-name` (the infra id). With moto known, every target's
    /// ENI there must have a single security group or exactly one tagged
    /// `kubernetes.io/cluster/<name>` (see `aws::backend_security_groups`).
    pub aws_cluster_name: Option<String>,
    /// The node IPs of the control-plane machines the cloud fake made (AWS: the installer's
    /// master instances in moto); the simulated nodes take them unless
    /// `KubeSimOptions::node_ips` places them.
    pub control_plane_ips: Vec<Ipv4Addr>,
    /// GCP: the fake itself, read as the cloud provider reads the cloud (instance groups,
    /// addresses; see `gce`). When set, an internal Service needs the installer's instance
    /// groups and any other Service is a GCE external load balancer whose requested IP must be
    /// of its network tier.
    pub gcp: Option<crate::gcp::GcpLbView>,
    /// Azure: the fake's public IPs as cloud-provider-azure finds them (see `azure`). When
    /// set, a Service that is not internal is an Azure public load balancer whose address
    /// must be a public IP of the cluster's resource group or of the annotated one.
    pub azure: Option<crate::azure::AzureLbView>,
    /// A real cloud controller manager builds the load balancers (`bootstrap-sim real-ccm`):
    /// the simulated controllers then serve no Service (no ingress, no finalizer, nothing
    /// released); endpoints and pods are still simulated.
    pub external_controller: bool,
}

/// What a cloud fake records of the load balancers using its addresses. `lb` is the load
/// balancer's name as its controller makes it (see [`lb_resource_name`]); an IP of no address
/// resource of the fake (an Azure private IP, say) is ignored.
pub trait AddressUsers: Send + Sync {
    /// The load balancer `lb` now uses `ip`.
    fn attach(&self, ip: IpAddr, lb: &str);
    /// The load balancer `lb` no longer uses `ip`.
    fn detach(&self, ip: IpAddr, lb: &str);
}

/// A shared [`AddressUsers`].
#[derive(Clone)]
pub struct AddressBook(pub Arc<dyn AddressUsers>);

impl std::fmt::Debug for AddressBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AddressBook")
    }
}

/// The name the GCE and Azure cloud providers give a Service's load balancer resources (the
/// forwarding rule, the frontend IP configuration): `a` and the Service's uid without dashes,
/// at most 32 characters (`cloudprovider.DefaultLoadBalancerName` in k8s.io/cloud-provider
/// `cloud.go`, which both providers call).
pub fn lb_resource_name(svc: &Value) -> String {
    let mut name: String = format!("a{}", meta::uid(svc).replace('-', ""));
    name.truncate(32);
    name
}

impl Default for CloudOptions {
    fn default() -> Self {
        Self {
            aws_ec2_endpoint: None,
            aws_region: "us-east-1".into(),
            gcp_compute_subnet: None,
            azure_compute_subnet: None,
            azure_compute_subnet_ipv6: None,
            aws_lb_controller: true,
            addresses: None,
            release_delay: Duration::from_secs(1),
            nlb_deletion: Duration::from_millis(250),
            aws_cluster_name: None,
            control_plane_ips: Vec::new(),
            gcp: None,
            azure: None,
            external_controller: false,
        }
    }
}

/// Which controller serves a Service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    AwsLoadBalancerController,
    AwsInTree,
    GcpInternal,
    AzureInternal,
    Other,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn annotation<'a>(svc: &'a Value, key: &str) -> Option<&'a str> {
    meta::get_str(svc, &["metadata", "annotations", key])
}

fn kind(svc: &Value) -> Kind {
    let has_aws = meta::get(svc, &["metadata", "annotations"])
        .and_then(Value::as_object)
        .is_some_and(|a| a.keys().any(|k| k.starts_with(AWS_PREFIX)));
    if annotation(svc, aws::TYPE) == Some("external") {
        Kind::AwsLoadBalancerController
    } else if has_aws {
        Kind::AwsInTree
    } else if [GKE_TYPE, GCE_TYPE]
        .iter()
        .any(|k| annotation(svc, k).is_some_and(|v| v.eq_ignore_ascii_case("internal")))
    {
        Kind::GcpInternal
    } else if annotation(svc, AZURE_INTERNAL) == Some("true") {
        Kind::AzureInternal
    } else {
        Kind::Other
    }
}

/// The addresses asked for, one per family of `spec.ipFamilies` (the API server defaults it
/// to `[IPv4]`): the family's Azure annotation, else `spec.loadBalancerIP` when it is of that
/// family. A `loadBalancerIP` that is no IP counts as IPv4, so its owner refuses it.
fn requested_ips(svc: &Value) -> Vec<&str> {
    let families: Vec<&str> = meta::get(svc, &["spec", "ipFamilies"])
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .filter(|f: &Vec<&str>| !f.is_empty())
        .unwrap_or_else(|| vec!["IPv4"]);
    let lb_ip = meta::get_str(svc, &["spec", "loadBalancerIP"]).map(str::trim);
    let lb_ip_is_v6 = lb_ip.is_some_and(|ip| ip.parse::<Ipv6Addr>().is_ok());
    families
        .iter()
        .filter_map(|family| {
            let v6 = *family == "IPv6";
            let annotated = annotation(svc, if v6 { AZURE_IPV6 } else { AZURE_IPV4 });
            annotated
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .or(lb_ip.filter(|_| lb_ip_is_v6 == v6))
                .filter(|s| !s.is_empty())
        })
        .collect()
}

/// The CRD the AWS Load Balancer Controller installs (`targetgroupbindings.elbv2.k8s.aws`),
/// by which a client can tell that the controller is there.
pub fn aws_lb_controller_crd() -> Value {
    let names = json!({"plural": "targetgroupbindings", "singular": "targetgroupbinding",
                       "kind": "TargetGroupBinding", "listKind": "TargetGroupBindingList"});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "targetgroupbindings.elbv2.k8s.aws"},
        "spec": {"group": "elbv2.k8s.aws", "names": names, "scope": "Namespaced",
                 "versions": [{"name": "v1beta1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]},
        "status": {"acceptedNames": names, "storedVersions": ["v1beta1"]}
    })
}

/// Whether only the AWS Load Balancer Controller serves the Service
/// (`aws-load-balancer-type: external`).
pub fn needs_aws_lb_controller(svc: &Value) -> bool {
    kind(svc) == Kind::AwsLoadBalancerController
}

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

/// Whether a controller serves the Service at all (the AWS Load Balancer Controller only
/// when installed).
pub fn served(svc: &Value, cloud: &CloudOptions) -> bool {
    !cloud.external_controller
        && (kind(svc) != Kind::AwsLoadBalancerController || cloud.aws_lb_controller)
}

/// The ingress entries the Service's controller reports once its load balancer exists.
pub fn ingress(svc: &Value, cloud: &CloudOptions) -> Vec<Value> {
    match kind(svc) {
        Kind::AwsLoadBalancerController => {
            vec![json!({"hostname": aws::hostname(svc, &cloud.aws_region)})]
        }
        Kind::AwsInTree => vec![json!({"hostname": elb_hostname(svc, &cloud.aws_region)})],
        Kind::GcpInternal | Kind::AzureInternal | Kind::Other => {
            let ips = requested_ips(svc);
            if ips.is_empty() {
                vec![json!({"hostname": elb_hostname(svc, &cloud.aws_region)})]
            } else {
                ips.iter()
                    .map(|ip| json!({"ip": ip, "ipMode": "VIP"}))
                    .collect()
            }
        }
    }
}

/// The in-tree provider's ELB name shape: `<name>-<hex>.elb.<region>.amazonaws.com`.
fn elb_hostname(svc: &Value, region: &str) -> String {
    let hex: String = meta::uid(svc)
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect();
    format!("{}-{hex}.elb.{region}.amazonaws.com", meta::name(svc))
}

/// What a Service holds.
#[derive(Clone, Debug)]
enum Held {
    Nlb(Box<aws::Nlb>),
    /// One frontend per family the Service asks for.
    Frontends(Vec<frontends::Frontend>),
}

/// What the Service with this uid holds (a Service re-created under the same name is another).
#[derive(Clone, Debug)]
struct Holding {
    uid: String,
    held: Held,
}

type Id = (String, String);

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

pub struct LoadBalancers {
    cloud: CloudOptions,
    ec2: Option<ec2::Ec2>,
    held: tokio::sync::Mutex<HashMap<Id, Holding>>,
    /// The addresses each Service's load balancer uses in [`CloudOptions::addresses`].
    used: std::sync::Mutex<HashMap<Id, Used>>,
    /// The nodes behind the GCP and Azure load balancers (see `backends`).
    nodes: std::sync::Mutex<backends::Nodes>,
    /// GCE and Azure: the service controller's one worker (see `gce_build`).
    sync_queue: tokio::sync::Mutex<()>,
}

/// What one Service's load balancer uses in the cloud's address book.
struct Used {
    /// The Service's uid.
    uid: String,
    /// The load balancer's name ([`lb_resource_name`]).
    lb: String,
    ips: Vec<IpAddr>,
}

fn report(
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
fn sync_failed(why: String) -> Outcome {
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

/// The AWS Load Balancer Controller's verdict on a deployed NLB: its Service reconciled, and,
/// when its targets cannot be registered (`why`), the TargetGroupBinding controller's
/// refusal. The sim keeps no TargetGroupBindings, so the Warning goes on the Service, with the
/// reason today's controller records on the TargetGroupBinding (`FailedNetworkReconcile`,
/// `pkg/targetgroupbinding/resource_manager.go`; v2.8 only logs the error and requeues).
fn registered(done: Report, why: Option<&str>) -> Outcome {
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
fn ensuring() -> Report {
    report(
        SERVICE_CONTROLLER,
        EventType::Normal,
        "EnsuringLoadBalancer",
        "Ensuring load balancer".into(),
    )
}

fn ensured() -> Report {
    report(
        SERVICE_CONTROLLER,
        EventType::Normal,
        "EnsuredLoadBalancer",
        "Ensured load balancer".into(),
    )
}

impl LoadBalancers {
    pub fn new(cloud: CloudOptions) -> Result<Self> {
        let ec2 = match &cloud.aws_ec2_endpoint {
            Some(endpoint) => Some(ec2::Ec2::new(endpoint, &cloud.aws_region)?),
            None => None,
        };
        Ok(Self {
            cloud,
            ec2,
            held: tokio::sync::Mutex::new(HashMap::new()),
            used: std::sync::Mutex::new(HashMap::new()),
            nodes: std::sync::Mutex::new(backends::Nodes::default()),
            sync_queue: tokio::sync::Mutex::new(()),
        })
    }

    pub fn cloud(&self) -> &CloudOptions {
        &self.cloud
    }

    /// True when the Service holds exactly what it asks for now (nothing to do).
    pub async fn is_provisioned(&self, svc: &Value) -> bool {
        let id = (
            meta::namespace(svc).to_string(),
            meta::name(svc).to_string(),
        );
        let held = self.held.lock().await;
        let current = held
            .get(&id)
            .filter(|h| h.uid == meta::uid(svc))
            .map(|h| &h.held);
        if held.contains_key(&id) && current.is_none() {
            return false;
        }
        match (kind(svc), current) {
            (Kind::AwsLoadBalancerController, Some(Held::Nlb(nlb))) => {
                nlb.unregistered.is_none()
                    && aws::build(svc).is_ok_and(|m| aws::as_kept(&nlb.model, m) == nlb.model)
            }
            (Kind::AwsLoadBalancerController, _) => false,
            (Kind::GcpInternal | Kind::AzureInternal, current) => match self.frontends(svc) {
                Ok(wanted) if wanted.is_empty() => current.is_none(),
                Ok(wanted) => matches!(current, Some(Held::Frontends(f)) if *f == wanted),
                Err(_) => false,
            },
            (Kind::AwsInTree | Kind::Other, current) => current.is_none(),
        }
    }

    /// The subnet of the Service's internal frontends (None: not an internal Service). With
    /// the GCP fake known its address reservation checks the range (see `internal`).
    fn subnet(&self, svc: &Value) -> Option<frontends::Subnet> {
        let region = self
            .cloud
            .gcp
            .as_ref()
            .map_or_else(|| crate::gcp::DEFAULT_REGION.to_string(), |g| g.region());
        let lb_id = crate::azure::load_balancer_id(true);
        match kind(svc) {
            Kind::GcpInternal => Some(frontends::Subnet {
                cloud: frontends::Cloud::Gcp,
                ipv4: self
                    .cloud
                    .gcp_compute_subnet
                    .filter(|_| self.cloud.gcp.is_none()),
                ipv6: None,
                region,
                lb_id,
            }),
            Kind::AzureInternal => Some(frontends::Subnet {
                cloud: frontends::Cloud::Azure,
                ipv4: self.cloud.azure_compute_subnet,
                ipv6: self.cloud.azure_compute_subnet_ipv6,
                region,
                lb_id,
            }),
            _ => None,
        }
    }

    fn frontends(&self, svc: &Value) -> Result<Vec<frontends::Frontend>, String> {
        match self.subnet(svc) {
            Some(subnet) => frontends::model(&subnet, svc, &requested_ips(svc)),
            None => Ok(Vec::new()),
        }
    }

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

    /// Of what the Service `ns/name` holds, the IPs that serve listener `port` (None: every
    /// listener) to its healthy `targets`, for a client at `source` when given: an NLB's
    /// addresses as its zones and its security group's source ranges allow (see
    /// `nlb_config`), every frontend IP (a regional internal load balancer forwards to a
    /// backend in any zone).
    pub async fn serving(
        &self,
        ns: &str,
        name: &str,
        targets: &[Ipv4Addr],
        port: Option<u16>,
        source: Option<Ipv4Addr>,
    ) -> Vec<IpAddr> {
        let held = self.held.lock().await;
        let Some(holding) = held.get(&(ns.to_string(), name.to_string())) else {
            return Vec::new();
        };
        match &holding.held {
            Held::Nlb(nlb) => {
                let ports: Vec<u16> = match port {
                    Some(p) => vec![p],
                    None => nlb.model.config.listeners.iter().map(|l| l.port).collect(),
                };
                nlb.model
                    .private_ips
                    .iter()
                    .chain(&nlb.public_ips)
                    .filter(|a| {
                        ports.iter().all(|p| {
                            nlb.serves(**a, *p, targets)
                                && source.is_none_or(|s| nlb.model.config.admits(*p, s))
                        })
                    })
                    .map(|a| IpAddr::V4(*a))
                    .collect()
            }
            Held::Frontends(f) if !targets.is_empty() => f.iter().map(|f| f.ip).collect(),
            Held::Frontends(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As cloud-provider-azure reads a Service: one address per family of `spec.ipFamilies`,
    /// from the family's annotation, else from `loadBalancerIP` when it is of the family.
    #[test]
    fn requested_addresses_follow_the_ip_families() {
        let svc = |annotations: Value, spec: Value| json!({"metadata": {"annotations": annotations}, "spec": spec});
        let both = json!({AZURE_IPV4: "10.0.1.5", AZURE_IPV6: "fd00::5"});
        let dual = json!({"ipFamilies": ["IPv4", "IPv6"]});
        assert_eq!(
            requested_ips(&svc(both.clone(), dual.clone())),
            ["10.0.1.5", "fd00::5"]
        );
        assert_eq!(
            requested_ips(&svc(both.clone(), json!({}))),
            ["10.0.1.5"],
            "single stack (the default): the IPv6 annotation is ignored"
        );
        assert_eq!(
            requested_ips(&svc(json!({}), json!({"loadBalancerIP": "10.0.1.6"}))),
            ["10.0.1.6"]
        );
        let mut with_lb_ip = dual.clone();
        with_lb_ip["loadBalancerIP"] = json!("fd00::6");
        assert_eq!(
            requested_ips(&svc(json!({AZURE_IPV4: "10.0.1.5"}), with_lb_ip)),
            ["10.0.1.5", "fd00::6"]
        );
        let ingress = ingress(&svc(both, dual), &CloudOptions::default());
        assert_eq!(
            ingress,
            [
                json!({"ip": "10.0.1.5", "ipMode": "VIP"}),
                json!({"ip": "fd00::5", "ipMode": "VIP"})
            ]
        );
    }

    #[test]
    fn services_are_told_apart_by_their_annotations() {
        let with = |a: Value| json!({"metadata": {"annotations": a}});
        assert_eq!(
            kind(&with(json!({aws::TYPE: "external"}))),
            Kind::AwsLoadBalancerController
        );
        assert_eq!(kind(&with(json!({aws::TYPE: "nlb"}))), Kind::AwsInTree);
        assert_eq!(
            kind(&with(json!({GKE_TYPE: "Internal"}))),
            Kind::GcpInternal
        );
        assert_eq!(
            kind(&with(json!({GCE_TYPE: "Internal"}))),
            Kind::GcpInternal
        );
        assert_eq!(
            kind(&with(json!({AZURE_INTERNAL: "true"}))),
            Kind::AzureInternal
        );
        assert_eq!(kind(&with(json!({AZURE_IPV4: "10.0.1.5"}))), Kind::Other);
    }
}
