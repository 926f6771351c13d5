//! The install-config's subnets: they exist, in one VPC, each with room for its addresses.

use super::AwsPreflight;
use crate::aws::classify;
use crate::preflight::{Check, Needs};
use aws_sdk_ec2::types::Filter;
use std::collections::BTreeSet;

impl AwsPreflight {
    /// Every subnet exists, all in one VPC, each with room for the addresses it gets. The VPC.
    pub(super) async fn subnets(&self, needs: &Needs) -> (Check, Option<String>) {
        const NAME: &str = "subnets";
        if needs.subnets.is_empty() {
            return (Check::pass(NAME, "no subnet to use"), None);
        }
        let fix = "correct platform.aws.subnets in the install-config (ids of this region's VPC)";
        let out = match self
            .ec2
            .describe_subnets()
            .filters(
                Filter::builder()
                    .name("subnet-id")
                    .set_values(Some(needs.subnets.clone()))
                    .build(),
            )
            .send()
            .await
        {
            Ok(out) => out,
            Err(e) => {
                return (
                    Check::from_error(NAME, &classify("DescribeSubnets", e), fix),
                    None,
                );
            }
        };
        let found = out.subnets();
        let missing: Vec<&str> = needs
            .subnets
            .iter()
            .filter(|id| !found.iter().any(|s| s.subnet_id() == Some(id.as_str())))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return (
                Check::fail(NAME, format!("not found: {}", missing.join(", ")), fix),
                None,
            );
        }
        let vpcs: BTreeSet<&str> = found.iter().filter_map(|s| s.vpc_id()).collect();
        let vpc = vpcs.iter().next().map(|v| v.to_string());
        if vpcs.len() > 1 {
            return (
                Check::fail(
                    NAME,
                    format!(
                        "the subnets are in {} VPCs ({}); the cluster has one",
                        vpcs.len(),
                        vpcs.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                    fix,
                ),
                None,
            );
        }
        let mut full = Vec::new();
        let mut counts = Vec::new();
        for s in found {
            let id = s.subnet_id().unwrap_or_default();
            let free = s.available_ip_address_count().unwrap_or(0).max(0) as u32;
            let needed = needs.private_addresses.get(id).copied().unwrap_or(0);
            counts.push(format!("{id} {free} free"));
            if free < needed {
                full.push(format!("{id} has {free} free, needs {needed}"));
            }
        }
        let vpc_text = vpc.clone().unwrap_or_default();
        if full.is_empty() {
            (
                Check::pass(NAME, format!("in {vpc_text}: {}", counts.join(", "))),
                vpc,
            )
        } else {
            (
                Check::fail(
                    NAME,
                    format!("no free address: {}", full.join("; ")),
                    "free addresses in the subnet (delete unused network interfaces)",
                ),
                vpc,
            )
        }
    }
}
