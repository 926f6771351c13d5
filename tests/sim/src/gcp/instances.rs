//! compute.v1 `instances.get` and `instances.updateNetworkInterface` (nic0's alias IP ranges)
//! for the seed's VMs, and the zonal operations the update returns (`zoneOperations.get` and
//! `wait`). The shapes and rules are the compute v1 discovery document's (revision 20261106,
//! shipped with google-api-python-client 2.202.0, `tests/gcp_fake.rs`'s oracle):
//!
//! - `updateNetworkInterface` is `PATCH projects/{project}/zones/{zone}/instances/{instance}/
//!   updateNetworkInterface?networkInterface=nic0` with a NetworkInterface body and "follows
//!   PATCH semantics": a field left out keeps its value (no `aliasIpRanges`: the aliases stay;
//!   `[]` removes them). It "can only update an interface's alias IP range and attached
//!   network"; any other field that differs from the current one is refused as GCE refuses
//!   it: 400 `invalid`, "Invalid value for field 'resource.<field>': '<value>'. Updating this
//!   field is not supported." (the message in kubernetes/kubernetes#59423). Moving a running
//!   VM to another network is refused the same way here (GCE needs the VM stopped).
//! - `fingerprint`: "An up-to-date fingerprint must be provided in order to update the
//!   NetworkInterface. The request will fail with error 400 Bad Request if the fingerprint is
//!   not provided, or 412 Precondition Failed if the fingerprint is out of date." The 412 is
//!   `conditionNotMet`, "Invalid fingerprint." (terraform-provider-google retries on exactly
//!   that message, `FINGERPRINT_FAIL_ERRORS`). The fingerprint changes when an update is done.
//! - AliasIpRange `ipCidrRange`: "This IP CIDR range must belong to the specified subnetwork
//!   and cannot contain IP addresses reserved by system or used by other network interfaces.
//!   This range may be a single IP address (such as 10.2.3.4), a netmask (such as /24) or a
//!   CIDR-formatted string". A netmask lets GCE pick a free aligned block; the fake's
//!   subnetworks have no secondary ranges, so a `subnetworkRangeName` is refused. A range
//!   another holder has (see `ipam`) fails the operation with `IP_IN_USE_BY_ANOTHER_RESOURCE`,
//!   "IP '<range>' is already being used by another resource." (the operation error in
//!   F5Networks/f5-google-gdm-templates#78 and GoogleCloudPlatform/compute-image-tools#659).
//!   The instance shows each range in CIDR form.
//! - The update returns a zonal Operation, RUNNING for the fake's `operation_delay`; the new
//!   aliases are held from the start (nobody else gets them) and shown by `instances.get` once
//!   the operation is DONE, when a removed range is freed. A second update while one is
//!   RUNNING is refused (400 `resourceNotReady`).
//! - Permissions ("IAM Permissions" of each method's reference page):
//!   `compute.instances.get`, `compute.instances.updateNetworkInterface`,
//!   `compute.zoneOperations.get`.

use super::compute::BASE;
use super::http::{ApiError, Reply, Req};
use super::ipam::{self, Block};
use super::operations;
use super::{Effect, Seed, World};
use hyper::Method;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

/// A VM's nic0 as the fake keeps it.
#[derive(Debug, Clone)]
pub(crate) struct InstanceState {
    pub zone: String,
    /// The name of nic0's subnetwork (one of the seed's).
    pub subnetwork: String,
    pub network_ip: Ipv4Addr,
    pub aliases: Vec<Block>,
    /// The aliases of an update still RUNNING: already held, shown once it is DONE.
    pub pending: Option<Vec<Block>>,
    pub fingerprint: u64,
}

impl InstanceState {
    /// Whether the VM holds `ip` (primary, alias, or an alias being added).
    pub fn holds(&self, ip: Ipv4Addr) -> bool {
        self.network_ip == ip
            || self
                .aliases
                .iter()
                .chain(self.pending.iter().flatten())
                .any(|b| b.addresses().any(|a| a == ip))
    }

    /// The addresses the VM answers on now: its primary, then each alias's.
    pub fn addresses(&self) -> Vec<Ipv4Addr> {
        std::iter::once(self.network_ip)
            .chain(self.aliases.iter().flat_map(Block::addresses))
            .collect()
    }
}

