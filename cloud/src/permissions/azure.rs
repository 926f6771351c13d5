//! The Azure table: the actions of each call, per resource group and command.

use super::*;

/// What the agent creates and writes on Azure: the reservations' kinds and the record types
/// of each zone. Preflight checks the permissions for these; `permissions` prints them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AzureWrites {
    /// A public IP is among the reservations.
    pub public_ips: bool,
    /// A private IP is among the reservations (recorded as a resource-group tag).
    pub private_ips: bool,
    /// Record types written in the public zone (base-domain resource group).
    pub public_record_types: Vec<RecordType>,
    /// Record types written in the private zone (cluster resource group).
    pub private_record_types: Vec<RecordType>,
}

/// What an Azure plan holds, per resource group.
#[derive(Debug, Clone, Default)]
pub struct AzurePlan {
    pub resource_group: String,
    pub network_resource_group: String,
    pub base_domain_resource_group: String,
    /// The bootstrap host gets a second address (an IP configuration on its NIC).
    pub second_address: bool,
    /// The cloud has the Tags API (not Azure Stack Hub).
    pub tags_api: bool,
    pub writes: AzureWrites,
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
    if plan.writes.public_ips {
        for (verb, needed_by) in [
            ("read", OBSERVING),
            ("write", RESERVING_PUBLIC),
            ("delete", TEARDOWN),
        ] {
            add(
                cluster,
                format!("Microsoft.Network/publicIPAddresses/{verb}"),
                needed_by,
            );
        }
    }
    if plan.writes.private_ips {
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
    if plan.second_address {
        // The bootstrap NIC is read and written whole (`NetworkInterfaces_CreateOrUpdate`);
        // its new IP configuration joins the NIC's subnet (ARM's linked access check, in
        // `run`); taking it off (stage 3, `teardown --all`) joins nothing.
        for action in [
            "Microsoft.Network/networkInterfaces/read",
            "Microsoft.Network/networkInterfaces/write",
        ] {
            add(cluster, action.into(), SECOND_ADDRESS);
        }
        add(
            &plan.network_resource_group,
            "Microsoft.Network/virtualNetworks/subnets/join/action".into(),
            RUN,
        );
    }
    let zones = [
        (
            &plan.base_domain_resource_group,
            "dnszones",
            &plan.writes.public_record_types,
        ),
        (
            cluster,
            "privateDnsZones",
            &plan.writes.private_record_types,
        ),
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
