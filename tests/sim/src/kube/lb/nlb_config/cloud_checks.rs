//! What ELB and EC2 accept of an NLB's settings when the controller creates the NLB, its
//! target groups and its security group: the known attributes and their values, the health
//! check's ranges, the source ranges' CIDRs.

use super::{CROSS_ZONE, Config, HcPort, PRESERVE_CLIENT_IP, ROUTING_POLICY};
use crate::kube::lb::Ipv4Cidr;
use std::collections::BTreeMap;

/// The attributes ELB takes on a Network Load Balancer, and whether each is a boolean.
const NLB_ATTRIBUTES: &[(&str, bool)] = &[
    ("deletion_protection.enabled", true),
    (CROSS_ZONE, true),
    ("access_logs.s3.enabled", true),
    ("access_logs.s3.bucket", false),
    ("access_logs.s3.prefix", false),
    ("ipv6.deny_all_igw_traffic", true),
    (ROUTING_POLICY, false),
    ("zonal_shift.config.enabled", true),
    ("secondary_ips.auto_assigned.per_subnet", false),
];

/// The attributes ELB takes on a TCP target group, and whether each is a boolean (the
/// cross-zone one also takes `use_load_balancer_configuration`, its default).
const TCP_TG_ATTRIBUTES: &[(&str, bool)] = &[
    ("deregistration_delay.timeout_seconds", false),
    ("deregistration_delay.connection_termination.enabled", true),
    (PRESERVE_CLIENT_IP, true),
    ("proxy_protocol_v2.enabled", true),
    ("stickiness.enabled", true),
    ("stickiness.type", false),
    (CROSS_ZONE, false),
    (
        "target_health_state.unhealthy.connection_termination.enabled",
        true,
    ),
    (
        "target_health_state.unhealthy.draining_interval_seconds",
        false,
    ),
    (
        "target_group_health.dns_failover.minimum_healthy_targets.count",
        false,
    ),
    (
        "target_group_health.dns_failover.minimum_healthy_targets.percentage",
        false,
    ),
    (
        "target_group_health.unhealthy_state_routing.minimum_healthy_targets.count",
        false,
    ),
    (
        "target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage",
        false,
    ),
];
fn check_attributes(
    what: &str,
    known: &[(&str, bool)],
    attributes: &BTreeMap<String, String>,
    extra: impl Fn(&str, &str) -> Option<String>,
) -> Result<(), String> {
    for (key, value) in attributes {
        let Some((_, boolean)) = known.iter().find(|(k, _)| k == key) else {
            return Err(format!(
                "ValidationError: {what} attribute key '{key}' is not recognized"
            ));
        };
        if *boolean && value != "true" && value != "false" {
            return Err(format!(
                "ValidationError: {what} attribute '{key}' must be true or false, not '{value}'"
            ));
        }
        if let Some(why) = extra(key, value) {
            return Err(format!("ValidationError: {why}"));
        }
    }
    Ok(())
}

fn in_range(what: &str, value: i64, range: std::ops::RangeInclusive<i64>) -> Result<(), String> {
    if range.contains(&value) {
        return Ok(());
    }
    Err(format!(
        "ValidationError: health check {what} must be between {} and {}, not {value}",
        range.start(),
        range.end()
    ))
}

/// What ELB and EC2 refuse of the settings when the controller creates the NLB, its target
/// groups and its security group.
pub fn check_in_cloud(config: &Config) -> Result<(), String> {
    check_attributes(
        "load balancer",
        NLB_ATTRIBUTES,
        &config.attributes,
        |_, _| None,
    )?;
    for listener in &config.listeners {
        check_attributes(
            "target group",
            TCP_TG_ATTRIBUTES,
            &listener.attributes,
            |key, value| match key {
                CROSS_ZONE
                    if !["true", "false", "use_load_balancer_configuration"].contains(&value) =>
                {
                    Some(format!(
                        "target group attribute '{key}' must be true, false or use_load_balancer_configuration, not '{value}'"
                    ))
                }
                "deregistration_delay.timeout_seconds"
                    if !value.parse::<u32>().is_ok_and(|n| n <= 3600) =>
                {
                    Some(format!("'{key}' must be 0 to 3600 seconds, not '{value}'"))
                }
                _ => None,
            },
        )?;
    }
    let hc = &config.health_check;
    in_range("interval", hc.interval, 5..=300)?;
    in_range("timeout", hc.timeout, 2..=120)?;
    in_range("healthy threshold", hc.healthy, 2..=10)?;
    in_range("unhealthy threshold", hc.unhealthy, 2..=10)?;
    if hc.port == HcPort::Port(0) {
        return Err("ValidationError: health check port must be 1 to 65535".into());
    }
    if let Some(path) = &hc.path
        && (!path.starts_with('/') || path.len() > 1024)
    {
        return Err(format!(
            "ValidationError: health check path '{path}' must begin with '/' and be at most 1024 characters"
        ));
    }
    for range in &config.source_ranges {
        if range.parse::<Ipv4Cidr>().is_err() {
            return Err(format!(
                "InvalidParameterValue: CIDR block {range} is malformed"
            ));
        }
    }
    Ok(())
}
