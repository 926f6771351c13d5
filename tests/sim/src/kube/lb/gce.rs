//! What OpenShift's GCE cloud provider checks of the cloud before it builds a Service's load
//! balancer, read from the GCP fake ([`GcpLbView`]); errors are the cloud's words after
//! "failed to ensure load balancer: ".
//!
//! Internal (`ensureInternalInstanceGroups`, openshift/cloud-provider-gcp
//! `providers/gce/gce_loadbalancer_internal.go` and `gce_loadbalancer_internal_openshift.go`):
//! per zone with nodes, the provider first reuses the instance groups whose name starts with
//! the cloud config's `external-instance-groups-prefix` (the infra id; the installer's
//! `<infra-id>-master-<zone>`) when every member but `<prefix>-bootstrap` is a Node of that
//! zone, and there is at least one (`filterNodesWithExistingExternalInstanceGroups`:
//! `shouldReuse = gceHostNamesInZone.HasAll(members) && len > 0`). A VM that is no Node
//! (yet) in such a group stops the reuse. The zone's other nodes go into its own
//! `k8s-ig--<cluster-id>` group. GCE refuses that when a
//! node is already in another load-balanced group (`INSTANCE_IN_MULTIPLE_LOAD_BALANCED_IGS`)
//! or when the nodes sit in more than one subnetwork (an instance group holds one
//! subnetwork's VMs: `wrongSubnetwork`). So without the installer's groups, the control-plane
//! machines (control-plane subnetwork) and the workers (compute subnetwork) of a zone land in
//! one group and the load balancer fails before any forwarding rule exists.
//!
//! External (`verifyUserRequestedIP`, `gce_loadbalancer_external.go`): a requested IP that is
//! a static address of the region must be of the Service's network tier
//! (`cloud.google.com/network-tier`, Premium unless annotated); one that is not static is
//! refused ("neither static nor assigned to the LB").

use super::super::meta;
use crate::gcp::GcpLbView;
use crate::gcp::load_balancers::GroupBackend;
use serde_json::Value;
use std::collections::BTreeSet;

/// The Service annotation choosing the network tier (`Standard` or `Premium`).
pub const NETWORK_TIER: &str = "cloud.google.com/network-tier";

/// The name of the provider's own instance group (`k8s-ig--<cluster-id>`, `makeInstanceGroupName`
/// in gce_loadbalancer_naming.go:36-44; the cluster id is the `ingress-uid` ConfigMap's, a fixed
/// one here).
pub const OWN_GROUP: &str = "k8s-ig--8f1c2a7d4e5b6c90";

/// `ensureInternalInstanceGroups` against the fake: the backend service's groups (the reused
/// ones, and per zone the provider's own group of the other nodes) when every zone's nodes
/// are covered by reusable groups or fit in one group of one subnetwork.
pub fn ensure_internal_instance_groups(view: &GcpLbView) -> Result<Vec<GroupBackend>, String> {
    let (project, region, prefix) = view.cloud_config();
    let instances = view.instances();
    let bootstrap = format!("{prefix}-bootstrap");
    let mut backends = Vec::new();
    let zones: BTreeSet<&str> = instances
        .iter()
        .filter(|i| i.node)
        .map(|i| i.zone.as_str())
        .collect();
    for zone in zones {
        let nodes: Vec<_> = instances
            .iter()
            .filter(|i| i.zone == zone && i.node)
            .collect();
        let names: BTreeSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        let mut covered: BTreeSet<String> = BTreeSet::new();
        let mut reused: BTreeSet<String> = BTreeSet::new();
        for (group, members) in view.groups_with_prefix(zone, &prefix) {
            let hosts: Vec<&String> = members.iter().filter(|m| **m != bootstrap).collect();
            if !hosts.is_empty() && hosts.iter().all(|m| names.contains(m.as_str())) {
                backends.push(GroupBackend {
                    zone: zone.to_string(),
                    group: group.clone(),
                    members: members.clone(),
                });
                covered.extend(members);
                reused.insert(group);
            }
        }
        let remaining: Vec<_> = nodes
            .iter()
            .filter(|n| !covered.contains(&n.name))
            .collect();
        let instance = |name: &str| format!("projects/{project}/zones/{zone}/instances/{name}");
        for node in &remaining {
            if let Some((other, _)) = view.groups(zone).into_iter().find(|(g, members)| {
                // Its own group from an earlier sync holds it already.
                g != OWN_GROUP && !reused.contains(g) && members.contains(&node.name)
            }) {
                return Err(format!(
                    "googleapi: Error 400: Invalid value for field 'resource.instances': '{}'. Instance is already a member of load-balanced instance group '{other}'; an instance can be in one load-balanced instance group only (INSTANCE_IN_MULTIPLE_LOAD_BALANCED_IGS), adding it to instance group {OWN_GROUP}, invalid",
                    instance(&node.name)
                ));
            }
        }
        if let Some(first) = remaining.first()
            && let Some(stray) = remaining.iter().find(|n| n.subnetwork != first.subnetwork)
        {
            let subnet = |s: &str| format!("projects/{project}/regions/{region}/subnetworks/{s}");
            return Err(format!(
                "googleapi: Error 400: Resource '{}' is expected to be in the subnetwork '{}' but is in the subnetwork '{}' (adding it to instance group {OWN_GROUP} in {zone}; no instance group with the prefix '{prefix}' there to reuse), wrongSubnetwork",
                instance(&stray.name),
                subnet(&first.subnetwork),
                subnet(&stray.subnetwork)
            ));
        }
        if !remaining.is_empty() {
            backends.push(GroupBackend {
                zone: zone.to_string(),
                group: OWN_GROUP.to_string(),
                members: remaining.iter().map(|n| n.name.clone()).collect(),
            });
        }
    }
    Ok(backends)
}

