//! `instances.updateNetworkInterface`: the checks, in the order GCE's front end and the
//! instance manager make them, and the operation that applies the new alias IP ranges (the
//! rules and their sources are in `instances`' module doc).

use super::http::{ApiError, Reply, Req};
use super::instances::{InstanceState, body_fields, find, instance_path, nic_json};
use super::ipam::{self, Block};
use super::{Effect, SubnetSeed, World};
use serde_json::{Value, json};
use std::net::Ipv4Addr;

/// What one `aliasIpRanges[i].ipCidrRange` asks for.
enum Wanted {
    /// This block exactly.
    Exact(Block),
    /// A free block of this prefix, chosen by GCE.
    Any(u8),
}

/// The blocks asked for exactly (GCE picks the others).
fn exact_blocks(wanted: &[Wanted]) -> Vec<Block> {
    wanted
        .iter()
        .filter_map(|r| match r {
            Wanted::Exact(b) => Some(*b),
            Wanted::Any(_) => None,
        })
        .collect()
}

pub(super) fn update(w: &mut World, req: &Req, project: &str, zone: &str, name: &str) -> Reply {
    let path = instance_path(project, zone, name);
    super::authz::compute(
        w,
        project,
        "compute.instances.updateNetworkInterface",
        &path,
    )?;
    super::instance_groups::check_zone(w, project, zone)?;
    if let Some(op) = super::operations::replay(w, req)? {
        return Ok(op);
    }
    let nic = req.param("networkInterface").ok_or_else(|| {
        ApiError::new(
            400,
            "required",
            "Required field 'networkInterface' not specified",
        )
    })?;
    let instance = find(w, project, zone, name)?.clone();
    if nic != "nic0" {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'networkInterface': '{nic}'. The instance has no network interface '{nic}'; it has nic0."
        )));
    }
    let body = body_fields(&req.body)?;
    let current = nic_json(w, &instance);
    match body.get("fingerprint").and_then(Value::as_str) {
        None | Some("") => {
            return Err(ApiError::new(
                400,
                "required",
                "Required field 'resource.fingerprint' not specified",
            ));
        }
        Some(f) if current["fingerprint"] != f => {
            return Err(ApiError::new(
                412,
                "conditionNotMet",
                "Invalid fingerprint.",
            ));
        }
        Some(_) => {}
    }
    if instance.pending.is_some() {
        return Err(ApiError::new(
            400,
            "resourceNotReady",
            format!("The resource '{path}' is not ready"),
        ));
    }
    for (field, value) in &body {
        if matches!(field.as_str(), "fingerprint" | "aliasIpRanges" | "kind") {
            continue;
        }
        if !unchanged(field, value, &current) {
            let shown = value.as_str().unwrap_or_default();
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'resource.{field}': '{shown}'. Updating this field is not supported."
            )));
        }
    }
    let seed = w.seed().clone();
    let Some(subnet) = seed.subnetwork(&instance.subnetwork) else {
        return Err(ApiError::invalid(format!(
            "The subnetwork of '{path}' cannot be found."
        )));
    };
    let wanted = match body.get("aliasIpRanges") {
        // PATCH semantics: left out, the aliases stay as they are.
        None | Some(Value::Null) => instance
            .aliases
            .iter()
            .copied()
            .map(Wanted::Exact)
            .collect(),
        Some(Value::Array(ranges)) => ranges
            .iter()
            .enumerate()
            .map(|(i, r)| parse_range(i, r, subnet))
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'resource.aliasIpRanges': '{other}'."
            )));
        }
    };
    let exact = exact_blocks(&wanted);
    if let Some(taken) = taken_range(w, &instance, &exact) {
        // Refused by the operation, as GCE refuses it: nothing changes.
        let mut op = super::instances::zonal_operation(
            w,
            project,
            zone,
            "updateNetworkInterface",
            name,
            None,
        );
        op.json["error"] = json!({"errors": [{
            "code": "IP_IN_USE_BY_ANOTHER_RESOURCE",
            "message": format!("IP '{}' is already being used by another resource.", taken.cidr()),
        }]});
        op.json["httpErrorStatusCode"] = json!(409);
        op.json["httpErrorMessage"] = json!("CONFLICT");
        return super::operations::start_operation(w, op, req.param("requestId"));
    }
    let aliases = choose(w, name, subnet, wanted)?;
    if let Some(i) = w.instances.get_mut(name) {
        i.pending = Some(aliases);
    }
    let op = super::instances::zonal_operation(
        w,
        project,
        zone,
        "updateNetworkInterface",
        name,
        Some(Effect::Aliases(name.to_string())),
    );
    super::operations::start_operation(w, op, req.param("requestId"))
}