pub(super) fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// GCE fingerprints are 8 bytes in URL-safe base64 with padding (`42WmSpB8rSM=`,
/// `--KE24GB4T0=`: abdolence/gcloud-sdk-rs#191 shows one from a real `instances.list`). The
/// official Rust client decodes `fingerprint` with that alphabet only (`Base64<UrlSafe>`), so a
/// `+` or `/` would fail its whole `instances.get`.
pub(super) fn fingerprint_text(n: u64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE.encode(n.to_be_bytes())
}

/// The seed's VMs with their primary addresses: the seeded one, else the lowest free usable
/// address of the subnetwork (after every seeded one), in seed order. A VM whose subnetwork
/// the seed lacks is left out ([`check_seed`] reports it).
pub(crate) fn from_seed(seed: &Seed) -> BTreeMap<String, InstanceState> {
    let mut taken: BTreeSet<Ipv4Addr> =
        seed.instances.iter().filter_map(|i| i.network_ip).collect();
    let mut out = BTreeMap::new();
    for i in &seed.instances {
        let Some(subnet) = seed.subnetworks.iter().find(|s| s.name == i.subnetwork) else {
            continue;
        };
        let ip = match i.network_ip {
            Some(ip) => ip,
            None => {
                let (first, last) = ipam::usable(subnet);
                let Some(ip) = (first..=last)
                    .map(Ipv4Addr::from)
                    .find(|ip| !taken.contains(ip))
                else {
                    continue;
                };
                taken.insert(ip);
                ip
            }
        };
        out.insert(
            i.name.clone(),
            InstanceState {
                zone: i.zone.clone(),
                subnetwork: i.subnetwork.clone(),
                network_ip: ip,
                aliases: Vec::new(),
                pending: None,
                fingerprint: hash(i.name.as_bytes()),
            },
        );
    }
    out
}

/// What is wrong with the seed's VMs: a subnetwork it lacks, a seeded address outside the
/// subnetwork's usable range, an address two VMs share.
pub(crate) fn check_seed(seed: &Seed) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for i in &seed.instances {
        let subnet = seed
            .subnetwork(&i.subnetwork)
            .ok_or_else(|| format!("instance {}: no subnetwork {}", i.name, i.subnetwork))?;
        if let Some(ip) = i.network_ip {
            let (first, last) = ipam::usable(subnet);
            if !(first..=last).contains(&u32::from(ip)) {
                return Err(format!(
                    "instance {}: {ip} is not a usable address of {} ({}/{})",
                    i.name, subnet.name, subnet.cidr, subnet.prefix
                ));
            }
            if !seen.insert(ip) {
                return Err(format!("instance {}: {ip} is taken by another VM", i.name));
            }
        }
    }
    Ok(())
}

/// `rest` is the path after `compute/v1/projects/`. None: not an instance or zonal-operation
/// call.
pub fn route(w: &mut World, req: &Req, rest: &[&str]) -> Option<Reply> {
    Some(match (&req.method, rest) {
        (&Method::GET, [project, "zones", zone, "instances", name]) => get(w, project, zone, name),
        (
            &Method::PATCH,
            [
                project,
                "zones",
                zone,
                "instances",
                name,
                "updateNetworkInterface",
            ],
        ) => super::nic_update::update(w, req, project, zone, name),
        (&Method::GET, [project, "zones", zone, "operations", op]) => {
            get_operation(w, project, zone, op)
        }
        _ => return None,
    })
}

pub(super) fn instance_path(project: &str, zone: &str, name: &str) -> String {
    format!("projects/{project}/zones/{zone}/instances/{name}")
}

/// The VM `name` of `zone`, or GCE's 404.
pub(super) fn find<'a>(
    w: &'a World,
    project: &str,
    zone: &str,
    name: &str,
) -> Result<&'a InstanceState, ApiError> {
    w.instances
        .get(name)
        .filter(|i| i.zone == zone)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "The resource '{}' was not found",
                instance_path(project, zone, name)
            ))
        })
}

fn get(w: &World, project: &str, zone: &str, name: &str) -> Reply {
    let path = instance_path(project, zone, name);
    super::authz::compute(w, project, "compute.instances.get", &path)?;
    super::instance_groups::check_zone(w, project, zone)?;
    let instance = find(w, project, zone, name)?;
    Ok(instance_json(w, name, instance))
}

