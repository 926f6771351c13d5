//! AWS preflight: who we are (STS GetCallerIdentity), whether EC2 would let us make our
//! mutations (`DryRun=true`: a permitted call answers `DryRunOperation`, a forbidden one
//! `UnauthorizedOperation`), whether the Elastic IP limit leaves room (DescribeAccountAttributes
//! `vpc-max-elastic-ips` minus the EIPs in use), whether a `publicIpv4Pool` has a free address
//! per EIP (DescribePublicIpv4Pools), whether every subnet exists in one VPC with
//! free addresses (`AvailableIpAddressCount`), and whether the private hosted zone is
//! associated with that VPC (GetHostedZone `VPCs`). Reads and dry runs only.

use super::classify;
use crate::Zone;
use crate::preflight::{Check, Needs, Preflight, is_denied};
use async_trait::async_trait;
use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{DomainType, Filter};
use std::collections::BTreeSet;

pub struct AwsPreflight {
    ec2: aws_sdk_ec2::Client,
    route53: aws_sdk_route53::Client,
    sts: aws_sdk_sts::Client,
    /// The private zone is another account's (`hostedZoneRole`): the cluster's credentials
    /// cannot read it.
    private_zone_via_role: bool,
    /// `publicIpv4Pool`: the BYO-IP pool every EIP comes from.
    public_ipv4_pool: Option<String>,
}

impl AwsPreflight {
    /// One configuration per service (each may have its own endpoint).
    pub fn new(
        ec2: &aws_config::SdkConfig,
        route53: &aws_config::SdkConfig,
        sts: &aws_config::SdkConfig,
        private_zone_via_role: bool,
        public_ipv4_pool: Option<String>,
    ) -> Self {
        Self {
            ec2: aws_sdk_ec2::Client::new(ec2),
            route53: aws_sdk_route53::Client::new(route53),
            sts: aws_sdk_sts::Client::new(sts),
            private_zone_via_role,
            public_ipv4_pool,
        }
    }

    async fn identity(&self) -> Check {
        const NAME: &str = "credentials";
        match self.sts.get_caller_identity().send().await {
            Ok(out) => Check::pass(
                NAME,
                format!(
                    "STS GetCallerIdentity: {} (account {})",
                    out.arn().unwrap_or("?"),
                    out.account().unwrap_or("?")
                ),
            ),
            Err(e) => Check::from_error(
                NAME,
                &classify("GetCallerIdentity", e),
                "give the agent working AWS credentials (the installer's creds secret, or the default chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile, the instance role)",
            ),
        }
    }

    /// One dry-run mutation: `DryRunOperation` means it would have been allowed.
    fn dry_run_verdict<E, R>(
        action: &str,
        what: &str,
        result: Result<impl Sized, aws_sdk_ec2::error::SdkError<E, R>>,
    ) -> Check
    where
        E: ProvideErrorMetadata + std::error::Error,
        R: std::fmt::Debug + super::HttpStatus,
    {
        let name = format!("permission-ec2-{}", kebab(action));
        let fix = format!("allow ec2:{action} to the agent's identity (IAM policy)");
        match result {
            Err(e) if e.code() == Some("DryRunOperation") => Check::pass(
                &name,
                format!("ec2:{action} ({what}): DryRun answered DryRunOperation (allowed)"),
            ),
            Err(e) => {
                let err = classify(action, e);
                if is_denied(&err) {
                    Check::fail(&name, format!("ec2:{action} ({what}): {err}"), fix)
                } else {
                    Check::from_error(&name, &err, fix)
                }
            }
            // A dry run that succeeds is not one: say so rather than call it a pass.
            Ok(_) => Check::warn(
                &name,
                format!(
                    "ec2:{action}: the DryRun call succeeded instead of answering DryRunOperation"
                ),
                None,
            ),
        }
    }

    async fn permissions(&self, needs: &Needs) -> Vec<Check> {
        let mut checks = Vec::new();
        if needs.public_addresses > 0 {
            let result = self
                .ec2
                .allocate_address()
                .domain(DomainType::Vpc)
                .dry_run(true)
                .send()
                .await;
            checks.push(Self::dry_run_verdict(
                "AllocateAddress",
                "reserve the public IPs",
                result,
            ));
        }
        if let Some(subnet) = needs
            .private_addresses
            .iter()
            .find(|(_, n)| **n > 0)
            .map(|(s, _)| s)
        {
            let result = self
                .ec2
                .create_network_interface()
                .subnet_id(subnet)
                .dry_run(true)
                .send()
                .await;
            checks.push(Self::dry_run_verdict(
                "CreateNetworkInterface",
                "hold the private IPs",
                result,
            ));
        }
        checks.push(Check::not_checked(
            "permission-ec2-release",
            "ec2:DeleteNetworkInterface (hand-over) and ec2:ReleaseAddress (teardown --all) dry-run only against an existing resource",
        ));
        checks
    }

    async fn quota(&self, needs: &Needs) -> Check {
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
        if free >= needs.public_addresses {
            Check::pass(NAME, line)
        } else {
            Check::fail(NAME, line, fix)
        }
    }

    /// `publicIpv4Pool`: the pool has a free address for every EIP to allocate
    /// (DescribePublicIpv4Pools `TotalAvailableAddressCount`).
    async fn pool(&self, pool: &str, needs: &Needs) -> Check {
        const NAME: &str = "public-ipv4-pool";
        let fix = format!(
            "add addresses to public IPv4 pool {pool} or release some of it (the agent never falls back to Amazon's pool)"
        );
        if needs.public_addresses == 0 {
            return Check::pass(NAME, "no Elastic IP to allocate");
        }
        let (total, free) = match super::ec2::describe_pool(&self.ec2, pool).await {
            Ok(p) => (p.total, p.free),
            Err(e) => return Check::from_error(NAME, &e, fix),
        };
        let line = format!(
            "{pool}: needs {}, has {free} free (of {total})",
            needs.public_addresses
        );
        if free >= needs.public_addresses {
            Check::pass(NAME, line)
        } else {
            Check::fail(NAME, line, fix)
        }
    }

    /// Every subnet exists, all in one VPC, each with room for the addresses it gets. The VPC.
    async fn subnets(&self, needs: &Needs) -> (Check, Option<String>) {
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

    async fn zone_association(&self, zone: Option<&Zone>, vpc: Option<&str>) -> Check {
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

fn kebab(action: &str) -> String {
    let mut out = String::new();
    for (i, c) in action.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[async_trait]
impl Preflight for AwsPreflight {
    async fn checks(&self, needs: &Needs) -> Vec<Check> {
        let mut checks = vec![self.identity().await];
        checks.extend(self.permissions(needs).await);
        checks.push(self.quota(needs).await);
        if let Some(pool) = &self.public_ipv4_pool {
            checks.push(self.pool(pool, needs).await);
        }
        let (subnets, vpc) = self.subnets(needs).await;
        checks.push(subnets);
        checks.push(
            self.zone_association(needs.private_zone(), vpc.as_deref())
                .await,
        );
        checks
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn actions_become_check_names() {
        assert_eq!(super::kebab("AllocateAddress"), "allocate-address");
        assert_eq!(
            super::kebab("CreateNetworkInterface"),
            "create-network-interface"
        );
    }
}
