//! What OpenShift's GCE provider builds in the cloud for a Service, and in which order, as the
//! simulated service controller replays it against the GCP fake (`gcp::Call`). Every name,
//! field and step is the provider's (openshift/cloud-provider-gcp 30cc04797f50,
//! `providers/gce/`), and the real controller built exactly these against the fake
//! (`bootstrap-sim real-ccm gcp`, docs/clouds.md):
//!
//! Internal (`ensureInternalLoadBalancer`, gce_loadbalancer_internal.go:58-268): per zone
//! whose nodes no installer group covers, the instance group `k8s-ig--<cluster-id>` and its
//! members (`ensureInternalInstanceGroup`, :654-727); the shared node health check
//! `k8s-<cluster-id>-node` (HTTP :10256 `/healthz`, 8 s, timeout 1 s, healthy after 1,
//! unhealthy after 3: :889-908, gce.go:77-82); the backend service `a<uid>` on those groups
//! (:809-850); the forwarding rule `a<uid>` (INTERNAL, the Service's ports, the cloud config's
//! subnetwork, :185-204); the firewall `k8s-fw-a<uid>` from `loadBalancerSourceRanges`
//! (0.0.0.0/0 unset) to the IP on the Service's ports, for the cloud config's node tags, and
//! `k8s-<cluster-id>-node-hc` from Google's health-check ranges on :10256 (:512-613,
//! gce_loadbalancer.go:74). The Service's own address is the user's: the provider's hold
//! (`a<uid>` at the IP) fails with 409 and creates nothing (gce_address_manager.go:147-170).
//!
//! External (`ensureExternalLoadBalancer`, gce_loadbalancer_external.go:60-314): the firewall
//! `k8s-fw-a<uid>` (priority 1000, :1195-1236, :1153-1193), the node check's firewall
//! `k8s-<cluster-id>-node-http-hc` (to the IP, :1027-1073), the legacy HTTP health check
//! `k8s-<cluster-id>-node` (:726-738, :778-810), the target pool `a<uid>` of every Node
//! (:612-654), the forwarding rule `a<uid>` (`portRange`, the network tier, :1075-1103).
//!
//! Deleted in the provider's order, shared resources only once no other load balancer uses
//! them (`ensureInternalLoadBalancerDeleted`, gce_loadbalancer_internal.go:375-461;
//! `ensureExternalLoadBalancerDeleted`, gce_loadbalancer_external.go:340-499): nothing of the
//! provider's is left after the last Service goes.
//!
//! Pace: the service controller syncs one Service at a time (k8s.io/cloud-provider
//! `controllers/service/controller.go`, one worker by default), and the provider waits for
//! every Operation it starts (`op.go:68-116`), so each started Operation costs the fake's
//! operation delay before the next call.

use super::gce;
use crate::gcp::load_balancers::GroupBackend;
use crate::gcp::{Call, GcpLbView};
use serde_json::{Value, json};
use std::net::IpAddr;

/// The cluster id of the `kube-system/ingress-uid` ConfigMap (a fixed one here): it names the
/// provider's shared resources.
pub const CLUSTER_ID: &str = "8f1c2a7d4e5b6c90";

/// Google's L4 health-check source ranges (`l4LbSrcRngsFlag`, gce_loadbalancer.go:74).
const HEALTH_CHECK_RANGES: [&str; 4] = [
    "130.211.0.0/22",
    "35.191.0.0/16",
    "209.85.152.0/22",
    "209.85.204.0/22",
];

/// The nodes' service-proxy health port and path (`GetNodesHealthCheckPort` / `Path`).
const NODE_CHECK_PORT: u16 = 10256;

fn node_check() -> String {
    format!("k8s-{CLUSTER_ID}-node")
}

fn service_name(svc: &Value) -> String {
    format!("{}/{}", super::meta::namespace(svc), super::meta::name(svc))
}