/// The Service's network tier: `cloud.google.com/network-tier` (`Standard` / `Premium`, any
/// case), Premium when absent (the provider's `GetServiceNetworkTier`).
pub(super) fn desired_tier(svc: &Value) -> Result<&'static str, String> {
    match meta::get_str(svc, &["metadata", "annotations", NETWORK_TIER]) {
        None => Ok("Premium"),
        Some(t) if t.eq_ignore_ascii_case("premium") => Ok("Premium"),
        Some(t) if t.eq_ignore_ascii_case("standard") => Ok("Standard"),
        Some(other) => Err(format!("unsupported network tier: \"{other}\"")),
    }
}

/// `verifyUserRequestedIP` for `spec.loadBalancerIP` (none: an ephemeral address, fine).
pub fn verify_user_requested_ip(view: &GcpLbView, svc: &Value) -> Result<(), String> {
    let desired = desired_tier(svc)?;
    let Some(requested) = meta::get_str(svc, &["spec", "loadBalancerIP"])
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        return Ok(());
    };
    let Some(address) = view.address_by_ip(requested) else {
        return Err(format!(
            "requested ip \"{requested}\" is neither static nor assigned to the LB"
        ));
    };
    let tier = match address["networkTier"].as_str() {
        Some(t) if t.eq_ignore_ascii_case("standard") => "Standard",
        _ => "Premium",
    };
    if tier != desired {
        // The provider's own words (`verifyUserRequestedIP`, gce_loadbalancer_external.go).
        return Err(format!(
            "requested IP \"{requested}\" belongs to the {tier} network tier; expected {desired}"
        ));
    }
    Ok(())
}

/// GCE's rule for an internal forwarding rule on an IP another resource already uses
/// (another Service's rule, a VM's interface): only an address of purpose
/// `SHARED_LOADBALANCER_VIP` may be used by several (`address`: the one the provider holds
/// the IP with; None: its own `a<uid>`, purpose `GCE_ENDPOINT`). Else GCE refuses the rule:
/// "IP_IN_USE_BY_ANOTHER_RESOURCE", a failed operation as the provider's cloud library renders
/// it (kubernetes/ingress-gce#2735 quotes the error).
pub fn shared_internal_ip(address: Option<&Value>, ip: &str) -> Result<(), String> {
    match address {
        Some(a) if a["purpose"] == "SHARED_LOADBALANCER_VIP" => Ok(()),
        _ => Err(format!(
            "googleapi: Error 409: IP_IN_USE_BY_ANOTHER_RESOURCE - IP '{ip}' is already being used by another resource."
        )),
    }
}
