//! Room for the Elastic IPs to allocate: the account's EIP limit, and the BYO-IP pool's free
//! addresses when `publicIpv4Pool` is set.

use super::AwsPreflight;
use crate::aws::classify;
use crate::preflight::{Check, Needs};

impl AwsPreflight {
    pub(super) async fn quota(&self, needs: &Needs) -> Check {
        const NAME: &str = "quota-elastic-ips";
        let fix = "release unused Elastic IPs or ask AWS to raise the \"EC2-VPC Elastic IPs\" quota (Service Quotas L-0263D0A3)";
        if needs.public_addresses == 0 {
            return Check::pass(NAME, "no Elastic IP to allocate");
        }
        let limit = match self
            .ec2
            .describe_account_attributes()
            // The SDK's enum knows only default-vpc and supported-platforms.
            .attribute_names(aws_sdk_ec2::types::AccountAttributeName::from(
                "vpc-max-elastic-ips",
            ))
            .send()
            .await
        {
            Ok(out) => out
                .account_attributes()
                .iter()
                .filter(|a| a.attribute_name() == Some("vpc-max-elastic-ips"))
                .flat_map(|a| a.attribute_values())
                .find_map(|v| v.attribute_value()?.parse::<u32>().ok()),
            Err(e) => {
                return Check::from_error(NAME, &classify("DescribeAccountAttributes", e), fix);
            }
        };
        let Some(limit) = limit else {
            return Check::warn(
                NAME,
                "DescribeAccountAttributes reported no vpc-max-elastic-ips",
                None,
            );
        };
        let in_use = match self.ec2.describe_addresses().send().await {
            Ok(out) => out.addresses().len() as u32,
            Err(e) => return Check::from_error(NAME, &classify("DescribeAddresses", e), fix),
        };
        let free = limit.saturating_sub(in_use);
        let line = format!(
            "vpc-max-elastic-ips {limit}, in use {in_use}, free {free}, needed {}",
            needs.public_addresses
        );
        enough(NAME, free, needs.public_addresses, line, fix)
    }

    /// `publicIpv4Pool`: the pool has a free address for every EIP to allocate
    /// (DescribePublicIpv4Pools `TotalAvailableAddressCount`).
    pub(super) async fn pool(&self, pool: &str, needs: &Needs) -> Check {
        const NAME: &str = "public-ipv4-pool";
        let fix = format!(
            "add addresses to public IPv4 pool {pool} or release some of it (the agent never falls back to Amazon's pool)"
        );
        if needs.public_addresses == 0 {
            return Check::pass(NAME, "no Elastic IP to allocate");
        }
        let (total, free) = match crate::aws::ec2::describe_pool(&self.ec2, pool).await {
            Ok(p) => (p.total, p.free),
            Err(e) => return Check::from_error(NAME, &e, fix),
        };
        let line = format!(
            "{pool}: needs {}, has {free} free (of {total})",
            needs.public_addresses
        );
        enough(NAME, free, needs.public_addresses, line, fix)
    }
}

/// The line `name` passes when `free` covers what is `needed`, else fails with `fix`.
fn enough(name: &str, free: u32, needed: u32, line: String, fix: impl Into<String>) -> Check {
    if free >= needed {
        Check::pass(name, line)
    } else {
        Check::fail(name, line, fix)
    }
}
