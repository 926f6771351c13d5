//! The one source of truth for the cloud permissions the agent needs: per cloud, a table of
//! the actions each of its calls needs, for which command, under which condition of the
//! plan, and how preflight proves it. `bootstrap-agent permissions` prints these tables in
//! the cloud's own policy format, preflight asks exactly these (its permission lines are
//! named from them), and `docs/permissions.md` is generated from them.
//!
//! Built without any cloud feature: the tables are plain data, the printers live in the
//! agent (`src/permissions.rs`).

use crate::{RecordType, Scope};
use std::collections::{BTreeMap, BTreeSet};

/// The commands that call a cloud (or the cluster) with their own set of permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Command {
    /// `run` (and its preflight, and `reserve`, `dns seed`, `dns teardown`).
    Run,
    /// `teardown --all`.
    TeardownAll,
    /// `publish-lb-ips` (reserves; cluster-hosted DNS).
    PublishLbIps,
    /// `capabilities apply` (the cluster only).
    CapabilitiesApply,
}

impl Command {
    pub const ALL: [Command; 4] = [
        Command::Run,
        Command::TeardownAll,
        Command::PublishLbIps,
        Command::CapabilitiesApply,
    ];

    /// The command as typed.
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::TeardownAll => "teardown-all",
            Command::PublishLbIps => "publish-lb-ips",
            Command::CapabilitiesApply => "capabilities-apply",
        }
    }

    /// PURE: the command from its name (`run`, `teardown-all`, `publish-lb-ips`,
    /// `capabilities-apply`).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

const RUN: &[Command] = &[Command::Run];
const RESERVING: &[Command] = &[Command::Run, Command::PublishLbIps];
const OBSERVING: &[Command] = &[Command::Run, Command::TeardownAll, Command::PublishLbIps];
const DNS: &[Command] = &[Command::Run, Command::TeardownAll];
const TEARDOWN: &[Command] = &[Command::TeardownAll];
const HAND_OVER: &[Command] = &[Command::Run, Command::TeardownAll];

// ---------------------------------------------------------------- AWS

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
        commands: RESERVING,
        calls: "the BYO-IP pool's free addresses (preflight `public-ipv4-pool`, reserve)",
        proof: Proof::Preflight("public-ipv4-pool"),
    },
    AwsGrant {
        action: "ec2:AllocateAddress",
        when: AwsWhen::PublicAddresses,
        resource: AwsResource::Any,
        condition: AwsCondition::None,
        commands: RESERVING,
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
        commands: RESERVING,
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
        proof: Proof::Step(None),
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

// ---------------------------------------------------------------- GCP

/// When a GCP permission is needed, and in which project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcpWhen {
    /// Any address, in the addresses' project.
    Addresses,
    External,
    Internal,
    /// In the project holding the subnetwork the internal address is taken from.
    InternalSubnetwork,
    /// In each written zone's project.
    Zones,
    /// In the project of each written zone not named by id (found by its DNS name).
    ZoneLookedUp,
    /// In the project holding the network's subnetworks, whatever the addresses.
    Subnetworks,
}

/// One row of the GCP table.
#[derive(Debug, Clone, Copy)]
pub struct GcpGrant {
    pub permission: &'static str,
    pub when: GcpWhen,
    /// Only preflight's own reads need it: in the printed role, not asked by
    /// `testIamPermissions` (a missing one fails its own line).
    pub preflight_read: bool,
    pub commands: &'static [Command],
    pub calls: &'static str,
    /// The agent's calls (as its errors name them) that need it: a refusal of one of them
    /// names these permissions (Cloud DNS's 403 says only "Forbidden").
    pub operations: &'static [&'static str],
}

