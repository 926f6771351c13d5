//! How cloud-provider-azure builds a public Service's load balancer against the Azure fake
//! ([`AzureLbView`]), each step from kubernetes-sigs/cloud-provider-azure
//! `pkg/provider/azure_loadbalancer.go` unless said:
//!
//! 1. The public IP. Per family the address comes from `azure-load-balancer-ipv4` / `-ipv6`
//!    (else `spec.loadBalancerIP`, see `requested_ips`); the provider lists the public IPs of
//!    one resource group only: `service.beta.kubernetes.io/azure-load-balancer-resource-group`
//!    when annotated, else the cloud config's `resourceGroup` (the cluster's), and refuses an
//!    address it does not find there: "findMatchedPIPByLoadBalancerIP: cannot find public IP
//!    with IP address <ip> in resource group <rg>" (`getPublicIPAddressResourceGroup`,
//!    `findMatchedPIPByLoadBalancerIP`).
//! 2. Its SKU (`ensurePublicIPExists`): a Standard load balancer takes Standard public IPs
//!    only, so the provider PUTs a Basic one back as Standard; ARM upgrades a Static one
//!    nothing else uses and refuses the rest (see `AzureLbView::upgrade_to_standard`).
//! 3. The network security group (`reconcileSecurityGroup`): the cloud config's
//!    `securityGroupName` must exist, else the provider's "nsg \"<name>\" not found"
//!    (`securityGroupRepo.GetSecurityGroup`); then a rule allows the `Internet` service tag to
//!    the public IP on the Service's TCP ports (`AccessControl.PatchSecurityGroup`,
//!    `pkg/provider/loadbalancer/accesscontrol.go`: no source ranges, not internal). Its name
//!    is `k8s-azure-lb_allow_<family>_` and the MD5 of `Tcp_Internet_<ports>`
//!    (`GenerateAllowSecurityRuleName`, `pkg/provider/securitygroup/securityrule.go`).
//!    Deleting the Service takes the public IP out
//!    of the rule, and a rule with no destination left goes.

use super::super::meta;
use super::requested_ips;
use crate::azure::AzureLbView;
use serde_json::Value;

/// The annotation naming the resource group of the Service's public IPs.
pub const RESOURCE_GROUP: &str = "service.beta.kubernetes.io/azure-load-balancer-resource-group";

/// Steps 1 to 3 for a public Service: Ok once its public IPs are found (and Standard), its
/// frontends and rules are on the cluster's load balancer (see `azure::provider_lb`), and the
/// security group allows them.
pub fn ensure_public(view: &AzureLbView, svc: &Value) -> Result<(), String> {
    let rg = meta::get_str(svc, &["metadata", "annotations", RESOURCE_GROUP])
        .map(str::trim)
        .filter(|rg| !rg.is_empty())
        .map_or_else(|| view.cluster_resource_group(), str::to_string);
    let frontend = format!(
        "{}/frontendIPConfigurations/{}",
        crate::azure::load_balancer_id(false),
        super::lb_resource_name(svc)
    );
    let ips = requested_ips(svc);
    for ip in &ips {
        let Some(pip) = view.public_ip(&rg, ip) else {
            return Err(format!(
                "findMatchedPIPByLoadBalancerIP: cannot find public IP with IP address {ip} in resource group {rg}"
            ));
        };
        if !pip.sku.eq_ignore_ascii_case("Standard") {
            view.upgrade_to_standard(&pip.id, &frontend)?;
        }
    }
    view.security_group()?;
    let ports: Vec<i64> = meta::get(svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p["protocol"].as_str().unwrap_or("TCP") == "TCP")
        .filter_map(|p| p["port"].as_i64())
        .collect();
    let dual_stack =
        ips.iter().any(|ip| ip.contains(':')) && ips.iter().any(|ip| !ip.contains(':'));
    for ip in &ips {
        let Some(pip) = view.public_ip(&rg, ip) else {
            continue;
        };
        let family = if ip.contains(':') && dual_stack {
            "-IPv6"
        } else {
            ""
        };
        let address = crate::azure::FrontendAddress::Public(pip.id);
        let service = super::lb_resource_name(svc);
        let ports: Vec<u16> = ports
            .iter()
            .filter_map(|p| u16::try_from(*p).ok())
            .collect();
        view.ensure_service_lb(false, &service, family, &address, &ports)?;
    }
    for v6 in [false, true] {
        let family: Vec<String> = ips
            .iter()
            .filter(|ip| ip.contains(':') == v6)
            .map(|ip| ip.to_string())
            .collect();
        if family.is_empty() || ports.is_empty() {
            continue;
        }
        view.allow_inbound(&rule_name(v6, &ports), "Internet", &family, &ports);
    }
    Ok(())
}

/// The security rule's name: `k8s-azure-lb_allow_<family>_` and the MD5 of
/// `Tcp_Internet_<ports>` (`GenerateAllowSecurityRuleName`, openshift/cloud-provider-azure
/// d04449b95a54 `pkg/provider/securitygroup/securityrule.go:45-71`: the protocol, the sorted
/// sources and the sorted ports as text, joined by `_`).
fn rule_name(v6: bool, ports: &[i64]) -> String {
    let mut ports: Vec<String> = ports.iter().map(ToString::to_string).collect();
    ports.sort();
    let family = if v6 { "IPv6" } else { "IPv4" };
    let id = format!("Tcp_Internet_{}", ports.join(","));
    format!(
        "k8s-azure-lb_allow_{family}_{}",
        crate::azure::md5_hex(id.as_bytes())
    )
}

/// An internal Service's IPv4 frontend (one per Service; a second Service on its IP shares
/// it) and rules on `<cluster>-internal` (see `azure::provider_lb`). cloud-provider-azure makes
/// an IPv6 frontend too for a dual-stack Service; the sim builds the IPv4 one only.
pub fn ensure_internal(
    view: &AzureLbView,
    svc: &Value,
    wanted: &[super::frontends::Frontend],
) -> Result<(), String> {
    for frontend in wanted {
        let std::net::IpAddr::V4(ip) = frontend.ip else {
            continue;
        };
        let ports: Vec<u16> = frontend
            .rules
            .iter()
            .filter_map(|r| u16::try_from(r.port).ok())
            .collect();
        let address = crate::azure::FrontendAddress::Private(ip);
        view.ensure_service_lb(true, &super::lb_resource_name(svc), "", &address, &ports)?;
    }
    Ok(())
}