fn description(svc: &Value) -> String {
    json!({"kubernetes.io/service-name": service_name(svc)}).to_string()
}

/// `makeFirewallDescription`, gce_loadbalancer_naming.go:133-136.
fn firewall_description(svc: &Value, ip: IpAddr) -> String {
    format!(
        r#"{{"kubernetes.io/service-name":"{}", "kubernetes.io/service-ip":"{ip}"}}"#,
        service_name(svc)
    )
}

/// The cloud config's `node-tags`, as the installer writes them
/// (`pkg/asset/manifests/gcp/cloudproviderconfig.go`): the firewalls' target tags.
fn node_tags(view: &GcpLbView) -> Vec<String> {
    let infra = view.cloud_config().2;
    ["master", "control-plane", "worker"]
        .iter()
        .map(|t| format!("{infra}-{t}"))
        .collect()
}

/// `loadBalancerSourceRanges`, 0.0.0.0/0 when unset (`GetLoadBalancerSourceRanges`).
fn source_ranges(svc: &Value) -> Vec<String> {
    let ranges: Vec<String> = super::meta::get(svc, &["spec", "loadBalancerSourceRanges"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(|r| r.trim().to_string()))
        .filter(|r| !r.is_empty())
        .collect();
    if ranges.is_empty() {
        vec!["0.0.0.0/0".into()]
    } else {
        ranges
    }
}

/// Ports as the firewall takes them: consecutive ones merged into `a-b` (`getPortRanges`,
/// gce_loadbalancer_internal.go:1005-1045).
fn port_ranges(ports: &[u16]) -> Vec<String> {
    let mut sorted = ports.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<(u16, u16)> = Vec::new();
    for p in sorted {
        match out.last_mut() {
            Some((_, hi)) if u32::from(*hi) + 1 == u32::from(p) => *hi = p,
            _ => out.push((p, p)),
        }
    }
    out.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect()
}

fn firewall(view: &GcpLbView, name: String, desc: String, sources: Vec<String>) -> Value {
    json!({"name": name, "description": desc, "network": view.network_links().0,
           "sourceRanges": sources, "targetTags": node_tags(view)})
}

fn insert(scope: &str, collection: &'static str, body: Value) -> Call {
    Call::Insert {
        scope: scope.to_string(),
        collection,
        body,
    }
}

/// The calls that build an internal Service's load balancer `lb` at `ip` on `backends`.
pub fn internal(
    view: &GcpLbView,
    svc: &Value,
    lb: &str,
    ip: IpAddr,
    ports: &[u16],
    backends: &[GroupBackend],
) -> Vec<Call> {
    let region = format!("regions/{}", view.cloud_config().1);
    let (network, subnetwork) = view.network_links();
    let mut calls = Vec::new();
    for own in backends.iter().filter(|b| b.group == gce::OWN_GROUP) {
        calls.push(Call::InsertGroup {
            zone: own.zone.clone(),
            name: own.group.clone(),
        });
        calls.push(Call::AddInstances {
            zone: own.zone.clone(),
            name: own.group.clone(),
            members: own.members.clone(),
        });
    }
    let check = json!({"name": node_check(), "description": "", "type": "HTTP",
        "httpHealthCheck": {"port": NODE_CHECK_PORT, "requestPath": "/healthz"},
        "checkIntervalSec": 8, "timeoutSec": 1, "healthyThreshold": 1, "unhealthyThreshold": 3});
    calls.push(insert("global", "healthChecks", check));
    let groups: Vec<Value> = backends
        .iter()
        .map(|b| json!({"group": view.link(&format!("zones/{}/instanceGroups/{}", b.zone, b.group))}))
        .collect();
    let service = json!({"name": lb, "description": description(svc), "protocol": "TCP",
        "sessionAffinity": "NONE", "loadBalancingScheme": "INTERNAL", "backends": groups,
        "healthChecks": [view.link(&format!("global/healthChecks/{}", node_check()))]});
    calls.push(insert(&region, "backendServices", service));
    let ports_text: Vec<String> = ports.iter().map(u16::to_string).collect();
    let rule = json!({"name": lb, "description": description(svc), "IPAddress": ip.to_string(),
        "backendService": view.link(&format!("{region}/backendServices/{lb}")),
        "ports": ports_text, "IPProtocol": "TCP", "loadBalancingScheme": "INTERNAL",
        "subnetwork": subnetwork, "network": network});
    calls.push(insert(&region, "forwardingRules", rule));
    let mut traffic = firewall(
        view,
        format!("k8s-fw-{lb}"),
        firewall_description(svc, ip),
        source_ranges(svc),
    );
    traffic["allowed"] = json!([{"IPProtocol": "tcp", "ports": port_ranges(ports)}]);
    traffic["destinationRanges"] = json!([ip.to_string()]);
    calls.push(insert("global", "firewalls", traffic));
    let ranges = HEALTH_CHECK_RANGES.map(String::from).to_vec();
    let mut health = firewall(view, format!("{}-hc", node_check()), String::new(), ranges);
    health["allowed"] = json!([{"IPProtocol": "tcp", "ports": [NODE_CHECK_PORT.to_string()]}]);
    calls.push(insert("global", "firewalls", health));
    calls
}

/// The calls that build an external Service's network load balancer `lb` at `ip` (a static
/// address of `tier`, `PREMIUM` or `STANDARD`), its target pool holding every Node.
pub fn external(
    view: &GcpLbView,
    svc: &Value,
    lb: &str,
    ip: IpAddr,
    ports: &[u16],
    tier: &str,
) -> Vec<Call> {
    let region = format!("regions/{}", view.cloud_config().1);
    let mut traffic = firewall(
        view,
        format!("k8s-fw-{lb}"),
        firewall_description(svc, ip),
        source_ranges(svc),
    );
    traffic["allowed"] = json!([{"IPProtocol": "tcp", "ports": port_ranges(ports)}]);
    traffic["destinationRanges"] = json!([ip.to_string()]);
    traffic["priority"] = json!(1000);
    let ranges = HEALTH_CHECK_RANGES.map(String::from).to_vec();
    let desc = json!({"kubernetes.io/cluster-id": CLUSTER_ID}).to_string();
    let mut health = firewall(view, format!("{}-http-hc", node_check()), desc, ranges);
    health["allowed"] = json!([{"IPProtocol": "tcp", "ports": [NODE_CHECK_PORT.to_string()]}]);
    health["destinationRanges"] = json!([ip.to_string()]);
    health["priority"] = json!(1000);
    let check = json!({"name": node_check(), "port": NODE_CHECK_PORT, "requestPath": "/healthz",
        "description": json!({"kubernetes.io/service-name": node_check()}).to_string(),
        "checkIntervalSec": 8, "timeoutSec": 1, "healthyThreshold": 1, "unhealthyThreshold": 3});
    let hosts: Vec<String> = view
        .instances()
        .iter()
        .filter(|vm| vm.node)
        .map(|vm| format!("/zones/{}/instances/{}", vm.zone, vm.name))
        .collect();
    let pool = json!({"name": lb, "description": description(svc), "instances": hosts,
        "sessionAffinity": "NONE",
        "healthChecks": [view.link(&format!("global/httpHealthChecks/{}", node_check()))]});
    let (lo, hi) = (ports.iter().min(), ports.iter().max());
    let rule = json!({"name": lb, "description": description(svc), "IPAddress": ip.to_string(),
        "IPProtocol": "TCP", "portRange": format!("{}-{}", lo.unwrap_or(&0), hi.unwrap_or(&0)),
        "target": view.link(&format!("{region}/targetPools/{lb}")), "networkTier": tier});
    vec![
        insert("global", "firewalls", traffic),
        insert("global", "firewalls", health),
        insert("global", "httpHealthChecks", check),
        insert(&region, "targetPools", pool),
        insert(&region, "forwardingRules", rule),
    ]
}

/// The calls that delete what [`internal`] or [`external`] built for `lb` (the provider's two
/// teardowns in a row: what one kind never made is absent and costs nothing).
pub fn delete(view: &GcpLbView, lb: &str) -> Vec<Call> {
    let region = format!("regions/{}", view.cloud_config().1);
    let delete = |scope: &str, collection: &'static str, name: &str| Call::Delete {
        scope: scope.to_string(),
        collection,
        name: name.to_string(),
    };
    let mut calls = vec![
        delete(&region, "forwardingRules", lb),
        delete(&region, "backendServices", lb),
        delete("global", "firewalls", &format!("k8s-fw-{lb}")),
        Call::DeleteCheck {
            collection: "healthChecks",
            name: node_check(),
            firewall: format!("{}-hc", node_check()),
        },
    ];
    for zone in crate::gcp::region_zones(&view.cloud_config().1) {
        calls.push(Call::DeleteGroup {
            zone,
            name: gce::OWN_GROUP.to_string(),
        });
    }
    calls.extend([
        delete(&region, "targetPools", lb),
        Call::DeleteCheck {
            collection: "httpHealthChecks",
            name: node_check(),
            firewall: format!("{}-http-hc", node_check()),
        },
    ]);
    calls
}

