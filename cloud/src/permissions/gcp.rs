//! The GCP table: the permissions of each call, per project and command.

use super::*;

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
    /// The bootstrap host's second address (an alias IP on the bootstrap VM), in the VM's
    /// project.
    Bootstrap,
    /// The same, in the project holding the subnetwork the alias comes from.
    BootstrapSubnetwork,
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
        commands: RESERVING_PUBLIC,
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
        commands: RESERVING_PUBLIC,
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
    // The proof of the internal load balancer from the cloud side (`backend_health`): the
    // address's `users` name the forwarding rules, each its backend service, whose
    // `getHealth` needs `regionBackendServices.get`. Read in `run` while the proof is on.
    GcpGrant {
        permission: "compute.forwardingRules.get",
        when: GcpWhen::Internal,
        preflight_read: false,
        commands: RUN,
        calls: "forwardingRules.get (the proof: which backend service serves the internal IP)",
        operations: &["forwardingRules.get"],
    },
    GcpGrant {
        permission: "compute.regionBackendServices.get",
        when: GcpWhen::Internal,
        preflight_read: false,
        commands: RUN,
        calls: "regionBackendServices.get and getHealth (the proof: a healthy backend other than the bootstrap VM)",
        operations: &[
            "regionBackendServices.get",
            "regionBackendServices.getHealth",
        ],
    },
    GcpGrant {
        permission: "compute.addresses.deleteInternal",
        when: GcpWhen::Internal,
        preflight_read: false,
        commands: TEARDOWN_ALL,
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
        permission: "compute.regions.get",
        when: GcpWhen::Bootstrap,
        preflight_read: false,
        commands: SECOND_ADDRESS,
        calls: "regions.get (the zones where the bootstrap VM may be)",
        operations: &["regions.get"],
    },
    GcpGrant {
        permission: "compute.instances.get",
        when: GcpWhen::Bootstrap,
        preflight_read: false,
        commands: SECOND_ADDRESS,
        calls: "instances.get (the bootstrap VM's nic0 and its alias IP)",
        operations: &["instances.get"],
    },
    GcpGrant {
        permission: "compute.instances.updateNetworkInterface",
        when: GcpWhen::Bootstrap,
        preflight_read: false,
        commands: SECOND_ADDRESS,
        calls: "instances.updateNetworkInterface (the bootstrap VM's alias IP on and off)",
        operations: &["instances.updateNetworkInterface"],
    },
    GcpGrant {
        permission: "compute.zoneOperations.get",
        when: GcpWhen::Bootstrap,
        preflight_read: false,
        commands: SECOND_ADDRESS,
        calls: "zoneOperations.get (until the alias change is done)",
        operations: &["zoneOperations.get"],
    },
    // Taking the alias off (stage 3, `teardown --all`) uses no address of the subnetwork.
    GcpGrant {
        permission: "compute.subnetworks.use",
        when: GcpWhen::BootstrapSubnetwork,
        preflight_read: false,
        commands: RUN,
        calls: "instances.updateNetworkInterface takes the alias IP from the bootstrap VM's subnetwork",
        operations: &["instances.updateNetworkInterface"],
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
        commands: RUN_AND_PUBLISH,
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
            GcpWhen::Bootstrap if scopes.contains(&Scope::Bootstrap) => vec![project],
            GcpWhen::BootstrapSubnetwork if scopes.contains(&Scope::Bootstrap) => {
                vec![network_project]
            }
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
