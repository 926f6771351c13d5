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
//!
//! The layout: `cloud_options` (what the controllers know of the cloud), `service_kind`
//! (which controller serves a Service, what it asks for, the ingress it reports),
//! `finalizers`, `outcome` (a reconcile's verdict and its events), `reconcile` (claiming and
//! refusing); this file holds the controllers' state and what they serve.

mod aws;
mod azure;
mod backends;
mod cidr;
mod cloud_options;
pub(crate) mod ec2;
mod finalizers;
mod frontends;
mod gce;
mod gce_build;
mod internal;
mod nlb_config;
mod node_sync;
mod outcome;
mod reconcile;
mod release;
mod service_kind;

pub use cidr::{Ipv4Cidr, Ipv6Cidr};
pub use cloud_options::{AddressBook, AddressUsers, CloudOptions, lb_resource_name};
pub use finalizers::{
    FINALIZERS, ILB_FINALIZER, NETLB_FINALIZER, finalizer, finalizer_goes_first, provider_finalizer,
};
pub use frontends::gcp_no_address;
pub use outcome::Outcome;
pub use service_kind::{aws_lb_controller_crd, ingress, needs_aws_lb_controller, served};

use super::meta;
use super::store::Store;
use anyhow::Result;
use serde_json::Value;
use service_kind::{Kind, kind, requested_ips};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
