//! What the simulated load-balancer controllers know of the cloud behind them
//! ([`CloudOptions`]), and the book through which they tell a cloud fake which load balancer
//! uses which of its addresses.

use super::super::meta;
use super::{Ipv4Cidr, Ipv6Cidr};
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

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
