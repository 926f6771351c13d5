//! The one validated description of the cluster that every later step works from.

use bootstrap_cloud::IpFamily;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

pub use super::platform_spec::*;

#[derive(Debug, Clone, Serialize)]
pub struct ClusterSpec {
    pub infra_id: String,
    pub cluster_name: String,
    pub base_domain: String,
    pub platform: Platform,
    pub publish: Publish,
    /// `publish --scope`: the publishing the cluster had before the change now under way (or
    /// just made), so that what it published then is still observed (and withdrawn). None:
    /// no scope change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_publish: Option<Publish>,
    /// Who writes `api` / `api-int`: the agent into the cloud's zones, or the user.
    pub dns: DnsManagement,
    /// The zones the agent writes into (when DNS is the agent's), as the installer named them.
    pub zones: DnsZones,
    /// Machine-network families, IPv4 first when dual stack.
    pub ip_families: Vec<IpFamily>,
    /// `networking.machineNetwork` (empty when the install-config lists none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub machine_networks: Vec<Cidr>,
    pub control_plane_replicas: u32,
    /// The install-config `capabilities` block, parsed; validated by the capabilities step.
    pub capabilities: Option<CapabilitiesSpec>,
    pub api_server_internal_uri: String,
    /// The bootstrap host's private IP, when known (flag, journal, or detected).
    pub bootstrap_ip: Option<IpAddr>,
    /// GCP and Azure: whether the bootstrap host gets a second private address in `api-int`
    /// until stage 3 (`--bootstrap-second-address`; off once stage 3 removed the bootstrap).
    #[serde(default, skip_serializing_if = "SecondAddress::is_off")]
    pub second_bootstrap_address: SecondAddress,
    /// UPI: how to find reservations the user made (flags and the journal, not the assets).
    #[serde(default, skip_serializing_if = "Adoption::is_default")]
    pub adoption: Adoption,
    /// The TTL (seconds) of the record sets the agent creates (`--dns-ttl`).
    pub record_ttl: u32,
    #[serde(skip)]
    pub credentials: Credentials,
}

/// `--bootstrap-second-address`: a second private address of the bootstrap host, next to the
/// bootstrap IP in `api-int` until stage 3. It was chosen against OpenShift 4.7's
/// apiserver-watcher, which refused two addresses; since 4.8 the watcher takes every address
/// of api-int for a VIP, so it no longer keeps the bootstrap IP out of the masters' route
/// scripts (docs/clouds.md, "OpenShift's own nodes on GCP and Azure", has the figures).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SecondAddress {
    /// The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration)
    /// and the agent adds it to this host's interface with iproute2.
    #[default]
    Host,
    /// The cloud gives the host the address; the host's own network agent brings it up.
    Cloud,
    /// One address: the bootstrap IP alone (AWS, platform none, and UPI's adopt-only).
    Off,
}

impl SecondAddress {
    pub fn is_off(&self) -> bool {
        *self == SecondAddress::Off
    }
}

/// An address range, `10.0.0.0/16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cidr {
    pub network: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    /// Whether `ip` lies in the range (never across families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// Reservations the user made (UPI) are adopted: used, never released, changed or tagged.
/// They are found by the seed's names unless `--reservations` names them otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adoption {
    /// `--reservations FILE`: per purpose, how to find the user's reservation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<(bootstrap_cloud::ReservationKey, bootstrap_cloud::UserLookup)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<std::path::PathBuf>,
    /// `--adopt-only`: reserve nothing; every reservation must be the user's.
    #[serde(default)]
    pub adopt_only: bool,
}

impl Adoption {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// How `--reservations` says to find the reservation for `key`, if it does.
    pub fn named_for(
        &self,
        key: &bootstrap_cloud::ReservationKey,
    ) -> Option<&bootstrap_cloud::UserLookup> {
        self.named.iter().find(|(k, _)| k == key).map(|(_, l)| l)
    }
}

impl ClusterSpec {
    /// `<cluster>.<baseDomain>`: the private zone and the suffix of `api` / `api-int`.
    pub fn cluster_domain(&self) -> String {
        format!("{}.{}", self.cluster_name, self.base_domain)
    }

