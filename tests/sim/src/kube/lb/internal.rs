//! The checks of an internal GCP or Azure Service's frontends against the cloud, after the
//! frontends are modelled (`frontends::model`) and before they are held, in the order the
//! cloud providers run them. Errors are the cloud's words after "failed to ensure load
//! balancer: ".
//!
//! GCP (with the fake known; openshift/cloud-provider-gcp `ensureInternalLoadBalancer`):
//! 1. The address (`addressManager.HoldAddress`, see `gcp::lb_addresses`): an address of the
//!    region holding the IP is taken whoever made it; else the provider's own reservation
//!    `a<uid>` must be possible (the IP in the cloud config's subnetwork), and is released at
//!    the end of the sync.
//! 2. The forwarding rule (GCE): no port another Service's rule has on the IP
//!    (`frontends::check`); and an IP another resource uses (another Service's forwarding
//!    rule, a VM's interface) only through an address of purpose `SHARED_LOADBALANCER_VIP`
//!    (see `gce::shared_internal_ip`). Without an address the rule's address is the
//!    provider's `a<uid>` (`GCE_ENDPOINT`): so a second Service on the IP of a first whose
//!    address was lost is refused.
//!
//! Azure (kubernetes-sigs/cloud-provider-azure `reconcileLoadBalancer`, then
//! `reconcileSecurityGroup`):
//! 1. `checkLoadBalancerResourcesConflicts` (`frontends::check`).
//! 2. The load balancer's PUT (ARM): a frontend's private IP that a network interface holds
//!    is refused, `PrivateIPAddressIsAllocated` (the fake's NIC PUT refuses the same).
//! 3. The network security group the cloud config names must exist (see `azure`); an
//!    internal Service without source ranges adds no rule to it (`IsAllowFromInternet` in
//!    `pkg/provider/loadbalancer/accesscontrol.go`: the vnet's `AllowVnetInBound` admits it).

use super::frontends::{self, Frontend, Subnet};
use super::{CloudOptions, Kind, gce};
use serde_json::Value;
use std::net::IpAddr;

/// Ok when the cloud lets the Service (`holder` = `ns/name`, load balancer `lb`) have the
/// frontends `wanted`, `others` being the frontends the other Services hold.
pub fn check(
    cloud: &CloudOptions,
    subnet: &Subnet,
    kind: Kind,
    svc: &Value,
    wanted: &[Frontend],
    others: &[&Frontend],
) -> Result<(), String> {
    let lb = super::lb_resource_name(svc);
    let holder = format!("{}/{}", super::meta::namespace(svc), super::meta::name(svc));
    for frontend in wanted {
        let ip = frontend.ip;
        let used_by_a_rule = others
            .iter()
            .any(|o| o.cloud == frontend.cloud && o.ip == ip);
        match (kind, &cloud.gcp, &cloud.azure) {
            (Kind::GcpInternal, Some(gcp), _) => {
                let address = gcp.hold_internal_address(&lb, &holder, &ip.to_string())?;
                frontends::check(subnet, frontend, others)?;
                let used_by_a_vm = matches!(ip, IpAddr::V4(v4) if gcp.vm_holds(v4));
                if used_by_a_rule || used_by_a_vm {
                    gce::shared_internal_ip(address.as_ref(), &ip.to_string())?;
                }
            }
            (Kind::AzureInternal, _, azure) => {
                frontends::check(subnet, frontend, others)?;
                if let (Some(azure), IpAddr::V4(v4)) = (azure, ip)
                    && let Some(holder) = azure.private_ip_holder(v4)
                {
                    return Err(format!(
                        "PrivateIPAddressIsAllocated: IP configuration {}/frontendIPConfigurations/{lb}{} is using the private IP address {ip} which is already allocated to resource {holder}.",
                        subnet.lb_id, frontend.family_suffix
                    ));
                }
            }
            _ => frontends::check(subnet, frontend, others)?,
        }
    }
    if let (Kind::AzureInternal, Some(azure)) = (kind, &cloud.azure) {
        azure.security_group()?;
    }
    Ok(())
}
