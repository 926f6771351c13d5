//! What the AWS Load Balancer Controller makes of a Service's NLB settings, and what ELB and
//! EC2 then accept: load-balancer attributes, target-group attributes, the health check, the
//! managed security group's source ranges, and the zones the NLB forwards between.
//!
//! Sources (kubernetes-sigs/aws-load-balancer-controller): `pkg/annotations/parser.go`
//! (string maps, booleans, int32s), `pkg/service/model_build_load_balancer.go`
//! (`getLoadBalancerAttributes`, the legacy cross-zone annotation),
//! `pkg/service/model_build_target_group.go` (target-group attributes, base and per port;
//! the health check, one per Service; `preserve_client_ip.enabled` must be a bool),
//! `pkg/service/model_build_managed_sg.go` (`buildCIDRsFromSourceRanges`: the source ranges
//! open every listener port, 0.0.0.0/0 without any, no IPv6 range on an IPv4 NLB), and the
//! controller's defaults in `pkg/service/model_builder.go` (TCP health check on the traffic
//! port, interval 10 s, timeout 10 s, thresholds 3). What ELB and EC2 refuse comes from the
//! ELB API reference (`LoadBalancerAttribute`, `TargetGroupAttribute`, `CreateTargetGroup`
//! ranges) and EC2's `AuthorizeSecurityGroupIngress`; the wording of those refusals is ours.
//!
//! Build errors are the controller's words (after "Failed build model due to"), deploy errors
//! the cloud's (after "Failed deploy model due to").
//!
//! The controller's annotation parsers are in `parse`, what ELB and EC2 accept in
//! `cloud_checks`, the zones an NLB forwards between in `zones`; this file holds the settings
//! and how the controller builds them.

mod cloud_checks;
mod parse;
mod zones;

pub use cloud_checks::check_in_cloud;
pub use zones::Zones;

use super::Ipv4Cidr;
use crate::kube::meta;
use parse::{annotation, go_bool, int32, string_map};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

const PREFIX: &str = "service.beta.kubernetes.io/";
const ATTRIBUTES: &str = "aws-load-balancer-attributes";
const CROSS_ZONE_LEGACY: &str = "aws-load-balancer-cross-zone-load-balancing-enabled";
const TG_ATTRIBUTES: &str = "aws-load-balancer-target-group-attributes";
const HC_PROTOCOL: &str = "aws-load-balancer-healthcheck-protocol";
const HC_PORT: &str = "aws-load-balancer-healthcheck-port";
const HC_PATH: &str = "aws-load-balancer-healthcheck-path";
const HC_INTERVAL: &str = "aws-load-balancer-healthcheck-interval";
const HC_TIMEOUT: &str = "aws-load-balancer-healthcheck-timeout";
const HC_HEALTHY: &str = "aws-load-balancer-healthcheck-healthy-threshold";
const HC_UNHEALTHY: &str = "aws-load-balancer-healthcheck-unhealthy-threshold";
const SOURCE_RANGES: &str = "load-balancer-source-ranges";
const TARGET_TYPE: &str = "aws-load-balancer-nlb-target-type";
pub const CROSS_ZONE: &str = "load_balancing.cross_zone.enabled";
const ROUTING_POLICY: &str = "dns_record.client_routing_policy";
const PRESERVE_CLIENT_IP: &str = "preserve_client_ip.enabled";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HcPort {
    TrafficPort,
    Port(u16),
}

/// The target groups' health check (one per Service).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    /// `TCP`, `HTTP` or `HTTPS`.
    pub protocol: String,
    pub port: HcPort,
    /// None for TCP.
    pub path: Option<String>,
    pub interval: i64,
    pub timeout: i64,
    pub healthy: i64,
    pub unhealthy: i64,
}

/// One listener and its target group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    pub port: u16,
    /// The target-group attributes the controller sends (base, then this port's).
    pub attributes: BTreeMap<String, String>,
}

/// The NLB settings of a Service, as the controller builds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `ip` or `instance`.
    pub target_type: String,
    pub attributes: BTreeMap<String, String>,
    pub listeners: Vec<Listener>,
    pub health_check: HealthCheck,
    /// The managed security group's ranges (each opens every listener port).
    pub source_ranges: Vec<String>,
}

