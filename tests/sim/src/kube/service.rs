//! Service specifics: kube-apiserver's defaults (type, sessionAffinity, protocol, targetPort,
//! traffic policies, ipFamilies/ipFamilyPolicy, `allocateLoadBalancerNodePorts`, `ipMode: VIP`
//! on ingress IPs), allocation of cluster IPs from 172.30.0.0/16 (OpenShift's default service
//! network; fd02::/112 for IPv6) and node ports from 30000-32767 (kept across updates that
//! omit them, clusterIP immutable), and validation of the spec.

use super::meta;
use super::objects::{is_label, is_label_key, is_label_value};
use super::resources::SERVICES;
use super::status::{ApiError, FieldErr};
use super::store::{Inner, Key};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::net::IpAddr;

/// The typed fields of core/v1 ServiceSpec that the agent's templates use. kube-apiserver
/// decodes into Go structs, so a wrong JSON type is a 400 decode error, not a 422.
pub fn decode_check(obj: &Value) -> Result<(), ApiError> {
    let Some(spec) = obj.get("spec") else {
        return Ok(());
    };
    let wrong = |field: &str, go_type: &str, v: &Value| {
        let have = match v {
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => "null",
        };
        Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {have} into Go struct field {field} of type {go_type}"
        )))
    };
    for (key, field) in [
        ("type", "ServiceSpec.spec.type"),
        ("loadBalancerIP", "ServiceSpec.spec.loadBalancerIP"),
    ] {
        if let Some(v) = spec.get(key).filter(|v| !v.is_null() && !v.is_string()) {
            return wrong(field, "v1.ServiceType", v);
        }
    }
    match spec.get("selector") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            if let Some((_, v)) = m.iter().find(|(_, v)| !v.is_string()) {
                return wrong("ServiceSpec.spec.selector", "string", v);
            }
        }
        Some(v) => return wrong("ServiceSpec.spec.selector", "map[string]string", v),
    }
    match spec.get("ports") {
        None | Some(Value::Null) => {}
        Some(Value::Array(ports)) => {
            for p in ports {
                let Some(p) = p.as_object() else {
                    return wrong("ServiceSpec.spec.ports", "v1.ServicePort", p);
                };
                for (key, go_type) in [("name", "string"), ("protocol", "v1.Protocol")] {
                    if let Some(v) = p.get(key).filter(|v| !v.is_null() && !v.is_string()) {
                        return wrong(&format!("ServicePort.spec.ports.{key}"), go_type, v);
                    }
                }
                for key in ["port", "nodePort"] {
                    if let Some(v) = p.get(key).filter(|v| !v.is_null() && !v.is_i64()) {
                        return wrong(&format!("ServicePort.spec.ports.{key}"), "int32", v);
                    }
                }
            }
        }
        Some(v) => return wrong("ServiceSpec.spec.ports", "[]v1.ServicePort", v),
    }
    Ok(())
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// (allocated cluster IPs, node ports) of every Service but `skip`.
fn allocated(inner: &Inner, skip: &Key) -> (BTreeSet<String>, BTreeSet<i64>) {
    let mut ips = BTreeSet::new();
    let mut ports = BTreeSet::new();
    for (k, svc) in inner.list(SERVICES, None) {
        if &k == skip {
            continue;
        }
        if let Some(list) = meta::get(&svc, &["spec", "clusterIPs"]).and_then(Value::as_array) {
            ips.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
        }
        for p in meta::get(&svc, &["spec", "ports"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = p.get("nodePort").and_then(Value::as_i64) {
                ports.insert(n);
            }
        }
    }
    (ips, ports)
}

fn next_ip(used: &BTreeSet<String>, v6: bool) -> String {
    (10u32..65_000)
        .map(|n| {
            if v6 {
                format!("fd02::{n:x}")
            } else {
                format!("172.30.{}.{}", n / 256, n % 256)
            }
        })
        .find(|ip| !used.contains(ip))
        .unwrap_or_default()
}

fn in_range(ip: &str) -> bool {
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.octets()[..2] == [172, 30],
        Ok(IpAddr::V6(v6)) => v6.segments()[..7] == [0xfd02, 0, 0, 0, 0, 0, 0],
        Err(_) => false,
    }
}

