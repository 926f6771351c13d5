//! The per-cloud part of the ClusterSpec: what each platform's install-config and manifests
//! say about its network, as validated values (part of `spec`, re-exported there).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Platform {
    Aws(AwsSpec),
    Azure(AzureSpec),
    Gcp(GcpSpec),
    None,
}

impl Platform {
    pub fn name(&self) -> &'static str {
        match self {
            Platform::Aws(_) => "aws",
            Platform::Azure(_) => "azure",
            Platform::Gcp(_) => "gcp",
            Platform::None => "none",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct AwsSpec {
    pub region: String,
    /// The load balancers' subnets, or how to find them.
    pub subnets: AwsSubnets,
    /// Private hosted zone id, when the install-config names one.
    pub hosted_zone: Option<String>,
    /// `publicIpv4Pool`: the BYO-IP pool the EIPs come from (public API only).
    pub public_ipv4_pool: Option<String>,
    /// `serviceEndpoints`: service name (`ec2`, `route53`, `sts`, ...) -> URL.
    pub service_endpoints: std::collections::BTreeMap<String, String>,
}

impl AwsSpec {
    /// Subnets for the public NLB: one EIP each. Empty while the subnets are pending.
    pub fn public_subnets(&self) -> impl Iterator<Item = &String> {
        self.subnets_with(SubnetRole::Public)
    }

    /// Subnets for the internal NLB: one ENI-held private IP each.
    pub fn private_subnets(&self) -> impl Iterator<Item = &String> {
        self.subnets_with(SubnetRole::Private)
    }

    fn subnets_with(&self, role: SubnetRole) -> impl Iterator<Item = &String> {
        let known = match &self.subnets {
            AwsSubnets::Known { subnets, .. } => subnets.as_slice(),
            AwsSubnets::Pending(_) => &[],
        };
        known.iter().filter(move |s| s.role == role).map(|s| &s.id)
    }
}

/// Where the AWS load-balancer subnets come from. `platform.aws.vpc.subnets` with roles makes
/// them known when the assets are read; otherwise EC2 is asked before anything is planned.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AwsSubnets {
    Known {
        /// Sorted by role, then id; a subnet with both roles appears twice.
        subnets: Vec<AwsSubnet>,
        /// Subnets found by the cluster tag that carry no role tag, so are not used.
        ignored: Vec<String>,
    },
    Pending(SubnetLookup),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SubnetRole {
    /// Internet-facing API load balancer (EIPs).
    Public,
    /// Internal API load balancer (ENI-held private IPs).
    Private,
}

impl fmt::Display for SubnetRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SubnetRole::Public => "public",
            SubnetRole::Private => "private",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AwsSubnet {
    pub id: String,
    pub role: SubnetRole,
    pub source: Source,
    pub classified_by: Classification,
}

/// Subnets the install-config does not give with roles, to be found in EC2.
#[derive(Debug, Clone, Serialize)]
pub struct SubnetLookup {
    /// The file holding the install-config, for errors about what is found.
    pub file: PathBuf,
    pub how: LookupKind,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LookupKind {
    /// A list without roles (`platform.aws.subnets`, or `platform.aws.vpc.subnets` without
    /// roles, which is what the installer converts the former into): each subnet is public or
    /// private by its role tag, else by its route table.
    Listed(Vec<ListedSubnet>),
    /// No subnets (the installer made the VPC): the subnets tagged for the cluster, public or
    /// private by their role tags.
    ClusterTag,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedSubnet {
    pub id: String,
    /// The install-config field it came from, e.g. `platform.aws.subnets[2]`.
    pub field: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AzureSpec {
    pub region: String,
    pub resource_group: String,
    pub base_domain_resource_group: String,
    pub network_resource_group: String,
    pub virtual_network: String,
    pub compute_subnet: String,
    pub control_plane_subnet: String,
    /// Where each network value above came from.
    pub sources: Vec<NetworkValue>,
    /// `cloudName` (+ Azure Stack Hub's `armEndpoint`): which endpoints the agent talks to.
    pub cloud: bootstrap_cloud::azure_cloud::AzureCloud,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcpSpec {
    /// The (service) project: both addresses are reserved here, Shared VPC or not.
    pub project: String,
    pub region: String,
    /// `networkProjectID`: the Shared VPC host project, which holds the network and its
    /// subnetworks.
    pub network_project: Option<String>,
    pub network: String,
    pub control_plane_subnet: String,
    /// The compute (worker) subnetwork: the installer's cloud-provider config names it as
    /// `subnetwork-name`, "used for internal load balancers", so the internal address lives here.
    pub compute_subnet: String,
    /// Where each network value above came from.
    pub sources: Vec<NetworkValue>,
}

impl GcpSpec {
    /// The project holding the network and subnetworks: the Shared VPC host, else `project`.
    pub fn subnetwork_project(&self) -> &str {
        self.network_project.as_deref().unwrap_or(&self.project)
    }

    /// The compute subnetwork as the INTERNAL address names it (and GCE resolves it: under
    /// any other project it "cannot be found"). The cloud crate builds the same URL.
    pub fn compute_subnetwork_url(&self) -> String {
        format!(
            "projects/{}/regions/{}/subnetworks/{}",
            self.subnetwork_project(),
            self.region,
            self.compute_subnet
        )
    }
}

/// One network value the agent works with, and where it came from (`plan` prints these).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkValue {
    /// What the value is: `virtual network`, `public subnet`, ...
    pub name: String,
    pub value: String,
    pub source: Source,
    /// AWS subnets: what made the subnet public or private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classified_by: Option<Classification>,
}

/// Where a network value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Read from this install-config field.
    InstallConfig { field: String },
    /// Absent from the install-config: the name the installer gives what it creates.
    DefaultName { rule: String },
    /// Found in the cloud by this tag (`key=value`).
    DiscoveredByTag { tag: String },
}

/// What made an AWS subnet public or private.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Classification {
    /// Its role in `platform.aws.vpc.subnets`.
    Role { field: String, role: String },
    /// Its role tag (`key=value`).
    Tag { tag: String },
    /// The route table that applies to it (`main`: as the VPC's main table): public when its
    /// `0.0.0.0/0` route goes to an internet gateway.
    RouteTable {
        route_table: String,
        main: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        internet_gateway: Option<String>,
    },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::InstallConfig { field } => write!(f, "install-config {field}"),
            Source::DefaultName { rule } => write!(f, "default name ({rule})"),
            Source::DiscoveredByTag { tag } => write!(f, "discovered by tag {tag}"),
        }
    }
}

impl fmt::Display for Classification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Classification::Role { field, role } => write!(f, "role {role} ({field})"),
            Classification::Tag { tag } => write!(f, "tag {tag}"),
            Classification::RouteTable {
                route_table,
                main,
                internet_gateway,
            } => {
                let which = if *main {
                    "the VPC's main route table"
                } else {
                    "route table"
                };
                match internet_gateway {
                    Some(igw) => write!(f, "{which} {route_table}: 0.0.0.0/0 -> {igw}"),
                    None => write!(
                        f,
                        "{which} {route_table}: no 0.0.0.0/0 route to an internet gateway"
                    ),
                }
            }
        }
    }
}