/// Whether a field of the body says what nic0 already has. URLs may be full or partial.
fn unchanged(field: &str, value: &Value, current: &Value) -> bool {
    let now = &current[field];
    match (value, now) {
        (Value::Null, _) => true,
        (Value::Array(a), Value::Null) => a.is_empty(),
        (Value::String(a), Value::String(b)) if matches!(field, "network" | "subnetwork") => {
            let tail = |u: &str| {
                let u = u.trim_start_matches('/');
                u.find("projects/")
                    .map_or(u.to_string(), |i| u[i..].to_string())
            };
            let (a, b) = (tail(a), tail(b));
            // A partial URL without the project (`global/networks/n`) names the request's.
            b == a || b.ends_with(&format!("/{a}"))
        }
        _ => value == now,
    }
}

fn range_error(i: usize, text: &str, why: &str) -> ApiError {
    ApiError::invalid(format!(
        "Invalid value for field 'resource.aliasIpRanges[{i}].ipCidrRange': '{text}'. {why}"
    ))
}

/// One `aliasIpRanges[i]`: a single IP, a CIDR block, or a netmask (`/32`), inside the
/// subnetwork's primary range and clear of its reserved addresses.
fn parse_range(i: usize, range: &Value, subnet: &SubnetSeed) -> Result<Wanted, ApiError> {
    if range["subnetworkRangeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty())
    {
        let name = range["subnetworkRangeName"].as_str().unwrap_or_default();
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'resource.aliasIpRanges[{i}].subnetworkRangeName': '{name}'. The subnetwork {} has no secondary range '{name}'.",
            subnet.name
        )));
    }
    let text = range["ipCidrRange"].as_str().unwrap_or_default();
    let invalid = || range_error(i, text, &format!("Invalid IPCidrRange: {text}."));
    let (ip, prefix) = match text.split_once('/') {
        None => (text, "32"),
        Some(parts) => parts,
    };
    let prefix: u8 = prefix
        .parse()
        .ok()
        .filter(|p| *p <= 32)
        .ok_or_else(invalid)?;
    if prefix < subnet.prefix {
        return Err(range_error(
            i,
            text,
            &format!(
                "Invalid IPCidrRange: {text} is larger than the subnetwork's range {}/{}.",
                subnet.cidr, subnet.prefix
            ),
        ));
    }
    if ip.is_empty() {
        return Ok(Wanted::Any(prefix));
    }
    let start: Ipv4Addr = ip.parse().map_err(|_| invalid())?;
    let block = Block { start, prefix };
    let (lo, hi) = ipam::span(start, prefix);
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    if lo & !mask != 0 {
        return Err(range_error(
            i,
            text,
            &format!("Invalid IPCidrRange: {text} has host bits set."),
        ));
    }
    let (net_lo, net_hi) = ipam::span(subnet.cidr, subnet.prefix);
    if lo < net_lo || hi > net_hi {
        return Err(range_error(
            i,
            text,
            &format!(
                "Invalid IPCidrRange: {text} is not within the subnetwork's primary range {}/{}.",
                subnet.cidr, subnet.prefix
            ),
        ));
    }
    if (lo..=hi).any(|ip| ipam::is_reserved(subnet, ip)) {
        return Err(range_error(
            i,
            text,
            &format!(
                "Invalid IPCidrRange: {text} contains addresses reserved in the subnetwork {}.",
                subnet.name
            ),
        ));
    }
    Ok(Wanted::Exact(block))
}

/// The first asked block that another holder has, or that two asked blocks share. The VM's
/// own current aliases are its to keep; its primary address is not an alias.
fn taken_range(w: &World, instance: &InstanceState, exact: &[Block]) -> Option<Block> {
    for (n, block) in exact.iter().enumerate() {
        if exact[..n].iter().any(|earlier| earlier.overlaps(block)) {
            return Some(*block);
        }
        let own = |ip: Ipv4Addr| {
            instance
                .aliases
                .iter()
                .any(|b| b.addresses().any(|a| a == ip))
        };
        if block
            .addresses()
            .any(|ip| ip == instance.network_ip || (w.ip_in_use(ip) && !own(ip)))
        {
            return Some(*block);
        }
    }
    None
}

/// The aliases in the order asked, each netmask replaced by the free block GCE picks (held by
/// the VM from now on, so two picks never meet).
fn choose(
    w: &mut World,
    name: &str,
    subnet: &SubnetSeed,
    wanted: Vec<Wanted>,
) -> Result<Vec<Block>, ApiError> {
    let exact = exact_blocks(&wanted);
    let set_pending = |w: &mut World, blocks: Option<Vec<Block>>| {
        if let Some(i) = w.instances.get_mut(name) {
            i.pending = blocks;
        }
    };
    set_pending(w, Some(exact));
    let mut out = Vec::new();
    for r in wanted {
        let block = match r {
            Wanted::Exact(b) => b,
            Wanted::Any(prefix) => match w.free_block(subnet, prefix) {
                Some(b) => {
                    if let Some(i) = w.instances.get_mut(name) {
                        i.pending.get_or_insert_with(Vec::new).push(b);
                    }
                    b
                }
                None => {
                    set_pending(w, None);
                    return Err(ApiError::new(
                        400,
                        "ipSpaceExhausted",
                        format!("IP space of '{}' is exhausted", subnet.name),
                    ));
                }
            },
        };
        out.push(block);
    }
    set_pending(w, None);
    Ok(out)
}