    pub fn platform_name(&self) -> &'static str {
        self.platform.name()
    }

    /// Why DNS is the user's, when it is: the agent then writes no record, looks up no zone,
    /// and prints the records to create instead.
    pub fn user_managed_dns(&self) -> Option<&str> {
        match &self.dns {
            DnsManagement::Cloud => None,
            DnsManagement::UserManaged { because } => Some(because),
        }
    }

    /// The network values the agent works with and where each came from. AWS public subnets
    /// count only when the API is published externally (they get nothing otherwise).
    pub fn network_values(&self) -> Vec<NetworkValue> {
        match &self.platform {
            Platform::Aws(aws) => match &aws.subnets {
                AwsSubnets::Known { subnets, .. } => subnets
                    .iter()
                    .filter(|s| s.role == SubnetRole::Private || self.publish.public_api())
                    .map(|s| NetworkValue {
                        name: format!("{} subnet", s.role),
                        value: s.id.clone(),
                        source: s.source.clone(),
                        classified_by: Some(s.classified_by.clone()),
                    })
                    .collect(),
                AwsSubnets::Pending(_) => Vec::new(),
            },
            Platform::Azure(azure) => azure.sources.clone(),
            Platform::Gcp(gcp) => gcp.sources.clone(),
            Platform::None => Vec::new(),
        }
    }

    /// The AWS subnets still to be found in EC2, if any: nothing can be planned before.
    pub fn pending_subnets(&self) -> Option<&SubnetLookup> {
        match &self.platform {
            Platform::Aws(AwsSpec {
                subnets: AwsSubnets::Pending(lookup),
                ..
            }) => Some(lookup),
            _ => None,
        }
    }
}

/// The install-config's `publish` (with `operatorPublishingStrategy` for Mixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Publish {
    External,
    Internal,
    /// Azure only: the API and ingress are published separately.
    Mixed {
        apiserver: Exposure,
        ingress: Exposure,
    },
}

/// One side of `operatorPublishingStrategy`; also the scope `publish --scope` gives the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[value(rename_all = "PascalCase")]
pub enum Exposure {
    External,
    Internal,
}

impl Publish {
    /// The installer's `PublicAPI()`: publish External (or empty), or Mixed with
    /// `operatorPublishingStrategy.apiserver: External`. It alone decides whether a public IP
    /// is reserved and a public `api` record written; ingress plays no part (the DNS
    /// manifest's publicZone follows ingress, so it is not read for this).
    pub fn public_api(self) -> bool {
        match self {
            Publish::External => true,
            Publish::Internal => false,
            Publish::Mixed { apiserver, .. } => apiserver == Exposure::External,
        }
    }

    /// The API's scope.
    pub fn api(self) -> Exposure {
        match self.public_api() {
            true => Exposure::External,
            false => Exposure::Internal,
        }
    }

    /// The same publishing with the API's scope `api` (`publish --scope`): Mixed keeps its
    /// ingress side; External and Internal become the other when the API changes.
    pub fn with_api(self, api: Exposure) -> Publish {
        match (self, api) {
            (Publish::Mixed { ingress, .. }, apiserver) => Publish::Mixed { apiserver, ingress },
            (_, Exposure::External) => Publish::External,
            (_, Exposure::Internal) => Publish::Internal,
        }
    }
}

impl fmt::Display for Exposure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Exposure::External => "External",
            Exposure::Internal => "Internal",
        })
    }
}

/// Who writes the `api` / `api-int` records. One mode for every way DNS becomes the user's
/// (the installer's switches here; a UPI install by hand is the same mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DnsManagement {
    /// The agent, into the cloud's private and public zones.
    Cloud,
    /// The user: the agent still reserves the IPs and renders and gates the Services, but
    /// writes no cloud record and looks up no zone. `because` names the input that said so.
    UserManaged { because: String },
}

/// The private and public zone, each by domain and visibility, and by id or tags when the
/// installer's DNS manifest or the install-config names it (`assets::dns_zones`).
#[derive(Debug, Clone, Serialize)]
pub struct DnsZones {
    pub private: bootstrap_cloud::ZoneRef,
    pub public: bootstrap_cloud::ZoneRef,
    /// Where the private zone's id or tags came from (None: found by domain and visibility).
    pub private_source: Option<String>,
    pub public_source: Option<String>,
    /// AWS: the private zone is another account's, written through `sts:AssumeRole` of this
    /// role (`privateZoneIAMRole` / `platform.aws.hostedZoneRole`); the public zone never is.
    pub private_zone_role: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CapabilitiesSpec {
    #[serde(rename = "baselineCapabilitySet")]
    pub baseline: Option<String>,
    #[serde(rename = "additionalEnabledCapabilities")]
    pub additional: Vec<String>,
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
