//! Internal load balancers on GCP and Azure, as the cloud provider in the service controller
//! builds them: one frontend IP can carry rules of several Services, but each
//! (IP, port, protocol) belongs to one Service, and the IP must come from the subnet the
//! provider puts internal load balancers in (the compute subnet on both clouds: GCP's
//! cloud-config `subnetwork-name`, Azure's `subnetName`).
//!
//! GCP: `networking.gke.io/load-balancer-type: Internal` (or the older
//! `cloud.google.com/load-balancer-type`), the address in `spec.loadBalancerIP`. IPv4 only:
//! cloud-provider-gcp's `ensureInternalLoadBalancer` makes one forwarding rule from it.
//! Azure: `service.beta.kubernetes.io/azure-load-balancer-internal: "true"`, the addresses in
//! `service.beta.kubernetes.io/azure-load-balancer-ipv4` and, for a dual-stack Service,
//! `-ipv6` (or `spec.loadBalancerIP`): one frontend per family, the IPv6 one from the
//! subnet's IPv6 prefix (a dual-stack subnet has `addressPrefixes` of both families).
//! Errors are the cloud's words after "failed to ensure load balancer: ".

use super::super::meta;
use super::{Ipv4Cidr, Ipv6Cidr};
use serde_json::Value;
use std::net::IpAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloud {
    Gcp,
    Azure,
}

/// The subnet a cloud puts internal load balancers in, as far as it is known.
#[derive(Clone, Copy, Debug)]
pub struct Subnet {
    pub cloud: Cloud,
    pub ipv4: Option<Ipv4Cidr>,
    pub ipv6: Option<Ipv6Cidr>,
}

/// The rules one internal Service puts on a frontend IP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontend {
    pub cloud: Cloud,
    pub ip: IpAddr,
    /// (port, protocol).
    pub rules: Vec<(i64, String)>,
    /// `namespace/name` of the Service.
    pub holder: String,
}

/// The frontends the Service asks for, one per requested address; none when it names no
/// address (the cloud would pick an ephemeral one, which breaks no rule here).
pub fn model(subnet: &Subnet, svc: &Value, requested: &[&str]) -> Result<Vec<Frontend>, String> {
    requested.iter().map(|r| frontend(subnet, svc, r)).collect()
}

