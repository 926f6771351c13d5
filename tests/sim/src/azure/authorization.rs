//! Azure RBAC in the fake: the caller's role assignments, each ARM call checked against the
//! action it needs (403 `AuthorizationFailed`, ARM's message, before the resource is even
//! looked up), and `Microsoft.Authorization/permissions` at resource-group scope (the caller's
//! own effective permissions: one `{actions, notActions, dataActions, notDataActions}` entry
//! per role assignment covering the group; reading it needs
//! `Microsoft.Authorization/permissions/read`, which `*/read` covers).
//!
//! An action is allowed when some assignment's actions match it and the same assignment's
//! notActions do not; patterns match case-insensitively, `*` standing for any text. Reading
//! the subscription itself is allowed to a caller with any role in it (how a service
//! principal with resource-group roles only still sees its subscription). Polls of
//! long-running operations are not checked (ARM lets the caller follow its own operations).

use super::arm::{Call, Reply};
use super::world::{CLIENT_ID, SUBSCRIPTION, World};
use serde_json::json;

/// One role assignment of the agent's service principal.
#[derive(Debug, Clone)]
pub struct RoleAssignment {
    /// The resource group it is assigned on; None: the whole subscription.
    pub resource_group: Option<String>,
    pub actions: Vec<String>,
    pub not_actions: Vec<String>,
}

impl RoleAssignment {
    /// The built-in Contributor role on the subscription (its NotActions as Azure defines
    /// them, shortened to the Microsoft.Authorization ones).
    pub fn contributor() -> Self {
        Self {
            resource_group: None,
            actions: vec!["*".into()],
            not_actions: vec![
                "Microsoft.Authorization/*/Delete".into(),
                "Microsoft.Authorization/*/Write".into(),
                "Microsoft.Authorization/elevateAccess/Action".into(),
            ],
        }
    }

    /// A custom role with exactly `actions`, on `resource_group` (None: the subscription).
    pub fn custom(resource_group: Option<&str>, actions: &[&str]) -> Self {
        Self {
            resource_group: resource_group.map(str::to_string),
            actions: actions.iter().map(|a| a.to_string()).collect(),
            not_actions: Vec::new(),
        }
    }

    fn covers(&self, rg: Option<&str>) -> bool {
        match (&self.resource_group, rg) {
            (None, _) => true,
            (Some(mine), Some(rg)) => mine.eq_ignore_ascii_case(rg),
            (Some(_), None) => false,
        }
    }

    fn allows(&self, action: &str) -> bool {
        self.actions.iter().any(|p| wildcard(p, action))
            && !self.not_actions.iter().any(|p| wildcard(p, action))
    }
}

/// `*` is any text (`/` included); case-insensitive.
fn wildcard(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..])),
            Some((c, rest)) => t
                .split_first()
                .is_some_and(|(d, t_rest)| c.eq_ignore_ascii_case(d) && go(rest, t_rest)),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

/// The `Microsoft.Network` action a call needs (lowercased path below the resource group's
/// `providers/microsoft.network`), None when unchecked.
fn network_action(l: &[&str], verb: impl Fn(&str) -> String) -> Option<String> {
    let action = match l {
        ["publicipaddresses", ..] => {
            format!("Microsoft.Network/publicIPAddresses/{}", verb("read"))
        }
        ["networkinterfaces", _] => {
            format!("Microsoft.Network/networkInterfaces/{}", verb("read"))
        }
        ["privatelinkservices"] => "Microsoft.Network/privateLinkServices/read".to_string(),
        ["loadbalancers", ..] => format!("Microsoft.Network/loadBalancers/{}", verb("read")),
        ["networksecuritygroups", _] => {
            format!("Microsoft.Network/networkSecurityGroups/{}", verb("read"))
        }
        ["virtualnetworks", _, "subnets", _] => {
            "Microsoft.Network/virtualNetworks/subnets/read".to_string()
        }
        ["virtualnetworks", _, "checkipaddressavailability"] => {
            "Microsoft.Network/virtualNetworks/checkIpAddressAvailability/read".to_string()
        }
        ["dnszones", _] => format!("Microsoft.Network/dnszones/{}", verb("read")),
        ["dnszones", _, rtype, _] => format!(
            "Microsoft.Network/dnszones/{}/{}",
            rtype.to_ascii_uppercase(),
            verb("read")
        ),
        ["privatednszones", _] => format!("Microsoft.Network/privateDnsZones/{}", verb("read")),
        ["privatednszones", _, "virtualnetworklinks"] => {
            "Microsoft.Network/privateDnsZones/virtualNetworkLinks/read".to_string()
        }
        ["privatednszones", _, rtype, _] => format!(
            "Microsoft.Network/privateDnsZones/{}/{}",
            rtype.to_ascii_uppercase(),
            verb("read")
        ),
        _ => return None,
    };
    Some(action)
}