/// Every GCP permission the agent's calls need (preflight's `permissions` line asks those that
/// are not `preflight_read` with `projects.testIamPermissions`). Which call needs which: the
/// compute.v1 and dns.v1 method references ("IAM Permissions" of each method) and Cloud DNS's
/// "Roles and permissions" page (`changes.create` needs `dns.resourceRecordSets.create`,
/// `.update` or `.delete` for what the change creates, replaces or deletes).
pub const GCP: &[GcpGrant] = &[
    GcpGrant {
        permission: "compute.projects.get",
        when: GcpWhen::Addresses,
        preflight_read: true,
        commands: RUN,
        calls: "preflight `credentials` (projects.get)",
        operations: &["projects.get"],
    },
    GcpGrant {
        permission: "compute.regions.get",
        when: GcpWhen::Addresses,
        preflight_read: true,
        commands: RUN,
        calls: "preflight `quota-addresses` (regions.get)",
        operations: &["regions.get"],
    },
    GcpGrant {
        permission: "compute.instanceGroups.list",
        when: GcpWhen::Addresses,
        preflight_read: true,
        commands: RUN,
        calls: "preflight `instance-groups` (instanceGroups.list)",
        operations: &["instanceGroups.list"],
    },
    GcpGrant {
        permission: "compute.subnetworks.get",
        when: GcpWhen::Subnetworks,
        preflight_read: true,
        commands: RUN,
        calls: "preflight `subnets` (subnetworks.get)",
        operations: &["subnetworks.get"],
    },
    GcpGrant {
        permission: "dns.managedZones.get",
        when: GcpWhen::Zones,
        preflight_read: true,
        commands: RUN,
        calls: "preflight `private-zone-network` (managedZones.get)",
        operations: &["managedZones.get"],
    },
    GcpGrant {
        permission: "dns.managedZones.list",
        when: GcpWhen::ZoneLookedUp,
        preflight_read: true,
        commands: DNS,
        calls: "find a zone not named by id (managedZones.list by DNS name; preflight `dns-zones`)",
        operations: &["managedZones.list"],
    },
    GcpGrant {
        permission: "compute.addresses.get",
        when: GcpWhen::Addresses,
        preflight_read: false,
        commands: OBSERVING,
        calls: "addresses.get",
        operations: &["addresses.get"],
    },
    GcpGrant {
        permission: "compute.addresses.list",
        when: GcpWhen::Addresses,
        preflight_read: false,
        commands: OBSERVING,
        calls: "addresses.list (our label)",
        operations: &["addresses.list"],
    },
    GcpGrant {
        permission: "compute.addresses.setLabels",
        when: GcpWhen::Addresses,
        preflight_read: false,
        commands: RESERVING,
        calls: "addresses.insert carrying our labels",
        operations: &["addresses.insert"],
    },
    GcpGrant {
        permission: "compute.regionOperations.get",
        when: GcpWhen::Addresses,
        preflight_read: false,
        commands: OBSERVING,
        calls: "regionOperations.get (until an insert or delete is done)",
        operations: &["regionOperations.get"],
    },
    GcpGrant {
        permission: "compute.addresses.create",
        when: GcpWhen::External,
        preflight_read: false,
        commands: RESERVING,
        calls: "addresses.insert (EXTERNAL)",
        operations: &["addresses.insert"],
    },
    GcpGrant {
        permission: "compute.addresses.delete",
        when: GcpWhen::External,
        preflight_read: false,
        commands: TEARDOWN,
        calls: "addresses.delete (EXTERNAL)",
        operations: &["addresses.delete"],
    },
    GcpGrant {
        permission: "compute.addresses.createInternal",
        when: GcpWhen::Internal,
        preflight_read: false,
        commands: RESERVING,
        calls: "addresses.insert (INTERNAL)",
        operations: &["addresses.insert"],
    },
    GcpGrant {
        permission: "compute.addresses.deleteInternal",
        when: GcpWhen::Internal,
        preflight_read: false,
        commands: TEARDOWN,
        calls: "addresses.delete (INTERNAL)",
        operations: &["addresses.delete"],
    },
    GcpGrant {
        permission: "compute.subnetworks.use",
        when: GcpWhen::InternalSubnetwork,
        preflight_read: false,
        commands: RESERVING,
        calls: "addresses.insert (INTERNAL) takes an address of the subnetwork",
        operations: &["addresses.insert"],
    },
    GcpGrant {
        permission: "dns.changes.create",
        when: GcpWhen::Zones,
        preflight_read: false,
        commands: DNS,
        calls: "changes.create",
        operations: &["changes.create"],
    },
    GcpGrant {
        permission: "dns.changes.get",
        when: GcpWhen::Zones,
        preflight_read: false,
        commands: DNS,
        calls: "changes.get (wait until done)",
        operations: &["changes.get"],
    },
    GcpGrant {
        permission: "dns.resourceRecordSets.create",
        when: GcpWhen::Zones,
        preflight_read: false,
        commands: RUN,
        calls: "a change's additions of a new record set",
        operations: &["changes.create"],
    },
    GcpGrant {
        permission: "dns.resourceRecordSets.update",
        when: GcpWhen::Zones,
        preflight_read: false,
        commands: DNS,
        calls: "a change replacing a record set (its deletion and addition in one change)",
        operations: &["changes.create"],
    },
    GcpGrant {
        permission: "dns.resourceRecordSets.delete",
        when: GcpWhen::Zones,
        preflight_read: false,
        commands: TEARDOWN,
        calls: "a change's deletion of a record set left empty",
        operations: &["changes.create"],
    },
    GcpGrant {
        permission: "dns.resourceRecordSets.list",
        when: GcpWhen::Zones,
        preflight_read: false,
        commands: DNS,
        calls: "resourceRecordSets.list",
        operations: &["resourceRecordSets.list"],
    },
];

