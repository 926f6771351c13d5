//! `ResourceGroups_List` in the fake: `GET /subscriptions/{sub}/resourcegroups` (Microsoft.Resources,
//! 2021-04-01), each group as ARM writes it (`id`, `name`, `type`, `location`,
//! `properties.provisioningState`, `tags` when it has any), paged by `nextLink`
//! (`$skiptoken`). Without `$top` a page holds the fake's small `page_size` (ARM's own default
//! page size is not documented). `$top` is the page size, as ARM answers it: a page of that
//! many and a `nextLink` that carries `$top` on (azure-sdk-for-python#541, a maintainer on
//! `resourcegroups?...&%24top=1&...&%24skiptoken=`: "even with `top=2`, you get the
//! `nextLink` link to get another page of 2 elements"; azure-sdk-for-java#1451: "server returns
//! a page with $top items but also a next link"), at most 1000 (more is refused 400
//! `InvalidTopInQueryString`, as ARM refused `$top=1001` on `Resources_List`,
//! azure-sdk-for-js#18535). A subscription holds at most 980 resource groups
//! (MicrosoftDocs/azure-docs `includes/azure-subscription-limits-azure-resource-manager.md`,
//! commit 056402bf), so `$top=1000` lists them all in one page. `$filter` (tag name and
//! value) is not implemented: the fake refuses it (400) rather than answer as if it had
//! applied it.
//!
//! `ResourceGroups_Get` and `ResourceGroups_Update` (`GET` / `PATCH
//! /subscriptions/{sub}/resourcegroups/{rg}`): an update's `tags` replaces the group's whole
//! tag map (ARM's resource-group PATCH; a group has no ETag). Azure Stack Hub, without the
//! Tags API, records the private IP this way.
//!
//! Also the rival claimer tests arm ([`RivalClaim`]): when the agent claims a private IP, another
//! cluster claims the same address in the same instant, as two agents racing would.

use super::arm::{Call, Reply};
use super::lock;
use super::world::{LOCATION, SUBSCRIPTION, World, rg_id};
use serde_json::{Value, json};

/// Another cluster that claims whatever address the next claim of the agent names.
#[derive(Debug, Clone)]
pub struct RivalClaim {
    /// Its resource group (created when missing) and tag name (`<infra-id>-rsvd-private-ipv4`).
    pub rg: String,
    pub tag: String,
    /// Already held (`<ip>`) rather than claimed (`claim:<ip>`).
    pub held: bool,
    /// A claim is withdrawn after the agent listed the resource groups this many times since
    /// (None: never), as a rival that saw the agent's claim and yielded.
    pub yields_after_lists: Option<usize>,
}

/// A rival's claim in place: where, and when it goes.
#[derive(Debug, Clone)]
pub(super) struct ActiveRival {
    rg: String,
    tag: String,
    lists_left: Option<usize>,
}

/// The largest page ARM hands out (`$top`).
const MAX_TOP: usize = 1000;

/// What reading a resource group (and seeing it listed) takes.
const GROUP_READ: &str = "Microsoft.Resources/subscriptions/resourceGroups/read";

impl World {
    pub(super) fn list_resource_groups(&mut self, call: &Call) -> Reply {
        // The agent reads the whole list; what the fake does not implement it refuses rather
        // than answer as if it had applied it.
        if call.query.contains_key("$filter") {
            return Reply::error(
                400,
                "InvalidQueryParameter",
                "$filter is not implemented by the fake",
            );
        }
        let page_size = match call.query.get("$top") {
            None => self.page_size,
            Some(top) => match top.parse::<usize>() {
                Ok(n) if (1..=MAX_TOP).contains(&n) => n,
                _ => {
                    return Reply::error(
                        400,
                        "InvalidTopInQueryString",
                        format!(
                            "The value '{top}' of query parameter '$top' is not valid: expected an integer from 1 to {MAX_TOP}."
                        ),
                    );
                }
            },
        };
        if self.deny_resource_group_list {
            return Reply::error(
                403,
                "AuthorizationFailed",
                format!(
                    "The client '{}' with object id '{}' does not have authorization to perform action 'Microsoft.Resources/subscriptions/resourcegroups/read' over scope '/subscriptions/{SUBSCRIPTION}' or the scope is invalid. If access was recently granted, please refresh your credentials.",
                    super::world::CLIENT_ID,
                    super::world::CLIENT_ID
                ),
            );
        }
        // A list is its first page; the pages after it are the same list.
        if !call.query.contains_key("$skiptoken") {
            self.rival_lists_seen();
        }
        // ARM lists only the groups the caller may read: a role scoped to some groups sees
        // those alone (no error), one on the subscription sees them all.
        let all: Vec<Value> = self
            .resource_groups
            .iter()
            .filter(|(name, _)| self.allowed(Some(name), GROUP_READ))
            .map(|(name, tags)| Self::group_view(name, tags))
            .collect();
        let carried = call
            .query
            .get("$top")
            .map(|top| format!("&$top={top}"))
            .unwrap_or_default();
        self.paged_by(
            call,
            &all,
            &format!("/subscriptions/{SUBSCRIPTION}/resourcegroups"),
            page_size,
            &carried,
        )
    }

    fn group_view(name: &str, tags: &serde_json::Map<String, Value>) -> Value {
        let mut group = json!({
            "id": rg_id(name), "name": name, "type": "Microsoft.Resources/resourceGroups",
            "location": LOCATION, "properties": {"provisioningState": "Succeeded"},
        });
        if !tags.is_empty() {
            group["tags"] = json!(tags);
        }
        group
    }

