//! Internal load balancers on GCP and Azure, as the cloud provider in the service controller
//! builds them: one frontend IP can carry rules of several Services, but each
//! (IP, port, protocol) belongs to one Service, and the IP must come from the subnet the
//! provider puts internal load balancers in (the compute subnet on both clouds: GCP's
//! cloud-config `subnetwork-name`, Azure's `subnetName`).
//!
//! GCP: `networking.gke.io/load-balancer-type: Internal` (or the older
//! `cloud.google.com/load-balancer-type`), the address in `spec.loadBalancerIP`.
//! Azure: `service.beta.kubernetes.io/azure-load-balancer-internal: "true"`, the address in
//! `service.beta.kubernetes.io/azure-load-balancer-ipv4` (or `spec.loadBalancerIP`).
//! Errors are the cloud's words after "failed to ensure load balancer: ".

use super::super::meta;
use super::Ipv4Cidr;
use serde_json::Value;
use std::net::Ipv4Addr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloud {
    Gcp,
    Azure,
}

/// The rules one internal Service puts on a frontend IP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontend {
    pub cloud: Cloud,
    pub ip: Ipv4Addr,
    /// (port, protocol).
    pub rules: Vec<(i64, String)>,
    /// `namespace/name` of the Service.
    pub holder: String,
}

/// The frontend the Service asks for; None when it names no address (the cloud would pick an
/// ephemeral one, which breaks no rule here).
pub fn model(
    cloud: Cloud,
    svc: &Value,
    requested: Option<&str>,
    subnet: Option<Ipv4Cidr>,
) -> Result<Option<Frontend>, String> {
    let Some(requested) = requested else {
        return Ok(None);
    };
    let ip: Ipv4Addr = requested.parse().map_err(|_| match cloud {
        Cloud::Gcp => format!(
            "googleapi: Error 400: Invalid value for field 'resource.IPAddress': '{requested}'. Must be a valid IPv4 address, invalid"
        ),
        Cloud::Azure => format!("InvalidPrivateIPAddressFormat: Private static IP address {requested} is invalid"),
    })?;
    if let Some(subnet) = subnet
        && !subnet.contains(ip)
    {
        return Err(match cloud {
            Cloud::Gcp => format!(
                "googleapi: Error 400: Invalid value for field 'resource.IPAddress': '{ip}'. The IP address is not in the range {subnet} of the subnetwork the load balancer uses, invalid"
            ),
            Cloud::Azure => format!(
                "PrivateIPAddressNotInSubnet: Private static IP address {ip} does not belong to the range of subnet prefix {subnet}"
            ),
        });
    }
    let rules = meta::get(svc, &["spec", "ports"])
        .and_then(Value::as_array)
        .map(|ports| {
            ports
                .iter()
                .filter_map(|p| {
                    let port = p.get("port").and_then(Value::as_i64)?;
                    let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                    Some((port, protocol.to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Frontend {
        cloud,
        ip,
        rules,
        holder: format!("{}/{}", meta::namespace(svc), meta::name(svc)),
    }))
}

/// Refuses a rule that another Service already has on the same frontend IP.
pub fn check(wanted: &Frontend, others: &[&Frontend]) -> Result<(), String> {
    for other in others
        .iter()
        .filter(|o| o.cloud == wanted.cloud && o.ip == wanted.ip)
    {
        if let Some((port, protocol)) = wanted.rules.iter().find(|r| other.rules.contains(r)) {
            return Err(match wanted.cloud {
                Cloud::Gcp => format!(
                    "googleapi: Error 409: IP address {} with port {port}/{protocol} is already used by the forwarding rule of Service {}, conflict",
                    wanted.ip, other.holder
                ),
                Cloud::Azure => format!(
                    "the frontend IP configuration for {} already has a load-balancing rule for port {port}/{protocol} (Service {}): rules that share a frontend IP need distinct ports",
                    wanted.ip, other.holder
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc(name: &str, ports: &[i64]) -> Value {
        let ports: Vec<Value> = ports
            .iter()
            .map(|p| json!({"port": p, "protocol": "TCP"}))
            .collect();
        json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"ports": ports}})
    }

    #[test]
    fn an_address_outside_the_subnet_is_refused() {
        let subnet: Ipv4Cidr = "10.0.128.0/17".parse().unwrap();
        let err = model(
            Cloud::Gcp,
            &svc("a", &[6443]),
            Some("10.0.0.9"),
            Some(subnet),
        )
        .unwrap_err();
        assert!(
            err.contains("10.0.128.0/17") && err.contains("10.0.0.9"),
            "{err}"
        );
        assert!(
            model(
                Cloud::Gcp,
                &svc("a", &[6443]),
                Some("10.0.128.9"),
                Some(subnet)
            )
            .unwrap()
            .is_some()
        );
        let err = model(
            Cloud::Azure,
            &svc("a", &[6443]),
            Some("10.0.0.9"),
            Some("10.0.1.0/24".parse().unwrap()),
        )
        .unwrap_err();
        assert!(err.starts_with("PrivateIPAddressNotInSubnet"), "{err}");
        assert_eq!(
            model(Cloud::Azure, &svc("a", &[6443]), None, None),
            Ok(None)
        );
    }

    #[test]
    fn one_ip_takes_several_services_with_distinct_ports_only() {
        let ip = Some("10.0.1.253");
        let api = model(Cloud::Azure, &svc("api", &[6443]), ip, None)
            .unwrap()
            .unwrap();
        let mcs = model(Cloud::Azure, &svc("mcs", &[22623]), ip, None)
            .unwrap()
            .unwrap();
        let clash = model(Cloud::Azure, &svc("other", &[80, 6443]), ip, None)
            .unwrap()
            .unwrap();
        assert_eq!(check(&mcs, &[&api]), Ok(()));
        let err = check(&clash, &[&api, &mcs]).unwrap_err();
        assert!(err.contains("6443/TCP") && err.contains("ns/api"), "{err}");
        let gcp = model(Cloud::Gcp, &svc("other", &[6443]), ip, None)
            .unwrap()
            .unwrap();
        assert_eq!(
            check(&gcp, &[&api]),
            Ok(()),
            "another cloud's frontend is not shared"
        );
    }
}
