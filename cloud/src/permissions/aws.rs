//! The AWS table: the actions of each call, their resources and conditions, per command.

use super::*;

/// When an AWS action is needed, from what the assets say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwsWhen {
    Always,
    /// An Elastic IP is reserved (public API).
    PublicAddresses,
    /// A private IP is held by an ENI (always on AWS: api-int).
    PrivateAddresses,
    /// `publicIpv4Pool` is set.
    Pool,
    /// The agent writes a Route53 zone with the cluster's own credentials.
    ZonesWritten,
    /// A written zone is not named by id: it is looked up by name.
    ZoneLookedUp,
    /// A looked-up zone is named by tags (the DNS manifest's `privateZone.tags`).
    ZoneByTags,
    /// The private zone is written with the cluster's credentials (no `hostedZoneRole`):
    /// preflight reads its VPC associations.
    PrivateZoneWritten,
    /// `hostedZoneRole`: the private zone is written through `sts:AssumeRole` of it.
    ZoneRole,
}

/// The resources an AWS action is scoped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwsResource {
    /// `*`: the action takes no resource, or the resource does not exist yet.
    Any,
    /// `arn:<partition>:route53:::hostedzone/<id>` of each written zone (`/*` when an id is
    /// only known by a lookup).
    HostedZones,
    /// `arn:<partition>:route53:::change/*`.
    Changes,
    /// `arn:<partition>:ec2:<region>:*:elastic-ip/*`, tagged ours.
    ElasticIps,
    /// `arn:<partition>:ec2:<region>:*:network-interface/*`, tagged ours.
    NetworkInterfaces,
    /// The `hostedZoneRole` ARN.
    ZoneRole,
}

/// A condition on the grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwsCondition {
    None,
    /// `aws:ResourceTag/kubernetes.io/cluster/<infraID>` = `owned`: never what we do not own.
    OwnedTag,
    /// `ec2:CreateAction` is one of our create calls: tags only on create.
    CreateAction,
}

