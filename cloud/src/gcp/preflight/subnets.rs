//! The cluster's subnetworks exist in the region under the project that holds the network (a
//! Shared VPC's host project) and belong to the cluster's network.

use super::GcpPreflight;
use crate::gcp::classify;
use crate::preflight::Check;

impl GcpPreflight {
    pub(super) async fn subnets(&self) -> Check {
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
}
