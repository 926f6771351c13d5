//! The installer's per-zone instance groups `<infra-id>-master-<zone>`, which OpenShift's
//! cloud provider reuses for the internal load balancers.

use super::GcpPreflight;
use crate::gcp::classify;
use crate::preflight::Check;

impl GcpPreflight {
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
    pub(super) async fn instance_groups(&self) -> Check {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::Verdict;

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
}