/// The string `spec.<key>`, set to `default` when omitted.
fn str_or_default(spec: &mut serde_json::Map<String, Value>, key: &str, default: &str) -> String {
    let value = spec.entry(key).or_insert(json!(default));
    value.as_str().unwrap_or("").to_string()
}

pub fn defaults(inner: &Inner, key: &Key, old: Option<&Value>, obj: &mut Value) -> Vec<FieldErr> {
    let mut errs = Vec::new();
    let old_spec = old
        .and_then(|o| o.get("spec"))
        .cloned()
        .unwrap_or(json!({}));
    let (used_ips, used_ports) = allocated(inner, key);
    let spec = meta::obj_mut(obj, &["spec"]);
    let typ = str_or_default(spec, "type", "ClusterIP");
    spec.entry("sessionAffinity").or_insert(json!("None"));
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            p.entry("protocol").or_insert(json!("TCP"));
            if let Some(port) = p.get("port").cloned() {
                p.entry("targetPort").or_insert(port);
            }
        }
    }
    if typ == "ExternalName" {
        return errs;
    }
    spec.entry("internalTrafficPolicy")
        .or_insert(json!("Cluster"));
    let node_ports = typ == "NodePort" || typ == "LoadBalancer";
    if node_ports {
        spec.entry("externalTrafficPolicy")
            .or_insert(json!("Cluster"));
    }
    if typ == "LoadBalancer" {
        spec.entry("allocateLoadBalancerNodePorts")
            .or_insert(json!(true));
    }

    // Cluster IPs: kept from the old object when omitted, immutable once set.
    let old_ip = str_of(&old_spec, "clusterIP").map(str::to_string);
    let requested = str_of(&Value::Object(spec.clone()), "clusterIP")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    match (&old_ip, &requested) {
        (Some(o), Some(n)) if o != n => {
            errs.push(FieldErr::invalid(
                "spec.clusterIPs[0]",
                json!([n]),
                "may not change once set",
            ));
            return errs;
        }
        (Some(_), _) => {
            for f in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                if let Some(v) = old_spec.get(f) {
                    spec.insert(f.into(), v.clone());
                }
            }
        }
        (None, _) => {
            let policy = str_or_default(spec, "ipFamilyPolicy", "SingleStack");
            let mut families = meta::strings(spec.get("ipFamilies"));
            if families.is_empty() {
                families.push("IPv4".into());
            }
            if policy != "SingleStack" && families.len() == 1 {
                let other = if families[0] == "IPv4" {
                    "IPv6"
                } else {
                    "IPv4"
                };
                families.push(other.into());
            }
            if policy == "SingleStack" {
                families.truncate(1);
            }
            let ips: Vec<String> = match requested.as_deref() {
                Some("None") => vec!["None".into()],
                Some(ip) => {
                    if !in_range(ip) {
                        errs.push(FieldErr::invalid("spec.clusterIPs", json!([ip]), format!("failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. The range of valid IPs is 172.30.0.0/16")));
                    } else if used_ips.contains(ip) {
                        errs.push(FieldErr::invalid(
                            "spec.clusterIPs",
                            json!([ip]),
                            format!("failed to allocate IP {ip}: provided IP is already allocated"),
                        ));
                    }
                    vec![ip.to_string()]
                }
                None => {
                    let mut used = used_ips.clone();
                    families
                        .iter()
                        .map(|f| {
                            let ip = next_ip(&used, f == "IPv6");
                            used.insert(ip.clone());
                            ip
                        })
                        .collect()
                }
            };
            spec.insert("clusterIP".into(), json!(ips[0]));
            spec.insert("clusterIPs".into(), json!(ips));
            if requested.as_deref() != Some("None") {
                spec.insert("ipFamilies".into(), json!(families));
            }
        }
    }

    // Node ports: kept from the old port with the same port+protocol, else allocated.
    let allocate = node_ports && spec.get("allocateLoadBalancerNodePorts") != Some(&json!(false));
    let old_ports = old_spec
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut taken = used_ports;
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter().filter_map(|p| p.get("nodePort")?.as_i64()) {
            taken.insert(p);
        }
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            if !node_ports {
                continue;
            }
            if p.get("nodePort").and_then(Value::as_i64).is_some() {
                continue;
            }
            let same = old_ports
                .iter()
                .find(|o| o.get("port") == p.get("port") && o.get("protocol") == p.get("protocol"));
            if let Some(n) = same.and_then(|o| o.get("nodePort")).and_then(Value::as_i64) {
                p.insert("nodePort".into(), json!(n));
            } else if allocate && let Some(n) = (30000..=32767).find(|n| !taken.contains(n)) {
                taken.insert(n);
                p.insert("nodePort".into(), json!(n));
            }
        }
    }

    // Status: an empty loadBalancer, and ipMode VIP on ingress IPs (GA since 1.32).
    let status = meta::obj_mut(obj, &["status"]);
    let lb = status.entry("loadBalancer").or_insert(json!({}));
    if let Some(ingress) = lb.get_mut("ingress").and_then(Value::as_array_mut) {
        for i in ingress.iter_mut().filter_map(Value::as_object_mut) {
            if i.contains_key("ip") {
                i.entry("ipMode").or_insert(json!("VIP"));
            }
        }
    }
    errs
}