fn frontend(subnet: &Subnet, svc: &Value, requested: &str) -> Result<Frontend, String> {
    let cloud = subnet.cloud;
    let invalid = || match cloud {
        Cloud::Gcp => format!(
            "googleapi: Error 400: Invalid value for field 'resource.IPAddress': '{requested}'. Must be a valid IPv4 address, invalid"
        ),
        Cloud::Azure => format!(
            "InvalidPrivateIPAddressFormat: Private static IP address {requested} is invalid"
        ),
    };
    let ip: IpAddr = requested.parse().map_err(|_| invalid())?;
    let outside = |range: &dyn std::fmt::Display| match cloud {
        Cloud::Gcp => format!(
            "googleapi: Error 400: Invalid value for field 'resource.IPAddress': '{ip}'. The IP address is not in the range {range} of the subnetwork the load balancer uses, invalid"
        ),
        Cloud::Azure => format!(
            "PrivateIPAddressNotInSubnet: Private static IP address {ip} does not belong to the range of subnet prefix {range}"
        ),
    };
    match ip {
        IpAddr::V6(_) if cloud == Cloud::Gcp => return Err(invalid()),
        IpAddr::V4(v4) => {
            if let Some(range) = subnet.ipv4
                && !range.contains(v4)
            {
                return Err(outside(&range));
            }
        }
        IpAddr::V6(v6) => match (subnet.ipv6, subnet.ipv4) {
            (Some(range), _) if !range.contains(v6) => return Err(outside(&range)),
            // The subnet is known and has no IPv6 prefix: no IPv6 frontend can live there.
            (None, Some(range)) => return Err(outside(&range)),
            _ => {}
        },
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
    Ok(Frontend {
        cloud,
        ip,
        rules,
        holder: format!("{}/{}", meta::namespace(svc), meta::name(svc)),
    })
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

    fn gcp(range: &str) -> Subnet {
        Subnet {
            cloud: Cloud::Gcp,
            ipv4: Some(range.parse().unwrap()),
            ipv6: None,
        }
    }

    fn azure(v4: Option<&str>, v6: Option<&str>) -> Subnet {
        Subnet {
            cloud: Cloud::Azure,
            ipv4: v4.map(|r| r.parse().unwrap()),
            ipv6: v6.map(|r| r.parse().unwrap()),
        }
    }

    fn one(subnet: &Subnet, svc: &Value, ip: &str) -> Result<Frontend, String> {
        model(subnet, svc, &[ip]).map(|mut f| f.remove(0))
    }

    #[test]
    fn an_address_outside_the_subnet_is_refused() {
        let subnet = gcp("10.0.128.0/17");
        let err = one(&subnet, &svc("a", &[6443]), "10.0.0.9").unwrap_err();
        assert!(
            err.contains("10.0.128.0/17") && err.contains("10.0.0.9"),
            "{err}"
        );
        assert!(one(&subnet, &svc("a", &[6443]), "10.0.128.9").is_ok());
        let err = one(&gcp("10.0.128.0/17"), &svc("a", &[6443]), "fd00::9").unwrap_err();
        assert!(err.contains("Must be a valid IPv4 address"), "GCP: {err}");
        let err = one(
            &azure(Some("10.0.1.0/24"), None),
            &svc("a", &[6443]),
            "10.0.0.9",
        )
        .unwrap_err();
        assert!(err.starts_with("PrivateIPAddressNotInSubnet"), "{err}");
        assert_eq!(
            model(&azure(None, None), &svc("a", &[6443]), &[]),
            Ok(vec![])
        );
    }

    /// A dual-stack Azure Service: the IPv6 frontend must come from the subnet's IPv6 prefix,
    /// and a subnet without one takes no IPv6 frontend.
    #[test]
    fn an_ipv6_frontend_needs_the_subnets_ipv6_prefix() {
        let dual = azure(Some("10.0.1.0/24"), Some("fd00:10:0:2::/64"));
        let both = model(
            &dual,
            &svc("a", &[6443]),
            &["10.0.1.253", "fd00:10:0:2:c5ce::8"],
        )
        .unwrap();
        assert_eq!(both.len(), 2);
        let err = one(&dual, &svc("a", &[6443]), "fd00:10:0:1::8").unwrap_err();
        assert!(
            err.starts_with("PrivateIPAddressNotInSubnet") && err.contains("fd00:10:0:2::/64"),
            "{err}"
        );
        let single = azure(Some("10.0.1.0/24"), None);
        let err = one(&single, &svc("a", &[6443]), "fd00:10:0:2::8").unwrap_err();
        assert!(err.contains("10.0.1.0/24"), "no IPv6 prefix: {err}");
        assert!(
            one(&azure(None, None), &svc("a", &[6443]), "fd00::8").is_ok(),
            "unknown subnet"
        );
    }

    #[test]
    fn one_ip_takes_several_services_with_distinct_ports_only() {
        let ip = "10.0.1.253";
        let any = azure(None, None);
        let api = one(&any, &svc("api", &[6443]), ip).unwrap();
        let mcs = one(&any, &svc("mcs", &[22623]), ip).unwrap();
        let clash = one(&any, &svc("other", &[80, 6443]), ip).unwrap();
        assert_eq!(check(&mcs, &[&api]), Ok(()));
        let err = check(&clash, &[&api, &mcs]).unwrap_err();
        assert!(err.contains("6443/TCP") && err.contains("ns/api"), "{err}");
        let gcp = one(
            &Subnet {
                cloud: Cloud::Gcp,
                ipv4: None,
                ipv6: None,
            },
            &svc("other", &[6443]),
            ip,
        )
        .unwrap();
        assert_eq!(
            check(&gcp, &[&api]),
            Ok(()),
            "another cloud's frontend is not shared"
        );
    }
}
