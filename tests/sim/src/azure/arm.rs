//! ARM's front door in the fake: the request (`Call`), the answer (`Reply`, errors in the ARM
//! envelope `{"error":{"code","message"}}`: 401, 403, 404, 409, 412, 400), and the routing of a
//! path to the resource type that answers it, once `authorization` has let the call through.

use super::world::{SUBSCRIPTION, World, rg_id};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// An HTTP answer: status, extra headers, JSON body (None = empty).
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Some(body),
        }
    }

    pub fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn error(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self::json(
            status,
            json!({"error": {"code": code, "message": message.into()}}),
        )
    }

    pub(super) fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }
}

/// One ARM request, already authenticated.
pub struct Call<'a> {
    pub method: &'a str,
    /// Path segments as sent.
    pub segments: Vec<&'a str>,
    pub query: BTreeMap<String, String>,
    pub headers: &'a hyper::HeaderMap,
    pub body: &'a [u8],
    /// `http://host:port` as the client addressed us (through a proxy: the proxy).
    pub origin: String,
}

impl Call<'_> {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub(super) fn json(&self) -> Result<Value, Reply> {
        serde_json::from_slice(self.body).map_err(|e| {
            Reply::error(
                400,
                "InvalidRequestContent",
                format!("The request content was invalid and could not be deserialized: {e}"),
            )
        })
    }
}

/// A resource that lives in a resource group.
pub(super) trait InResourceGroup {
    fn resource_group(&self) -> &str;
}

impl World {
    /// `GET .../providers/Microsoft.Network/<kind>` of resource group `rg`: the `items` whose
    /// `group` it is (names compare case-insensitively), each as `json` shows it, paged.
    pub(super) fn list_in_group<T: InResourceGroup>(
        &self,
        call: &Call,
        rg: &str,
        kind: &str,
        items: &BTreeMap<String, T>,
        json: fn(&World, &T) -> Value,
    ) -> Reply {
        let all: Vec<Value> = items
            .values()
            .filter(|i| i.resource_group().eq_ignore_ascii_case(rg))
            .map(|i| json(self, i))
            .collect();
        let path = format!("{}/providers/Microsoft.Network/{kind}", rg_id(rg));
        self.paged(call, &all, &path)
    }

    /// One page of a list answer, as ARM pages: `value`, and `nextLink` (the same `path` and
    /// api-version with a `$skiptoken`) while more remain.
    pub(super) fn paged(&self, call: &Call, all: &[Value], path: &str) -> Reply {
        self.paged_by(call, all, path, self.page_size, "")
    }

    /// [`Self::paged`] with `page_size` items a page and `carried` (`&$top=N`, say) kept in
    /// every `nextLink`, as ARM keeps a list's query options in the links it hands out.
    pub(super) fn paged_by(
        &self,
        call: &Call,
        all: &[Value],
        path: &str,
        page_size: usize,
        carried: &str,
    ) -> Reply {
        let skip: usize = call
            .query
            .get("$skiptoken")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let page: Vec<Value> = all.iter().skip(skip).take(page_size).cloned().collect();
        let mut body = json!({ "value": page });
        if skip + page_size < all.len() {
            body["nextLink"] = json!(format!(
                "{}{path}?api-version={}{carried}&$skiptoken={}",
                call.origin,
                call.query.get("api-version").cloned().unwrap_or_default(),
                skip + page_size
            ));
        }
        Reply::json(200, body)
    }

    pub fn handle(&mut self, call: &Call) -> Reply {
        self.tick();
        let reply = self.route(call);
        // A NIC's update may have finished in `tick` (a GET) or a rule come with this call.
        self.note_serving();
        reply
    }