pub fn validate(obj: &Value) -> Vec<FieldErr> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let typ = str_of(&spec, "type").unwrap_or("");
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !TYPES.contains(&typ) {
        errs.push(FieldErr::not_supported("spec.type", json!(typ), TYPES));
        return errs;
    }
    if typ == "ExternalName" {
        if str_of(&spec, "externalName").is_none_or(str::is_empty) {
            errs.push(FieldErr::required("spec.externalName", ""));
        }
        return errs;
    }
    for (field, allowed) in [
        ("sessionAffinity", &["ClientIP", "None"][..]),
        ("externalTrafficPolicy", &["Cluster", "Local"][..]),
        ("internalTrafficPolicy", &["Cluster", "Local"][..]),
        (
            "ipFamilyPolicy",
            &["PreferDualStack", "RequireDualStack", "SingleStack"][..],
        ),
    ] {
        if let Some(v) = spec.get(field)
            && !v.as_str().is_some_and(|s| allowed.contains(&s))
        {
            errs.push(FieldErr::not_supported(
                format!("spec.{field}"),
                v.clone(),
                allowed,
            ));
        }
    }
    for (k, v) in spec
        .get("selector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let value = v.as_str().unwrap_or("");
        if !is_label_key(k) || !is_label_value(value) {
            errs.push(FieldErr::invalid(
                "spec.selector",
                json!(format!("{k}={value}")),
                "a selector must be a map of valid label keys to valid label values",
            ));
        }
    }
    let ports = spec
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if ports.is_empty() {
        errs.push(FieldErr::required("spec.ports", ""));
    }
    let mut names = BTreeSet::new();
    let mut keys = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let f = |s: &str| format!("spec.ports[{i}].{s}");
        match p.get("name").and_then(Value::as_str) {
            None | Some("") if ports.len() > 1 => errs.push(FieldErr::required(f("name"), "")),
            Some(n) if !n.is_empty() && !names.insert(n.to_string()) => {
                errs.push(FieldErr::duplicate(f("name"), json!(n)));
            }
            _ => {}
        }
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&port) {
            errs.push(FieldErr::invalid(
                f("port"),
                p.get("port").cloned().unwrap_or(json!(0)),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("");
        if !["SCTP", "TCP", "UDP"].contains(&proto) {
            errs.push(FieldErr::not_supported(
                f("protocol"),
                json!(proto),
                &["SCTP", "TCP", "UDP"],
            ));
        }
        if !keys.insert((port, proto.to_string())) {
            errs.push(FieldErr::duplicate(
                format!("spec.ports[{i}]"),
                json!(format!("{port}/{proto}")),
            ));
        }
        match p.get("targetPort") {
            Some(Value::Number(n)) if n.as_i64().is_some_and(|n| (1..=65535).contains(&n)) => {}
            Some(Value::String(s)) if is_label(s, false) && s.len() <= 15 => {}
            Some(v) => errs.push(FieldErr::invalid(
                f("targetPort"),
                v.clone(),
                "must be between 1 and 65535, inclusive",
            )),
            None => {}
        }
        if typ == "ClusterIP" && p.get("nodePort").is_some() {
            errs.push(FieldErr::forbidden(
                f("nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        }
    }
    errs
}
