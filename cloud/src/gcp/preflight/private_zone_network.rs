//! The private managed zone is visible to the cluster's network
//! (`privateVisibilityConfig.networks`), or the cluster would not resolve api-int.

use super::GcpPreflight;
use crate::Zone;
use crate::gcp::classify;
use crate::gcp::dns::zone_in_project;
use crate::preflight::Check;

impl GcpPreflight {
    pub(super) async fn zone_network(&self, zone: Option<&Zone>) -> Check {
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
