//! What the cloud says about subnets the install-config does not name with roles (AWS: an
//! installer-made VPC, or the flat `platform.aws.subnets` list). The provider only reads these
//! facts; deciding which subnet is public or private is the agent's, in one pure function, so
//! it can be tested without a cloud.

use std::collections::BTreeMap;

/// The subnet tag the AWS load-balancer controllers read: a subnet for internet-facing LBs.
pub const ROLE_ELB_TAG: &str = "kubernetes.io/role/elb";
/// The subnet tag for internal LBs.
pub const ROLE_INTERNAL_ELB_TAG: &str = "kubernetes.io/role/internal-elb";

/// Which subnets to describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubnetQuery {
    /// These ids (absent ones are simply not returned, so the caller can name them).
    Ids(Vec<String>),
    /// Every subnet tagged `kubernetes.io/cluster/<infra-id>` with `owned` or `shared`.
    ClusterTag,
}

/// One subnet as the cloud reports it, reduced to what classification needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubnetFacts {
    pub id: String,
    pub vpc: String,
    pub zone: String,
    pub tags: BTreeMap<String, String>,
    /// The route table that applies to the subnet. Looked up only for a subnet of an id query
    /// without a role tag (the only case that needs it); None otherwise, or when the subnet has
    /// no explicit association and its VPC no main table.
    pub route_table: Option<RouteTableFacts>,
}

impl SubnetFacts {
    /// `kubernetes.io/role/elb` is set (value empty or `1`, as the load-balancer controllers
    /// read it).
    pub fn tagged_public(&self) -> bool {
        role_tag_set(&self.tags, ROLE_ELB_TAG)
    }

    /// `kubernetes.io/role/internal-elb` is set.
    pub fn tagged_private(&self) -> bool {
        role_tag_set(&self.tags, ROLE_INTERNAL_ELB_TAG)
    }

    pub fn has_role_tag(&self) -> bool {
        self.tagged_public() || self.tagged_private()
    }
}

fn role_tag_set(tags: &BTreeMap<String, String>, key: &str) -> bool {
    tags.get(key).is_some_and(|v| v.is_empty() || v == "1")
}

/// The route table that applies to a subnet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteTableFacts {
    pub id: String,
    /// True when it applies only as the VPC's main table (no explicit association).
    pub main: bool,
    /// The internet gateway its `0.0.0.0/0` route goes to, if that route goes to one.
    pub internet_gateway: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(tags: &[(&str, &str)]) -> SubnetFacts {
        SubnetFacts {
            id: "subnet-1".into(),
            vpc: "vpc-1".into(),
            zone: "us-east-1a".into(),
            tags: tags
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            route_table: None,
        }
    }

    #[test]
    fn role_tags_count_with_value_empty_or_one_only() {
        assert!(facts(&[(ROLE_ELB_TAG, "1")]).tagged_public());
        assert!(facts(&[(ROLE_ELB_TAG, "")]).tagged_public());
        assert!(!facts(&[(ROLE_ELB_TAG, "0")]).tagged_public());
        assert!(facts(&[(ROLE_INTERNAL_ELB_TAG, "1")]).tagged_private());
        assert!(!facts(&[(ROLE_INTERNAL_ELB_TAG, "1")]).tagged_public());
        assert!(!facts(&[("Name", "x")]).has_role_tag());
    }
}
