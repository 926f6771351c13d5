//! GCP: Compute Engine regional addresses and Cloud DNS, from one set of settings.
//!
//! Credentials: the service account key from the installer's creds secret, else Application
//! Default Credentials. `BOOTSTRAP_AGENT_GCP_COMPUTE_ENDPOINT` and
//! `BOOTSTRAP_AGENT_GCP_DNS_ENDPOINT` override the endpoints (a plain `http://` override is
//! called without credentials: that is how the local fakes are reached).

use super::Providers;
use crate::assets::{ClusterSpec, Credentials, GcpSpec};
use anyhow::Result;
use bootstrap_cloud::gcp;
use bootstrap_cloud::patient_dns::PatientDns;

pub async fn providers(spec: &ClusterSpec, platform: &GcpSpec) -> Result<Providers> {
    let settings = gcp::GcpSettings {
        project: platform.project.clone(),
        region: platform.region.clone(),
        // Internal forwarding rules live in the compute subnetwork (the cloud provider's
        // `subnetwork-name`); an address from another subnetwork would be refused.
        subnetwork: platform.compute_subnet.clone(),
        // Shared VPC: the subnetwork is the host project's; the addresses stay in `project`.
        network_project: platform.network_project.clone(),
        infra_id: spec.infra_id.clone(),
        credentials: match &spec.credentials {
            Credentials::GcpServiceAccount { json } => {
                gcp::GcpCredentials::ServiceAccount(json.clone())
            }
            _ => gcp::GcpCredentials::Default,
        },
        compute_endpoint: None,
        dns_endpoint: None,
        resource_manager_endpoint: None,
        second_address_host: crate::plan::second_address_host(spec),
    }
    .with_env_endpoints();
    Ok(Providers {
        addresses: Box::new(gcp::GceAddresses::new(&settings).await?),
        dns: Box::new(PatientDns::new(gcp::CloudDns::new(&settings).await?)),
        preflight: Some(Box::new(
            gcp::GcpPreflight::new(
                &settings,
                gcp::GcpNetwork {
                    network: platform.network.clone(),
                    subnetworks: vec![
                        platform.control_plane_subnet.clone(),
                        platform.compute_subnet.clone(),
                    ],
                },
            )
            .await?,
        )),
    })
}
