//! The Azure custom role definition, assignable to the resource groups the agent touches (and
//! the subscription for its subscription-wide reads).

use crate::assets::{ClusterSpec, Credentials, Platform};
use bootstrap_cloud::Scope;
use bootstrap_cloud::permissions::{self as table, AzurePlan, AzureWrites, Command};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// PURE: the custom role definition (`az role definition create --role-definition`).
pub fn azure_role(spec: Option<&ClusterSpec>, commands: &[Command]) -> Value {
    let any_cloud = commands.iter().any(|c| *c != Command::CapabilitiesApply);
    let (plan, subscription) = match spec {
        Some(spec) => (
            azure_plan(spec),
            match &spec.credentials {
                Credentials::AzureClientSecret {
                    subscription_id, ..
                } => subscription_id.clone(),
                _ => "<subscription-id>".into(),
            },
        ),
        None => (
            AzurePlan {
                resource_group: "<cluster-resource-group>".into(),
                network_resource_group: "<network-resource-group>".into(),
                base_domain_resource_group: "<base-domain-resource-group>".into(),
                second_address: true,
                tags_api: true,
                writes: AzureWrites {
                    public_ips: true,
                    private_ips: true,
                    public_record_types: vec![bootstrap_cloud::RecordType::A],
                    private_record_types: vec![bootstrap_cloud::RecordType::A],
                },
            },
            "<subscription-id>".into(),
        ),
    };
    let mut wanted = if any_cloud {
        table::azure_wanted(&plan, commands)
    } else {
        Vec::new()
    };
    // Preflight's own reads (only `run` runs preflight).
    if commands.contains(&Command::Run) {
        for (rg, list) in wanted.iter_mut() {
            list.push(table::AZURE_PERMISSIONS_READ.to_string());
            if rg.eq_ignore_ascii_case(&plan.resource_group)
                && !plan.writes.private_record_types.is_empty()
            {
                list.push(table::AZURE_ZONE_LINKS_READ.to_string());
            }
        }
    }
    let mut actions: Vec<&str> = Vec::new();
    for (_, list) in &wanted {
        for a in list {
            if !actions.contains(&a.as_str()) {
                actions.push(a);
            }
        }
    }
    let mut scopes: Vec<String> = wanted
        .iter()
        .map(|(rg, _)| format!("/subscriptions/{subscription}/resourceGroups/{rg}"))
        .collect();
    // The subscription-wide reads: `reserve` lists the groups, preflight reads the usages.
    if commands
        .iter()
        .any(|c| matches!(c, Command::Run | Command::PublishLbIps))
        && plan.writes.private_ips
    {
        actions.extend(table::AZURE_SUBSCRIPTION);
        scopes.push(format!("/subscriptions/{subscription}"));
    }
    json!({
        "Name": "bootstrap-agent",
        "IsCustom": true,
        "Description": "What bootstrap-agent's calls need (bootstrap-agent permissions --cloud azure): assign it on each resource group in AssignableScopes, and on the subscription for the subscription-wide reads (resourceGroups/read, locations/usages/read) when that scope is listed",
        "Actions": actions,
        "NotActions": [],
        "DataActions": [],
        "NotDataActions": [],
        "AssignableScopes": scopes,
    })
}

fn azure_plan(spec: &ClusterSpec) -> AzurePlan {
    let Platform::Azure(azure) = &spec.platform else {
        return AzurePlan::default();
    };
    let scopes = super::planned_scopes(spec);
    AzurePlan {
        resource_group: azure.resource_group.clone(),
        network_resource_group: azure.network_resource_group.clone(),
        base_domain_resource_group: azure.base_domain_resource_group.clone(),
        second_address: scopes.contains(&Scope::Bootstrap),
        // Azure Stack Hub has no Tags API: the group itself is read and updated.
        tags_api: !matches!(
            azure.cloud,
            bootstrap_cloud::azure_cloud::AzureCloud::AzureStackCloud { .. }
        ),
        writes: azure_writes(spec, &scopes),
    }
}

/// PURE: what the plan creates and writes on Azure, given the scopes of its reservations.
pub fn azure_writes(spec: &ClusterSpec, scopes: &BTreeSet<Scope>) -> AzureWrites {
    let (public_record_types, private_record_types) = written_record_types(spec);
    AzureWrites {
        public_ips: scopes.contains(&Scope::Public),
        private_ips: scopes.contains(&Scope::Private),
        public_record_types,
        private_record_types,
    }
}

/// PURE: the record types the plan writes in the public zone and in the private zone.
pub fn written_record_types(
    spec: &ClusterSpec,
) -> (
    Vec<bootstrap_cloud::RecordType>,
    Vec<bootstrap_cloud::RecordType>,
) {
    let (mut public, mut private) = (Vec::new(), Vec::new());
    for (zone, key) in crate::plan::records_of_interest(spec) {
        let types = if zone.private {
            &mut private
        } else {
            &mut public
        };
        if !types.contains(&key.rtype) {
            types.push(key.rtype);
        }
    }
    (public, private)
}