/// The action a call needs (lowercased path below `subscriptions/{id}`), None when unchecked.
fn required_action(method: &str, l: &[&str]) -> Option<String> {
    let verb = |read: &str| match method {
        "GET" => read.to_string(),
        "DELETE" => "delete".to_string(),
        _ => "write".to_string(),
    };
    let action = match l {
        ["providers", "microsoft.network", "locations", _, "usages"] => {
            "Microsoft.Network/locations/usages/read".to_string()
        }
        ["resourcegroups", _] => format!(
            "Microsoft.Resources/subscriptions/resourceGroups/{}",
            verb("read")
        ),
        ["resourcegroups", _, "providers", provider, rest @ ..] => match (*provider, rest) {
            ("microsoft.authorization", ["permissions"]) => {
                "Microsoft.Authorization/permissions/read".to_string()
            }
            ("microsoft.network", network) => network_action(network, verb)?,
            // The fake serves VM reads only (what cloud-provider-azure needs).
            ("microsoft.compute", ["virtualmachines", _]) if method == "GET" => {
                "Microsoft.Compute/virtualMachines/read".to_string()
            }
            ("microsoft.resources", ["tags", "default"]) => {
                format!("Microsoft.Resources/tags/{}", verb("read"))
            }
            _ => return None,
        },
        _ => return None,
    };
    Some(action)
}

impl World {
    pub(super) fn allowed(&self, rg: Option<&str>, action: &str) -> bool {
        self.roles.iter().any(|r| r.covers(rg) && r.allows(action))
    }

    /// 403 `AuthorizationFailed` when the caller's roles do not allow this call.
    pub(super) fn authorize(&self, call: &Call, l: &[&str]) -> Option<Reply> {
        let rg = match l {
            ["resourcegroups", rg, ..] => Some(*rg),
            _ => None,
        };
        let scope = format!("/{}", call.segments.join("/"));
        let refuse = |action: &str| {
            Reply::error(
                403,
                "AuthorizationFailed",
                format!(
                    "The client '{CLIENT_ID}' with object id '{CLIENT_ID}' does not have authorization to perform action '{action}' over scope '{scope}' or the scope is invalid. If access was recently granted, please refresh your credentials."
                ),
            )
        };
        if call.method == "GET" && l.is_empty() {
            return self
                .roles
                .is_empty()
                .then(|| refuse("Microsoft.Resources/subscriptions/read"));
        }
        let action = required_action(call.method, l)?;
        (!self.allowed(rg, &action)).then(|| refuse(&action))
    }

    /// `GET .../resourcegroups/{rg}/providers/Microsoft.Authorization/permissions`.
    pub(super) fn permissions(&self, rg: &str) -> Reply {
        let value: Vec<_> = self
            .roles
            .iter()
            .filter(|r| r.covers(Some(rg)))
            .map(|r| {
                json!({
                    "actions": r.actions,
                    "notActions": r.not_actions,
                    "dataActions": [],
                    "notDataActions": [],
                })
            })
            .collect();
        Reply::json(200, json!({ "value": value }))
    }
}