    fn route(&mut self, call: &Call) -> Reply {
        if !call.query.contains_key("api-version") {
            return Reply::error(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            );
        }
        let lower: Vec<String> = call
            .segments
            .iter()
            .map(|s| s.to_ascii_lowercase())
            .collect();
        let l: Vec<&str> = lower.iter().map(String::as_str).collect();
        let s = &call.segments;
        if l.len() < 2 || l[0] != "subscriptions" {
            return Reply::error(404, "NotFound", "no such route");
        }
        if l[1] != SUBSCRIPTION {
            return Reply::error(
                404,
                "SubscriptionNotFound",
                format!("The subscription '{}' could not be found.", s[1]),
            );
        }
        if let Some(refused) = self.authorize(call, &l[2..]) {
            return refused;
        }
        match (call.method, &l[2..]) {
            ("GET", []) => super::authorization::subscription(),
            ("GET", ["providers", "microsoft.compute"]) => super::compute::compute_provider(),
            ("GET", ["providers", "microsoft.network", "locations", _, "usages"]) => {
                self.usages(s[5])
            }
            (
                "GET",
                [
                    "providers",
                    "microsoft.network",
                    "locations",
                    _,
                    "operations",
                    id,
                ],
            ) => self.operation_status(id),
            (
                "GET",
                [
                    "providers",
                    "microsoft.network",
                    "locations",
                    loc,
                    "operationresults",
                    id,
                ],
            ) => self.operation_result(call, loc, id),
            ("GET", ["resourcegroups"]) => self.list_resource_groups(call),
            (_, ["resourcegroups", rg, rest @ ..]) => {
                if !self.resource_groups.contains_key(*rg) {
                    return Reply::error(
                        404,
                        "ResourceGroupNotFound",
                        format!("Resource group '{}' could not be found.", s[3]),
                    );
                }
                let rg_name = s[3];
                let orig = &s[4..];
                match (call.method, rest) {
                    ("GET" | "PATCH", []) => self.resource_group(call, rg),
                    ("GET", ["providers", "microsoft.authorization", "permissions"]) => {
                        self.permissions(rg)
                    }
                    (
                        "GET",
                        [
                            "providers",
                            "microsoft.network",
                            "privatednszones",
                            zone,
                            "virtualnetworklinks",
                        ],
                    ) => self.virtual_network_links(rg, zone, rg_name),
                    ("GET", ["providers", "microsoft.network", "publicipaddresses"]) => {
                        self.list_public_ips(call, rg_name)
                    }
                    (_, ["providers", "microsoft.network", "publicipaddresses", _]) => {
                        self.public_ip(call, rg_name, orig[3])
                    }
                    // The fake has no Private Link services: the list is empty (the CCM lists
                    // them when a frontend goes, `azure_privatelinkservice.go:174`).
                    ("GET", ["providers", "microsoft.network", "privatelinkservices"]) => self
                        .paged(
                            call,
                            &[],
                            &format!(
                                "{}/providers/Microsoft.Network/privateLinkServices",
                                super::world::rg_id(rg_name)
                            ),
                        ),
                    ("GET", ["providers", "microsoft.network", "loadbalancers"]) => {
                        self.list_load_balancers(call, rg_name)
                    }
                    (_, ["providers", "microsoft.network", "loadbalancers", _]) => {
                        self.load_balancer(call, rg_name, orig[3])
                    }
                    (_, ["providers", "microsoft.network", "networksecuritygroups", _]) => {
                        self.network_security_group(call, rg_name, orig[3])
                    }
                    ("GET", ["providers", "microsoft.compute", "virtualmachines", _]) => {
                        self.virtual_machine(call, rg_name, orig[3])
                    }
                    (_, ["providers", "microsoft.network", "networkinterfaces", _]) => {
                        self.network_interface(call, rg_name, orig[3])
                    }
                    (
                        "GET",
                        [
                            "providers",
                            "microsoft.network",
                            "virtualnetworks",
                            vnet,
                            "subnets",
                            subnet,
                        ],
                    ) => self.subnet(rg, vnet, subnet, rg_name),
                    (
                        "GET",
                        [
                            "providers",
                            "microsoft.network",
                            "virtualnetworks",
                            vnet,
                            "checkipaddressavailability",
                        ],
                    ) => self.check_ip(call, rg, vnet),
                    (_, ["providers", "microsoft.network", "dnszones", zone]) => {
                        self.zone(call, false, rg, zone, rg_name)
                    }
                    (_, ["providers", "microsoft.network", "privatednszones", zone]) => {
                        self.zone(call, true, rg, zone, rg_name)
                    }
                    (
                        _,
                        [
                            "providers",
                            "microsoft.network",
                            "dnszones",
                            zone,
                            rtype,
                            name,
                        ],
                    ) => self.record_set(call, false, rg, zone, rtype, name, rg_name, orig),
                    (
                        _,
                        [
                            "providers",
                            "microsoft.network",
                            "privatednszones",
                            zone,
                            rtype,
                            name,
                        ],
                    ) => self.record_set(call, true, rg, zone, rtype, name, rg_name, orig),
                    (_, ["providers", "microsoft.resources", "tags", "default"]) => {
                        self.tags(call, rg, rg_name)
                    }
                    _ => Reply::error(404, "NotFound", "no such route in the fake"),
                }
            }
            _ => Reply::error(404, "NotFound", "no such route in the fake"),
        }
    }
}
