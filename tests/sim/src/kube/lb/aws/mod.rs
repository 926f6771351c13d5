//! The AWS Load Balancer Controller's part for Services with
//! `service.beta.kubernetes.io/aws-load-balancer-type: external`: one NLB per Service.
//!
//! Model (errors are `FailedBuildModel`): the scheme (default `internal`), the subnets of
//! `aws-load-balancer-subnets`, the private IPs of `aws-load-balancer-private-ipv4-addresses`
//! (internal only, one per subnet) and the EIP allocations of
//! `aws-load-balancer-eip-allocations` (internet-facing only, one per subnet).
//!
//! Deploy (errors are `FailedDeployModel`): a private IP must be free. It is refused when
//! another Service's NLB holds it, and, with moto, when any ENI holds it
//! (`DescribeNetworkInterfaces` filtered by `addresses.private-ip-address`) or when it is not
//! in its subnet's CIDR. An EIP allocation is refused when another NLB holds it or, in moto, it
//! is missing or already associated. Then the NLB takes its addresses in moto the way ELB
//! does: per private IP an ENI in its subnet with that `PrivateIpAddress`, per EIP an ENI in
//! the matching public subnet with the allocation associated to it; every ENI's Description
//! is `ELB net/<lb-name>/<lb-id>`. Release deletes them (disassociating first).
//!
//! Targets (with moto and the cluster name known): each target's ENI must have a single
//! security group or exactly one tagged `kubernetes.io/cluster/<name>`, else the NLB exists
//! but registers no target (see [`backend_security_groups`]).
//!
//! The NLB's other settings (attributes, target groups, health check, source ranges) are
//! built and checked as `nlb_config` says. Where it serves: with moto, the NLB learns the
//! zone of each of its addresses and of every subnet of its VPC, and an address serves a
//! listener only when a healthy target is in its zone or cross-zone load balancing is on
//! (`nlb_config::Zones::serves`).
//!
//! The model built from the annotations is in `model`, what the NLB checks, claims and
//! releases in EC2 (and its targets' security groups) in `in_ec2`; this file holds the
//! deployed NLB and the deploy.

mod in_ec2;
mod model;

pub use in_ec2::{backend_security_groups, release};
pub use model::{Model, as_kept, build, hostname};

use super::ec2::Ec2;
use super::nlb_config::{self, Zones};
use in_ec2::{check_in_ec2, claim_in_ec2, zones};
use std::net::Ipv4Addr;

pub const TYPE: &str = "service.beta.kubernetes.io/aws-load-balancer-type";

/// A deployed NLB: its model, whose it is, and what it created in EC2.
#[derive(Clone, Debug)]
pub struct Nlb {
    pub model: Model,
    /// `namespace/name` of the Service.
    pub holder: String,
    enis: Vec<String>,
    associations: Vec<String>,
    /// The public IPs of the associated EIPs (what clients of a public NLB connect to).
    pub public_ips: Vec<Ipv4Addr>,
    /// The zones of its addresses and of its VPC's subnets (empty without moto).
    pub zones: Zones,
    /// Why its targets are not registered (see [`backend_security_groups`]): it forwards
    /// nowhere until that is healed.
    pub unregistered: Option<String>,
}

impl Nlb {
    /// Whether `address` (a private IP or an EIP's public IP of this NLB) forwards listener
    /// `port` to one of the healthy `targets`.
    pub fn serves(&self, address: Ipv4Addr, port: u16, targets: &[Ipv4Addr]) -> bool {
        self.unregistered.is_none()
            && self
                .zones
                .serves(&self.model.config, address, port, targets)
    }
}

fn in_use_by_another(
    others: &[&Nlb],
    what: &str,
    taken: impl Fn(&Model) -> bool,
) -> Option<String> {
    others.iter().find(|o| taken(&o.model)).map(|o| {
        format!(
            "InvalidConfigurationRequest: {what} is already in use by load balancer {} (Service {})",
            o.model.lb_name, o.holder
        )
    })
}

/// Deploys `model`, or says why not (the text after "Failed deploy model due to"). `others`
/// are the NLBs of the other Services.
pub async fn deploy(
    ec2: Option<&Ec2>,
    model: &Model,
    holder: &str,
    others: &[&Nlb],
) -> Result<Nlb, String> {
    for ip in &model.private_ips {
        if let Some(why) = in_use_by_another(others, &format!("private IPv4 address {ip}"), |m| {
            m.private_ips.contains(ip)
        }) {
            return Err(why);
        }
    }
    for eip in &model.eips {
        if let Some(why) = in_use_by_another(others, &format!("EIP allocation {eip}"), |m| {
            m.eips.contains(eip)
        }) {
            return Err(why);
        }
    }
    nlb_config::check_in_cloud(&model.config)?;
    let mut nlb = Nlb {
        model: model.clone(),
        holder: holder.to_string(),
        enis: Vec::new(),
        associations: Vec::new(),
        public_ips: Vec::new(),
        zones: Zones::default(),
        unregistered: None,
    };
    let Some(ec2) = ec2 else {
        return Ok(nlb);
    };
    nlb.public_ips = check_in_ec2(ec2, model).await?;
    nlb.zones = zones(ec2, model, &nlb.public_ips).await?;
    if let Err(why) = claim_in_ec2(ec2, model, &mut nlb).await {
        release(Some(ec2), &nlb).await;
        return Err(why);
    }
    Ok(nlb)
}
