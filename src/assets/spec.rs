//! The one validated description of the cluster that every later step works from.

use bootstrap_cloud::IpFamily;
use serde::Serialize;
use std::fmt;
use std::net::IpAddr;

#[derive(Debug, Clone, Serialize)]
pub struct ClusterSpec {
    pub infra_id: String,
    pub cluster_name: String,
    pub base_domain: String,
    pub platform: Platform,
    pub publish: Publish,
    /// Machine-network families, IPv4 first when dual stack.
    pub ip_families: Vec<IpFamily>,
    pub control_plane_replicas: u32,
    /// The install-config `capabilities` block, parsed; validated by the capabilities step.
    pub capabilities: Option<CapabilitiesSpec>,
    pub api_server_internal_uri: String,
    /// The bootstrap host's private IP, when known (flag, journal, or detected).
    pub bootstrap_ip: Option<IpAddr>,
    #[serde(skip)]
    pub credentials: Credentials,
}

impl ClusterSpec {
    /// `<cluster>.<baseDomain>`: the private zone and the suffix of `api` / `api-int`.
    pub fn cluster_domain(&self) -> String {
        format!("{}.{}", self.cluster_name, self.base_domain)
    }

    pub fn platform_name(&self) -> &'static str {
        self.platform.name()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Publish {
    External,
    Internal,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CapabilitiesSpec {
    #[serde(rename = "baselineCapabilitySet")]
    pub baseline: Option<String>,
    #[serde(rename = "additionalEnabledCapabilities")]
    pub additional: Vec<String>,
}

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
    /// Subnets for the public NLB (role ControlPlaneExternalLB): one EIP each.
    pub public_subnets: Vec<String>,
    /// Subnets for the internal NLB (role ControlPlaneInternalLB): one ENI-held IP each.
    pub private_subnets: Vec<String>,
    /// Private hosted zone id, when the install-config names one.
    pub hosted_zone: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AzureSpec {
    pub region: String,
    pub resource_group: String,
    pub base_domain_resource_group: String,
    pub network_resource_group: String,
    pub virtual_network: String,
    pub compute_subnet: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcpSpec {
    pub project: String,
    pub region: String,
    pub network: String,
    pub control_plane_subnet: String,
    /// The compute (worker) subnetwork: the installer's cloud-provider config names it as
    /// `subnetwork-name`, "used for internal load balancers", so the internal address lives here.
    pub compute_subnet: String,
}

/// Cloud credentials from the installer's creds secret. Never serialized, never printed.
#[derive(Clone, Default)]
pub enum Credentials {
    /// Use the SDK's standard chain (environment, profile, instance metadata).
    #[default]
    Environment,
    AwsKeys {
        access_key_id: String,
        secret_access_key: String,
    },
    /// `azure-credentials`: a service principal with a client secret.
    AzureClientSecret {
        subscription_id: String,
        tenant_id: String,
        client_id: String,
        client_secret: String,
    },
    /// `gcp-credentials`: the service account key JSON.
    GcpServiceAccount { json: String },
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Credentials::Environment => "Credentials::Environment",
            Credentials::AwsKeys { .. } => "Credentials::AwsKeys(<redacted>)",
            Credentials::AzureClientSecret { .. } => "Credentials::AzureClientSecret(<redacted>)",
            Credentials::GcpServiceAccount { .. } => "Credentials::GcpServiceAccount(<redacted>)",
        })
    }
}