/// How a missing action shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// Preflight's line of this name fails naming the action.
    Preflight(&'static str),
    /// No way to ask beforehand: the step that calls it fails naming it (preflight's line of
    /// this name says so, if any).
    Step(Option<&'static str>),
}

/// One row of the AWS table.
#[derive(Debug, Clone, Copy)]
pub struct AwsGrant {
    pub action: &'static str,
    pub when: AwsWhen,
    pub resource: AwsResource,
    pub condition: AwsCondition,
    pub commands: &'static [Command],
    /// The calls that need it, in words.
    pub calls: &'static str,
    pub proof: Proof,
}

/// The ec2 create calls that tag on create (the `ec2:CreateAction` values).
pub const AWS_CREATE_ACTIONS: [&str; 2] = ["AllocateAddress", "CreateNetworkInterface"];

/// Every AWS action the agent calls (STS GetCallerIdentity needs none: AWS answers it for any
/// valid key).
pub const AWS: &[AwsGrant] = &[
    AwsGrant {
        action: "ec2:DescribeAddresses",
        when: AwsWhen::Always,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: OBSERVING,
        calls: "observe our Elastic IPs (filtered by our tag), what holds them, the quota in use",
        proof: Proof::Step(None),
    },
    AwsGrant {
        action: "ec2:DescribeNetworkInterfaces",
        when: AwsWhen::Always,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: OBSERVING,
        calls: "observe our ENIs (filtered by our tag) and the load balancers' interfaces",
        proof: Proof::Step(None),
    },
    AwsGrant {
        action: "ec2:DescribeSubnets",
        when: AwsWhen::Always,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: OBSERVING,
        calls: "the subnets' VPC, zone and free addresses (placements, preflight `subnets`)",
        proof: Proof::Step(None),
    },
    AwsGrant {
        action: "ec2:DescribeInstances",
        when: AwsWhen::Always,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RUN,
        calls: "preflight `control-plane-security-groups`: the control-plane instances (`<infra-id>-master-*`) and their primary ENIs' security groups",
        proof: Proof::Preflight("control-plane-security-groups"),
    },
    AwsGrant {
        action: "ec2:DescribeSecurityGroups",
        when: AwsWhen::Always,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RUN,
        calls: "preflight `control-plane-security-groups`: which of an ENI's groups carry `kubernetes.io/cluster/<infra-id>` (asked only for ENIs with several groups)",
        proof: Proof::Preflight("control-plane-security-groups"),
    },
    AwsGrant {
        action: "ec2:DescribeAccountAttributes",
        when: AwsWhen::PublicAddresses,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RUN,
        calls: "preflight `quota-elastic-ips` (vpc-max-elastic-ips)",
        proof: Proof::Preflight("quota-elastic-ips"),
    },
    AwsGrant {
        action: "ec2:DescribePublicIpv4Pools",
        when: AwsWhen::Pool,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RESERVING_PUBLIC,
        calls: "the BYO-IP pool's free addresses (preflight `public-ipv4-pool`, reserve)",
        proof: Proof::Preflight("public-ipv4-pool"),
    },
    AwsGrant {
        action: "ec2:AllocateAddress",
        when: AwsWhen::PublicAddresses,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RESERVING_PUBLIC,
        calls: "reserve the public IPs (tagged on create)",
        proof: Proof::Preflight("permission-ec2-allocate-address"),
    },
    AwsGrant {
        action: "ec2:CreateNetworkInterface",
        when: AwsWhen::PrivateAddresses,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RESERVING,
        calls: "hold the private IPs in ENIs (tagged on create)",
        proof: Proof::Preflight("permission-ec2-create-network-interface"),
    },
    AwsGrant {
        action: "ec2:CreateTags",
        when: AwsWhen::Always,
        resource: AwsResource::Any,
        condition: AwsCondition::CreateAction,
        commands: RESERVING_PUBLIC,
        calls: "the tags of AllocateAddress and CreateNetworkInterface (EC2 authorizes it for tags on create)",
        proof: Proof::Preflight("permission-ec2-create-network-interface"),
    },
    AwsGrant {
        action: "ec2:DeleteNetworkInterface",
        when: AwsWhen::PrivateAddresses,
        resource: AwsResource::NetworkInterfaces,
        condition: AwsCondition::OwnedTag,
        commands: HAND_OVER,
        calls: "the hand-over (run) and teardown --all delete our ENIs",
        proof: Proof::Step(Some("permission-ec2-release")),
    },
    AwsGrant {
        action: "ec2:ReleaseAddress",
        when: AwsWhen::PublicAddresses,
        resource: AwsResource::ElasticIps,
        condition: AwsCondition::OwnedTag,
        commands: TEARDOWN,
        calls: "teardown --all releases our Elastic IPs",
        proof: Proof::Step(Some("permission-ec2-release")),
    },
    AwsGrant {
        action: "route53:ListHostedZonesByName",
        when: AwsWhen::ZoneLookedUp,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: DNS,
        calls: "find a zone not named by id",
        // Preflight resolves the zones (`dns-zones`) before `run` changes anything; for
        // `teardown --all` the step fails naming it.
        proof: Proof::Preflight("dns-zones"),
    },
    AwsGrant {
        action: "route53:ListTagsForResource",
        when: AwsWhen::ZoneByTags,
        resource: AwsResource::HostedZones,
        condition: AwsCondition::None,
        commands: DNS,
        calls: "tell the zone named by tags among zones of one name",
        proof: Proof::Step(None),
    },
    AwsGrant {
        action: "route53:GetHostedZone",
        when: AwsWhen::PrivateZoneWritten,
        resource: AwsResource::HostedZones,
        condition: AwsCondition::None,
        commands: RUN,
        calls: "preflight `private-zone-vpc` (the zone's VPC associations)",
        proof: Proof::Preflight("private-zone-vpc"),
    },
    AwsGrant {
        action: "route53:ListResourceRecordSets",
        when: AwsWhen::ZonesWritten,
        resource: AwsResource::HostedZones,
        condition: AwsCondition::None,
        commands: DNS,
        calls: "read api / api-int before each compare-and-swap",
        proof: Proof::Step(None),
    },
    AwsGrant {
        action: "route53:ChangeResourceRecordSets",
        when: AwsWhen::ZonesWritten,
        resource: AwsResource::HostedZones,
        condition: AwsCondition::None,
        commands: DNS,
        calls: "write api / api-int (DELETE + CREATE in one batch)",
        proof: Proof::Preflight("permission-route53-change-record-sets"),
    },
    AwsGrant {
        action: "route53:GetChange",
        when: AwsWhen::ZonesWritten,
        resource: AwsResource::Changes,
        condition: AwsCondition::None,
        commands: DNS,
        calls: "wait until a change is INSYNC",
        proof: Proof::Step(None),
    },
    AwsGrant {
        action: "sts:AssumeRole",
        when: AwsWhen::ZoneRole,
        resource: AwsResource::ZoneRole,
        condition: AwsCondition::None,
        commands: DNS,
        calls: "write the other account's private zone through hostedZoneRole",
        proof: Proof::Step(None),
    },
];

/// What an AWS plan holds, as the assets say.
#[derive(Debug, Clone, Default)]
pub struct AwsPlan {
    pub public_addresses: bool,
    pub private_addresses: bool,
    pub pool: bool,
    /// Zones written with the cluster's credentials: each one's id when the assets name it.
    pub zones: Vec<Option<String>>,
    pub zone_by_tags: bool,
    pub private_zone_written: bool,
    pub zone_role: Option<String>,
}

impl AwsWhen {
    /// PURE: whether the plan needs it.
    pub fn holds(self, plan: &AwsPlan) -> bool {
        match self {
            AwsWhen::Always => plan.public_addresses || plan.private_addresses,
            AwsWhen::PublicAddresses => plan.public_addresses,
            AwsWhen::PrivateAddresses => plan.private_addresses,
            AwsWhen::Pool => plan.pool,
            AwsWhen::ZonesWritten => !plan.zones.is_empty(),
            AwsWhen::ZoneLookedUp => plan.zones.iter().any(Option::is_none),
            AwsWhen::ZoneByTags => plan.zone_by_tags,
            AwsWhen::PrivateZoneWritten => plan.private_zone_written,
            AwsWhen::ZoneRole => plan.zone_role.is_some(),
        }
    }
}

/// PURE: the rows `commands` need for `plan`, in table order.
pub fn aws_grants(plan: &AwsPlan, commands: &[Command]) -> Vec<&'static AwsGrant> {
    AWS.iter()
        .filter(|g| g.commands.iter().any(|c| commands.contains(c)) && g.when.holds(plan))
        .collect()
}

/// PURE: the actions of the rows preflight's line `line` proves.
pub fn aws_actions_of_line(line: &str) -> Vec<&'static str> {
    AWS.iter()
        .filter(|g| match g.proof {
            Proof::Preflight(named) | Proof::Step(Some(named)) => named == line,
            Proof::Step(None) => false,
        })
        .map(|g| g.action)
        .collect()
}