/// The subscription as `GET /subscriptions/{id}` (2022-12-01) shows it.
pub(super) fn subscription() -> Reply {
    Reply::json(
        200,
        json!({
            "id": format!("/subscriptions/{SUBSCRIPTION}"),
            "authorizationSource": "RoleBased",
            "managedByTenants": [],
            "subscriptionId": SUBSCRIPTION,
            "tenantId": super::world::TENANT,
            "displayName": "bootstrap-agent fake subscription",
            "state": "Enabled",
            "subscriptionPolicies": {
                "locationPlacementId": "Public_2014-09-01",
                "quotaId": "PayAsYouGo_2014-09-01",
                "spendingLimit": "Off"
            }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_allow_as_azure_rbac_does() {
        let contributor = RoleAssignment::contributor();
        assert!(contributor.allows("Microsoft.Network/publicIPAddresses/write"));
        assert!(!contributor.allows("Microsoft.Authorization/roleAssignments/write"));
        assert!(contributor.allows("microsoft.authorization/permissions/read"));
        let reader = RoleAssignment::custom(Some("rg"), &["*/read"]);
        assert!(reader.allows("Microsoft.Network/virtualNetworks/subnets/read"));
        assert!(!reader.allows("Microsoft.Network/publicIPAddresses/write"));
        assert!(reader.covers(Some("RG")) && !reader.covers(Some("other")));
        assert!(!reader.covers(None));
        assert!(wildcard(
            "Microsoft.Network/*/write",
            "microsoft.network/a/b/write"
        ));
        assert!(!wildcard(
            "Microsoft.Network/*/write",
            "Microsoft.Network/a/read"
        ));
    }

    #[test]
    fn each_route_names_its_action() {
        let pip = [
            "resourcegroups",
            "rg",
            "providers",
            "microsoft.network",
            "publicipaddresses",
            "x",
        ];
        assert_eq!(
            required_action("PUT", &pip).as_deref(),
            Some("Microsoft.Network/publicIPAddresses/write")
        );
        assert_eq!(
            required_action("DELETE", &pip).as_deref(),
            Some("Microsoft.Network/publicIPAddresses/delete")
        );
        let record = [
            "resourcegroups",
            "rg",
            "providers",
            "microsoft.network",
            "privatednszones",
            "z",
            "a",
            "api",
        ];
        assert_eq!(
            required_action("PUT", &record).as_deref(),
            Some("Microsoft.Network/privateDnsZones/A/write")
        );
        assert_eq!(
            required_action(
                "GET",
                &[
                    "providers",
                    "microsoft.network",
                    "locations",
                    "x",
                    "operations",
                    "1"
                ]
            ),
            None,
            "operation polls are not checked"
        );
    }

    #[test]
    fn permission_reads_and_tag_writes_are_checked_and_other_providers_are_not() {
        // (method, path under the resource group's providers, the action checked); None: the
        // fake serves no VM writes and no storage, nothing to check.
        let cases = [
            (
                "GET",
                "microsoft.authorization/permissions",
                Some("Microsoft.Authorization/permissions/read"),
            ),
            (
                "PUT",
                "microsoft.resources/tags/default",
                Some("Microsoft.Resources/tags/write"),
            ),
            ("PUT", "microsoft.compute/virtualmachines/vm", None),
            (
                "GET",
                "microsoft.compute/virtualmachines/vm",
                Some("Microsoft.Compute/virtualMachines/read"),
            ),
            (
                "PUT",
                "microsoft.network/loadbalancers/lb",
                Some("Microsoft.Network/loadBalancers/write"),
            ),
            ("GET", "microsoft.storage/storageaccounts/x", None),
        ];
        for (method, path, expected) in cases {
            let path = format!("resourcegroups/rg/providers/{path}");
            let segments: Vec<&str> = path.split('/').collect();
            let action = required_action(method, &segments);
            assert_eq!(action.as_deref(), expected, "{method} {path}");
        }
    }
}
