//! Azure: public IPs, the private-IP record, Azure DNS and Private DNS through one ARM client.

use super::Providers;
use crate::assets::{AzureSpec, ClusterSpec, Credentials};
use anyhow::{Context, Result};
use bootstrap_cloud::azure;
use bootstrap_cloud::patient_dns::PatientDns;

pub async fn providers(spec: &ClusterSpec, platform: &AzureSpec) -> Result<Providers> {
    let (subscription_id, credential) = match &spec.credentials {
        Credentials::AzureClientSecret {
            subscription_id,
            tenant_id,
            client_id,
            client_secret,
        } => (
            subscription_id.clone(),
            azure::ClientSecret {
                tenant_id: tenant_id.clone(),
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
            },
        ),
        _ => {
            let var = |name: &str| {
                std::env::var(name).with_context(|| {
                    format!(
                        "no Azure credentials: the assets have no azure-credentials secret and {name} is not set"
                    )
                })
            };
            (
                var("AZURE_SUBSCRIPTION_ID")?,
                azure::ClientSecret {
                    tenant_id: var("AZURE_TENANT_ID")?,
                    client_id: var("AZURE_CLIENT_ID")?,
                    client_secret: var("AZURE_CLIENT_SECRET")?,
                },
            )
        }
    };
    let overrides = azure::EndpointOverrides::from_env()?;
    let http = overrides.http_client()?;
    let endpoints = azure::environment::resolve(&platform.cloud, &overrides, &http)
        .await
        .with_context(|| format!("the endpoints of {}", platform.cloud.name()))?;
    tracing::info!(
        cloud = platform.cloud.name(),
        arm = %endpoints.resource_manager,
        authority = %endpoints.authority_host,
        "azure endpoints"
    );
    let settings = azure::AzureSettings {
        subscription_id,
        infra_id: spec.infra_id.clone(),
        region: platform.region.clone(),
        resource_group: platform.resource_group.clone(),
        base_domain_resource_group: platform.base_domain_resource_group.clone(),
        network_resource_group: platform.network_resource_group.clone(),
        virtual_network: platform.virtual_network.clone(),
        compute_subnet: platform.compute_subnet.clone(),
        credential,
        arm_endpoint: endpoints.resource_manager.clone(),
        authority_host: endpoints.authority_host.clone(),
        token_scope: endpoints.scope(),
        api: azure::ApiVersions::for_cloud(&platform.cloud),
        second_address_host: crate::plan::second_address_host(spec),
    };
    let arm = azure::connect(&settings, http)?;
    let targets = targets(spec, platform);
    Ok(Providers {
        addresses: Box::new(azure::AzureAddresses::new(arm.clone(), &settings)),
        dns: Box::new(PatientDns::new(azure::AzureDns::new(
            arm.clone(),
            &settings,
        ))),
        preflight: Some(Box::new(azure::AzurePreflight::new(
            arm, &settings, targets,
        ))),
    })
}

/// What preflight checks the permissions for: the reservations and record types the plan
/// makes, and the control-plane subnet.
fn targets(spec: &ClusterSpec, platform: &AzureSpec) -> azure::AzureTargets {
    let scopes = crate::plan::wanted_reservations(spec)
        .iter()
        .map(|r| r.key.scope)
        .collect();
    azure::AzureTargets {
        control_plane_subnet: platform.control_plane_subnet.clone(),
        writes: crate::permissions::azure_writes(spec, &scopes),
    }
}
