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
//! proven by a change that cannot apply (see [`AwsPreflight::route53_write`]).

use super::{AwsSettings, classify};
use crate::preflight::{Check, Needs, Preflight, is_denied};
use crate::{ReservationKey, Scope, Zone};
use async_trait::async_trait;
use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{DomainType, Filter, ResourceType};
use std::collections::BTreeSet;

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

    /// One dry-run mutation: `DryRunOperation` means it would have been allowed.
    fn dry_run_verdict<E, R>(
        &self,
        action: &str,
        what: &str,
        result: Result<impl Sized, aws_sdk_ec2::error::SdkError<E, R>>,
    ) -> Check
    where
        E: ProvideErrorMetadata + std::error::Error,
        R: std::fmt::Debug + super::HttpStatus,
    {
        let name = line_of(action);
        // The call tags on create: the tagging row is asked with it.
        let mut actions = crate::permissions::aws_actions_of_line(name);
        for grant in crate::permissions::AWS {
            if grant.condition == crate::permissions::AwsCondition::CreateAction
                && !actions.contains(&grant.action)
            {
                actions.push(grant.action);
            }
        }
        let fix = self.grant(format!(
            "allow {} (the call tags on create) to the agent's identity (IAM policy; `bootstrap-agent permissions --cloud aws` prints it)",
            actions.join(" and ")
        ));
        match result {
            Err(e) if e.code() == Some("DryRunOperation") => Check::pass(
                name,
                format!(
                    "ec2:{action} with its tags ({what}): DryRun answered DryRunOperation (allowed)"
                ),
            ),
            Err(e) => {
                let err = classify(action, e);
                if is_denied(&err) {
                    Check::fail(name, format!("ec2:{action} ({what}): {err}"), fix)
                } else {
                    Check::from_error(name, &err, fix)
                }
            }
            // A dry run that succeeds is not one: say so rather than call it a pass.
            Ok(_) => Check::warn(
                name,
                format!(
                    "ec2:{action}: the DryRun call succeeded instead of answering DryRunOperation"
                ),
                None,
            ),
        }
    }

    /// The tags of the first reservation of `scope` still to make: the dry run sends them as
    /// the real call will.
    fn tags_of(
        &self,
        needs: &Needs,
        scope: Scope,
        resource: ResourceType,
    ) -> Option<aws_sdk_ec2::types::TagSpecification> {
        let (key, name): &(ReservationKey, String) =
            needs.to_reserve.iter().find(|(k, _)| k.scope == scope)?;
        Some(super::ec2::reservation_tags(
            &self.infra_id,
            resource,
            name,
            key,
        ))
    }

    async fn permissions(&self, needs: &Needs) -> Vec<Check> {
        let mut checks = Vec::new();
        if needs.public_addresses > 0 {
            let result = self
                .ec2
                .allocate_address()
                .domain(DomainType::Vpc)
                .set_tag_specifications(
                    self.tags_of(needs, Scope::Public, ResourceType::ElasticIp)
                        .map(|t| vec![t]),
                )
                .dry_run(true)
                .send()
                .await;
            checks.push(self.dry_run_verdict("AllocateAddress", "reserve the public IPs", result));
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
                .set_tag_specifications(
                    self.tags_of(needs, Scope::Private, ResourceType::NetworkInterface)
                        .map(|t| vec![t]),
                )
                .dry_run(true)
                .send()
                .await;
            checks.push(self.dry_run_verdict(
                "CreateNetworkInterface",
                "hold the private IPs",
                result,
            ));
        }
        const RELEASE: &str = "permission-ec2-release";
        checks.push(Check::not_checked(
            RELEASE,
            format!(
                "{} dry-run only against an existing resource: the step that calls it fails naming it",
                crate::permissions::aws_actions_of_line(RELEASE).join(" and ")
            ),
        ));
        checks
    }

    /// Route53 has no dry run. The proof of `route53:ChangeResourceRecordSets` is a change
    /// that cannot apply: a DELETE of a record set that does not exist (a name no one uses,
    /// `bootstrap-agent-preflight-<nonce>.<zone>`, A, TTL 60, 192.0.2.1 from TEST-NET-1).
    /// Route53 authorizes the request first (IAM answers AccessDenied) and only then checks
    /// the batch, refusing it whole with InvalidChangeBatch ("it was not found"): allowed,
    /// and nothing changed. A DELETE, because the agent's compare-and-swap sends DELETE and
    /// CREATE in one batch. What it cannot see: a policy that allows only some names or types
    /// (the `route53:ChangeResourceRecordSets*` condition keys) refuses this name and may
    /// allow the agent's.
    async fn route53_write(&self, needs: &Needs) -> Check {
        const NAME: &str = "permission-route53-change-record-sets";
        let zones: Vec<&Zone> = needs
            .zones
            .iter()
            .filter(|z| !(z.reference.private && self.private_zone_via_role))
            .collect();
        if zones.is_empty() {
            return Check::not_checked(
                NAME,
                "no Route53 zone the agent writes with these credentials (DNS is the user's, no zone was found, or the private zone is written through hostedZoneRole)",
            );
        }
        let fix = self.grant(format!(
            "allow {} on the cluster's hosted zones to the agent's identity (IAM policy; `bootstrap-agent permissions --cloud aws` prints it)",
            crate::permissions::aws_actions_of_line(NAME).join(" and ")
        ));
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mut proven = Vec::new();
        for zone in zones {
            let id = zone.id.trim_start_matches("/hostedzone/");
            let name = format!(
                "bootstrap-agent-preflight-{nonce:x}-{}.{}",
                std::process::id(),
                zone.reference.domain
            );
            let result = match probe_delete(&name) {
                Ok(batch) => {
                    self.route53
                        .change_resource_record_sets()
                        .hosted_zone_id(id)
                        .change_batch(batch)
                        .send()
                        .await
                }
                Err(e) => {
                    return Check::warn(NAME, format!("could not build the probe: {e}"), None);
                }
            };
            match result {
                Err(e) if e.code() == Some("InvalidChangeBatch") => {
                    proven.push(format!("{id} ({})", zone.reference.domain))
                }
                Err(e) => {
                    let err = classify("ChangeResourceRecordSets", e);
                    let reason = format!(
                        "route53:ChangeResourceRecordSets on {id} ({}): {err}",
                        zone.reference.domain
                    );
                    return if is_denied(&err) {
                        Check::fail(NAME, reason, fix)
                    } else if err.is_transient() {
                        Check::warn(NAME, format!("could not check: {reason}"), None)
                    } else {
                        Check::fail(NAME, reason, fix)
                    };
                }
                // Only a record of that name with those values could be deleted: none exists.
                Ok(_) => {
                    return Check::warn(
                        NAME,
                        format!(
                            "the probe DELETE of {name} in {id} succeeded: a record of that name existed and is gone"
                        ),
                        None,
                    );
                }
            }
        }
        Check::pass(
            NAME,
            format!(
                "route53:ChangeResourceRecordSets on {}: a DELETE of a record that does not exist answered InvalidChangeBatch (authorized; nothing changed)",
                proven.join(", ")
            ),
        )
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

/// The probe's batch: DELETE `name` A 60 192.0.2.1.
fn probe_delete(
    name: &str,
) -> Result<aws_sdk_route53::types::ChangeBatch, aws_sdk_route53::error::BuildError> {
    use aws_sdk_route53::types::{
        Change, ChangeAction, ChangeBatch, ResourceRecord, ResourceRecordSet, RrType,
    };
    let set = ResourceRecordSet::builder()
        .name(name)
        .r#type(RrType::A)
        .ttl(60)
        .resource_records(ResourceRecord::builder().value("192.0.2.1").build()?)
        .build()?;
    ChangeBatch::builder()
        .comment("bootstrap-agent preflight: proves the write permission; cannot apply")
        .changes(
            Change::builder()
                .action(ChangeAction::Delete)
                .resource_record_set(set)
                .build()?,
        )
        .build()
}

/// The preflight line that proves the ec2 `action` (the table's, [`crate::permissions::AWS`]).
fn line_of(action: &str) -> &'static str {
    crate::permissions::AWS
        .iter()
        .filter(|g| g.action.strip_prefix("ec2:") == Some(action))
        .find_map(|g| match g.proof {
            crate::permissions::Proof::Preflight(line) => Some(line),
            crate::permissions::Proof::Step(_) => None,
        })
        .unwrap_or("permissions")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ZoneRef;
    use crate::preflight::Verdict;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A one-request HTTP server on loopback answering `status` with `body`; the request it
    /// got comes back through the handle.
    async fn answer_once(status: u16, body: String) -> (String, tokio::task::JoinHandle<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = conn.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if rest.len() >= length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: text/xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            conn.write_all(reply.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request).to_string()
        });
        (url, task)
    }

    fn route53_error(code: &str, message: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?>\n<ErrorResponse xmlns=\"https://route53.amazonaws.com/doc/2013-04-01/\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>"
        )
    }

    /// The probe as Route53 sees it: one DELETE of a record no one has, in the zone; Route53's
    /// AccessDenied fails the line (naming the instance role when there is no creds secret),
    /// its InvalidChangeBatch passes it.
    #[tokio::test]
    async fn the_route53_probe_passes_on_invalid_change_batch_and_fails_when_denied() {
        let needs = Needs {
            zones: vec![Zone {
                reference: ZoneRef {
                    domain: "mycluster.example.com".into(),
                    private: true,
                    id: None,
                    tags: Default::default(),
                },
                id: "/hostedzone/Z0PRIVATE".into(),
            }],
            ..Needs::default()
        };
        let cases = [
            (
                400,
                route53_error(
                    "InvalidChangeBatch",
                    "[Tried to delete resource record set [name='x', type='A'] but it was not found]",
                ),
                Verdict::Pass,
                true,
            ),
            (
                403,
                route53_error(
                    "AccessDenied",
                    "User: arn:aws:sts::123456789012:assumed-role/x-master-role/i-0 is not authorized to perform: route53:ChangeResourceRecordSets on resource: arn:aws:route53:::hostedzone/Z0PRIVATE",
                ),
                Verdict::Fail,
                false,
            ),
        ];
        for (status, body, verdict, with_secret) in cases {
            let (url, request) = answer_once(status, body).await;
            let settings = AwsSettings {
                region: "us-east-1".into(),
                infra_id: "mycluster-7xk2p".into(),
                keys: with_secret.then(|| super::super::StaticKeys {
                    access_key_id: "AKIATESTEXAMPLE00000".into(),
                    secret_access_key: "test-secret".into(),
                }),
                public_ipv4_pool: None,
            };
            // Without a creds secret the default chain must still find keys: none here, so
            // only the line's words are judged, not the identity.
            let mut config = super::super::load_config(&settings).await;
            if !with_secret {
                config = config
                    .into_builder()
                    .credentials_provider(
                        aws_credential_types::provider::SharedCredentialsProvider::new(
                            aws_sdk_ec2::config::Credentials::new(
                                "AKIATESTEXAMPLE00000",
                                "test-secret",
                                None,
                                None,
                                "test",
                            ),
                        ),
                    )
                    .build();
            }
            let config = super::super::with_endpoint(&config, Some(&url));
            let preflight = AwsPreflight::new(&config, &config, &config, &settings, false);
            let check = preflight.route53_write(&needs).await;
            assert_eq!(check.verdict, verdict, "{check:?}");
            let request = request.await.unwrap();
            assert!(
                request.starts_with("POST /2013-04-01/hostedzone/Z0PRIVATE/rrset"),
                "{request}"
            );
            assert!(
                request.contains("<Action>DELETE</Action>")
                    && request.contains("<Name>bootstrap-agent-preflight-")
                    && request.contains(".mycluster.example.com</Name>"),
                "{request}"
            );
            if verdict == Verdict::Fail {
                let fix = check.fix.clone().unwrap_or_default();
                assert!(fix.contains("route53:ChangeResourceRecordSets"), "{fix}");
                assert!(fix.contains("the instance's role"), "{fix}");
                assert!(check.reason.contains("AccessDenied"), "{check:?}");
            } else {
                assert!(check.reason.contains("nothing changed"), "{check:?}");
            }
        }
    }

    /// The permission lines are the table's: every line a row names is one preflight can
    /// show, every `permission-*` line preflight shows is proven by a row, and the dry runs
    /// take their line from the row of their action.
    #[test]
    fn the_permission_lines_are_the_tables() {
        use crate::permissions::{AWS, Proof};
        let from_table: BTreeSet<&str> = AWS
            .iter()
            .filter_map(|g| match g.proof {
                Proof::Preflight(line) | Proof::Step(Some(line)) => Some(line),
                Proof::Step(None) => None,
            })
            .collect();
        for line in &from_table {
            assert!(
                crate::preflight::AWS_CHECKS.contains(line)
                    || crate::preflight::SHARED_CHECKS.contains(line),
                "{line}"
            );
        }
        for line in crate::preflight::AWS_CHECKS {
            if line.starts_with("permission-") {
                assert!(from_table.contains(line), "{line} has no row");
            }
        }
        assert_eq!(
            line_of("AllocateAddress"),
            "permission-ec2-allocate-address"
        );
        assert_eq!(
            line_of("CreateNetworkInterface"),
            "permission-ec2-create-network-interface"
        );
        assert_eq!(
            crate::permissions::aws_actions_of_line("permission-ec2-create-network-interface"),
            ["ec2:CreateNetworkInterface", "ec2:CreateTags"]
        );
    }
}
