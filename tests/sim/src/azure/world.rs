//! The fake's state and the ARM semantics it implements, per azure-rest-api-specs:
//!
//! - `Microsoft.Network/publicIPAddresses` (PUT/DELETE long-running with `Azure-AsyncOperation`
//!   (+ `Location` on DELETE) and `Retry-After`; `provisioningState` Updating -> Succeeded or
//!   Deleting -> gone after a configurable delay; the address is assigned when provisioning
//!   succeeds; GET; list by resource group with `nextLink` paging);
//! - `virtualNetworks/{vnet}/subnets/{subnet}` GET and `virtualNetworks/{vnet}/CheckIPAddressAvailability`
//!   (Azure keeps the first four and the last address of a subnet; addresses in use; up to
//!   five suggestions when the asked one is taken). A subnet with one prefix reports
//!   `addressPrefix`; a dual-stack one reports `addressPrefixes` (IPv4, then its IPv6 /64).
//!   What the real CheckIPAddressAvailability answers for an IPv6 is not documented, so the
//!   fake refuses IPv6 there (400), and an agent that asked would fail;
//! - `dnsZones` (2018-05-01: `TTL`, `ARecords`, `AAAARecords`) and `privateDnsZones`
//!   (2020-06-01: `ttl`, `aRecords`, `aaaaRecords`) zones and record sets with ETags,
//!   `If-Match` / `If-None-Match: *` -> 412 PreconditionFailed;
//! - `Microsoft.Resources/tags/default` at resource-group scope (GET, PUT, PATCH
//!   Merge/Replace/Delete);
//! - errors in the ARM envelope `{"error":{"code","message"}}` (401, 404, 409, 412, 400).

use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

pub const SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000001";
pub const CLIENT_ID: &str = "00000000-0000-0000-0000-000000000002";
pub const TENANT: &str = "00000000-0000-0000-0000-000000000003";
pub const CLIENT_SECRET: &str = "fixture-secret-DO-NOT-LOG";
pub const CLUSTER_RG: &str = "mycluster-7xk2p-rg";
pub const DNS_RG: &str = "dns-rg";
pub const NETWORK_RG: &str = "network-rg";
pub const VNET: &str = "mycluster-vnet";
pub const COMPUTE_SUBNET: &str = "mycluster-worker-subnet";
/// The network the installer makes when the install-config names none: in the cluster
/// resource group, named after the infra id.
pub const INSTALLER_VNET: &str = "mycluster-7xk2p-vnet";
pub const INSTALLER_COMPUTE_SUBNET: &str = "mycluster-7xk2p-worker-subnet";
pub const PUBLIC_ZONE: &str = "example.com";
pub const PRIVATE_ZONE: &str = "mycluster.example.com";
pub const LOCATION: &str = "eastus";

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

    fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }
}

#[derive(Debug, Clone)]
pub struct PublicIp {
    pub rg: String,
    pub name: String,
    pub location: String,
    pub sku: String,
    pub version: String,
    pub allocation: String,
    pub tags: Map<String, Value>,
    pub ip: Option<IpAddr>,
    pub state: String,
    pub etag: String,
    pub guid: String,
}

#[derive(Debug, Clone)]
struct Operation {
    ready_at: Instant,
    done: bool,
    /// Lowercased resource id the operation works on.
    target: String,
    delete: bool,
}

#[derive(Debug, Clone)]
pub struct Subnet {
    pub name: String,
    pub network: Ipv4Addr,
    pub len: u32,
    /// The IPv6 prefix of a dual-stack subnet (Azure IPv6 subnets are exactly /64).
    pub ipv6: Option<(Ipv6Addr, u8)>,
}

impl Subnet {
    fn contains(&self, ip: Ipv4Addr) -> bool {
        let mask = u32::MAX.checked_shl(32 - self.len).unwrap_or(0);
        u32::from(ip) & mask == u32::from(self.network)
    }

    fn platform_reserved(&self, ip: Ipv4Addr) -> bool {
        let offset = u32::from(ip) - u32::from(self.network);
        offset < 4 || offset == (1u32 << (32 - self.len)) - 1
    }

