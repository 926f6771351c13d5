//! The simulated load-balancer controllers: which controller serves a Service (from its
//! annotations), whether the cloud lets it have the addresses it asks for, and the ingress
//! it then reports. A refusal is an Event on the Service, as the real controller records it,
//! and no ingress.
//!
//! | Service | controller | ingress | refused when |
//! | --- | --- | --- | --- |
//! | `aws-load-balancer-type: external` | AWS Load Balancer Controller (`service`) | NLB hostname only | see `aws`: `FailedBuildModel`, `FailedDeployModel` |
//! | other `aws-load-balancer-*` | in-tree AWS provider (`service-controller`) | ELB hostname | never |
//! | GCP / Azure internal | service controller + cloud provider | the IP per family | see `frontends`: `SyncLoadBalancerFailed` |
//! | anything else | service controller | the requested IP per family, else a hostname | never |
//!
//! "Per family": cloud-provider-azure makes one frontend per family in `spec.ipFamilies` and
//! takes each family's address from its annotation (`azure-load-balancer-ipv4` / `-ipv6`), else
//! from `spec.loadBalancerIP` when that is of the family (`getIPFamiliesEnabled`,
//! `getServiceLoadBalancerIP` in its `pkg/provider/azure_utils.go`). So a dual-stack Service
//! gets two ingress IPs, and an IPv6 annotation on a single-stack Service is ignored.
//!
//! Every claim goes through one async mutex, so two Services never race for an address, and
//! each Service's claims are remembered so that a change or a deletion gives them back.

mod aws;
mod cidr;
pub(crate) mod ec2;
mod frontends;

pub use cidr::{Ipv4Cidr, Ipv6Cidr};

use super::events::{EventType, Report};
use super::meta;
use super::resources::SERVICES;
use super::store::{Key, Store};
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};

const AZURE_IPV4: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
const AZURE_IPV6: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv6";
const AZURE_INTERNAL: &str = "service.beta.kubernetes.io/azure-load-balancer-internal";
const GKE_TYPE: &str = "networking.gke.io/load-balancer-type";
const GCE_TYPE: &str = "cloud.google.com/load-balancer-type";
const AWS_PREFIX: &str = "service.beta.kubernetes.io/aws-load-balancer-";

/// The AWS Load Balancer Controller's event recorder name and reasons.
const LBC: &str = "service";
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

/// Whether a controller serves the Service at all (the AWS Load Balancer Controller only
/// when installed).
pub fn served(svc: &Value, cloud: &CloudOptions) -> bool {
    kind(svc) != Kind::AwsLoadBalancerController || cloud.aws_lb_controller
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
    Nlb(aws::Nlb),
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
    /// The Service is gone, or not of type LoadBalancer.
    Gone,
}

pub struct LoadBalancers {
    cloud: CloudOptions,
    ec2: Option<ec2::Ec2>,
    held: tokio::sync::Mutex<HashMap<Id, Holding>>,
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
                aws::build(svc).is_ok_and(|m| m == nlb.model)
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

    fn frontends(&self, svc: &Value) -> Result<Vec<frontends::Frontend>, String> {
        let subnet = match kind(svc) {
            Kind::GcpInternal => frontends::Subnet {
                cloud: frontends::Cloud::Gcp,
                ipv4: self.cloud.gcp_compute_subnet,
                ipv6: None,
            },
            Kind::AzureInternal => frontends::Subnet {
                cloud: frontends::Cloud::Azure,
                ipv4: self.cloud.azure_compute_subnet,
                ipv6: self.cloud.azure_compute_subnet_ipv6,
            },
            _ => return Ok(Vec::new()),
        };
        frontends::model(&subnet, svc, &requested_ips(svc))
    }

    /// Reconciles the load balancer of the Service `ns/name` as it is stored now: gives back
    /// what it held if that changed, then claims what it asks for, or refuses.
    pub async fn reconcile(&self, store: &Store, ns: &str, name: &str) -> Outcome {
        let id = (ns.to_string(), name.to_string());
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
                    Ok(m) => m,
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
                if matches!(held.get(&id), Some(Holding { held: Held::Nlb(n), .. }) if n.model == model)
                {
                    return Outcome::Provisioned(vec![done]);
                }
                if let Some(old) = held.remove(&id) {
                    self.give_back(&old.held).await;
                }
                let others: Vec<&aws::Nlb> = held
                    .values()
                    .filter_map(|h| match &h.held {
                        Held::Nlb(n) => Some(n),
                        Held::Frontends(_) => None,
                    })
                    .collect();
                match aws::deploy(self.ec2.as_ref(), &model, &holder, &others).await {
                    Ok(nlb) => {
                        held.insert(
                            id,
                            Holding {
                                uid,
                                held: Held::Nlb(nlb),
                            },
                        );
                        Outcome::Provisioned(vec![done])
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
                    for frontend in &wanted {
                        if let Err(why) = frontends::check(frontend, &others) {
                            return refused(why);
                        }
                    }
                    held.insert(
                        id,
                        Holding {
                            uid,
                            held: Held::Frontends(wanted),
                        },
                    );
                }
                Outcome::Provisioned(vec![ensuring, ensured()])
            }
            Kind::AwsInTree | Kind::Other => {
                if let Some(old) = held.remove(&id) {
                    self.give_back(&old.held).await;
                }
                Outcome::Provisioned(vec![ensuring(), ensured()])
            }
        }
    }

    /// The IPs each Service's load balancer holds now (`namespace`, `name`, IPs): an NLB's
    /// private IPs and its EIPs' public IPs, a frontend's IP.
    pub async fn held_ips(&self) -> Vec<(String, String, Vec<IpAddr>)> {
        self.held
            .lock()
            .await
            .iter()
            .map(|((ns, name), h)| {
                let ips = match &h.held {
                    Held::Nlb(nlb) => nlb
                        .model
                        .private_ips
                        .iter()
                        .chain(&nlb.public_ips)
                        .map(|ip| IpAddr::V4(*ip))
                        .collect(),
                    Held::Frontends(f) => f.iter().map(|f| f.ip).collect(),
                };
                (ns.clone(), name.clone(), ips)
            })
            .collect()
    }

    /// Gives back everything the Service `ns/name` with `uid` held (it was deleted or is no
    /// longer a LoadBalancer). A Service re-created under that name keeps what it holds.
    pub async fn release(&self, ns: &str, name: &str, uid: &str) {
        let id = (ns.to_string(), name.to_string());
        let mut held = self.held.lock().await;
        if held.get(&id).is_some_and(|h| h.uid == uid)
            && let Some(gone) = held.remove(&id)
        {
            self.give_back(&gone.held).await;
        }
    }

    async fn give_back(&self, held: &Held) {
        if let Held::Nlb(nlb) = held {
            aws::release(self.ec2.as_ref(), nlb).await;
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
