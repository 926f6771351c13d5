//! AWS preflight: who we are (STS GetCallerIdentity), whether EC2 would let us make our
//! mutations (`DryRun=true`: a permitted call answers `DryRunOperation`, a forbidden one
//! `UnauthorizedOperation`), whether the Elastic IP limit leaves room (DescribeAccountAttributes
//! `vpc-max-elastic-ips` minus the EIPs in use), whether a `publicIpv4Pool` has a free address
//! per EIP (DescribePublicIpv4Pools), whether every subnet exists in one VPC with
//! free addresses (`AvailableIpAddressCount`), and whether the private hosted zone is
//! associated with that VPC (GetHostedZone `VPCs`), and whether the AWS Load Balancer Controller
//! can pick the backend security group of each control-plane ENI (`backend_sg`). Reads and dry
//! runs only.
//!
//! The dry runs carry the `TagSpecifications` the real calls carry: EC2 authorizes
//! `ec2:CreateTags` too when a create call tags on create (EC2 user guide, "Grant permission
//! to tag Amazon EC2 resources during creation"), so a policy without it passes a dry run
//! without tags and then fails `reserve`. Route53 has no dry run: its write permission is
//! proven by a change that cannot apply (`route53_write`).
//!
//! One file per check: `dry_run` (the EC2 mutations), `route53_write`, `quota` (the Elastic
//! IP limit and the BYO-IP pool), `subnets`, `private_zone_vpc`.

mod dry_run;
mod private_zone_vpc;
mod quota;
mod route53_write;
mod subnets;

use super::{AwsSettings, classify};
use crate::preflight::{Check, Needs, Preflight};
use async_trait::async_trait;

/// Said wherever a permission is missing and the agent has no creds secret: it then runs with
/// the SDK's default chain, on the bootstrap host the instance's role, and the installer gives
/// that role none of the agent's mutations (openshift/installer
/// pkg/infrastructure/aws/clusterapi/iam.go: the control-plane policy has `ec2:CreateTags` and
/// `ec2:Describe*`, but no `ec2:AllocateAddress`, `ec2:CreateNetworkInterface`,
/// `ec2:DeleteNetworkInterface`, `ec2:ReleaseAddress` nor any `route53:` action).
const INSTANCE_ROLE_HINT: &str = "no creds secret (openshift/99_cloud-creds-secret.yaml): the agent uses the SDK's default chain, on the bootstrap host the instance's role, which the installer grants none of the agent's mutations (openshift/installer pkg/infrastructure/aws/clusterapi/iam.go)";

pub struct AwsPreflight {
    ec2: aws_sdk_ec2::Client,
    route53: aws_sdk_route53::Client,
    sts: aws_sdk_sts::Client,
    infra_id: String,
    /// The keys are the installer's creds secret's (else the default chain: the instance role).
    keys_from_secret: bool,
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
        settings: &AwsSettings,
        private_zone_via_role: bool,
    ) -> Self {
        Self {
            ec2: aws_sdk_ec2::Client::new(ec2),
            route53: aws_sdk_route53::Client::new(route53),
            sts: aws_sdk_sts::Client::new(sts),
            infra_id: settings.infra_id.clone(),
            keys_from_secret: settings.keys.is_some(),
            private_zone_via_role,
            public_ipv4_pool: settings.public_ipv4_pool.clone(),
        }
    }

    /// `fix`, and on the instance role why that role cannot do it.
    fn grant(&self, fix: String) -> String {
        if self.keys_from_secret {
            fix
        } else {
            format!(
                "{fix}; {INSTANCE_ROLE_HINT}: give the agent the installer's creds secret, or grant the role"
            )
        }
    }

    async fn identity(&self) -> Check {
        const NAME: &str = "credentials";
        let source = if self.keys_from_secret {
            "the installer's creds secret".to_string()
        } else {
            INSTANCE_ROLE_HINT.to_string()
        };
        match self.sts.get_caller_identity().send().await {
            Ok(out) => Check::pass(
                NAME,
                format!(
                    "STS GetCallerIdentity: {} (account {}); keys: {source}",
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
}

#[async_trait]
impl Preflight for AwsPreflight {
    async fn checks(&self, needs: &Needs) -> Vec<Check> {
        let mut checks = vec![self.identity().await];
        checks.extend(self.permissions(needs).await);
        checks.push(self.route53_write(needs).await);
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
        checks.push(
            super::backend_sg::check(&self.ec2, &self.infra_id, |action| {
                self.grant(format!(
                    "allow {action} to the agent's identity (IAM policy; `bootstrap-agent permissions --cloud aws` prints it)"
                ))
            })
            .await,
        );
        checks
    }
}
