//! How cloud-provider-azure finds the public IP a Service names, read from the Azure fake
//! ([`AzureLbView`]). Per family the address comes from `azure-load-balancer-ipv4` / `-ipv6`
//! (else `spec.loadBalancerIP`, see `requested_ips`); the provider lists the public IPs of one
//! resource group only: `service.beta.kubernetes.io/azure-load-balancer-resource-group` when
//! annotated, else the cloud config's `resourceGroup` (the cluster's), and refuses an address
//! it does not find there: "findMatchedPIPByLoadBalancerIP: cannot find public IP with IP
//! address <ip> in resource group <rg>" (kubernetes-sigs/cloud-provider-azure
//! `pkg/provider/azure_loadbalancer.go`, `getPublicIPAddressResourceGroup` and
//! `findMatchedPIPByLoadBalancerIP`).

use super::super::meta;
use super::requested_ips;
use crate::azure::AzureLbView;
use serde_json::Value;

/// The annotation naming the resource group of the Service's public IPs.
pub const RESOURCE_GROUP: &str = "service.beta.kubernetes.io/azure-load-balancer-resource-group";

/// Ok when each requested address is a public IP of the resource group the provider looks in.
pub fn find_public_ips(view: &AzureLbView, svc: &Value) -> Result<(), String> {
    let rg = meta::get_str(svc, &["metadata", "annotations", RESOURCE_GROUP])
        .map(str::trim)
        .filter(|rg| !rg.is_empty())
        .map_or_else(|| view.cluster_resource_group(), str::to_string);
    for ip in requested_ips(svc) {
        if !view.public_ips_in(&rg).iter().any(|held| held == ip) {
            return Err(format!(
                "findMatchedPIPByLoadBalancerIP: cannot find public IP with IP address {ip} in resource group {rg}"
            ));
        }
    }
    Ok(())
}
