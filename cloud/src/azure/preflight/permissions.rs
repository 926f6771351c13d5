//! The `permissions` line. Azure has no dry run, but ARM tells a caller its own effective
//! permissions at a scope: `GET {resourceGroupId}/providers/Microsoft.Authorization/permissions`
//! (Permissions_ListForResourceGroup, 2022-04-01; 2015-07-01 on Azure Stack Hub) answers one `{actions, notActions, ...}` entry
//! per role assignment that covers the group. An action is allowed when some entry's `actions`
//! match it and the same entry's `notActions` do not (a role's NotActions only subtract from
//! that role; another role may grant the action again). Patterns match case-insensitively and
//! `*` stands for any text, `/` included, as Azure RBAC matches them. Deny assignments are not
//! in this list: `run` is what proves them absent.

use super::super::arm::ArmClient;
use super::super::{AzureSettings, rg_path};
use super::AzureTargets;
use crate::CloudError;
use crate::preflight::Check;
use serde_json::Value;

const NAME: &str = "permissions";

/// The actions `run` needs, per resource group (in the order they are first named): the
/// table's ([`crate::permissions::azure_wanted`]), so preflight and `bootstrap-agent
/// permissions` cannot drift.
pub fn wanted(settings: &AzureSettings, targets: &AzureTargets) -> Vec<(String, Vec<String>)> {
    crate::permissions::azure_wanted(
        &crate::permissions::AzurePlan {
            resource_group: settings.resource_group.clone(),
            network_resource_group: settings.network_resource_group.clone(),
            base_domain_resource_group: settings.base_domain_resource_group.clone(),
            second_address: settings.second_address_host.is_some(),
            tags_api: settings.api.tags.is_some(),
            writes: targets.writes.clone(),
        },
        &[crate::permissions::Command::Run],
    )
}

/// PURE: Azure RBAC's wildcard match (case-insensitive, `*` is any text).
pub fn pattern_matches(pattern: &str, action: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let action = action.to_ascii_lowercase();
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == action;
    };
    let Some(mut rest) = action.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// PURE: whether the permission entries (as the API returns them) allow `action`.
pub fn allowed(entries: &[Value], action: &str) -> bool {
    let any = |entry: &Value, field: &str| {
        entry[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|p| pattern_matches(p, action))
    };
    entries
        .iter()
        .any(|e| any(e, "actions") && !any(e, "notActions"))
}

/// What one resource group's permissions said.
pub enum Outcome {
    /// Every wanted action is allowed.
    Allowed,
    Missing(Vec<String>),
    /// The permissions could not be read.
    Unreadable(CloudError),
}

/// PURE: the line from each group's outcome.
pub fn verdict(client_id: &str, groups: &[(String, Vec<String>, Outcome)]) -> Check {
    if groups.is_empty() {
        return Check::pass(NAME, "nothing to create or write");
    }
    let mut missing = Vec::new();
    let mut unreadable = Vec::new();
    let mut allowed = Vec::new();
    for (rg, actions, outcome) in groups {
        match outcome {
            Outcome::Allowed => allowed.push(format!("on {rg}: {}", actions.join(", "))),
            Outcome::Missing(which) => missing.push(format!("on {rg}: {}", which.join(", "))),
            Outcome::Unreadable(e) => unreadable.push(format!("{rg} ({e})")),
        }
    }
    if !missing.is_empty() {
        return Check::fail(
            NAME,
            format!(
                "the agent's identity (client {client_id}) lacks, {}",
                missing.join("; ")
            ),
            "grant these actions to the agent's service principal on those resource groups (a custom role, or Contributor; Network Contributor, Tag Contributor, DNS Zone Contributor and Private DNS Zone Contributor together also cover them); role assignments can take a few minutes to apply",
        );
    }
    if !unreadable.is_empty() {
        return Check::not_checked(
            NAME,
            format!(
                "Microsoft.Authorization/permissions could not be read for {}{}",
                unreadable.join(", "),
                if allowed.is_empty() {
                    String::new()
                } else {
                    format!("; allowed {}", allowed.join("; "))
                }
            ),
        );
    }
    Check::pass(
        NAME,
        format!(
            "allowed {} (deny assignments are not listed; `run` meets them)",
            allowed.join("; ")
        ),
    )
}