/// Builds an internal Service's load balancer on its frontend (GCE's internal Services are
/// single stack: one), the groups as `gce::ensure_internal_instance_groups` chooses them.
pub async fn ensure_internal(
    view: &GcpLbView,
    svc: &Value,
    wanted: &[super::frontends::Frontend],
) -> Result<(), String> {
    let Some(frontend) = wanted.first() else {
        return Ok(());
    };
    let backends = gce::ensure_internal_instance_groups(view)?;
    let ports: Vec<u16> = frontend
        .rules
        .iter()
        .filter_map(|r| u16::try_from(r.port).ok())
        .collect();
    let lb = super::lb_resource_name(svc);
    let calls = internal(view, svc, &lb, frontend.ip, &ports, &backends);
    run(view, &calls).await.map(drop)
}

/// Builds an external Service's network load balancer on its `spec.loadBalancerIP` (checked
/// by `gce::verify_user_requested_ip`; without one nothing is built here).
pub async fn ensure_external(view: &GcpLbView, svc: &Value) -> Result<(), String> {
    let Some(ip) = super::meta::get_str(svc, &["spec", "loadBalancerIP"])
        .and_then(|ip| ip.trim().parse::<IpAddr>().ok())
    else {
        return Ok(());
    };
    let ports: Vec<u16> = super::meta::get(svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p["port"].as_u64().and_then(|p| u16::try_from(p).ok()))
        .collect();
    let tier = gce::desired_tier(svc)?.to_ascii_uppercase();
    let lb = super::lb_resource_name(svc);
    run(view, &external(view, svc, &lb, ip, &ports, &tier))
        .await
        .map(drop)
}

/// Makes `calls` one after the other, waiting the fake's operation delay after each
/// Operation started; the first refusal stops them (the provider returns the error).
pub async fn run(view: &GcpLbView, calls: &[Call]) -> Result<usize, String> {
    let mut operations = 0;
    for call in calls {
        let started = view.apply(call)?;
        for _ in 0..started {
            tokio::time::sleep(view.operation_delay()).await;
        }
        operations += started;
    }
    Ok(operations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_ports_are_one_range_as_the_provider_writes_them() {
        assert_eq!(port_ranges(&[6443]), ["6443"]);
        assert_eq!(port_ranges(&[22623, 6443]), ["6443", "22623"]);
        assert_eq!(port_ranges(&[80, 81, 82, 443]), ["80-82", "443"]);
    }
}
