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

use super::super::meta;
use super::Ipv4Cidr;
use super::ec2::{self, Ec2, Element};
use super::nlb_config::{self, Zones};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

pub const TYPE: &str = "service.beta.kubernetes.io/aws-load-balancer-type";
const SCHEME: &str = "service.beta.kubernetes.io/aws-load-balancer-scheme";
const SUBNETS: &str = "service.beta.kubernetes.io/aws-load-balancer-subnets";
const PRIVATE_IPS: &str = "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses";
const EIPS: &str = "service.beta.kubernetes.io/aws-load-balancer-eip-allocations";

/// FNV-1a of `seed`, as lowercase hex of `n` digits (stable names from the Service uid).
fn hex(seed: &str, n: usize) -> String {
    let mut out = String::new();
    let mut round = 0u8;
    while out.len() < n {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.bytes().chain([round]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
        round += 1;
    }
    out.truncate(n);
    out
}

/// `k8s-<ns>-<name>-<hash>`: the controller's name for a Service's NLB (namespace and name
/// stripped of non-alphanumerics and cut to 8 characters, a 10-character hash).
pub fn lb_name(svc: &Value) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect()
    };
    format!(
        "k8s-{}-{}-{}",
        clean(meta::namespace(svc)),
        clean(meta::name(svc)),
        hex(meta::uid(svc), 10)
    )
}

/// The 16 hex digits ELB appends to the NLB's DNS name and ARN.
fn lb_id(svc: &Value) -> String {
    hex(&format!("{}/id", meta::uid(svc)), 16)
}

/// The NLB's DNS name, the only thing the controller writes into the ingress.
pub fn hostname(svc: &Value, region: &str) -> String {
    format!("{}-{}.elb.{region}.amazonaws.com", lb_name(svc), lb_id(svc))
}

/// What the Service asks of its NLB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub lb_name: String,
    pub description: String,
    pub internal: bool,
    pub subnets: Vec<String>,
    pub private_ips: Vec<Ipv4Addr>,
    pub eips: Vec<String>,
    /// Attributes, listeners, health check and source ranges.
    pub config: nlb_config::Config,
}