/// nic0 as compute v1 shows it (`aliasIpRanges` left out when there is none).
pub(super) fn nic_json(w: &World, instance: &InstanceState) -> Value {
    let seed = w.seed();
    let subnet = seed.subnetwork(&instance.subnetwork);
    let project = subnet.map_or(seed.project.as_str(), |s| seed.subnet_project(s));
    let network = subnet.map_or(seed.network.as_str(), |s| s.network.as_str());
    let mut nic = json!({
        "kind": "compute#networkInterface",
        "name": "nic0",
        "network": format!("{BASE}/projects/{project}/global/networks/{network}"),
        "subnetwork": format!("{BASE}/projects/{project}/regions/{}/subnetworks/{}", seed.region, instance.subnetwork),
        "networkIP": instance.network_ip.to_string(),
        "stackType": "IPV4_ONLY",
        "fingerprint": fingerprint_text(instance.fingerprint),
    });
    if !instance.aliases.is_empty() {
        let ranges: Vec<Value> = instance
            .aliases
            .iter()
            .map(|b| json!({"ipCidrRange": b.cidr()}))
            .collect();
        nic["aliasIpRanges"] = json!(ranges);
    }
    nic
}

pub(super) fn instance_json(w: &World, name: &str, instance: &InstanceState) -> Value {
    let seed = w.seed();
    let zone_path = format!("projects/{}/zones/{}", seed.project, instance.zone);
    let path = format!("{zone_path}/instances/{name}");
    json!({
        "kind": "compute#instance",
        "id": super::reads::stable_id(&path),
        "creationTimestamp": "2024-01-01T00:00:00.000-07:00",
        "name": name,
        "description": "",
        "machineType": format!("{BASE}/{zone_path}/machineTypes/n2-standard-4"),
        "status": "RUNNING",
        "zone": format!("{BASE}/{zone_path}"),
        "canIpForward": false,
        "networkInterfaces": [nic_json(w, instance)],
        "fingerprint": fingerprint_text(hash(&instance.fingerprint.to_le_bytes())),
        "labelFingerprint": "42WmSpB8rSM=",
        "selfLink": format!("{BASE}/{path}"),
    })
}

/// Completes an update: its aliases become the VM's (a removed range is free from now on),
/// and the fingerprint changes.
pub(crate) fn apply_pending(w: &mut World, name: &str) {
    if let Some(instance) = w.instances.get_mut(name)
        && let Some(aliases) = instance.pending.take()
    {
        instance.aliases = aliases;
        instance.fingerprint = hash(&instance.fingerprint.to_be_bytes());
    }
}

/// A zonal Operation on the VM `name` (RUNNING for the fake's delay, then DONE with
/// `effect`).
pub(super) fn zonal_operation(
    w: &mut World,
    project: &str,
    zone: &str,
    kind: &str,
    name: &str,
    effect: Option<Effect>,
) -> super::Operation {
    let scope = format!("projects/{project}/zones/{zone}");
    let target = format!("{BASE}/{}", instance_path(project, zone, name));
    let target_id = super::reads::stable_id(&instance_path(project, zone, name));
    operations::operation(w, &scope, kind, target, target_id, effect)
}

fn zone_operation_reply(w: &World, project: &str, zone: &str, op: &str) -> Reply {
    let scope = format!("{BASE}/projects/{project}/zones/{zone}");
    w.operations
        .get(op)
        .filter(|o| o.json["zone"] == scope.as_str())
        .map(|o| o.json.clone())
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "The resource 'projects/{project}/zones/{zone}/operations/{op}' was not found"
            ))
        })
}

fn check_operation_call(w: &World, project: &str, zone: &str, op: &str) -> Result<(), ApiError> {
    super::authz::compute(
        w,
        project,
        "compute.zoneOperations.get",
        &format!("projects/{project}/zones/{zone}/operations/{op}"),
    )?;
    super::instance_groups::check_zone(w, project, zone)
}

fn get_operation(w: &World, project: &str, zone: &str, op: &str) -> Reply {
    check_operation_call(w, project, zone, op)?;
    zone_operation_reply(w, project, zone, op)
}

/// zoneOperations.wait: returns when DONE or after 2 minutes, whichever is first.
pub async fn wait_operation(
    world: &Arc<Mutex<World>>,
    project: &str,
    zone: &str,
    op: &str,
) -> Reply {
    operations::wait_until_done(world, op, |w| {
        check_operation_call(w, project, zone, op)?;
        zone_operation_reply(w, project, zone, op)
    })
    .await
}

/// The body's fields as an object (an absent body is an empty one).
pub(super) fn body_fields(body: &Value) -> Result<Map<String, Value>, ApiError> {
    match body {
        Value::Null => Ok(Map::new()),
        Value::Object(fields) => Ok(fields.clone()),
        other => Err(ApiError::invalid(format!(
            "Invalid JSON payload received. Expected an object, got {other}"
        ))),
    }
}
