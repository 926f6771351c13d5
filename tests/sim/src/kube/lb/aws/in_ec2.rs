//! The NLB in EC2 (moto), as ELB and the controller act there: the checks of its addresses,
//! the ENIs and EIP associations it claims and releases, the zones it learns, and the
//! security groups of its targets' ENIs.

use super::super::Ipv4Cidr;
use super::super::ec2::{self, Ec2, Element};
use super::super::nlb_config::Zones;
use super::Nlb;
use super::model::{Model, eip_subnets};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// The key the controller looks for on a target ENI's security groups.
fn cluster_key(cluster: &str) -> String {
    format!("kubernetes.io/cluster/{cluster}")
}

/// The network interface holding `ip` in EC2 (moto), if any.
async fn eni_holding(ec2: &Ec2, ip: Ipv4Addr) -> Result<Option<Element>, String> {
    let root = ec2
        .call(
            "DescribeNetworkInterfaces",
            &ec2::filter("addresses.private-ip-address", &ip.to_string()),
        )
        .await
        .map_err(text)?;
    Ok(root
        .items("networkInterfaceSet")
        .first()
        .map(|e| (*e).clone()))
}

/// The controller's choice of the security group for its backend rule, per target ENI in
/// moto (found by its private IP, as the pod ENI resolver finds a host-network pod's): the
/// only one when the ENI has one, else the one carrying the key `kubernetes.io/cluster/<name>`
/// (any value). Zero or several tagged is its refusal, word for word
/// (kubernetes-sigs/aws-load-balancer-controller `pkg/targetgroupbinding/networking_manager.go`,
/// `resolveEndpointSGForENI`; the ids sorted, as a string set lists them). A target that no
/// ENI in moto holds is not judged (the world does not model that machine).
pub async fn backend_security_groups(
    ec2: &Ec2,
    cluster: &str,
    targets: &[Ipv4Addr],
) -> Result<(), String> {
    let key = cluster_key(cluster);
    for ip in targets {
        let Some(eni) = eni_holding(ec2, *ip).await? else {
            continue;
        };
        let groups: Vec<&str> = eni
            .items("groupSet")
            .iter()
            .filter_map(|g| g.text_of("groupId"))
            .collect();
        if groups.len() == 1 {
            continue;
        }
        let root = ec2
            .call(
                "DescribeSecurityGroups",
                &ec2::list_params("GroupId", &groups),
            )
            .await
            .map_err(text)?;
        let mut tagged: Vec<&str> = root
            .items("securityGroupInfo")
            .iter()
            .filter(|g| {
                g.items("tagSet")
                    .iter()
                    .any(|t| t.text_of("key") == Some(&key))
            })
            .filter_map(|g| g.text_of("groupId"))
            .collect();
        tagged.sort_unstable();
        if tagged.len() != 1 {
            return Err(format!(
                "expected exactly one securityGroup tagged with {key} for eni {}, got: [{}] (clusterName: {cluster})",
                eni.text_of("networkInterfaceId").unwrap_or("?"),
                tagged.join(" ")
            ));
        }
    }
    Ok(())
}

fn text(e: anyhow::Error) -> String {
    match e.downcast_ref::<ec2::ApiError>() {
        Some(api) => api.to_string(),
        None => format!("{e:#}"),
    }
}

/// Subnet id -> CIDR, for the model's subnets.
async fn subnet_cidrs(ec2: &Ec2, model: &Model) -> Result<BTreeMap<String, Ipv4Cidr>, String> {
    let ids: Vec<&str> = model.subnets.iter().map(String::as_str).collect();
    let root = ec2
        .call("DescribeSubnets", &ec2::list_params("SubnetId", &ids))
        .await
        .map_err(text)?;
    Ok(root
        .items("subnetSet")
        .iter()
        .filter_map(|s| {
            let id = s.text_of("subnetId")?;
            Some((id.to_string(), s.text_of("cidrBlock")?.parse().ok()?))
        })
        .collect())
}

/// The zone of each of the NLB's addresses (a private IP or EIP is in the zone of the subnet it
/// is mapped to), and every subnet of the VPC with its zone.
pub(super) async fn zones(
    ec2: &Ec2,
    model: &Model,
    public_ips: &[Ipv4Addr],
) -> Result<Zones, String> {
    let ids: Vec<&str> = model.subnets.iter().map(String::as_str).collect();
    let root = ec2
        .call("DescribeSubnets", &ec2::list_params("SubnetId", &ids))
        .await
        .map_err(text)?;
    let own: BTreeMap<String, (String, String)> = root
        .items("subnetSet")
        .iter()
        .filter_map(|s| {
            Some((
                s.text_of("subnetId")?.to_string(),
                (
                    s.text_of("availabilityZone")?.to_string(),
                    s.text_of("vpcId")?.to_string(),
                ),
            ))
        })
        .collect();
    let mut zones = Zones::default();
    let mapped = model
        .private_ips
        .iter()
        .zip(&model.subnets)
        .chain(public_ips.iter().zip(&model.subnets));
    for (ip, subnet) in mapped {
        if let Some((zone, _)) = own.get(subnet) {
            zones.addresses.insert(*ip, zone.clone());
        }
    }
    let Some((_, vpc)) = own.values().next() else {
        return Ok(zones);
    };
    let root = ec2
        .call("DescribeSubnets", &ec2::filter("vpc-id", vpc))
        .await
        .map_err(text)?;
    zones.subnets = root
        .items("subnetSet")
        .iter()
        .filter_map(|s| {
            Some((
                s.text_of("cidrBlock")?.parse().ok()?,
                s.text_of("availabilityZone")?.to_string(),
            ))
        })
        .collect();
    Ok(zones)
}