/// PURE: per project, the permissions the plan's calls need for `commands` (with
/// `preflight_reads`, preflight's own reads too). `zones`: each written zone's project, and
/// whether the zone is found by its DNS name (not named by id).
pub fn gcp_wanted(
    project: &str,
    network_project: &str,
    scopes: &BTreeSet<Scope>,
    zones: &[(&str, bool)],
    commands: &[Command],
    preflight_reads: bool,
) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut wanted: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for grant in GCP.iter().filter(|g| {
        g.commands.iter().any(|c| commands.contains(c)) && (preflight_reads || !g.preflight_read)
    }) {
        let projects: Vec<&str> = match grant.when {
            GcpWhen::Addresses if !scopes.is_empty() => vec![project],
            GcpWhen::External if scopes.contains(&Scope::Public) => vec![project],
            GcpWhen::Internal if scopes.contains(&Scope::Private) => vec![project],
            GcpWhen::InternalSubnetwork if scopes.contains(&Scope::Private) => {
                vec![network_project]
            }
            GcpWhen::Subnetworks if !scopes.is_empty() => vec![network_project],
            GcpWhen::Zones => zones.iter().map(|(p, _)| *p).collect(),
            GcpWhen::ZoneLookedUp => zones
                .iter()
                .filter(|(_, looked_up)| *looked_up)
                .map(|(p, _)| *p)
                .collect(),
            _ => Vec::new(),
        };
        for p in projects {
            wanted
                .entry(p.to_string())
                .or_default()
                .insert(grant.permission);
        }
    }
    wanted
}

/// PURE: the permissions of the table the GCP call `operation` (as the agent's errors name
/// it: `addresses.insert`, `changes.create`, ...) may need, in table order.
pub fn gcp_permissions_of_call(operation: &str) -> Vec<&'static str> {
    GCP.iter()
        .filter(|g| g.operations.contains(&operation))
        .map(|g| g.permission)
        .collect()
}

// ---------------------------------------------------------------- Azure

/// What an Azure plan holds, per resource group.
#[derive(Debug, Clone, Default)]
pub struct AzurePlan {
    pub resource_group: String,
    pub network_resource_group: String,
    pub base_domain_resource_group: String,
    pub public_ips: bool,
    pub private_ips: bool,
    /// The cloud has the Tags API (not Azure Stack Hub).
    pub tags_api: bool,
    pub public_record_types: Vec<RecordType>,
    pub private_record_types: Vec<RecordType>,
}