/// Reads each group's permissions and judges the wanted actions.
pub async fn check(arm: &ArmClient, settings: &AzureSettings, targets: &AzureTargets) -> Check {
    let mut groups = Vec::new();
    for (rg, actions) in wanted(settings, targets) {
        let path = format!(
            "{}/providers/Microsoft.Authorization/permissions",
            rg_path(settings, &rg)
        );
        let entries = match arm.url(&path, settings.api.authorization, &[]) {
            Ok(url) => arm.list("ListPermissions", url).await,
            Err(e) => Err(e),
        };
        let outcome = match entries {
            Ok(entries) => {
                let missing: Vec<String> = actions
                    .iter()
                    .filter(|a| !allowed(&entries, a))
                    .cloned()
                    .collect();
                if missing.is_empty() {
                    Outcome::Allowed
                } else {
                    Outcome::Missing(missing)
                }
            }
            Err(e) => Outcome::Unreadable(e),
        };
        groups.push((rg, actions, outcome));
    }
    verdict(&settings.credential.client_id, &groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::Verdict;
    use serde_json::json;

    /// Every call `run` makes on Azure needs its action here, reads and deletes included.
    #[test]
    fn the_wanted_actions_cover_every_call_of_run() {
        let settings = crate::azure::private_ip::settle_tests::settings();
        let targets = AzureTargets {
            control_plane_subnet: "master".into(),
            writes: crate::permissions::AzureWrites {
                public_ips: true,
                private_ips: true,
                public_record_types: vec![crate::RecordType::A],
                private_record_types: vec![crate::RecordType::A],
            },
        };
        let wanted = wanted(&settings, &targets);
        let on = |rg: &str| {
            wanted
                .iter()
                .find(|(known, _)| known == rg)
                .map(|(_, actions)| actions.clone())
                .unwrap_or_default()
        };
        let network = "Microsoft.Network";
        assert_eq!(
            on(&settings.resource_group),
            [
                format!("{network}/publicIPAddresses/read"),
                format!("{network}/publicIPAddresses/write"),
                "Microsoft.Resources/tags/read".into(),
                "Microsoft.Resources/tags/write".into(),
                format!("{network}/privateDnsZones/read"),
                format!("{network}/privateDnsZones/A/read"),
                format!("{network}/privateDnsZones/A/write"),
            ]
        );
        assert_eq!(
            on("dns-rg"),
            [
                format!("{network}/dnszones/read"),
                format!("{network}/dnszones/A/read"),
                format!("{network}/dnszones/A/write"),
            ]
        );
        assert_eq!(
            on("net-rg"),
            [
                format!("{network}/virtualNetworks/subnets/read"),
                format!("{network}/virtualNetworks/checkIpAddressAvailability/read"),
            ]
        );
    }

    #[test]
    fn wildcards_match_as_azure_rbac_matches_them() {
        let write = "Microsoft.Network/publicIPAddresses/write";
        for pattern in [
            "*",
            "Microsoft.Network/*",
            "microsoft.network/publicipaddresses/*",
            "*/write",
            "Microsoft.Network/*/write",
            write,
        ] {
            assert!(pattern_matches(pattern, write), "{pattern}");
        }
        for pattern in [
            "*/read",
            "Microsoft.Network/publicIPAddresses/read",
            "Microsoft.Resources/*",
            "Microsoft.Network/publicIPAddresses/write/extra",
            "Microsoft.Network/*/delete",
        ] {
            assert!(!pattern_matches(pattern, write), "{pattern}");
        }
    }

    #[test]
    fn not_actions_subtract_only_from_their_own_entry() {
        let action = "Microsoft.Network/publicIPAddresses/delete";
        let reader_like = json!({"actions": ["*"], "notActions": ["Microsoft.Network/*/delete"]});
        assert!(!allowed(std::slice::from_ref(&reader_like), action));
        let network = json!({"actions": ["Microsoft.Network/*"], "notActions": []});
        assert!(
            allowed(&[reader_like, network], action),
            "another role grants it"
        );
        assert!(!allowed(&[], action));
    }

    #[test]
    fn a_missing_action_fails_and_an_unreadable_group_is_not_checked() {
        let groups = vec![
            (
                "rg".to_string(),
                vec!["a/write".to_string()],
                Outcome::Missing(vec!["a/write".into()]),
            ),
            (
                "net".to_string(),
                vec!["b/read".to_string()],
                Outcome::Allowed,
            ),
        ];
        let check = verdict("client-1", &groups);
        assert_eq!(check.verdict, Verdict::Fail, "{check:?}");
        assert!(check.reason.contains("lacks, on rg: a/write"), "{check:?}");
        let groups = vec![(
            "rg".to_string(),
            vec!["a/write".to_string()],
            Outcome::Unreadable(CloudError::fatal("ListPermissions", "AuthorizationFailed")),
        )];
        let check = verdict("client-1", &groups);
        assert_eq!(check.verdict, Verdict::Warn);
        assert!(check.reason.starts_with("not checked"), "{check:?}");
    }
}