    /// `GET` or `PATCH` of the resource group `rg` (lower case; it exists).
    pub(super) fn resource_group(&mut self, call: &Call, rg: &str) -> Reply {
        if call.method == "PATCH" {
            let body = match call.json() {
                Ok(b) => b,
                Err(r) => return r,
            };
            if let Some(given) = body.get("tags") {
                let Some(given) = given.as_object() else {
                    return Reply::error(400, "InvalidRequestContent", "tags must be an object.");
                };
                if let Some(name) = given
                    .iter()
                    .find(|(n, v)| n.chars().any(|c| "<>%&\\?/".contains(c)) || !v.is_string())
                    .map(|(n, _)| n)
                {
                    return Reply::error(
                        400,
                        "InvalidTagNameCharacters",
                        format!(
                            "The tag names '{name}' have reserved characters '<,>,%,&,\\,?,/' or control characters."
                        ),
                    );
                }
                let before = self.resource_groups.get(rg).cloned().unwrap_or_default();
                let new_values: Vec<String> = given
                    .iter()
                    .filter(|(n, v)| before.get(*n) != Some(*v))
                    .filter_map(|(_, v)| v.as_str().map(str::to_string))
                    .collect();
                self.resource_groups.insert(rg.to_string(), given.clone());
                for value in &new_values {
                    self.rival_claims(value);
                }
            }
        }
        let tags = self.resource_groups.get(rg).cloned().unwrap_or_default();
        Reply::json(200, Self::group_view(rg, &tags))
    }

    /// A resource group of the subscription, empty (no tags) when new.
    pub fn add_resource_group(&mut self, name: &str) {
        self.resource_groups
            .entry(name.to_ascii_lowercase())
            .or_default();
    }

    /// After the agent wrote `value` to one of its tags: a rival in waiting claims the same
    /// address.
    pub(super) fn rival_claims(&mut self, value: &str) {
        let Some(ip) = value.strip_prefix("claim:") else {
            return;
        };
        if self.rival_claims.is_empty() {
            return;
        }
        let rival = self.rival_claims.remove(0);
        self.rival_records(rival, ip);
    }

    /// After a NIC's PUT gave a new secondary IP configuration `ip`: a rival in waiting
    /// records the same address, as a cluster whose claim was written just before Azure
    /// counted the NIC's address would.
    pub(super) fn rival_on_second_address(&mut self, ip: &str) {
        if self.rival_second_addresses.is_empty() {
            return;
        }
        let rival = self.rival_second_addresses.remove(0);
        self.rival_records(rival, ip);
    }

    fn rival_records(&mut self, rival: RivalClaim, ip: &str) {
        self.add_resource_group(&rival.rg);
        let value = if rival.held {
            ip.to_string()
        } else {
            format!("claim:{ip}")
        };
        if let Some(tags) = self.resource_groups.get_mut(&rival.rg.to_ascii_lowercase()) {
            tags.insert(rival.tag.clone(), json!(value));
        }
        if !rival.held {
            self.active_rivals.push(ActiveRival {
                rg: rival.rg.to_ascii_lowercase(),
                tag: rival.tag,
                lists_left: rival.yields_after_lists,
            });
        }
    }

    /// A list was answered: rivals that yield after so many lists count it, and go.
    fn rival_lists_seen(&mut self) {
        let mut gone = Vec::new();
        self.active_rivals
            .retain_mut(|rival| match &mut rival.lists_left {
                Some(0) => {
                    gone.push((rival.rg.clone(), rival.tag.clone()));
                    false
                }
                Some(n) => {
                    *n -= 1;
                    true
                }
                None => true,
            });
        for (rg, tag) in gone {
            if let Some(tags) = self.resource_groups.get_mut(&rg) {
                tags.remove(&tag);
            }
        }
    }
}

impl super::AzureSim {
    /// Another cluster's resource group (empty) and, with `private_zone`, its private DNS zone
    /// in it, as the installer makes them.
    pub fn create_cluster_resource_group(&self, rg: &str, private_zone: Option<&str>) {
        let mut w = lock(&self.world);
        w.add_resource_group(rg);
        if let Some(zone) = private_zone {
            w.zones
                .entry((true, rg.to_ascii_lowercase(), zone.to_string()))
                .or_insert_with(|| super::dns::DnsZone {
                    etag: uuid::Uuid::new_v4().to_string(),
                    ..Default::default()
                });
        }
    }

    /// Sets tag `tag` of resource group `rg` (created when missing) to `value`, as another
    /// cluster's agent would.
    pub fn set_resource_group_tag(&self, rg: &str, tag: &str, value: &str) {
        let mut w = lock(&self.world);
        w.add_resource_group(rg);
        if let Some(tags) = w.resource_groups.get_mut(&rg.to_ascii_lowercase()) {
            tags.insert(tag.to_string(), json!(value));
        }
    }

    /// The caller lacks `Microsoft.Resources/subscriptions/resourcegroups/read`: the list
    /// answers 403 AuthorizationFailed, as ARM does.
    pub fn deny_resource_group_list(&self) {
        lock(&self.world).deny_resource_group_list = true;
    }

    /// Arms a rival cluster: when the agent next claims a private IP, the rival records the same
    /// address in the same instant (see [`RivalClaim`]). Several are used in order.
    pub fn race_private_claims(&self, rivals: Vec<RivalClaim>) {
        lock(&self.world).rival_claims.extend(rivals);
    }

    /// Arms a rival cluster: when a NIC's PUT next gives a new secondary IP configuration an
    /// address, the rival records the same address in the same instant (its claim, written
    /// after the agent read the records and before Azure counted the NIC's address). Several
    /// are used in order.
    pub fn race_second_addresses(&self, rivals: Vec<RivalClaim>) {
        lock(&self.world).rival_second_addresses.extend(rivals);
    }
}
