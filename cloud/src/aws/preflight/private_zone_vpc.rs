//! The private hosted zone is associated with the cluster's VPC (GetHostedZone `VPCs`), or the
//! cluster would not resolve api-int.

use super::AwsPreflight;
use crate::Zone;
use crate::aws::classify;
use crate::preflight::Check;

impl AwsPreflight {
    pub(super) async fn zone_association(&self, zone: Option<&Zone>, vpc: Option<&str>) -> Check {
        const NAME: &str = "private-zone-vpc";
        if self.private_zone_via_role {
            return Check::not_checked(
                NAME,
                "the private zone is another account's (hostedZoneRole); its VPC associations are that account's to read",
            );
        }
        let (Some(zone), Some(vpc)) = (zone, vpc) else {
            return Check::not_checked(NAME, "no private zone or no VPC known");
        };
        let id = zone.id.trim_start_matches("/hostedzone/");
        match self.route53.get_hosted_zone().id(id).send().await {
            Ok(out) => {
                let vpcs: Vec<&str> = out.vpcs().iter().filter_map(|v| v.vpc_id()).collect();
                if vpcs.contains(&vpc) {
                    Check::pass(NAME, format!("{id} is associated with {vpc}"))
                } else {
                    Check::fail(
                        NAME,
                        format!(
                            "{id} ({}) is associated with [{}], not with the cluster's {vpc}: the cluster would not resolve api-int",
                            zone.reference.domain,
                            vpcs.join(", ")
                        ),
                        format!(
                            "associate the zone with {vpc} (Route53 AssociateVPCWithHostedZone)"
                        ),
                    )
                }
            }
            Err(e) => Check::from_error(
                NAME,
                &classify("GetHostedZone", e),
                "allow route53:GetHostedZone",
            ),
        }
    }
}
