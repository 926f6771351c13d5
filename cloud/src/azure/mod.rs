//! Azure: Standard public IPs (Microsoft.Network/publicIPAddresses), a private IP chosen free in
//! the compute subnet, Azure DNS (public zone) and Azure Private DNS record sets, all through
//! one small typed ARM client ([`arm`]); preflight's reads in `preflight`.
//!
//! Ownership tags. Azure tag names cannot contain `/` (nor `<>%&\?`), so the Kubernetes
//! convention `kubernetes.io/cluster/<infra-id>` becomes `kubernetes.io_cluster.<infra-id>`
//! (what the OpenShift installer and the Azure cloud provider write) and our purpose tag
//! `bootstrap-agent.openshift.io/reservation` becomes `bootstrap-agent.openshift.io_reservation`.
//!
//! The private IP. Azure has no standalone private-IP resource: an internal Standard load
//! balancer takes any free address of the subnet named in the Service. The agent picks an
//! address CheckIPAddressAvailability (`virtualNetworks/{vnet}/CheckIPAddressAvailability`)
//! calls free and records it as a tag on the cluster resource group: name
//! `<infra-id>-rsvd-private-ipv4`, value the IP, written with the Tags API
//! (`Microsoft.Resources/tags/default`, operation `Merge`, so other tags are never rewritten)
//! and released with operation `Delete` of exactly that name/value. Other clusters of the
//! same vnet record theirs the same way on their own resource groups, which
//! CheckIPAddressAvailability does not know about, so the choice is made among them: read from
//! every resource group of the subscription, claimed, and settled before it is kept (see
//! [`private_ip`]). `observe()` reads it back after any restart, and a tag name is unique, so a
//! crash can never leave two private reservations. The tag records the choice; it does not
//! stop a NIC from taking the address before the Service does (nothing in Azure can).
//! With a dual-stack machine network the internal load balancer also gets a private IPv6 of
//! the compute subnet's IPv6 prefix, recorded the same way as `<infra-id>-rsvd-private-ipv6`;
//! it is derived from the infra id rather than checked free, because nothing documents what
//! CheckIPAddressAvailability answers for an IPv6 (see `subnet::derived_ipv6`).
//!
//! Endpoints: derived from the cluster's cloud (`cloudName`, Azure Stack Hub's `armEndpoint`
//! and its metadata; see [`environment`]), each overridable for tests
//! (`BOOTSTRAP_AGENT_AZURE_ARM_ENDPOINT`, `BOOTSTRAP_AGENT_AZURE_AUTHORITY_HOST`, which
//! azure_identity requires to be https, `BOOTSTRAP_AGENT_AZURE_CA_FILE`,
//! `BOOTSTRAP_AGENT_AZURE_RESOLVE`). Credentials come from the installer's creds secret, else
//! `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`, `AZURE_TENANT_ID`, `AZURE_SUBSCRIPTION_ID`.

mod addresses;
mod adopt;
pub mod arm;
mod bootstrap_host;
mod claims;
mod dns;
pub mod environment;
mod preflight;
mod private_ip;
mod subnet;
#[cfg(test)]
mod wire_test_support;

pub use addresses::AzureAddresses;
pub use dns::AzureDns;
pub use environment::{ARM_ENDPOINT_ENV, AUTHORITY_HOST_ENV, EndpointOverrides};
pub use preflight::{AzurePreflight, AzureTargets};

use crate::CloudError;
use arm::ArmClient;
use azure_core::cloud::{CloudConfiguration, CustomConfiguration};
use azure_core::credentials::Secret;
use azure_core::http::{ClientOptions, Transport};
use azure_identity::{ClientSecretCredential, ClientSecretCredentialOptions};
use std::fmt;
use std::sync::Arc;
use url::Url;

/// Tag (name) marking what we own; value `owned`.
pub fn cluster_tag(infra_id: &str) -> String {
    format!("kubernetes.io_cluster.{infra_id}")
}

/// Tag naming the reservation's purpose (its `ReservationKey` text form).
pub const RESERVATION_TAG: &str = "bootstrap-agent.openshift.io_reservation";

/// The `api-version` of each Azure API the agent calls. Azure Stack Hub serves older versions
/// only and refuses any other (`NoRegisteredProviderFound`), so each cloud has its set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiVersions {
    /// Microsoft.Network: public IPs, subnets, CheckIPAddressAvailability, usages.
    pub network: &'static str,
    /// Microsoft.Network/dnsZones (public DNS).
    pub dns: &'static str,
    /// Microsoft.Network/privateDnsZones (none on Stack).
    pub private_dns: &'static str,
    /// Microsoft.Resources: resource groups (`ResourceGroups_List`, `_Get`, `_Update`).
    pub resources: &'static str,
    /// `GET /subscriptions/{id}`.
    pub subscriptions: &'static str,
    /// Microsoft.Authorization `permissions`.
    pub authorization: &'static str,
    /// `Microsoft.Resources/tags/default` at a scope (the Tags API, with PATCH `Merge` /
    /// `Delete`). None where it does not exist: the private-IP tag is then written with a
    /// `ResourceGroups_Update` of the group's whole tag map (see `addresses`).
    pub tags: Option<&'static str>,
}