/// A record set is read (compare) and written (PUT with its ETag) by every DNS step; only
/// `teardown --all` deletes one (when it empties it). `run` also reads the zone itself (the
/// zone lookup, preflight `dns-zones`), as does `teardown --all`.
const AZURE_RECORD_VERBS: [(&str, &[Command]); 3] =
    [("read", DNS), ("write", DNS), ("delete", TEARDOWN)];

/// On the subscription: `reserve` reads every resource group (the private IPs other clusters
/// of the vnet recorded, see docs/clouds.md), preflight `quota-public-ips` the usages. Not in
/// preflight's per-group `permissions` line (it lists per group).
pub const AZURE_SUBSCRIPTION: [&str; 2] = [
    "Microsoft.Resources/subscriptions/resourceGroups/read",
    "Microsoft.Network/locations/usages/read",
];
/// Preflight's own reads per group: its `permissions` line lists the caller's permissions
/// (a group that cannot be listed warns), `private-zone-vnet` reads the zone's links.
pub const AZURE_PERMISSIONS_READ: &str = "Microsoft.Authorization/permissions/read";
pub const AZURE_ZONE_LINKS_READ: &str =
    "Microsoft.Network/privateDnsZones/virtualNetworkLinks/read";

/// PURE: the actions the agent's calls for `commands` need, per resource group (in the order
/// first named). Every call, reads included: a role with the writes alone would pass
/// preflight and then be refused at the first GET (observe, the zone lookup).
pub fn azure_wanted(plan: &AzurePlan, commands: &[Command]) -> Vec<(String, Vec<String>)> {
    let mut wanted: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |rg: &str, action: String, needed_by: &[Command]| {
        if !needed_by.iter().any(|c| commands.contains(c)) {
            return;
        }
        match wanted
            .iter_mut()
            .find(|(known, _)| known.eq_ignore_ascii_case(rg))
        {
            Some((_, actions)) if actions.contains(&action) => {}
            Some((_, actions)) => actions.push(action),
            None => wanted.push((rg.to_string(), vec![action])),
        }
    };
    let cluster = &plan.resource_group;
    if plan.public_ips {
        for (verb, needed_by) in [
            ("read", OBSERVING),
            ("write", RESERVING),
            ("delete", TEARDOWN),
        ] {
            add(
                cluster,
                format!("Microsoft.Network/publicIPAddresses/{verb}"),
                needed_by,
            );
        }
    }
    if plan.private_ips {
        // The private IPs are recorded in the cluster group's tags: claimed by `reserve`,
        // dropped by `teardown --all`. Azure Stack Hub has no Tags API: the group itself is
        // read and updated.
        let tags = if plan.tags_api {
            [
                "Microsoft.Resources/tags/read",
                "Microsoft.Resources/tags/write",
            ]
        } else {
            [
                "Microsoft.Resources/subscriptions/resourceGroups/read",
                "Microsoft.Resources/subscriptions/resourceGroups/write",
            ]
        };
        for action in tags {
            add(cluster, action.into(), OBSERVING);
        }
        let network = &plan.network_resource_group;
        for action in [
            "Microsoft.Network/virtualNetworks/subnets/read",
            "Microsoft.Network/virtualNetworks/checkIpAddressAvailability/read",
        ] {
            add(network, action.into(), RESERVING);
        }
    }
    let zones = [
        (
            &plan.base_domain_resource_group,
            "dnszones",
            &plan.public_record_types,
        ),
        (cluster, "privateDnsZones", &plan.private_record_types),
    ];
    for (rg, kind, types) in zones {
        if !types.is_empty() {
            add(rg, format!("Microsoft.Network/{kind}/read"), DNS);
        }
        for rtype in types {
            for (verb, needed_by) in AZURE_RECORD_VERBS {
                add(
                    rg,
                    format!("Microsoft.Network/{kind}/{rtype}/{verb}"),
                    needed_by,
                );
            }
        }
    }
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_aws_row_names_a_command_and_commands_parse_back() {
        for grant in AWS {
            assert!(!grant.commands.is_empty(), "{grant:?}");
            assert!(grant.action.contains(':'), "{grant:?}");
        }
        for c in Command::ALL {
            assert_eq!(Command::parse(c.as_str()), Some(c));
        }
        assert_eq!(Command::parse("teardown"), None);
    }

    #[test]
    fn aws_grants_follow_the_plan_and_the_command() {
        let plan = AwsPlan {
            public_addresses: true,
            private_addresses: true,
            zones: vec![Some("Z1".into()), None],
            private_zone_written: true,
            ..AwsPlan::default()
        };
        let names = |commands: &[Command]| -> Vec<&str> {
            aws_grants(&plan, commands)
                .iter()
                .map(|g| g.action)
                .collect()
        };
        let teardown = names(&[Command::TeardownAll]);
        assert!(teardown.contains(&"ec2:ReleaseAddress"), "{teardown:?}");
        assert!(!teardown.contains(&"ec2:AllocateAddress"), "{teardown:?}");
        let run = names(&[Command::Run]);
        assert!(!run.contains(&"ec2:ReleaseAddress"), "{run:?}");
        assert!(run.contains(&"route53:ListHostedZonesByName"), "{run:?}");
        assert!(!run.contains(&"sts:AssumeRole"), "{run:?}");
        let publish = names(&[Command::PublishLbIps]);
        assert!(
            !publish.iter().any(|a| a.starts_with("route53:")),
            "{publish:?}"
        );
        assert!(names(&[Command::CapabilitiesApply]).is_empty());
        let private_only = AwsPlan {
            private_addresses: true,
            ..AwsPlan::default()
        };
        let run = aws_grants(&private_only, &[Command::Run]);
        assert!(!run.iter().any(|g| g.action == "ec2:AllocateAddress"));
    }

    #[test]
    fn gcp_and_azure_rows_follow_the_command() {
        let both = BTreeSet::from([Scope::Public, Scope::Private]);
        let gcp = |zones: &[(&str, bool)], command| {
            gcp_wanted("p", "p", &both, zones, &[command], true)
                .remove("p")
                .unwrap_or_default()
        };
        let run = gcp(&[("p", true)], Command::Run);
        assert!(run.contains("dns.managedZones.list"), "{run:?}");
        assert!(run.contains("dns.resourceRecordSets.update"), "{run:?}");
        assert!(!run.contains("compute.addresses.delete"), "{run:?}");
        assert!(!run.contains("dns.resourceRecordSets.delete"), "{run:?}");
        let named = gcp(&[("p", false)], Command::Run);
        assert!(!named.contains("dns.managedZones.list"), "{named:?}");
        let teardown = gcp(&[("p", true)], Command::TeardownAll);
        assert!(teardown.contains("compute.addresses.deleteInternal"));
        assert!(
            !teardown.contains("compute.addresses.create"),
            "{teardown:?}"
        );
        assert!(!teardown.contains("dns.resourceRecordSets.create"));
        assert_eq!(
            gcp_permissions_of_call("addresses.insert"),
            [
                "compute.addresses.setLabels",
                "compute.addresses.create",
                "compute.addresses.createInternal",
                "compute.subnetworks.use"
            ]
        );

        let plan = AzurePlan {
            resource_group: "rg".into(),
            network_resource_group: "net".into(),
            base_domain_resource_group: "dns".into(),
            public_ips: true,
            private_ips: true,
            tags_api: true,
            public_record_types: vec![RecordType::A],
            private_record_types: vec![RecordType::A],
        };
        let azure = |command| -> Vec<String> {
            azure_wanted(&plan, &[command])
                .into_iter()
                .flat_map(|(_, actions)| actions)
                .collect()
        };
        let run = azure(Command::Run);
        assert!(run.contains(&"Microsoft.Network/dnszones/read".to_string()));
        assert!(!run.iter().any(|a| a.ends_with("/delete")), "{run:?}");
        let teardown = azure(Command::TeardownAll);
        assert!(teardown.contains(&"Microsoft.Network/publicIPAddresses/delete".to_string()));
        assert!(
            !teardown.iter().any(|a| a.contains("virtualNetworks")),
            "{teardown:?}"
        );
        assert!(azure(Command::CapabilitiesApply).is_empty());
    }
}
