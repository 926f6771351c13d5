//! The address manager of OpenShift's GCE cloud provider against the fake, for an internal
//! Service (openshift/cloud-provider-gcp `providers/gce/gce_address_manager.go`,
//! `HoldAddress` and `ensureAddressReservation`, called by `ensureInternalLoadBalancer` in
//! `gce_loadbalancer_internal.go`): it reserves an address named after the load balancer
//! (`a<uid>`, no purpose: `GCE_ENDPOINT`) at the Service's IP in the cloud config's
//! subnetwork. When GCE refuses (409 or 400) it looks the IP up among the region's addresses
//! and takes the one holding it, whoever made it (then it never releases it), and fails when
//! none does. A deferred
//! `ReleaseAddress` deletes its own `a<uid>` at the end of every sync, success or not, so the
//! forwarding rule keeps the IP as an ephemeral one and no `a<uid>` stays behind.

use super::GcpLbView;
use super::http::ApiError;
use serde_json::json;
use std::net::Ipv4Addr;

/// A Go client's rendering of a GCE error (`googleapi.Error.Error()`): the reason after the
/// message for a synchronous error.
fn go_error(e: &ApiError) -> String {
    format!("googleapi: Error {}: {}, {}", e.code, e.message, e.reason)
}

impl GcpLbView {
    /// `ensureAddressReservation` for the Service `service` (`ns/name`) at `ip`: reserving
    /// `name` there in the cloud config's subnetwork. `Ok(Some(address))`: an address of the
    /// region already holds the IP (GCE refuses the reservation with 409, the provider finds
    /// that address by IP and uses it). `Ok(None)`: the reservation is made (an IP a VM or a
    /// forwarding rule holds without an address is promoted to it) and released at the end of
    /// the sync, so nothing stays. `Err`: GCE refuses it (an IP outside the subnetwork's usable
    /// range) and no address holds the IP: the provider's error, naming GCE's (the fake's
    /// wording, see `compute::new_address`, rendered as a Go client renders it).
    pub fn hold_internal_address(
        &self,
        name: &str,
        service: &str,
        ip: &str,
    ) -> Result<Option<serde_json::Value>, String> {
        let mut w = self.lock();
        w.tick();
        if let Some(address) = w.addresses.values().find(|a| a["address"] == ip) {
            return Ok(Some(address.clone()));
        }
        let seed = w.seed().clone();
        let Some(subnet) = seed.subnetwork(&seed.cloud_config_subnetwork) else {
            return Ok(None);
        };
        let body = json!({
            "name": name,
            "description": format!("{{\"kubernetes.io/service-name\":\"{service}\"}}"),
            "address": ip,
            "addressType": "INTERNAL",
            "subnetwork": format!(
                "projects/{}/regions/{}/subnetworks/{}",
                seed.subnet_project(subnet),
                seed.region,
                subnet.name
            ),
        });
        match super::compute::new_address(&mut w, &body) {
            Ok(_) => Ok(None),
            Err(e) => Err(crate::kube::gcp_no_address(&seed.region, ip, &go_error(&e))),
        }
    }

    /// Whether a VM's interface (its primary address or an alias IP range) holds `ip`.
    pub fn vm_holds(&self, ip: Ipv4Addr) -> bool {
        let mut w = self.lock();
        w.tick();
        w.instances.values().any(|i| i.holds(ip))
    }

    /// The region (the address manager's errors name it).
    pub fn region(&self) -> String {
        self.lock().seed().region.clone()
    }
}
