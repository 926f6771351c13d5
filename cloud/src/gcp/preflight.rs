//! GCP preflight, reads only: who we are and that the project can be read (compute
//! `projects.get`), whether the region's address quotas leave room (`regions.get` `quotas`:
//! `STATIC_ADDRESSES` for the external address, `INTERNAL_ADDRESSES` for the internal one,
//! `limit - usage`), whether the subnetworks exist in the region under the project that holds
//! the network (a Shared VPC's host project) and belong to the cluster's network, and whether
//! the private managed zone is visible to that network (`privateVisibilityConfig.networks`),
//! and whether the installer's per-zone instance groups `<infra-id>-master-<zone>` exist,
//! which OpenShift's cloud provider reuses for the internal load balancers (see
//! `instance_groups`).
//!
//! Permissions are asked with Cloud Resource Manager's `projects.testIamPermissions`, per
//! project (see `permissions`). One file per check: `quota`, `subnets`, `instance_groups`,
//! `private_zone_network`.

mod instance_groups;
mod private_zone_network;
mod quota;
mod subnets;

use super::dns::zone_in_project;
use super::permissions::{self, ResourceManager};
use super::{GcpCredentials, GcpSettings, classify};
use crate::CloudError;
use crate::preflight::{Check, Needs, Preflight};
use async_trait::async_trait;
use google_cloud_compute_v1::client::{InstanceGroups, Projects, Regions, Subnetworks};
use google_cloud_compute_v1::model::Region;
use google_cloud_dns_v1::client::ManagedZones;

/// The cluster's network as the install-config names it.
#[derive(Debug, Clone)]
pub struct GcpNetwork {
    pub network: String,
    /// Every subnetwork the cluster uses (control plane, compute), in the network's project.
    pub subnetworks: Vec<String>,
}

pub struct GcpPreflight {
    projects: Projects,
    regions: Regions,
    subnetworks: Subnetworks,
    instance_groups: InstanceGroups,
    zones: ManagedZones,
    resource_manager: ResourceManager,
    project: String,
    region: String,
    network_project: String,
    network: GcpNetwork,
    infra_id: String,
    /// Who the calls run as, for display: never the key.
    identity: String,
}

impl GcpPreflight {
    pub async fn new(settings: &GcpSettings, network: GcpNetwork) -> Result<Self, CloudError> {
        let compute = settings.compute_endpoint.as_deref();
        Ok(Self {
            projects: build_client!(Projects, settings, compute, "compute"),
            regions: build_client!(Regions, settings, compute, "compute"),
            subnetworks: build_client!(Subnetworks, settings, compute, "compute"),
            instance_groups: build_client!(InstanceGroups, settings, compute, "compute"),
            zones: build_client!(
                ManagedZones,
                settings,
                settings.dns_endpoint.as_deref(),
                "dns"
            ),
            resource_manager: ResourceManager::new(settings)?,
            project: settings.project.clone(),
            region: settings.region.clone(),
            network_project: settings
                .network_project
                .clone()
                .unwrap_or_else(|| settings.project.clone()),
            network,
            infra_id: settings.infra_id.clone(),
            identity: identity(settings),
        })
    }

    async fn credentials(&self) -> Check {
        const NAME: &str = "credentials";
        match self.projects.get().set_project(&self.project).send().await {
            Ok(project) => Check::pass(
                NAME,
                format!(
                    "compute projects.get: project {} (id {}) as {}",
                    project.name.as_deref().unwrap_or(&self.project),
                    project
                        .id
                        .map_or_else(|| "?".to_string(), |id| id.to_string()),
                    self.identity
                ),
            ),
            Err(e) => Check::from_error(
                NAME,
                &classify("projects.get", e),
                format!(
                    "give the agent a working service account key (the installer's gcp-credentials secret, or Application Default Credentials) with compute.projects.get on {}",
                    self.project
                ),
            ),
        }
    }

    /// Per project, the permissions the plan's calls need, asked with testIamPermissions.
    async fn permissions(&self, needs: &Needs) -> Check {
        let zone_projects: Vec<&str> = needs
            .zones
            .iter()
            .map(|z| zone_in_project(&z.id).map_or(self.project.as_str(), |(p, _)| p))
            .collect();
        let asked = permissions::wanted(
            &self.project,
            &self.network_project,
            &needs.address_scopes,
            &zone_projects,
        );
        let mut answers = std::collections::BTreeMap::new();
        for (project, wanted) in &asked {
            let answer = self.resource_manager.test(project, wanted).await;
            answers.insert(project.clone(), answer);
        }
        permissions::verdict(&asked, &answers)
    }

    /// The region (`regions.get`: quotas, zones), or the line `name` failing for it.
    async fn region(&self, name: &str) -> Result<Region, Check> {
        self.regions
            .get()
            .set_project(&self.project)
            .set_region(&self.region)
            .send()
            .await
            .map_err(|e| {
                Check::from_error(
                    name,
                    &classify("regions.get", e),
                    "allow compute.regions.get",
                )
            })
    }

    /// A network URL (full or relative) names the cluster's network in its project.
    fn is_our_network(&self, url: &str) -> bool {
        url.ends_with(&format!(
            "projects/{}/global/networks/{}",
            self.network_project, self.network.network
        ))
    }
}

/// Who the calls run as: the service account's email from the key (never the key), else the
/// credential source.
fn identity(settings: &GcpSettings) -> String {
    if settings
        .compute_endpoint
        .as_deref()
        .is_some_and(|e| e.starts_with("http://"))
    {
        return "anonymous (plain-HTTP endpoint override)".into();
    }
    match &settings.credentials {
        GcpCredentials::Default => "Application Default Credentials".into(),
        GcpCredentials::ServiceAccount(json) => serde_json::from_str::<serde_json::Value>(json)
            .ok()
            .and_then(|key| key["client_email"].as_str().map(str::to_string))
            .map_or_else(
                || "the service account key".to_string(),
                |email| format!("service account {email}"),
            ),
    }
}

#[async_trait]
impl Preflight for GcpPreflight {
    async fn checks(&self, needs: &Needs) -> Vec<Check> {
        vec![
            self.credentials().await,
            self.permissions(needs).await,
            self.quota(needs).await,
            self.subnets().await,
            self.instance_groups().await,
            self.zone_network(needs.private_zone()).await,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_the_service_accounts_email_never_the_key() {
        let settings = GcpSettings {
            project: "p".into(),
            region: "r".into(),
            subnetwork: "s".into(),
            network_project: None,
            infra_id: "i".into(),
            credentials: GcpCredentials::ServiceAccount(
                r#"{"client_email":"agent@p.iam.gserviceaccount.com","private_key":"s3cret"}"#
                    .into(),
            ),
            compute_endpoint: None,
            dns_endpoint: None,
            resource_manager_endpoint: None,
            second_address_host: None,
        };
        let shown = identity(&settings);
        assert_eq!(shown, "service account agent@p.iam.gserviceaccount.com");
        assert!(!shown.contains("s3cret"));
    }
}
