//! compute.v1 regional `forwardingRules.get`, `backendServices.get` and
//! `backendServices.getHealth` for the internal load balancers the simulated GCE provider
//! builds (`kube::lb`, which records each through [`super::GcpLbView::record_internal_lb`]).
//! What the provider builds (openshift/cloud-provider-gcp `gce_loadbalancer_internal.go`,
//! `ensureInternalLoadBalancer`): a forwarding rule and a backend service, both named after
//! the Service (`a<uid>`), the backend service's backends the instance groups
//! `ensureInternalInstanceGroups` chose (the reused `<infra>-master-<zone>` groups, which
//! hold the bootstrap VM, and `k8s-ig--<cluster-id>` for the other nodes), checked by the
//! shared node health check `k8s-<cluster-id>-node` (HTTP :10256 `/healthz`, every 8 s,
//! healthy after 1 success: the provider's `newInternalLBHealthCheck` defaults, as exported
//! clusters show them).
//!
//! Health: :10256 is ovnkube-node's, so a VM that is a Node passes and the bootstrap VM (no
//! OVN-Kubernetes) fails; nothing passes before the first check after the load balancer was
//! built ([`super::FakeOptions::health_check_interval`]). `getHealth` answers for one group
//! of the backend service (`{"group": URL}`), and refuses a group that is not one of its
//! backends, as GCE does.
//!
//! Permissions (each method's "IAM Permissions"): `forwardingRules.get`:
//! `compute.forwardingRules.get`; `backendServices.get` and `getHealth`:
//! `compute.regionBackendServices.get`.

use super::World;
use super::compute::{BASE, region_path};
use super::http::{ApiError, Reply, Req};
use hyper::Method;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::time::Instant;

/// One instance group behind an internal load balancer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupBackend {
    pub zone: String,
    pub group: String,
    pub members: Vec<String>,
}

/// An internal load balancer the simulated provider built: its forwarding rule's address and
/// ports, and its backend service's groups.
#[derive(Clone, Debug)]
pub(crate) struct InternalLb {
    pub ip: IpAddr,
    pub ports: Vec<u16>,
    pub backends: Vec<GroupBackend>,
    pub built: Instant,
}

/// `rest` is the path after the region. None: not a load-balancer call.
pub(crate) fn route(w: &World, req: &Req, rest: &[&str]) -> Option<Reply> {
    let rp = region_path(w);
    let project = w.seed().project.clone();
    let check = |permission: &str, resource: String| {
        super::authz::compute(w, &project, permission, &resource)
    };
    Some(match (&req.method, rest) {
        (&Method::GET, ["forwardingRules", name]) => check(
            "compute.forwardingRules.get",
            format!("{rp}/forwardingRules/{name}"),
        )
        .and_then(|()| forwarding_rule(w, name)),
        (&Method::GET, ["backendServices", name]) => check(
            "compute.regionBackendServices.get",
            format!("{rp}/backendServices/{name}"),
        )
        .and_then(|()| backend_service(w, name)),
        (&Method::POST, ["backendServices", name, "getHealth"]) => check(
            "compute.regionBackendServices.get",
            format!("{rp}/backendServices/{name}"),
        )
        .and_then(|()| health(w, name, &req.body)),
        _ => return None,
    })
}

fn lb<'a>(w: &'a World, kind: &str, name: &str) -> Result<&'a InternalLb, ApiError> {
    w.internal_lbs.get(name).ok_or_else(|| {
        ApiError::not_found(format!(
            "The resource '{}/{kind}/{name}' was not found",
            region_path(w)
        ))
    })
}

fn self_link(w: &World, kind: &str, name: &str) -> String {
    format!("{BASE}/{}/{kind}/{name}", region_path(w))
}

fn group_link(w: &World, b: &GroupBackend) -> String {
    format!(
        "{BASE}/projects/{}/zones/{}/instanceGroups/{}",
        w.seed().project,
        b.zone,
        b.group
    )
}

fn forwarding_rule(w: &World, name: &str) -> Reply {
    let lb = lb(w, "forwardingRules", name)?;
    Ok(json!({
        "kind": "compute#forwardingRule",
        "name": name,
        "IPAddress": lb.ip.to_string(),
        "IPProtocol": "TCP",
        "ports": lb.ports.iter().map(u16::to_string).collect::<Vec<_>>(),
        "loadBalancingScheme": "INTERNAL",
        "backendService": self_link(w, "backendServices", name),
        "region": format!("{BASE}/{}", region_path(w)),
        "selfLink": self_link(w, "forwardingRules", name),
    }))
}

fn backend_service(w: &World, name: &str) -> Reply {
    let lb = lb(w, "backendServices", name)?;
    let backends: Vec<Value> = lb
        .backends
        .iter()
        .map(|b| json!({"group": group_link(w, b), "balancingMode": "CONNECTION"}))
        .collect();
    Ok(json!({
        "kind": "compute#backendService",
        "name": name,
        "loadBalancingScheme": "INTERNAL",
        "protocol": "TCP",
        "backends": backends,
        "selfLink": self_link(w, "backendServices", name),
    }))
}

fn health(w: &World, name: &str, body: &Value) -> Reply {
    let lb = lb(w, "backendServices", name)?;
    let asked = body["group"].as_str().unwrap_or_default();
    let Some(group) = lb
        .backends
        .iter()
        .find(|b| asked.ends_with(&format!("zones/{}/instanceGroups/{}", b.zone, b.group)))
    else {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'resource.group': '{asked}'. The group is not a backend of backend service '{name}'."
        )));
    };
    let checked = lb.built.elapsed() >= w.options.health_check_interval;
    Ok(group_health(w, &group.zone, &group.members, checked))
}