    fn prefix(&self) -> String {
        format!("{}/{}", self.network, self.len)
    }

    /// The subnet's prefix properties as ARM reports them.
    fn prefixes(&self) -> (&'static str, Value) {
        match self.ipv6 {
            None => ("addressPrefix", json!(self.prefix())),
            Some((net, len)) => (
                "addressPrefixes",
                json!([self.prefix(), format!("{net}/{len}")]),
            ),
        }
    }
}

/// The one virtual network of the world: where subnets are looked up and addresses checked.
#[derive(Debug, Clone)]
pub struct VirtualNetwork {
    pub rg: String,
    pub name: String,
    pub subnets: Vec<Subnet>,
}

#[derive(Debug, Clone)]
pub struct RecordSet {
    pub ttl: u64,
    pub values: Vec<IpAddr>,
    pub etag: String,
    pub metadata: Value,
}

#[derive(Debug, Clone, Default)]
pub struct DnsZone {
    pub etag: String,
    /// (TYPE, relative name lowercased) -> set.
    pub records: BTreeMap<(String, String), RecordSet>,
}

pub struct World {
    pub delay: Duration,
    pub retry_after: u64,
    pub page_size: usize,
    pub tokens: BTreeSet<String>,
    pub resource_groups: BTreeMap<String, Map<String, Value>>,
    /// Lowercased resource id -> public IP.
    pub public_ips: BTreeMap<String, PublicIp>,
    operations: BTreeMap<String, Operation>,
    pub vnet: VirtualNetwork,
    pub in_use: BTreeSet<Ipv4Addr>,
    /// (private?, rg lowercased, zone lowercased) -> zone.
    pub zones: BTreeMap<(bool, String, String), DnsZone>,
    /// A rival writer: each conditional record-set write first loses to one of these values
    /// (added to the set under a new ETag), as if someone wrote between read and write.
    pub rival_writes: Vec<IpAddr>,
    next_v4: u32,
    next_v6: u16,
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl World {
    /// The fixture's world: resource groups, the vnet with its subnets, the two zones. The
    /// vnet is the `azure` fixture's existing one (`network-rg/mycluster-vnet`), or with
    /// `installer_network` the one the installer makes (`mycluster-7xk2p-vnet` in the cluster
    /// resource group, subnets `mycluster-7xk2p-master-subnet` / `-worker-subnet`); both
    /// have the same address layout. With `dual_stack` both subnets also have an IPv6 /64 of
    /// the `azure-dualstack` fixture's machine network `fd00:10::/48` (control plane `:1::`,
    /// compute `:2::`, as the installer splits it).
    pub fn fixture(delay: Duration, installer_network: bool, dual_stack: bool) -> Self {
        let v6 = |n: u16| dual_stack.then_some((Ipv6Addr::new(0xfd00, 0x10, 0, n, 0, 0, 0, 0), 64));
        let (vnet_rg, vnet, master, worker) = if installer_network {
            (
                CLUSTER_RG,
                INSTALLER_VNET,
                "mycluster-7xk2p-master-subnet",
                INSTALLER_COMPUTE_SUBNET,
            )
        } else {
            (NETWORK_RG, VNET, "mycluster-master-subnet", COMPUTE_SUBNET)
        };
        let mut resource_groups = BTreeMap::new();
        for rg in [CLUSTER_RG, DNS_RG, vnet_rg] {
            resource_groups.insert(rg.to_ascii_lowercase(), Map::new());
        }
        let mut zones = BTreeMap::new();
        zones.insert(
            (false, DNS_RG.into(), PUBLIC_ZONE.into()),
            DnsZone {
                etag: uuid(),
                ..Default::default()
            },
        );
        zones.insert(
            (true, CLUSTER_RG.into(), PRIVATE_ZONE.into()),
            DnsZone {
                etag: uuid(),
                ..Default::default()
            },
        );
        Self {
            delay,
            retry_after: 1,
            page_size: 3,
            tokens: BTreeSet::new(),
            resource_groups,
            public_ips: BTreeMap::new(),
            operations: BTreeMap::new(),
            vnet: VirtualNetwork {
                rg: vnet_rg.into(),
                name: vnet.into(),
                subnets: vec![
                    Subnet {
                        name: master.into(),
                        network: Ipv4Addr::new(10, 0, 0, 0),
                        len: 24,
                        ipv6: v6(1),
                    },
                    Subnet {
                        name: worker.into(),
                        network: Ipv4Addr::new(10, 0, 1, 0),
                        len: 24,
                        ipv6: v6(2),
                    },
                ],
            },
            // Worker NICs, the bootstrap host, and something sitting on the top address.
            in_use: [
                Ipv4Addr::new(10, 0, 0, 4),
                Ipv4Addr::new(10, 0, 1, 4),
                Ipv4Addr::new(10, 0, 1, 5),
                Ipv4Addr::new(10, 0, 1, 10),
                Ipv4Addr::new(10, 0, 1, 254),
            ]
            .into_iter()
            .collect(),
            zones,
            rival_writes: Vec::new(),
            next_v4: 1,
            next_v6: 1,
        }
    }

    /// Finishes every operation whose time has come.
    pub fn tick(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .operations
            .iter()
            .filter(|(_, op)| !op.done && op.ready_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            let Some(op) = self.operations.get_mut(&id) else {
                continue;
            };
            op.done = true;
            let (target, delete) = (op.target.clone(), op.delete);
            if delete {
                self.public_ips.remove(&target);
            } else if let Some(pip) = self.public_ips.get_mut(&target) {
                pip.state = "Succeeded".into();
                if pip.ip.is_none() {
                    pip.ip = Some(if pip.version == "IPv6" {
                        self.next_v6 += 1;
                        IpAddr::V6(Ipv6Addr::new(
                            0x2603,
                            0x1030,
                            0x20c,
                            0,
                            0,
                            0,
                            0,
                            self.next_v6,
                        ))
                    } else {
                        self.next_v4 += 1;
                        let n = self.next_v4;
                        IpAddr::V4(Ipv4Addr::new(20, 81, (n / 250) as u8, (n % 250) as u8 + 1))
                    });
                }
                pip.etag = format!("W/\"{}\"", uuid());
            }
        }
    }

    fn start_operation(&mut self, target: &str, delete: bool) -> String {
        let id = uuid();
        self.operations.insert(
            id.clone(),
            Operation {
                ready_at: Instant::now() + self.delay,
                done: false,
                target: target.to_string(),
                delete,
            },
        );
        id
    }

    pub fn public_ip_json(&self, pip: &PublicIp) -> Value {
        let id = pip_id(&pip.rg, &pip.name);
        let mut props = json!({
            "provisioningState": pip.state,
            "resourceGuid": pip.guid,
            "publicIPAddressVersion": pip.version,
            "publicIPAllocationMethod": pip.allocation,
            "idleTimeoutInMinutes": 4,
            "ipTags": [],
            "ddosSettings": {"protectionMode": "VirtualNetworkInherited"},
        });
        if let Some(ip) = pip.ip {
            props["ipAddress"] = json!(ip.to_string());
        }
        json!({
            "name": pip.name,
            "id": id,
            "etag": pip.etag,
            "location": pip.location,
            "tags": pip.tags,
            "type": "Microsoft.Network/publicIPAddresses",
            "sku": {"name": pip.sku, "tier": "Regional"},
            "properties": props,
        })
    }
}

pub fn rg_id(rg: &str) -> String {
    format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/{rg}")
}

pub fn pip_id(rg: &str, name: &str) -> String {
    format!(
        "{}/providers/Microsoft.Network/publicIPAddresses/{name}",
        rg_id(rg)
    )
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
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn json(&self) -> Result<Value, Reply> {
        serde_json::from_slice(self.body).map_err(|e| {
            Reply::error(
                400,
                "InvalidRequestContent",
                format!("The request content was invalid and could not be deserialized: {e}"),
            )
        })
    }
}

impl World {
    pub fn handle(&mut self, call: &Call) -> Reply {
        self.tick();
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
        match (call.method, &l[2..]) {
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
                    ("GET", ["providers", "microsoft.network", "publicipaddresses"]) => {
                        self.list_public_ips(call, rg_name)
                    }
                    (_, ["providers", "microsoft.network", "publicipaddresses", _]) => {
                        self.public_ip(call, rg_name, orig[3])
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

    fn operation_status(&self, id: &str) -> Reply {
        match self.operations.get(id) {
            None => Reply::error(
                404,
                "OperationNotFound",
                format!("Operation {id} not found."),
            ),
            Some(op) => {
                let status = if op.done { "Succeeded" } else { "InProgress" };
                let reply = Reply::json(200, json!({"status": status}));
                if op.done {
                    reply
                } else {
                    reply.header("Retry-After", self.retry_after.to_string())
                }
            }
        }
    }

    fn operation_result(&self, call: &Call, loc: &str, id: &str) -> Reply {
        match self.operations.get(id) {
            None => Reply::error(
                404,
                "OperationNotFound",
                format!("Operation {id} not found."),
            ),
            Some(op) if !op.done => Reply::empty(202)
                .header("Location", self.op_url(call, loc, id, true))
                .header("Retry-After", self.retry_after.to_string()),
            Some(op) if op.delete => Reply::empty(204),
            Some(op) => match self.public_ips.get(&op.target) {
                Some(pip) => Reply::json(200, self.public_ip_json(pip)),
                None => Reply::empty(204),
            },
        }
    }

    fn op_url(&self, call: &Call, loc: &str, id: &str, result: bool) -> String {
        let kind = if result {
            "operationResults"
        } else {
            "operations"
        };
        let version = call.query.get("api-version").cloned().unwrap_or_default();
        format!(
            "{}/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Network/locations/{loc}/{kind}/{id}?api-version={version}",
            call.origin
        )
    }

    fn list_public_ips(&self, call: &Call, rg: &str) -> Reply {
        let all: Vec<Value> = self
            .public_ips
            .values()
            .filter(|p| p.rg.eq_ignore_ascii_case(rg))
            .map(|p| self.public_ip_json(p))
            .collect();
        let skip: usize = call
            .query
            .get("$skiptoken")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let page: Vec<Value> = all
            .iter()
            .skip(skip)
            .take(self.page_size)
            .cloned()
            .collect();
        let mut body = json!({"value": page});
        if skip + self.page_size < all.len() {
            body["nextLink"] = json!(format!(
                "{}/subscriptions/{SUBSCRIPTION}/resourceGroups/{rg}/providers/Microsoft.Network/publicIPAddresses?api-version={}&$skiptoken={}",
                call.origin,
                call.query.get("api-version").cloned().unwrap_or_default(),
                skip + self.page_size
            ));
        }
        Reply::json(200, body)
    }

    fn public_ip(&mut self, call: &Call, rg: &str, name: &str) -> Reply {
        let key = pip_id(rg, name).to_ascii_lowercase();
        match call.method {
            "GET" => match self.public_ips.get(&key) {
                Some(pip) => Reply::json(200, self.public_ip_json(pip)),
                None => Reply::error(
                    404,
                    "ResourceNotFound",
                    format!(
                        "The Resource 'Microsoft.Network/publicIPAddresses/{name}' under resource group '{rg}' was not found."
                    ),
                ),
            },
            "PUT" => {
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let Some(location) = body["location"].as_str() else {
                    return Reply::error(
                        400,
                        "LocationRequired",
                        "The location property is required for this definition.",
                    );
                };
                let props = &body["properties"];
                let sku = body["sku"]["name"].as_str().unwrap_or("Basic").to_string();
                let version = props["publicIPAddressVersion"]
                    .as_str()
                    .unwrap_or("IPv4")
                    .to_string();
                let allocation = props["publicIPAllocationMethod"]
                    .as_str()
                    .unwrap_or("Dynamic")
                    .to_string();
                if !matches!(version.as_str(), "IPv4" | "IPv6") {
                    return Reply::error(
                        400,
                        "InvalidRequestFormat",
                        format!("Value '{version}' is not valid for publicIPAddressVersion."),
                    );
                }
                if sku == "Standard" && allocation != "Static" {
                    return Reply::error(
                        400,
                        "StandardSkuPublicIPAddressesMustBeStatic",
                        format!(
                            "Standard sku publicIp /subscriptions/.../{name} must have AllocationMethod set to Static."
                        ),
                    );
                }
                let tags = body["tags"].as_object().cloned().unwrap_or_default();
                let existing = self.public_ips.get(&key).cloned();
                if let Some(old) = &existing {
                    if old.state == "Deleting" {
                        return Reply::error(
                            409,
                            "AnotherOperationInProgress",
                            format!(
                                "Another operation on this or dependent resource is in progress. Resource {name}."
                            ),
                        );
                    }
                    if old.version != version {
                        return Reply::error(
                            400,
                            "PublicIPAddressVersionCannotBeChanged",
                            format!("Public IP address version of {name} cannot be changed."),
                        );
                    }
                }
                let pip = PublicIp {
                    rg: rg.to_string(),
                    name: name.to_string(),
                    location: location.to_string(),
                    sku,
                    version,
                    allocation,
                    tags,
                    ip: existing.as_ref().and_then(|e| e.ip),
                    state: "Updating".into(),
                    etag: format!("W/\"{}\"", uuid()),
                    guid: existing.as_ref().map_or_else(uuid, |e| e.guid.clone()),
                };
                self.public_ips.insert(key.clone(), pip.clone());
                let op = self.start_operation(&key, false);
                let status = if existing.is_some() { 200 } else { 201 };
                Reply::json(status, self.public_ip_json(&pip))
                    .header(
                        "Azure-AsyncOperation",
                        self.op_url(call, location, &op, false),
                    )
                    .header("Retry-After", self.retry_after.to_string())
            }
            "DELETE" => {
                let Some(pip) = self.public_ips.get_mut(&key) else {
                    return Reply::empty(204);
                };
                pip.state = "Deleting".into();
                let location = pip.location.clone();
                let op = self.start_operation(&key, true);
                Reply::empty(202)
                    .header(
                        "Azure-AsyncOperation",
                        self.op_url(call, &location, &op, false),
                    )
                    .header("Location", self.op_url(call, &location, &op, true))
                    .header("Retry-After", self.retry_after.to_string())
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }

    /// Whether the path names the world's vnet (ARM names are case-insensitive).
    fn is_vnet(&self, rg: &str, vnet: &str) -> bool {
        rg.eq_ignore_ascii_case(&self.vnet.rg) && vnet.eq_ignore_ascii_case(&self.vnet.name)
    }

    fn subnet(&self, rg: &str, vnet: &str, name: &str, rg_name: &str) -> Reply {
        if !self.is_vnet(rg, vnet) {
            return Reply::error(
                404,
                "ResourceNotFound",
                format!(
                    "The Resource 'Microsoft.Network/virtualNetworks/{vnet}' under resource group '{rg_name}' was not found."
                ),
            );
        }
        let vnet_name = &self.vnet.name;
        match self
            .vnet
            .subnets
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
        {
            None => Reply::error(
                404,
                "NotFound",
                format!(
                    "Resource /subscriptions/{SUBSCRIPTION}/resourceGroups/{rg_name}/providers/Microsoft.Network/virtualNetworks/{vnet_name}/subnets/{name} not found."
                ),
            ),
            Some(s) => {
                let (key, prefixes) = s.prefixes();
                let mut properties = json!({
                    "provisioningState": "Succeeded",
                    "privateEndpointNetworkPolicies": "Disabled",
                    "privateLinkServiceNetworkPolicies": "Enabled",
                });
                properties[key] = prefixes;
                Reply::json(
                    200,
                    json!({
                        "name": s.name,
                        "id": format!("{}/providers/Microsoft.Network/virtualNetworks/{vnet_name}/subnets/{}", rg_id(&self.vnet.rg), s.name),
                        "etag": "W/\"00000000-0000-0000-0000-00000000beef\"",
                        "type": "Microsoft.Network/virtualNetworks/subnets",
                        "properties": properties,
                    }),
                )
            }
        }
    }

    fn check_ip(&self, call: &Call, rg: &str, vnet: &str) -> Reply {
        if !self.is_vnet(rg, vnet) {
            return Reply::error(
                404,
                "ResourceNotFound",
                format!("The Resource 'Microsoft.Network/virtualNetworks/{vnet}' was not found."),
            );
        }
        let Some(ip) = call
            .query
            .get("ipAddress")
            .and_then(|s| s.parse::<Ipv4Addr>().ok())
        else {
            return Reply::error(
                400,
                "InvalidRequestFormat",
                "Cannot parse the request: ipAddress is missing or not an IPv4 address.",
            );
        };
        let Some(subnet) = self.vnet.subnets.iter().find(|s| s.contains(ip)) else {
            return Reply::error(
                400,
                "PrivateIPAddressNotInAnySubnet",
                format!(
                    "Private static IP address {ip} does not belong to the range of any subnet in virtual network {}.",
                    self.vnet.name
                ),
            );
        };
        let reserved = subnet.platform_reserved(ip);
        if !reserved && !self.in_use.contains(&ip) {
            return Reply::json(200, json!({"available": true, "isPlatformReserved": false}));
        }
        let size = 1u32 << (32 - subnet.len);
        let suggestions: Vec<String> = (4..size - 1)
            .map(|o| Ipv4Addr::from(u32::from(subnet.network) + o))
            .filter(|a| !self.in_use.contains(a))
            .take(5)
            .map(|a| a.to_string())
            .collect();
        Reply::json(
            200,
            json!({"available": false, "availableIPAddresses": suggestions, "isPlatformReserved": reserved}),
        )
    }

    fn zone(&self, call: &Call, private: bool, rg: &str, zone: &str, rg_name: &str) -> Reply {
        if call.method != "GET" {
            return Reply::error(405, "MethodNotAllowed", "zones are read-only in the fake");
        }
        let Some(z) = self.zones.get(&(private, rg.to_string(), zone.to_string())) else {
            let kind = if private {
                "privateDnsZones"
            } else {
                "dnszones"
            };
            return Reply::error(
                404,
                "ResourceNotFound",
                format!(
                    "The Resource 'Microsoft.Network/{kind}/{zone}' under resource group '{rg_name}' was not found."
                ),
            );
        };
        let id = format!(
            "{}/providers/Microsoft.Network/{}/{zone}",
            rg_id(rg_name),
            if private {
                "privateDnsZones"
            } else {
                "dnszones"
            }
        );
        let body = if private {
            json!({
                "id": id, "name": zone, "type": "Microsoft.Network/privateDnsZones",
                "etag": z.etag, "location": "global", "tags": {},
                "properties": {
                    "maxNumberOfRecordSets": 25000,
                    "numberOfRecordSets": z.records.len() + 1,
                    "maxNumberOfVirtualNetworkLinks": 1000,
                    "numberOfVirtualNetworkLinks": 1,
                    "maxNumberOfVirtualNetworkLinksWithRegistration": 100,
                    "numberOfVirtualNetworkLinksWithRegistration": 0,
                    "provisioningState": "Succeeded",
                },
            })
        } else {
            json!({
                "id": id, "name": zone, "type": "Microsoft.Network/dnszones",
                "etag": z.etag, "location": "global", "tags": {},
                "properties": {
                    "maxNumberOfRecordSets": 10000,
                    "numberOfRecordSets": z.records.len() + 2,
                    "nameServers": ["ns1-01.azure-dns.com.", "ns2-01.azure-dns.net.", "ns3-01.azure-dns.org.", "ns4-01.azure-dns.info."],
                    "zoneType": "Public",
                },
            })
        };
        Reply::json(200, body)
    }

    #[allow(clippy::too_many_arguments)]
    fn record_set(
        &mut self,
        call: &Call,
        private: bool,
        rg: &str,
        zone: &str,
        rtype: &str,
        name: &str,
        rg_name: &str,
        orig: &[&str],
    ) -> Reply {
        let rtype = rtype.to_ascii_uppercase();
        let zone_kind = if private {
            "privateDnsZones"
        } else {
            "dnszones"
        };
        let Some(z) = self
            .zones
            .get_mut(&(private, rg.to_string(), zone.to_string()))
        else {
            return Reply::error(
                404,
                "ParentResourceNotFound",
                format!(
                    "Can not perform requested operation on nested resource. Parent resource '{zone}' not found."
                ),
            );
        };
        if !matches!(rtype.as_str(), "A" | "AAAA") {
            return Reply::error(
                400,
                "BadRequest",
                format!("record type {rtype} is not supported by the fake"),
            );
        }
        let key = (rtype.clone(), name.to_string());
        let conditional =
            call.header("if-match").is_some() || call.header("if-none-match").is_some();
        if conditional
            && matches!(call.method, "PUT" | "PATCH" | "DELETE")
            && let Some(pos) = self
                .rival_writes
                .iter()
                .position(|ip| (rtype == "A") == ip.is_ipv4())
        {
            let ip = self.rival_writes.remove(pos);
            let set = z.records.entry(key.clone()).or_insert_with(|| RecordSet {
                ttl: 300,
                values: Vec::new(),
                etag: String::new(),
                metadata: json!({}),
            });
            if !set.values.contains(&ip) {
                set.values.push(ip);
            }
            set.etag = uuid();
        }
        let orig_name = orig[orig.len() - 1];
        let (ttl_field, records_field, value_field) = match (private, rtype.as_str()) {
            (false, "A") => ("TTL", "ARecords", "ipv4Address"),
            (false, _) => ("TTL", "AAAARecords", "ipv6Address"),
            (true, "A") => ("ttl", "aRecords", "ipv4Address"),
            (true, _) => ("ttl", "aaaaRecords", "ipv6Address"),
        };
        let fqdn = if name == "@" {
            format!("{zone}.")
        } else {
            format!("{name}.{zone}.")
        };
        let to_json = |set: &RecordSet| {
            let values: Vec<Value> = set
                .values
                .iter()
                .map(|ip| json!({ value_field: ip.to_string() }))
                .collect();
            let mut props = json!({
                "metadata": set.metadata,
                ttl_field: set.ttl,
                "fqdn": fqdn,
                records_field: values,
            });
            if private {
                props["isAutoRegistered"] = json!(false);
            } else {
                props["provisioningState"] = json!("Succeeded");
            }
            json!({
                "id": format!("{}/providers/Microsoft.Network/{zone_kind}/{zone}/{rtype}/{orig_name}", rg_id(rg_name)),
                "name": orig_name,
                "type": format!("Microsoft.Network/{zone_kind}/{rtype}"),
                "etag": set.etag,
                "properties": props,
            })
        };
        let existing = z.records.get(&key).cloned();
        // ETags compare without their quotes (clients may send `"<etag>"` or `<etag>`).
        let if_match = call.header("if-match").map(|t| {
            t.trim()
                .trim_start_matches("W/")
                .trim_matches('"')
                .to_string()
        });
        let if_none_match = call.header("if-none-match").map(str::to_string);
        let precondition_failed = |what: &str| {
            Reply::error(
                412,
                "PreconditionFailed",
                format!(
                    "The condition '{what}' in the request header was not met: the record set has been modified or does not match."
                ),
            )
        };
        match call.method {
            "GET" => match existing {
                Some(set) => Reply::json(200, to_json(&set)),
                None => Reply::error(
                    404,
                    "NotFound",
                    format!(
                        "The resource record '{orig_name}' does not exist in resource group '{rg_name}' of subscription '{SUBSCRIPTION}'."
                    ),
                ),
            },
            "PUT" | "PATCH" => {
                match (&existing, &if_match) {
                    (None, Some(_)) => return precondition_failed("If-Match"),
                    (Some(set), Some(tag)) if tag != "*" && *tag != set.etag => {
                        return precondition_failed("If-Match");
                    }
                    _ => {}
                }
                if if_none_match.as_deref() == Some("*") && existing.is_some() {
                    return precondition_failed("If-None-Match");
                }
                if call.method == "PATCH" && existing.is_none() {
                    return Reply::error(
                        404,
                        "NotFound",
                        format!("The resource record '{orig_name}' does not exist."),
                    );
                }
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let props = &body["properties"];
                let mut set = existing.clone().unwrap_or(RecordSet {
                    ttl: 3600,
                    values: Vec::new(),
                    etag: String::new(),
                    metadata: json!({}),
                });
                if let Some(ttl) = props[ttl_field].as_u64() {
                    set.ttl = ttl;
                } else if call.method == "PUT" && props[ttl_field].is_null() && existing.is_none() {
                    set.ttl = 3600;
                }
                if call.method == "PUT" || props[records_field].is_array() {
                    let mut values = Vec::new();
                    for record in props[records_field].as_array().into_iter().flatten() {
                        let parsed = record[value_field]
                            .as_str()
                            .and_then(|s| s.parse::<IpAddr>().ok());
                        match parsed {
                            Some(ip) if (rtype == "A") == ip.is_ipv4() => values.push(ip),
                            _ => {
                                return Reply::error(
                                    400,
                                    "BadRequest",
                                    format!(
                                        "The value '{}' for {value_field} is invalid.",
                                        record[value_field]
                                    ),
                                );
                            }
                        }
                    }
                    set.values = values;
                }
                if props["metadata"].is_object() {
                    set.metadata = props["metadata"].clone();
                }
                set.etag = uuid();
                z.records.insert(key, set.clone());
                let status = if existing.is_some() { 200 } else { 201 };
                Reply::json(status, to_json(&set))
            }
            "DELETE" => {
                match (&existing, &if_match) {
                    (None, Some(_)) => return precondition_failed("If-Match"),
                    (Some(set), Some(tag)) if tag != "*" && *tag != set.etag => {
                        return precondition_failed("If-Match");
                    }
                    (None, None) => return Reply::empty(204),
                    _ => {}
                }
                z.records.remove(&key);
                Reply::empty(200)
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }

    fn tags(&mut self, call: &Call, rg: &str, rg_name: &str) -> Reply {
        let id = format!(
            "{}/providers/Microsoft.Resources/tags/default",
            rg_id(rg_name)
        );
        let Some(tags) = self.resource_groups.get_mut(rg) else {
            return Reply::error(404, "ResourceGroupNotFound", "not found");
        };
        let view = |tags: &Map<String, Value>| json!({"id": id, "name": "default", "type": "Microsoft.Resources/tags", "properties": {"tags": tags}});
        match call.method {
            "GET" => Reply::json(200, view(tags)),
            "PUT" | "PATCH" => {
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let Some(given) = body["properties"]["tags"].as_object() else {
                    return Reply::error(
                        400,
                        "InvalidRequestContent",
                        "properties.tags is required.",
                    );
                };
                for (name, value) in given {
                    if name.chars().any(|c| "<>%&\\?/".contains(c)) || !value.is_string() {
                        return Reply::error(
                            400,
                            "InvalidTagNameCharacters",
                            format!(
                                "The tag names '{name}' have reserved characters '<,>,%,&,\\,?,/' or control characters."
                            ),
                        );
                    }
                }
                let operation = if call.method == "PUT" {
                    "Replace"
                } else {
                    body["operation"].as_str().unwrap_or("")
                };
                match operation {
                    "Replace" => *tags = given.clone(),
                    "Merge" => tags.extend(given.clone()),
                    "Delete" => {
                        for (name, value) in given {
                            if tags.get(name).is_some_and(|v| v == value || value == "") {
                                tags.remove(name);
                            }
                        }
                    }
                    other => {
                        return Reply::error(
                            400,
                            "InvalidRequestContent",
                            format!(
                                "Unsupported tag patch operation '{other}'; expected Merge, Replace or Delete."
                            ),
                        );
                    }
                }
                Reply::json(200, view(tags))
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }
}
