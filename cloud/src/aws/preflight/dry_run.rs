//! The EC2 mutations proven by dry runs (`DryRun=true`), each with the tags the real call
//! carries, and the preflight line of each action as the permissions table names it.

use super::AwsPreflight;
use crate::aws::classify;
use crate::preflight::{Check, Needs, is_denied};
use crate::{ReservationKey, Scope};
use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{DomainType, ResourceType};

impl AwsPreflight {
    /// One dry-run mutation: `DryRunOperation` means it would have been allowed.
    fn dry_run_verdict<E, R>(
        &self,
        action: &str,
        what: &str,
        result: Result<impl Sized, aws_sdk_ec2::error::SdkError<E, R>>,
    ) -> Check
    where
        E: ProvideErrorMetadata + std::error::Error,
        R: std::fmt::Debug + crate::aws::HttpStatus,
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
        Some(crate::aws::ec2::reservation_tags(
            &self.infra_id,
            resource,
            name,
            key,
        ))
    }

    pub(super) async fn permissions(&self, needs: &Needs) -> Vec<Check> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

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