impl ApiVersions {
    /// Azure's public, US Government and China clouds.
    pub const AZURE: Self = Self {
        network: "2024-05-01",
        dns: "2018-05-01",
        private_dns: "2020-06-01",
        resources: "2021-04-01",
        subscriptions: "2022-12-01",
        authorization: "2022-04-01",
        tags: Some("2021-04-01"),
    };

    /// Azure Stack Hub, whose API profiles stop at Network 2018-11-01 (profile
    /// 2020-09-01-hybrid), DNS 2016-04-01, Resources 2018-05-01 (resource groups,
    /// subscriptions, tag names) and Authorization permissions 2015-07-01
    /// (MicrosoftDocs/azure-stack-docs
    /// `azure-stack/user/azure-stack-profiles-azure-resource-manager-versions.md`). The Tags
    /// API at a scope came with Resources 2019-10-01, so Stack has none.
    pub const STACK: Self = Self {
        network: "2018-11-01",
        dns: "2016-04-01",
        private_dns: "2020-06-01",
        resources: "2018-05-01",
        subscriptions: "2018-05-01",
        authorization: "2015-07-01",
        tags: None,
    };

    pub fn for_cloud(cloud: &crate::azure_cloud::AzureCloud) -> Self {
        match cloud {
            crate::azure_cloud::AzureCloud::AzureStackCloud { .. } => Self::STACK,
            _ => Self::AZURE,
        }
    }
}

pub const CA_FILE_ENV: &str = "BOOTSTRAP_AGENT_AZURE_CA_FILE";
pub const RESOLVE_ENV: &str = "BOOTSTRAP_AGENT_AZURE_RESOLVE";

/// A service principal with a client secret. Debug never shows the secret.
#[derive(Clone)]
pub struct ClientSecret {
    pub tenant_id: String,
    pub client_id: String,
    pub client_secret: String,
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSecret")
            .field("tenant_id", &self.tenant_id)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// What the Azure providers need.
#[derive(Debug, Clone)]
pub struct AzureSettings {
    pub subscription_id: String,
    pub infra_id: String,
    pub region: String,
    /// Cluster resource group: public IPs, the private DNS zone, the private-IP record tag.
    pub resource_group: String,
    /// The public DNS zone's resource group.
    pub base_domain_resource_group: String,
    pub network_resource_group: String,
    pub virtual_network: String,
    pub compute_subnet: String,
    pub credential: ClientSecret,
    /// ARM base URL (the cloud's, or the override).
    pub arm_endpoint: String,
    pub authority_host: String,
    /// OAuth2 scope of ARM tokens: `<the cloud's ARM audience>/.default`.
    pub token_scope: String,
    /// The cloud's api-versions.
    pub api: ApiVersions,
    /// The bootstrap IP of the host that gets a second address (None: off).
    pub second_address_host: Option<std::net::IpAddr>,
}

/// The ARM client both providers share.
pub fn connect(
    settings: &AzureSettings,
    http: reqwest::Client,
) -> Result<Arc<ArmClient>, CloudError> {
    crate::redact::register(&settings.credential.client_secret);
    let mut custom = CustomConfiguration::default();
    custom.authority_host = settings.authority_host.trim_end_matches('/').to_string();
    let options = ClientSecretCredentialOptions {
        client_options: ClientOptions {
            cloud: Some(Arc::new(CloudConfiguration::Custom(custom))),
            transport: Some(Transport::new(Arc::new(http.clone()))),
            ..Default::default()
        },
    };
    let credential = ClientSecretCredential::new(
        &settings.credential.tenant_id,
        settings.credential.client_id.clone(),
        Secret::new(settings.credential.client_secret.clone()),
        Some(options),
    )
    .map_err(|e| CloudError::fatal("azure", format!("client secret credential: {e}")))?;
    let mut base = Url::parse(&settings.arm_endpoint).map_err(|e| {
        CloudError::fatal(
            "azure",
            format!("ARM endpoint {}: {e}", settings.arm_endpoint),
        )
    })?;
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    // The audience is the cloud's, whatever endpoint carries the calls: ARM refuses a token
    // asked for another cloud (401 InvalidAuthenticationTokenAudience).
    Ok(Arc::new(ArmClient::new(
        http,
        base,
        credential,
        settings.token_scope.clone(),
    )))
}

/// `/subscriptions/<sub>/resourceGroups/<rg>`.
pub(crate) fn rg_path(settings: &AzureSettings, rg: &str) -> String {
    format!(
        "subscriptions/{}/resourceGroups/{rg}",
        settings.subscription_id
    )
}
