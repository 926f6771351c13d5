//! What a template sees: the cluster's names and, per scope and family, the reserved address.

use crate::assets::{ClusterSpec, Platform};
use bootstrap_cloud::{IpFamily, Reservation, Scope};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
struct Address {
    subnet: String,
    id: String,
    ip: String,
    family: IpFamily,
}

#[derive(Debug, Default, Serialize)]
struct ByFamily {
    ipv4: Option<String>,
    ipv6: Option<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct TemplateContext {
    infra_id: String,
    cluster_domain: String,
    publish_external: bool,
    dual_stack: bool,
    /// The install-config's IPv4 machine networks (`networking.machineNetwork`), as CIDRs with
    /// the host bits cleared; the installer's default 10.0.0.0/16 when it lists none. IPv4 only:
    /// they restrict IPv4 load balancers (an EC2 security group rule, a GCE firewall rule take
    /// one family). The source ranges of the AWS internal NLB and of the GCP machine-config
    /// server (templates/services/{aws/internal-lb,gcp/internal-lb-machine-config-server}.yaml).
    machine_networks_ipv4: Vec<String>,
    labels: BTreeMap<String, String>,
    /// Reserved public addresses, sorted by subnet (AWS: one per public subnet).
    public: Vec<Address>,
    private: Vec<Address>,
    /// The first public/private address per family (Azure, GCP: there is one).
    public_ip: ByFamily,
    private_ip: ByFamily,
    /// Azure: the resource group of the public IPs when it is not the cluster's (an adopted
    /// public IP of another group). cloud-provider-azure looks for a Service's public IP in
    /// the cluster's resource group unless `azure-load-balancer-resource-group` names another
    /// (kubernetes-sigs/cloud-provider-azure `pkg/provider/azure_loadbalancer.go`,
    /// `getPublicIPAddressResourceGroup`, `findMatchedPIPByLoadBalancerIP`).
    public_ip_resource_group: Option<String>,
}

/// The resource group an ARM resource id names (`/subscriptions/<s>/resourceGroups/<rg>/...`).
pub(super) fn resource_group_of(id: &str) -> Option<&str> {
    let mut parts = id.split('/').filter(|p| !p.is_empty());
    while let Some(part) = parts.next() {
        if part.eq_ignore_ascii_case("resourceGroups") {
            return parts.next();
        }
    }
    None
}

/// Azure: the resource groups of the public IPs other than the cluster's, each once
/// (case-insensitive, as ARM compares them).
pub(super) fn foreign_public_ip_groups(
    spec: &ClusterSpec,
    reservations: &[Reservation],
) -> Vec<String> {
    let Platform::Azure(azure) = &spec.platform else {
        return Vec::new();
    };
    let mut groups: Vec<String> = Vec::new();
    for r in reservations.iter().filter(|r| r.key.scope == Scope::Public) {
        if let Some(rg) = resource_group_of(&r.id)
            && !rg.eq_ignore_ascii_case(&azure.resource_group)
            && !groups.iter().any(|g| g.eq_ignore_ascii_case(rg))
        {
            groups.push(rg.to_string());
        }
    }
    groups
}

pub(super) fn context(spec: &ClusterSpec, reservations: &[Reservation]) -> TemplateContext {
    let addresses = |scope: Scope| -> Vec<Address> {
        let mut list: Vec<Address> = reservations
            .iter()
            .filter(|r| r.key.scope == scope)
            .map(|r| Address {
                subnet: r.key.placement.clone().unwrap_or_default(),
                id: r.id.clone(),
                ip: r.ip.to_string(),
                family: r.key.family,
            })
            .collect();
        list.sort_by(|a, b| (a.family, &a.subnet).cmp(&(b.family, &b.subnet)));
        list
    };
    let by_family = |list: &[Address]| ByFamily {
        ipv4: list
            .iter()
            .find(|a| a.family == IpFamily::Ipv4)
            .map(|a| a.ip.clone()),
        ipv6: list
            .iter()
            .find(|a| a.family == IpFamily::Ipv6)
            .map(|a| a.ip.clone()),
    };
    let (public, private) = (addresses(Scope::Public), addresses(Scope::Private));
    TemplateContext {
        infra_id: spec.infra_id.clone(),
        cluster_domain: spec.cluster_domain(),
        publish_external: spec.publish.public_api(),
        dual_stack: spec.ip_families.len() > 1,
        machine_networks_ipv4: machine_networks_ipv4(spec),
        labels: super::our_labels(&spec.infra_id),
        public_ip: by_family(&public),
        private_ip: by_family(&private),
        public_ip_resource_group: foreign_public_ip_groups(spec, reservations)
            .into_iter()
            .next(),
        public,
        private,
    }
}

/// The installer writes `networking.machineNetwork` after applying its default, 10.0.0.0/16
/// (openshift/installer pkg/types/defaults/installconfig.go), so an install-config without one
/// stands for that default.
const INSTALLER_DEFAULT_MACHINE_NETWORK: &str = "10.0.0.0/16";

/// The IPv4 machine networks as `a.b.c.d/len`, host bits cleared (EC2 takes only a network
/// address in a security group rule), each once.
fn machine_networks_ipv4(spec: &ClusterSpec) -> Vec<String> {
    if spec.machine_networks.is_empty() {
        return vec![INSTALLER_DEFAULT_MACHINE_NETWORK.to_string()];
    }
    let mut out: Vec<String> = Vec::new();
    for cidr in &spec.machine_networks {
        let std::net::IpAddr::V4(network) = cidr.network else {
            continue;
        };
        let mask = u32::MAX
            .checked_shl(32 - u32::from(cidr.prefix))
            .unwrap_or(0);
        let text = format!(
            "{}/{}",
            std::net::Ipv4Addr::from(u32::from(network) & mask),
            cidr.prefix
        );
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}