fn service_ports(svc: &Value) -> Vec<&Value> {
    meta::get(svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .map(|p| p.iter().collect())
        .unwrap_or_default()
}

fn health_check(svc: &Value, target_type: &str) -> Result<HealthCheck, String> {
    let raw_protocol = annotation(svc, HC_PROTOCOL).unwrap_or("TCP");
    let protocol = match raw_protocol.to_ascii_uppercase().as_str() {
        p @ ("TCP" | "HTTP" | "HTTPS") => p.to_string(),
        _ => return Err(format!("unsupported health check protocol {raw_protocol}")),
    };
    let port = match annotation(svc, HC_PORT).unwrap_or("traffic-port") {
        "traffic-port" => HcPort::TrafficPort,
        raw => match raw.parse::<i64>() {
            Ok(n) => HcPort::Port(u16::try_from(n).unwrap_or(0)),
            Err(_) => {
                // A port name: the Service port of that name, whose targetPort must be a
                // number for IP targets.
                let named = service_ports(svc)
                    .into_iter()
                    .find(|p| p.get("name").and_then(Value::as_str) == Some(raw))
                    .ok_or_else(|| {
                        format!(
                            "failed to resolve healthCheckPort: unable to find port {raw} on service {}/{}",
                            meta::namespace(svc),
                            meta::name(svc)
                        )
                    })?;
                let number = if target_type == "ip" {
                    named.get("targetPort").and_then(Value::as_i64).ok_or(
                        "cannot use named healthCheckPort for IP TargetType when service's targetPort is a named port",
                    )?
                } else {
                    named.get("nodePort").and_then(Value::as_i64).unwrap_or(0)
                };
                HcPort::Port(u16::try_from(number).unwrap_or(0))
            }
        },
    };
    let path = (protocol != "TCP").then(|| annotation(svc, HC_PATH).unwrap_or("/").to_string());
    Ok(HealthCheck {
        protocol,
        port,
        path,
        interval: int32(svc, HC_INTERVAL, 10)?,
        timeout: int32(svc, HC_TIMEOUT, 10)?,
        healthy: int32(svc, HC_HEALTHY, 3)?,
        unhealthy: int32(svc, HC_UNHEALTHY, 3)?,
    })
}

/// `spec.loadBalancerSourceRanges`, else the annotation; an IPv6 range is refused (our NLBs
/// are IPv4); none: 0.0.0.0/0.
fn source_ranges(svc: &Value) -> Result<Vec<String>, String> {
    let mut ranges = meta::strings(meta::get(svc, &["spec", "loadBalancerSourceRanges"]));
    if ranges.is_empty()
        && let Some(raw) = annotation(svc, SOURCE_RANGES)
    {
        ranges = raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
    }
    if let Some(v6) = ranges.iter().find(|r| r.contains(':')) {
        return Err(format!("unsupported v6 cidr {v6} when lb is not dualstack"));
    }
    if ranges.is_empty() {
        ranges.push("0.0.0.0/0".into());
    }
    Ok(ranges)
}

/// The Service's NLB settings, or the controller's reason to refuse them.
pub fn build(svc: &Value) -> Result<Config, String> {
    let target_type = match annotation(svc, TARGET_TYPE) {
        Some("ip") => "ip",
        _ => "instance",
    }
    .to_string();
    let mut attributes = string_map(svc, ATTRIBUTES)?.unwrap_or_default();
    if let Some(policy) = attributes.get(ROUTING_POLICY)
        && ![
            "availability_zone_affinity",
            "partial_availability_zone_affinity",
            "any_availability_zone",
        ]
        .contains(&policy.as_str())
    {
        return Err(format!(
            "invalid {ROUTING_POLICY} set in annotation {ATTRIBUTES}: got '{policy}' expected one of ['any_availability_zone', 'partial_availability_zone_affinity', 'availability_zone_affinity']"
        ));
    }
    if let Some(raw) = annotation(svc, CROSS_ZONE_LEGACY) {
        let on = go_bool(raw).map_err(|e| {
            format!("failed to parse bool annotation, {PREFIX}{CROSS_ZONE_LEGACY}: {raw}: {e}")
        })?;
        // The attributes annotation wins over the legacy one.
        attributes
            .entry(CROSS_ZONE.to_string())
            .or_insert_with(|| on.to_string());
    }
    let base = string_map(svc, TG_ATTRIBUTES)?.unwrap_or_default();
    let mut listeners = Vec::new();
    for port in service_ports(svc) {
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        let mut attrs = base.clone();
        let own = string_map(svc, &format!("{TG_ATTRIBUTES}.{number}"))?.unwrap_or_default();
        for (k, v) in own.into_iter().filter(|(_, v)| !v.is_empty()) {
            attrs.insert(k, v);
        }
        if let Some(v) = attrs.get(PRESERVE_CLIENT_IP) {
            go_bool(v)
                .map_err(|e| format!("failed to parse attribute {PRESERVE_CLIENT_IP}={v}: {e}"))?;
        }
        listeners.push(Listener {
            port: u16::try_from(number).unwrap_or(0),
            attributes: attrs,
        });
    }
    Ok(Config {
        health_check: health_check(svc, &target_type)?,
        target_type,
        attributes,
        listeners,
        source_ranges: source_ranges(svc)?,
    })
}

impl Config {
    /// Whether the NLB forwards across zones for the target group of `port`: the target
    /// group's own attribute when `true` or `false`, else the load balancer's (off by
    /// default on an NLB).
    pub fn cross_zone(&self, port: u16) -> bool {
        let own = self
            .listeners
            .iter()
            .find(|l| l.port == port)
            .and_then(|l| l.attributes.get(CROSS_ZONE))
            .map(String::as_str);
        match own {
            Some("true") => true,
            Some("false") => false,
            _ => self.attributes.get(CROSS_ZONE).is_some_and(|v| v == "true"),
        }
    }

    /// Whether the managed security group lets `source` reach listener `port`.
    pub fn admits(&self, port: u16, source: Ipv4Addr) -> bool {
        self.listeners.iter().any(|l| l.port == port)
            && self
                .source_ranges
                .iter()
                .filter_map(|r| r.parse::<Ipv4Cidr>().ok())
                .any(|r| r.contains(source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc(annotations: Value, spec: Value) -> Value {
        let mut annotated = serde_json::Map::new();
        for (k, v) in annotations.as_object().unwrap() {
            annotated.insert(format!("{PREFIX}{k}"), v.clone());
        }
        let mut spec = spec;
        spec["ports"] = json!([
            {"name": "https", "port": 6443, "targetPort": 6443, "protocol": "TCP"},
            {"name": "machine-config-server", "port": 22623, "targetPort": 22623, "protocol": "TCP"}
        ]);
        json!({"metadata": {"name": "internal-lb", "namespace": "openshift-kube-apiserver",
                            "annotations": annotated},
               "spec": spec})
    }

    fn built(annotations: Value) -> Result<Config, String> {
        build(&svc(annotations, json!({})))
    }

    fn deployed(annotations: Value) -> Result<Config, String> {
        let config = built(annotations)?;
        check_in_cloud(&config).map(|()| config)
    }

    /// The templates' settings are taken as they are.
    #[test]
    fn the_installers_settings_build_and_deploy() {
        let config = deployed(json!({
            TARGET_TYPE: "ip",
            ATTRIBUTES: "load_balancing.cross_zone.enabled=true",
            TG_ATTRIBUTES: "preserve_client_ip.enabled=false",
            HC_PROTOCOL: "HTTPS", HC_PORT: "6443", HC_PATH: "/readyz", HC_INTERVAL: "10",
            HC_TIMEOUT: "10", HC_HEALTHY: "2", HC_UNHEALTHY: "2",
        }))
        .unwrap();
        assert!(config.cross_zone(6443) && config.cross_zone(22623));
        assert_eq!(
            config.health_check,
            HealthCheck {
                protocol: "HTTPS".into(),
                port: HcPort::Port(6443),
                path: Some("/readyz".into()),
                interval: 10,
                timeout: 10,
                healthy: 2,
                unhealthy: 2,
            }
        );
        assert_eq!(config.listeners.len(), 2);
        assert!(
            config
                .listeners
                .iter()
                .all(|l| l.attributes[PRESERVE_CLIENT_IP] == "false")
        );
        // The controller's defaults: TCP on the traffic port, no cross-zone, open to all.
        let plain = deployed(json!({})).unwrap();
        assert_eq!(plain.health_check.protocol, "TCP");
        assert_eq!(plain.health_check.port, HcPort::TrafficPort);
        assert_eq!(plain.health_check.path, None);
        assert_eq!(
            (plain.health_check.healthy, plain.health_check.unhealthy),
            (3, 3)
        );
        assert!(!plain.cross_zone(6443));
        assert_eq!(plain.source_ranges, ["0.0.0.0/0"]);
    }

    /// Each annotation set is refused by `refuse` with an error containing its text.
    fn assert_refused(refuse: impl Fn(Value) -> String, cases: &[(Value, &str)]) {
        for (annotations, expected) in cases {
            let err = refuse(annotations.clone());
            assert!(err.contains(expected), "{annotations}: {err}");
        }
    }

    /// As the controller's parsers refuse (FailedBuildModel).
    #[test]
    fn malformed_settings_are_refused_as_the_controller_parses_them() {
        let err = |a: Value| built(a).unwrap_err();
        assert!(
            err(json!({ATTRIBUTES: "load_balancing.cross_zone.enabled"}))
                .starts_with("failed to parse stringMap annotation, service.beta.kubernetes.io/aws-load-balancer-attributes")
        );
        assert_refused(
            err,
            &[
                (json!({ATTRIBUTES: "=true"}), "failed to parse stringMap"),
                // A trailing part without '=' is refused.
                (json!({ATTRIBUTES: "a=b, c"}), "failed to parse stringMap"),
                (
                    json!({ATTRIBUTES: "dns_record.client_routing_policy=nearest"}),
                    "invalid dns_record.client_routing_policy",
                ),
                (
                    json!({TG_ATTRIBUTES: "preserve_client_ip.enabled=nope"}),
                    "failed to parse attribute preserve_client_ip.enabled=nope",
                ),
                // Per-port target-group attributes are parsed too.
                (
                    json!({"aws-load-balancer-target-group-attributes.22623": "preserve_client_ip.enabled=maybe"}),
                    "preserve_client_ip.enabled=maybe",
                ),
                (
                    json!({HC_PROTOCOL: "SSL"}),
                    "unsupported health check protocol SSL",
                ),
                (
                    json!({HC_INTERVAL: "ten"}),
                    "failed to parse int32 annotation",
                ),
                (json!({HC_HEALTHY: "99999999999"}), "value out of range"),
                (
                    json!({HC_PORT: "metrics"}),
                    "unable to find port metrics on service openshift-kube-apiserver/internal-lb",
                ),
                (
                    json!({CROSS_ZONE_LEGACY: "yes"}),
                    "failed to parse bool annotation",
                ),
            ],
        );
        let v6 = build(&svc(
            json!({}),
            json!({"loadBalancerSourceRanges": ["fd00::/48"]}),
        ))
        .unwrap_err();
        assert!(v6.contains("unsupported v6 cidr fd00::/48"), "{v6}");
        // Accepted forms: Go booleans, a case-insensitive protocol, a named port.
        let ok = built(
            json!({TG_ATTRIBUTES: "preserve_client_ip.enabled=False", TARGET_TYPE: "ip",
                              HC_PROTOCOL: "https", HC_PORT: "https"}),
        )
        .unwrap();
        assert_eq!(ok.health_check.protocol, "HTTPS");
        assert_eq!(ok.health_check.port, HcPort::Port(6443));
        assert_eq!(ok.health_check.path.as_deref(), Some("/"));
        let escaped = built(
            json!({ATTRIBUTES: r"access_logs.s3.prefix=a\,b,deletion_protection.enabled=false"}),
        )
        .unwrap();
        assert_eq!(escaped.attributes["access_logs.s3.prefix"], "a,b");
    }

    /// What passes the controller but ELB or EC2 refuse (FailedDeployModel).
    #[test]
    fn the_cloud_refuses_unknown_attributes_and_out_of_range_checks() {
        assert_refused(
            |a| deployed(a).unwrap_err(),
            &[
                // An ALB attribute on an NLB.
                (
                    json!({ATTRIBUTES: "idle_timeout.timeout_seconds=60"}),
                    "load balancer attribute key 'idle_timeout.timeout_seconds' is not recognized",
                ),
                (
                    json!({ATTRIBUTES: "load_balancing.cross_zone.enabled=yes"}),
                    "must be true or false",
                ),
                (
                    json!({TG_ATTRIBUTES: "load_balancing.algorithm.type=round_robin"}),
                    "target group attribute key 'load_balancing.algorithm.type' is not recognized",
                ),
                (
                    json!({TG_ATTRIBUTES: "load_balancing.cross_zone.enabled=maybe"}),
                    "use_load_balancer_configuration",
                ),
                // The controller takes Go's booleans, ELB only true and false.
                (
                    json!({TG_ATTRIBUTES: "preserve_client_ip.enabled=1"}),
                    "must be true or false",
                ),
                (
                    json!({HC_INTERVAL: "1"}),
                    "interval must be between 5 and 300",
                ),
                (
                    json!({HC_HEALTHY: "1"}),
                    "healthy threshold must be between 2 and 10",
                ),
                (
                    json!({HC_PROTOCOL: "HTTPS", HC_PATH: "readyz"}),
                    "must begin with '/'",
                ),
                (json!({HC_PORT: "70000"}), "port must be 1 to 65535"),
            ],
        );
        let bad_range = check_in_cloud(
            &build(&svc(
                json!({}),
                json!({"loadBalancerSourceRanges": ["10.0.0.0/33"]}),
            ))
            .unwrap(),
        )
        .unwrap_err();
        assert!(
            bad_range.contains("CIDR block 10.0.0.0/33 is malformed"),
            "{bad_range}"
        );
    }

    /// The managed security group opens every listener to every source range: a range for
    /// 22623 is a range for 6443 too.
    #[test]
    fn source_ranges_apply_to_every_listener() {
        let config = build(&svc(
            json!({}),
            json!({"loadBalancerSourceRanges": ["10.0.0.0/16"]}),
        ))
        .unwrap();
        let ip = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        for port in [6443, 22623] {
            assert!(config.admits(port, ip("10.0.1.10")), "{port}");
            assert!(!config.admits(port, ip("192.168.1.10")), "{port}");
        }
        assert!(!config.admits(443, ip("10.0.1.10")), "no such listener");
        let annotated = build(&svc(json!({SOURCE_RANGES: "192.168.0.0/24"}), json!({}))).unwrap();
        assert!(annotated.admits(6443, ip("192.168.0.9")));
        assert!(
            build(&svc(json!({}), json!({})))
                .unwrap()
                .admits(22623, ip("198.51.100.7"))
        );
    }

    /// An NLB node forwards only to targets of its own zone unless cross-zone is on (for the
    /// target group); a target outside every subnet counts for every zone.
    #[test]
    fn a_zone_without_a_target_serves_only_across_zones() {
        let ip = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        let zones = Zones {
            addresses: [
                (ip("10.0.1.200"), "us-east-1a".to_string()),
                (ip("10.0.2.200"), "us-east-1b".to_string()),
            ]
            .into(),
            subnets: vec![
                ("10.0.1.0/24".parse().unwrap(), "us-east-1a".to_string()),
                ("10.0.2.0/24".parse().unwrap(), "us-east-1b".to_string()),
            ],
        };
        let masters = [ip("10.0.1.101"), ip("10.0.1.102")];
        let off = built(json!({})).unwrap();
        let on = built(json!({ATTRIBUTES: "load_balancing.cross_zone.enabled=true"})).unwrap();
        assert!(zones.serves(&off, ip("10.0.1.200"), 6443, &masters));
        assert!(!zones.serves(&off, ip("10.0.2.200"), 6443, &masters));
        assert!(zones.serves(&on, ip("10.0.2.200"), 6443, &masters));
        assert!(
            !zones.serves(&on, ip("10.0.2.200"), 6443, &[]),
            "no healthy target"
        );
        // The target group's own attribute overrides the load balancer's.
        let tg_off = built(json!({ATTRIBUTES: "load_balancing.cross_zone.enabled=true",
                                  "aws-load-balancer-target-group-attributes.22623": "load_balancing.cross_zone.enabled=false"}))
        .unwrap();
        assert!(zones.serves(&tg_off, ip("10.0.2.200"), 6443, &masters));
        assert!(!zones.serves(&tg_off, ip("10.0.2.200"), 22623, &masters));
        assert!(
            zones.serves(&off, ip("10.0.2.200"), 6443, &[ip("10.0.9.1")]),
            "a target in no subnet is registered for every zone"
        );
        assert!(
            zones.serves(&off, ip("10.0.3.200"), 6443, &masters),
            "an address of unknown zone"
        );
    }
}
