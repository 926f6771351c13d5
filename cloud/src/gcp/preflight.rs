//! GCP preflight, reads only: who we are and that the project can be read (compute
//! `projects.get`), whether the region's address quotas leave room (`regions.get` `quotas`:
//! `STATIC_ADDRESSES` for the external address, `INTERNAL_ADDRESSES` for the internal one,
//! `limit - usage`), whether the subnetworks exist in the region under the project that holds
//! the network (a Shared VPC's host project) and belong to the cluster's network, and whether
//! the private managed zone is visible to that network (`privateVisibilityConfig.networks`),
//! and whether the installer's per-zone instance groups `<infra-id>-master-<zone>` exist,
//! which OpenShift's cloud provider reuses for the internal load balancers (see
//! [`GcpPreflight::instance_groups`]).
//!
//! Permissions are asked with Cloud Resource Manager's `projects.testIamPermissions`, per
//! project (see `permissions`).

use super::dns::zone_in_project;
use super::permissions::{self, ResourceManager};
use super::{GcpCredentials, GcpSettings, classify};
use crate::preflight::{Check, Needs, Preflight, Quota, quota_check};
use crate::{CloudError, Zone};
use async_trait::async_trait;
use google_cloud_compute_v1::client::{InstanceGroups, Projects, Regions, Subnetworks};
use google_cloud_compute_v1::model::Region;
use google_cloud_compute_v1::model::quota::Metric;
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

    async fn quota(&self, needs: &Needs) -> Check {
        const NAME: &str = "quota-addresses";
        let private: u32 = needs.private_addresses.values().sum();
        if needs.public_addresses == 0 && private == 0 {
            return Check::pass(NAME, "no address to reserve");
        }
        let region = match self.region(NAME).await {
            Ok(region) => region,
            Err(failed) => return failed,
        };
        let quotas: Vec<(Metric, f64, f64)> = region
            .quotas
            .iter()
            .filter_map(|q| Some((q.metric.clone()?, q.limit?, q.usage.unwrap_or(0.0))))
            .collect();
        quota_verdict(&self.region, &quotas, needs.public_addresses, private)
    }

    async fn subnets(&self) -> Check {
        const NAME: &str = "subnets";
        let fix = format!(
            "correct platform.gcp.network / controlPlaneSubnet / computeSubnet (and networkProjectID for a Shared VPC): the subnetworks must exist in {} of project {} and belong to network {}",
            self.region, self.network_project, self.network.network
        );
        let mut found = Vec::new();
        for name in &self.network.subnetworks {
            let subnet = match self
                .subnetworks
                .get()
                .set_project(&self.network_project)
                .set_region(&self.region)
                .set_subnetwork(name)
                .send()
                .await
            {
                Ok(subnet) => subnet,
                Err(e) => {
                    let err = classify("subnetworks.get", e);
                    if err.kind == crate::ErrorKind::NotFound {
                        return Check::fail(
                            NAME,
                            format!(
                                "subnetwork {name} not found in {} of project {}",
                                self.region, self.network_project
                            ),
                            fix,
                        );
                    }
                    return Check::from_error(NAME, &err, fix);
                }
            };
            let network = subnet.network.as_deref().unwrap_or("");
            if !self.is_our_network(network) {
                return Check::fail(
                    NAME,
                    format!(
                        "subnetwork {name} belongs to {network}, not to projects/{}/global/networks/{}",
                        self.network_project, self.network.network
                    ),
                    fix,
                );
            }
            found.push(format!(
                "{name} {}",
                subnet.ip_cidr_range.as_deref().unwrap_or("?")
            ));
        }
        Check::pass(
            NAME,
            format!(
                "in network {} of project {}: {} (GCE does not report free addresses; an exhausted range fails the internal address's insert)",
                self.network.network,
                self.network_project,
                found.join(", ")
            ),
        )
    }

    /// The installer's instance groups. OpenShift's cloud provider builds an internal load
    /// balancer's backends from the instance groups whose names start with its cloud config's
    /// `external-instance-groups-prefix` (the infra id: openshift/installer
    /// `pkg/asset/manifests/gcp/cloudproviderconfig.go`), and puts the zone's other nodes in a
    /// group of its own (openshift/cloud-provider-gcp `providers/gce/
    /// gce_loadbalancer_internal_openshift.go`). The installer makes `<infra-id>-master-<zone>`
    /// per control-plane zone (CAPG `createOrGetInstanceGroups`, name from `InstanceGroupSpec`
    /// with the tag `master` of `pkg/asset/manifests/gcp/cluster.go`) and CAPG adds each
    /// control-plane machine to its zone's group. Without them the control-plane machines
    /// and the workers of a zone (two subnetworks) land in the provider's one group, which GCE
    /// refuses (`wrongSubnetwork`), and no forwarding rule is made.
    ///
    /// Checked, not made: the groups and their members are the installer's (CAPG creates them
    /// with the cluster's infrastructure, before the bootstrap host, and fills them as it
    /// creates the machines; it deletes them on destroy). Making them here would need
    /// `compute.instanceGroups.create` and `compute.instances.use` and would race CAPG's own
    /// create-or-get and membership of machines the agent never sees.
    ///
    /// The install-config's control-plane zones are not read here: every zone of the region
    /// (`regions.get` `zones`) is listed (`instanceGroups.list`, filter on the exact name);
    /// none found fails, and the zones without one are named.
    async fn instance_groups(&self) -> Check {
        const NAME: &str = "instance-groups";
        let fix = format!(
            "the installer creates an instance group {infra}-master-<zone> per control-plane zone (CAPG, with the cluster's infrastructure); if they are gone, recreate them with the zone's control-plane machine: gcloud compute instance-groups unmanaged create {infra}-master-<zone> --zone <zone> --project {project}, then add-instances; the cloud provider reuses groups named {infra}* (external-instance-groups-prefix)",
            infra = self.infra_id,
            project = self.project
        );
        let region = match self.region(NAME).await {
            Ok(region) => region,
            Err(failed) => return failed,
        };
        let zones: Vec<&str> = region
            .zones
            .iter()
            .filter_map(|url| url.rsplit('/').next())
            .collect();
        let (mut found, mut missing) = (Vec::new(), Vec::new());
        for zone in &zones {
            let name = format!("{}-master-{zone}", self.infra_id);
            let listed = self
                .instance_groups
                .list()
                .set_project(&self.project)
                .set_zone(*zone)
                .set_filter(format!("name = \"{name}\""))
                .send()
                .await;
            match listed {
                Ok(list) if list.items.iter().any(|g| g.name.as_deref() == Some(&name)) => {
                    found.push(name)
                }
                Ok(_) => missing.push(name),
                Err(e) => {
                    return Check::from_error(
                        NAME,
                        &classify("instanceGroups.list", e),
                        format!(
                            "allow compute.instanceGroups.list on project {}",
                            self.project
                        ),
                    );
                }
            }
        }
        instance_groups_verdict(&self.region, &found, &missing, fix)
    }

    /// A network URL (full or relative) names the cluster's network in its project.
    fn is_our_network(&self, url: &str) -> bool {
        url.ends_with(&format!(
            "projects/{}/global/networks/{}",
            self.network_project, self.network.network
        ))
    }

    async fn zone_network(&self, zone: Option<&Zone>) -> Check {
        const NAME: &str = "private-zone-network";
        let Some(zone) = zone else {
            return Check::not_checked(NAME, "no private zone to write (DNS is the user's)");
        };
        let (project, name) = zone_in_project(&zone.id).unwrap_or((&self.project, &zone.id));
        let fix = format!(
            "bind the zone to the cluster's network: gcloud dns managed-zones update {name} --project {project} --networks https://www.googleapis.com/compute/v1/projects/{}/global/networks/{}",
            self.network_project, self.network.network
        );
        match self
            .zones
            .get()
            .set_project(project)
            .set_managed_zone(name)
            .send()
            .await
        {
            Ok(found) => {
                let networks: Vec<&str> = found
                    .private_visibility_config
                    .iter()
                    .flat_map(|c| c.networks.iter())
                    .filter_map(|n| n.network_url.as_deref())
                    .collect();
                if networks.iter().any(|n| self.is_our_network(n)) {
                    Check::pass(
                        NAME,
                        format!(
                            "{name} is visible to network {} of project {}",
                            self.network.network, self.network_project
                        ),
                    )
                } else {
                    Check::fail(
                        NAME,
                        format!(
                            "{name} ({}) is visible to [{}], not to the cluster's network {}: the cluster would not resolve api-int",
                            zone.reference.domain,
                            networks.join(", "),
                            self.network.network
                        ),
                        fix,
                    )
                }
            }
            Err(e) => Check::from_error(
                NAME,
                &classify("managedZones.get", e),
                format!("allow dns.managedZones.get on project {project}"),
            ),
        }
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

/// PURE: which of the region's zones have the installer's instance group.
fn instance_groups_verdict(
    region: &str,
    found: &[String],
    missing: &[String],
    fix: String,
) -> Check {
    const NAME: &str = "instance-groups";
    if found.is_empty() {
        return Check::fail(
            NAME,
            format!(
                "no instance group {} in any zone of {region}: the cloud provider would put the control-plane machines and the workers of a zone into one group of its own, which GCE refuses (wrongSubnetwork), and the internal load balancers would never get a forwarding rule",
                missing.join(", ")
            ),
            fix,
        );
    }
    let mut reason = format!(
        "{} (the cloud provider reuses them for the internal load balancers)",
        found.join(", ")
    );
    if !missing.is_empty() {
        reason.push_str(&format!(
            "; none in the other zones of {region} ({}): no control-plane machine may go there",
            missing.join(", ")
        ));
    }
    Check::pass(NAME, reason)
}

/// PURE: the region's quotas against what is still to reserve: `STATIC_ADDRESSES` covers
/// regional external static addresses, `INTERNAL_ADDRESSES` regional internal ones.
fn quota_verdict(region: &str, quotas: &[(Metric, f64, f64)], public: u32, private: u32) -> Check {
    const NAME: &str = "quota-addresses";
    let mut wanted = Vec::new();
    for (metric, needed) in [
        (Metric::StaticAddresses, public),
        (Metric::InternalAddresses, private),
    ] {
        if needed == 0 {
            continue;
        }
        let label = metric.name().unwrap_or("?").to_string();
        let Some((_, limit, used)) = quotas.iter().find(|(m, _, _)| m == &metric) else {
            return Check::warn(
                NAME,
                format!("regions.get reported no {label} quota for {region}"),
                None,
            );
        };
        wanted.push(Quota {
            label,
            limit: *limit,
            used: *used,
            needed,
        });
    }
    quota_check(NAME, region, &wanted, |short| {
        format!(
            "release unused addresses in {region} or request more {short} quota (IAM & Admin > Quotas)"
        )
    })
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
    use crate::preflight::Verdict;

    #[test]
    fn quota_counts_external_and_internal_addresses_separately() {
        let quotas = [
            (Metric::StaticAddresses, 8.0, 7.0),
            (Metric::InternalAddresses, 200.0, 0.0),
            (Metric::InUseAddresses, 8.0, 8.0),
        ];
        let fine = quota_verdict("r", &quotas, 1, 1);
        assert_eq!(fine.verdict, Verdict::Pass, "{fine:?}");
        assert!(
            fine.reason
                .contains("STATIC_ADDRESSES limit 8, used 7, free 1, needed 1")
        );
        let short = quota_verdict("r", &quotas, 2, 1);
        assert_eq!(short.verdict, Verdict::Fail, "{short:?}");
        assert!(short.fix.unwrap().contains("STATIC_ADDRESSES"));
        let internal_short = quota_verdict("r", &[(Metric::InternalAddresses, 1.0, 1.0)], 0, 1);
        assert_eq!(internal_short.verdict, Verdict::Fail);
        let unknown = quota_verdict("r", &[], 1, 0);
        assert_eq!(unknown.verdict, Verdict::Warn);
        assert_eq!(quota_verdict("r", &[], 0, 0).verdict, Verdict::Pass);
    }

    #[test]
    fn instance_groups_fail_only_when_no_zone_has_one() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let none = instance_groups_verdict(
            "r",
            &[],
            &names(&["c-master-r-a", "c-master-r-b"]),
            "fix".into(),
        );
        assert_eq!(none.verdict, Verdict::Fail, "{none:?}");
        assert!(none.reason.contains("c-master-r-a") && none.reason.contains("wrongSubnetwork"));
        let some = instance_groups_verdict(
            "r",
            &names(&["c-master-r-a"]),
            &names(&["c-master-r-b"]),
            "fix".into(),
        );
        assert_eq!(some.verdict, Verdict::Pass, "{some:?}");
        assert!(some.reason.contains("c-master-r-b"), "{some:?}");
    }

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