fn list(svc: &Value, key: &str) -> Vec<String> {
    meta::get_str(svc, &["metadata", "annotations", key])
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Addresses the Service gives per subnet (`count` of `what`): none, or one per subnet when
/// the scheme is the one they are for (`allowed`, the `for_scheme` load balancers).
fn per_subnet(
    what: &str,
    count: usize,
    subnets: usize,
    allowed: bool,
    for_scheme: &str,
) -> Result<(), String> {
    if count == 0 {
        return Ok(());
    }
    if !allowed {
        return Err(format!(
            "{what} can only be set for {for_scheme} load balancers"
        ));
    }
    if count != subnets {
        return Err(format!(
            "count of {what} ({count}) and subnets ({subnets}) must match"
        ));
    }
    Ok(())
}

/// What the controller makes of `wanted` for an NLB built as `existing`: later reconciles
/// compare the subnets only, so with the same subnets the NLB keeps the private IPs and EIPs
/// it was created with, whatever the Service asks now
/// (../shared/research/aws-lb-controller-observed.md, 2). Other subnets: the Service's.
pub fn as_kept(existing: &Model, wanted: Model) -> Model {
    if existing.subnets != wanted.subnets {
        return wanted;
    }
    Model {
        private_ips: existing.private_ips.clone(),
        eips: existing.eips.clone(),
        ..wanted
    }
}

/// The model, or why it cannot be built (the text after "Failed build model due to").
pub fn build(svc: &Value) -> Result<Model, String> {
    let internal = match meta::get_str(svc, &["metadata", "annotations", SCHEME]) {
        None | Some("internal") => true,
        Some("internet-facing") => false,
        Some(other) => return Err(format!("unknown scheme {other:?}")),
    };
    let subnets = list(svc, SUBNETS);
    let private_ips = list(svc, PRIVATE_IPS)
        .iter()
        .map(|ip| {
            ip.parse::<Ipv4Addr>()
                .map_err(|_| format!("invalid private IPv4 address {ip:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let eips = list(svc, EIPS);
    let subnet_count = subnets.len();
    let (ip_count, eip_count) = (private_ips.len(), eips.len());
    per_subnet(
        "private IPv4 addresses",
        ip_count,
        subnet_count,
        internal,
        "internal",
    )?;
    per_subnet(
        "EIP allocations",
        eip_count,
        subnet_count,
        !internal,
        "internet facing",
    )?;
    let config = nlb_config::build(svc)?;
    let lb_name = lb_name(svc);
    Ok(Model {
        config,
        description: format!("ELB net/{lb_name}/{}", lb_id(svc)),
        lb_name,
        internal,
        subnets,
        private_ips,
        eips,
    })
}

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

/// The key the controller looks for on a target ENI's security groups.
fn cluster_key(cluster: &str) -> String {
    format!("kubernetes.io/cluster/{cluster}")
}

/// The controller's choice of the security group for its backend rule, per target ENI in
/// moto (found by its private IP, as the pod ENI resolver finds a host-network pod's): the
/// only one when the ENI has one, else the one carrying the key `kubernetes.io/cluster/<name>`
/// (any value). Zero or several tagged is its refusal, word for word
/// (kubernetes-sigs/aws-load-balancer-controller `pkg/targetgroupbinding/networking_manager.go`,
/// `resolveEndpointSGForENI`; the ids sorted, as a string set lists them). A target that no
/// ENI in moto holds is not judged (the world does not model that machine).
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
async fn zones(ec2: &Ec2, model: &Model, public_ips: &[Ipv4Addr]) -> Result<Zones, String> {
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
async fn check_in_ec2(ec2: &Ec2, model: &Model) -> Result<Vec<Ipv4Addr>, String> {
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

/// Which subnet each EIP of `aws-load-balancer-eip-allocations` goes to: the controller sorts
/// the subnets by ID (`pkg/networking/subnet_resolver.go`, `sortSubnetsByID`) and gives the
/// i-th allocation to the i-th sorted subnet (`pkg/service/model_build_load_balancer.go`),
/// whatever order the `aws-load-balancer-subnets` annotation lists them in.
pub fn eip_subnets(model: &Model) -> Vec<(&String, &String)> {
    let mut subnets: Vec<&String> = model.subnets.iter().collect();
    subnets.sort();
    model.eips.iter().zip(subnets).collect()
}

/// Creates the NLB's ENIs and associations, recording each in `nlb` as soon as it exists.
async fn claim_in_ec2(ec2: &Ec2, model: &Model, nlb: &mut Nlb) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc(annotations: Value) -> Value {
        json!({"metadata": {"name": "internal-lb", "namespace": "openshift-kube-apiserver",
                            "uid": "5f0c7c2e-0000-4000-8000-000000000001",
                            "annotations": annotations}})
    }

    #[test]
    fn names_follow_the_controller_and_elb() {
        let s = svc(json!({}));
        let name = lb_name(&s);
        assert!(name.starts_with("k8s-openshif-internal-"), "{name}");
        assert_eq!(name.len(), "k8s-openshif-internal-".len() + 10);
        let host = hostname(&s, "us-east-1");
        assert!(
            host.starts_with(&format!("{name}-")) && host.ends_with(".elb.us-east-1.amazonaws.com"),
            "{host}"
        );
        assert!(
            build(&s)
                .unwrap()
                .description
                .starts_with(&format!("ELB net/{name}/"))
        );
    }

    #[test]
    fn the_model_refuses_what_the_controller_refuses() {
        let both = |extra: Value| {
            let mut a = json!({SUBNETS: "subnet-a,subnet-b"});
            a.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            build(&svc(a)).unwrap_err()
        };
        assert!(
            both(json!({PRIVATE_IPS: "10.0.4.5"}))
                .contains("count of private IPv4 addresses (1) and subnets (2)")
        );
        assert!(both(json!({EIPS: "eipalloc-1,eipalloc-2"})).contains("internet facing"));
        assert!(
            both(json!({SCHEME: "internet-facing", PRIVATE_IPS: "10.0.4.5,10.0.5.5"}))
                .contains("internal load balancers")
        );
        assert!(
            both(json!({PRIVATE_IPS: "10.0.4.5,nope"})).contains("invalid private IPv4 address")
        );
        assert!(both(json!({SCHEME: "sideways"})).contains("unknown scheme"));
        let ok = build(&svc(json!({SUBNETS: "subnet-a", PRIVATE_IPS: "10.0.4.5"}))).unwrap();
        assert!(ok.internal, "internal is the default scheme");
    }

    /// The real controller's later reconciles compare subnets only: an existing NLB keeps its
    /// addresses whatever the Service asks now; other subnets are a change it makes.
    #[test]
    fn an_existing_nlb_keeps_its_addresses_and_follows_only_a_subnet_change() {
        let external = |subnets: &str, eips: &str| {
            build(&svc(
                json!({SCHEME: "internet-facing", SUBNETS: subnets, EIPS: eips}),
            ))
            .unwrap()
        };
        let built = external("subnet-a,subnet-b", "eipalloc-1,eipalloc-2");
        let asked = external("subnet-a,subnet-b", "eipalloc-1,eipalloc-9");
        assert_eq!(as_kept(&built, asked), built, "the EIP change is ignored");
        let internal = |ips: &str| {
            build(&svc(
                json!({SUBNETS: "subnet-a,subnet-b", PRIVATE_IPS: ips}),
            ))
            .unwrap()
        };
        let built = internal("10.0.4.5,10.0.5.5");
        assert_eq!(as_kept(&built, internal("10.0.4.6,10.0.5.5")), built);
        let moved = external("subnet-a,subnet-c", "eipalloc-1,eipalloc-3");
        assert_eq!(
            as_kept(
                &external("subnet-a,subnet-b", "eipalloc-1,eipalloc-2"),
                moved.clone()
            ),
            moved
        );
    }

    #[test]
    fn the_ith_eip_goes_to_the_ith_subnet_by_id_not_by_annotation_order() {
        let svc = json!({"metadata": {"name": "external-lb", "namespace": "ns", "uid": "u",
            "annotations": {
                SCHEME: "internet-facing",
                SUBNETS: "subnet-0c,subnet-0a,subnet-0b",
                EIPS: "eipalloc-c,eipalloc-a,eipalloc-b"}}});
        let model = build(&svc).unwrap();
        let pairs: Vec<(&str, &str)> = eip_subnets(&model)
            .into_iter()
            .map(|(e, s)| (e.as_str(), s.as_str()))
            .collect();
        // The controller's pairing: the first allocation listed to the lowest subnet id.
        assert_eq!(
            pairs,
            [
                ("eipalloc-c", "subnet-0a"),
                ("eipalloc-a", "subnet-0b"),
                ("eipalloc-b", "subnet-0c")
            ]
        );
    }
}
