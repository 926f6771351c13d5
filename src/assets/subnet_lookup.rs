//! Settling the AWS subnets the install-config leaves to EC2: what to ask, and what the
//! answer makes of each subnet (public or private, by role tag or route table).

use super::aws_subnets::{missing_role, needed_for, sorted};
use super::spec::*;
use crate::error::InputError;
use bootstrap_cloud::subnets::{ROLE_ELB_TAG, ROLE_INTERNAL_ELB_TAG, SubnetFacts, SubnetQuery};

impl SubnetLookup {
    /// What to ask EC2.
    pub fn query(&self) -> SubnetQuery {
        match &self.how {
            LookupKind::Listed(listed) => {
                SubnetQuery::Ids(listed.iter().map(|s| s.id.clone()).collect())
            }
            LookupKind::ClusterTag => SubnetQuery::ClusterTag,
        }
    }

    /// Says, for `plan --offline`, why nothing can be planned without EC2.
    pub fn offline_error(&self, infra_id: &str) -> InputError {
        let (field, problem) = match &self.how {
            LookupKind::Listed(listed) => (
                list_field(listed),
                "lists subnets without roles; each is classified at run time (role tag, else route table), so `plan --offline`, which makes no cloud calls, cannot plan their reservations; run `plan` without --offline, or give the subnets roles".to_string(),
            ),
            LookupKind::ClusterTag => (
                "platform.aws.vpc.subnets".to_string(),
                format!("absent (installer-made VPC): the subnets are discovered at run time by tag kubernetes.io/cluster/{infra_id}, so `plan --offline`, which makes no cloud calls, cannot plan their reservations; run `plan` without --offline"),
            ),
        };
        InputError::new(&self.file, ic_field(&field), problem)
    }

    /// Settles the subnets from what EC2 returned for [`SubnetLookup::query`]. Pure.
    pub fn resolve(
        &self,
        infra_id: &str,
        region: &str,
        publish: Publish,
        found: &[SubnetFacts],
    ) -> Result<AwsSubnets, InputError> {
        let err =
            |field: &str, problem: String| InputError::new(&self.file, ic_field(field), problem);
        match &self.how {
            LookupKind::ClusterTag => {
                let field = "platform.aws.vpc.subnets";
                let cluster_tag = format!("kubernetes.io/cluster/{infra_id}");
                if found.is_empty() {
                    return Err(err(
                        field,
                        format!(
                            "absent, so the installer made the VPC; but no subnet in {region} has the tag {cluster_tag} (owned or shared); expected the installer's subnets, or name them in platform.aws.vpc.subnets with roles"
                        ),
                    ));
                }
                let mut subnets = Vec::new();
                let mut ignored = Vec::new();
                for facts in found {
                    let source = Source::DiscoveredByTag {
                        tag: format!(
                            "{cluster_tag}={}",
                            facts.tags.get(&cluster_tag).map_or("", String::as_str)
                        ),
                    };
                    let before = subnets.len();
                    subnets.extend(by_role_tag(facts, &source));
                    if subnets.len() == before {
                        ignored.push(facts.id.clone());
                    }
                }
                let subnets = sorted(subnets);
                if let Some(role) = missing_role(&subnets, publish) {
                    let all: Vec<&str> = found.iter().map(|s| s.id.as_str()).collect();
                    return Err(err(
                        field,
                        format!(
                            "absent; of the subnets tagged {cluster_tag} in {region} ({}), none has the tag {}; {}",
                            all.join(", "),
                            role_tag(role),
                            needed_for(role)
                        ),
                    ));
                }
                Ok(AwsSubnets::Known { subnets, ignored })
            }
            LookupKind::Listed(listed) => {
                let mut subnets = Vec::new();
                for entry in listed {
                    let facts = found.iter().find(|f| f.id == entry.id).ok_or_else(|| {
                        err(
                            &entry.field,
                            format!(
                                "{} not found in {region}; expected an existing subnet",
                                entry.id
                            ),
                        )
                    })?;
                    let source = Source::InstallConfig {
                        field: entry.field.clone(),
                    };
                    if facts.has_role_tag() {
                        subnets.extend(by_role_tag(facts, &source));
                        continue;
                    }
                    let table = facts.route_table.as_ref().ok_or_else(|| {
                        err(
                            &entry.field,
                            format!("{} has no role tag, and no route table applies to it (no explicit association, and {} has no main route table); expected one, or the tag {ROLE_ELB_TAG} or {ROLE_INTERNAL_ELB_TAG}", entry.id, facts.vpc),
                        )
                    })?;
                    subnets.push(AwsSubnet {
                        id: facts.id.clone(),
                        role: if table.internet_gateway.is_some() {
                            SubnetRole::Public
                        } else {
                            SubnetRole::Private
                        },
                        source,
                        classified_by: Classification::RouteTable {
                            route_table: table.id.clone(),
                            main: table.main,
                            internet_gateway: table.internet_gateway.clone(),
                        },
                    });
                }
                let subnets = sorted(subnets);
                if let Some(role) = missing_role(&subnets, publish) {
                    let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
                    let how = match role {
                        SubnetRole::Private => "no 0.0.0.0/0 route to an internet gateway",
                        SubnetRole::Public => "a 0.0.0.0/0 route to an internet gateway",
                    };
                    return Err(err(
                        &list_field(listed),
                        format!(
                            "none of the listed subnets ({}) is {role} (tag {}, or without role tags {how}); {}",
                            ids.join(", "),
                            role_tag(role),
                            needed_for(role)
                        ),
                    ));
                }
                Ok(AwsSubnets::Known {
                    subnets,
                    ignored: Vec::new(),
                })
            }
        }
    }
}

fn ic_field(field: &str) -> String {
    format!("data.install-config: {field}")
}

/// `platform.aws.subnets` or `platform.aws.vpc.subnets`, from an entry's field.
fn list_field(listed: &[ListedSubnet]) -> String {
    listed
        .first()
        .and_then(|s| s.field.split('[').next())
        .unwrap_or("platform.aws.subnets")
        .to_string()
}

fn role_tag(role: SubnetRole) -> &'static str {
    match role {
        SubnetRole::Public => ROLE_ELB_TAG,
        SubnetRole::Private => ROLE_INTERNAL_ELB_TAG,
    }
}

/// The roles a subnet's role tags give it (none, one, or both).
fn by_role_tag(facts: &SubnetFacts, source: &Source) -> Vec<AwsSubnet> {
    [
        (facts.tagged_public(), SubnetRole::Public, ROLE_ELB_TAG),
        (
            facts.tagged_private(),
            SubnetRole::Private,
            ROLE_INTERNAL_ELB_TAG,
        ),
    ]
    .into_iter()
    .filter(|(tagged, _, _)| *tagged)
    .map(|(_, role, key)| AwsSubnet {
        id: facts.id.clone(),
        role,
        source: source.clone(),
        classified_by: Classification::Tag {
            tag: format!("{key}={}", facts.tags.get(key).map_or("", String::as_str)),
        },
    })
    .collect()
}