/// The cloud's objections: a private IP outside its subnet or held by an ENI; an EIP that is
/// missing or associated. Without one, the EIPs' public IPs.
pub(super) async fn check_in_ec2(ec2: &Ec2, model: &Model) -> Result<Vec<Ipv4Addr>, String> {
    if !model.private_ips.is_empty() {
        let cidrs = subnet_cidrs(ec2, model).await?;
        for (ip, subnet) in model.private_ips.iter().zip(&model.subnets) {
            let Some(&cidr) = cidrs.get(subnet) else {
                return Err(format!("InvalidSubnet: subnet {subnet} not found"));
            };
            if !cidr.contains(*ip) {
                return Err(format!(
                    "InvalidConfigurationRequest: private IPv4 address {ip} is not in the CIDR {cidr} of subnet {subnet}"
                ));
            }
            if let Some(eni) = eni_holding(ec2, *ip).await? {
                return Err(format!(
                    "InvalidConfigurationRequest: private IPv4 address {ip} in subnet {subnet} is in use by network interface {} ({})",
                    eni.text_of("networkInterfaceId").unwrap_or("?"),
                    eni.text_of("description").unwrap_or("no description")
                ));
            }
        }
    }
    let mut public_ips = Vec::new();
    for eip in &model.eips {
        let root = ec2
            .call(
                "DescribeAddresses",
                &ec2::list_params("AllocationId", &[eip.as_str()]),
            )
            .await
            .map_err(text)?;
        let Some(address) = root.items("addressesSet").first().copied() else {
            return Err(format!(
                "InvalidAllocationID.NotFound: the allocation ID '{eip}' does not exist"
            ));
        };
        if let Some(holder) = associated_with(address) {
            return Err(format!(
                "InvalidConfigurationRequest: EIP allocation {eip} ({}) is already associated with {holder}",
                address.text_of("publicIp").unwrap_or("?")
            ));
        }
        if let Some(ip) = address.text_of("publicIp").and_then(|ip| ip.parse().ok()) {
            public_ips.push(ip);
        }
    }
    Ok(public_ips)
}

fn associated_with(address: &Element) -> Option<String> {
    address.text_of("associationId")?;
    Some(
        address
            .text_of("networkInterfaceId")
            .or_else(|| address.text_of("instanceId"))
            .unwrap_or("another resource")
            .to_string(),
    )
}
/// Creates the NLB's ENIs and associations, recording each in `nlb` as soon as it exists.
pub(super) async fn claim_in_ec2(ec2: &Ec2, model: &Model, nlb: &mut Nlb) -> Result<(), String> {
    for (ip, subnet) in model.private_ips.iter().zip(&model.subnets) {
        let eni = create_eni(ec2, subnet, Some(*ip), &model.description).await?;
        nlb.enis.push(eni);
    }
    for (eip, subnet) in eip_subnets(model) {
        let eni = create_eni(ec2, subnet, None, &model.description).await?;
        nlb.enis.push(eni.clone());
        let root = ec2
            .call(
                "AssociateAddress",
                &[
                    ("AllocationId".to_string(), eip.clone()),
                    ("NetworkInterfaceId".to_string(), eni),
                ],
            )
            .await
            .map_err(text)?;
        let association = root
            .text_of("associationId")
            .ok_or("EC2 AssociateAddress answered without an associationId")?;
        nlb.associations.push(association.to_string());
    }
    Ok(())
}

async fn create_eni(
    ec2: &Ec2,
    subnet: &str,
    ip: Option<Ipv4Addr>,
    description: &str,
) -> Result<String, String> {
    let mut params = vec![
        ("SubnetId".to_string(), subnet.to_string()),
        ("Description".to_string(), description.to_string()),
    ];
    if let Some(ip) = ip {
        params.push(("PrivateIpAddress".to_string(), ip.to_string()));
    }
    let root = ec2
        .call("CreateNetworkInterface", &params)
        .await
        .map_err(text)?;
    root.child("networkInterface")
        .and_then(|e| e.text_of("networkInterfaceId"))
        .map(str::to_string)
        .ok_or_else(|| "EC2 CreateNetworkInterface answered without an id".to_string())
}

/// Gives back what the NLB took in EC2 (associations first: an ENI with an EIP cannot go).
/// Errors are ignored: what is already gone is fine, and a release has no one to report to.
pub async fn release(ec2: Option<&Ec2>, nlb: &Nlb) {
    let Some(ec2) = ec2 else {
        return;
    };
    let disassociations = nlb
        .associations
        .iter()
        .map(|id| ("DisassociateAddress", "AssociationId", id));
    let deletions = nlb
        .enis
        .iter()
        .map(|id| ("DeleteNetworkInterface", "NetworkInterfaceId", id));
    for (action, param, id) in disassociations.chain(deletions) {
        let _ = ec2.call(action, &[(param.to_string(), id.clone())]).await;
    }
}