/// `getHealth`'s answer for a group's `members` in `zone`: once `checked`, a VM that is a Node
/// passes (ovnkube-node answers :10256), any other fails; before, nothing passes.
pub(super) fn group_health(w: &World, zone: &str, members: &[String], checked: bool) -> Value {
    let statuses: Vec<Value> = members
        .iter()
        .map(|m| {
            let node = w.seed().instances.iter().any(|i| i.name == *m && i.node);
            let ip = w
                .instances
                .get(m)
                .and_then(|i| i.addresses().first().map(ToString::to_string));
            json!({
                "instance": format!("{BASE}/projects/{}/zones/{zone}/instances/{m}", w.seed().project),
                "ipAddress": ip,
                "port": 10256,
                "healthState": if checked && node { "HEALTHY" } else { "UNHEALTHY" },
            })
        })
        .collect();
    json!({"kind": "compute#backendServiceGroupHealth", "healthStatus": statuses})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::http::Req;
    use super::super::{FakeOptions, Seed};
    use super::*;
    use std::time::Duration;

    const REGION: &str = "compute/v1/projects/example-project/regions/us-central1";
    const BOOTSTRAP: &str = "mycluster-7xk2p-bootstrap";
    const MASTER: &str = "mycluster-7xk2p-master-0";

    /// The seed's VMs and one internal load balancer `a1` on 10.0.128.2 (6443), built
    /// `age` ago, backed by the first zone's master group (the bootstrap VM in it).
    fn world(age: Duration, denied: &[&str]) -> World {
        let mut w = World::new(FakeOptions {
            seed: Seed::default(),
            denied: denied.iter().map(|d| d.to_string()).collect(),
            ..FakeOptions::realistic()
        });
        let built = Instant::now().checked_sub(age).unwrap();
        w.internal_lbs.insert(
            "a1".into(),
            InternalLb {
                ip: "10.0.128.2".parse().unwrap(),
                ports: vec![6443],
                backends: vec![GroupBackend {
                    zone: "us-central1-a".into(),
                    group: "mycluster-7xk2p-master-us-central1-a".into(),
                    members: vec![MASTER.into(), BOOTSTRAP.into()],
                }],
                built,
            },
        );
        w
    }

    fn call(w: &World, method: Method, tail: &str, body: Value) -> Reply {
        let req = Req::for_test(method, &format!("{REGION}/{tail}"), body);
        let rest: Vec<&str> = tail.split('/').collect();
        route(w, &req, &rest).expect("a load-balancer call")
    }

    fn health(w: &World, group: &str) -> Reply {
        let url =
            format!("{BASE}/projects/example-project/zones/us-central1-a/instanceGroups/{group}");
        call(
            w,
            Method::POST,
            "backendServices/a1/getHealth",
            json!({"group": url}),
        )
    }

    fn states(answer: &Value) -> Vec<(String, String)> {
        answer["healthStatus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let instance = s["instance"].as_str().unwrap().rsplit('/').next().unwrap();
                (
                    instance.to_string(),
                    s["healthState"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn nodes_pass_the_node_health_check_after_its_first_interval_the_bootstrap_vm_never() {
        let group = "mycluster-7xk2p-master-us-central1-a";
        let fresh = world(Duration::from_secs(1), &[]);
        let unhealthy = |who: &str| (who.to_string(), "UNHEALTHY".to_string());
        assert_eq!(
            states(&health(&fresh, group).unwrap()),
            [unhealthy(MASTER), unhealthy(BOOTSTRAP)],
            "no check has run 1 s after the load balancer was built (every 8 s)"
        );
        let checked = world(Duration::from_secs(9), &[]);
        assert_eq!(
            states(&health(&checked, group).unwrap()),
            [
                (MASTER.to_string(), "HEALTHY".to_string()),
                unhealthy(BOOTSTRAP)
            ],
            "a Node runs ovnkube-node (:10256); the bootstrap VM does not"
        );
    }

    #[test]
    fn a_group_that_is_not_a_backend_is_refused() {
        let w = world(Duration::from_secs(9), &[]);
        let e = health(&w, "k8s-ig--8f1c2a7d4e5b6c90").unwrap_err();
        assert_eq!(e.code, 400, "{e:?}");
    }

    #[test]
    fn the_forwarding_rule_names_its_backend_service_and_unknown_names_are_not_found() {
        let w = world(Duration::ZERO, &[]);
        let rule = call(&w, Method::GET, "forwardingRules/a1", Value::Null).unwrap();
        assert_eq!(rule["IPAddress"], "10.0.128.2");
        assert_eq!(rule["ports"], json!(["6443"]));
        assert!(
            rule["backendService"]
                .as_str()
                .unwrap()
                .ends_with("/backendServices/a1")
        );
        let service = call(&w, Method::GET, "backendServices/a1", Value::Null).unwrap();
        assert!(
            service["backends"][0]["group"].as_str().unwrap().ends_with(
                "/zones/us-central1-a/instanceGroups/mycluster-7xk2p-master-us-central1-a"
            )
        );
        let e = call(&w, Method::GET, "forwardingRules/a2", Value::Null).unwrap_err();
        assert_eq!(e.code, 404);
    }

    #[test]
    fn each_read_needs_its_permission() {
        let w = world(Duration::ZERO, &["compute.regionBackendServices.get"]);
        let e = health(&w, "mycluster-7xk2p-master-us-central1-a").unwrap_err();
        assert_eq!(e.code, 403);
        assert!(
            e.message.contains("compute.regionBackendServices.get"),
            "{e:?}"
        );
        let w = world(Duration::ZERO, &["compute.forwardingRules.get"]);
        let e = call(&w, Method::GET, "forwardingRules/a1", Value::Null).unwrap_err();
        assert!(e.message.contains("compute.forwardingRules.get"), "{e:?}");
    }
}
