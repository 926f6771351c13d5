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
//! Errors are the cloud's words after "failed to ensure load balancer: ":
//! - Azure, a port another Service's rule has on the frontend: the provider's own check,
//!   `checkLoadBalancerResourcesConflicts` (kubernetes-sigs/cloud-provider-azure
//!   `pkg/provider/azure_loadbalancer.go`), naming that rule (`a<uid>-TCP-<port>`,
//!   `getLoadBalancerRuleName` in `azure_standard.go`; `-IPv6` for a dual-stack Service's IPv6
//!   rule) and its frontend IP configuration's id (`<lb id>/frontendIPConfigurations/a<uid>`,
//!   named after the Service whose frontend it is: here the one holding the rule).
//! - Azure, an address outside the subnet: ARM's `PrivateIPAddressNotInSubnet` (the provider
//!   does not check it first).
//! - GCP, an address outside the subnet and no address resource holding it: the provider's
//!   address manager (openshift/cloud-provider-gcp `providers/gce/gce_address_manager.go`,
//!   `ensureAddressReservation`) first reserves `a<uid>` at that IP in the subnetwork; GCE
//!   refuses, and the IP held by no address of the region, it fails with "failed to get
//!   address by IP ... after reservation attempt" wrapping both errors. GCE's own wording of
//!   the reservation refusal is the fake's (`gcp::compute`), not established.
//! - GCP, a port another Service's forwarding rule has on the IP: GCE refuses the second
//!   forwarding rule. Its wording for regional internal rules could not be established; this
//!   is GCE's known refusal of a duplicate IP:port on a global forwarding rule
//!   ("Duplicate IP:port 0.0.0.0:80-80", hashicorp/terraform-provider-google#6657).

use super::super::meta;
use super::{Ipv4Cidr, Ipv6Cidr};
use serde_json::Value;
use std::net::IpAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloud {
    Gcp,
    Azure,
}

/// The subnet a cloud puts internal load balancers in, as far as it is known, and the names
/// the refusals quote.
#[derive(Clone, Debug)]
pub struct Subnet {
    pub cloud: Cloud,
    pub ipv4: Option<Ipv4Cidr>,
    pub ipv6: Option<Ipv6Cidr>,
    /// GCP: the region (the address manager's error names it).
    pub region: String,
    /// Azure: the internal load balancer's resource id (`.../loadBalancers/<infra>-internal`).
    pub lb_id: String,
}

/// One load-balancing rule: (port, protocol) and the Service port's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub port: i64,
    pub protocol: String,
    pub name: String,
}

/// The rules one internal Service puts on a frontend IP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontend {
    pub cloud: Cloud,
    pub ip: IpAddr,
    pub rules: Vec<Rule>,
    /// `namespace/name` of the Service.
    pub holder: String,
    /// The Service's load-balancer resource name (`a<uid>`, see `lb_resource_name`).
    pub lb: String,
    /// Azure: "-IPv6" on the IPv6 rules and frontend of a dual-stack Service
    /// (`getResourceByIPFamily`), else "".
    pub family_suffix: &'static str,
}

/// The frontends the Service asks for, one per requested address; none when it names no
/// address (the cloud would pick an ephemeral one, which breaks no rule here).
pub fn model(subnet: &Subnet, svc: &Value, requested: &[&str]) -> Result<Vec<Frontend>, String> {
    let dual_stack = requested.len() > 1;
    requested
        .iter()
        .map(|r| frontend(subnet, svc, r, dual_stack))
        .collect()
}

/// GCP: the address manager's refusal when reserving `ip` failed (`reservation`, GCE's
/// words) and no address of the region holds it (`GetRegionAddressByIP`'s not-found error,
/// `gce_addresses.go`); Go's `%q` quoting.
pub fn gcp_no_address(region: &str, ip: &str, reservation: &str) -> String {
    let not_found =
        format!("googleapi: Error 404: Address with IP {ip:?} was not found in region {region:?}");
    format!(
        "failed to get address by IP {ip:?} after reservation attempt, err: {not_found:?}, reservation err: {reservation:?}"
    )
}

/// GCE's refusal of an internal address outside its subnetwork's usable range (the fake's
/// wording, see `gcp::compute`).
pub fn gcp_outside(ip: &str) -> String {
    format!(
        "googleapi: Error 400: Invalid value for field 'resource.address': '{ip}'. Address is not in the subnetwork's usable range, invalid"
    )
}

fn frontend(
    subnet: &Subnet,
    svc: &Value,
    requested: &str,
    dual_stack: bool,
) -> Result<Frontend, String> {
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
        Cloud::Gcp => gcp_no_address(
            &subnet.region,
            &ip.to_string(),
            &gcp_outside(&ip.to_string()),
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
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                    Some(Rule {
                        port,
                        protocol: protocol.to_string(),
                        name: name.to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Frontend {
        cloud,
        ip,
        rules,
        holder: format!("{}/{}", meta::namespace(svc), meta::name(svc)),
        lb: super::lb_resource_name(svc),
        family_suffix: if dual_stack && ip.is_ipv6() {
            "-IPv6"
        } else {
            ""
        },
    })
}

/// ARM's transport protocol of a Kubernetes one (`Tcp`, `Udp`).
pub fn transport(protocol: &str) -> String {
    let lower = protocol.to_ascii_lowercase();
    let mut chars = lower.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Refuses a rule that another Service already has on the same frontend IP.
pub fn check(subnet: &Subnet, wanted: &Frontend, others: &[&Frontend]) -> Result<(), String> {
    for other in others
        .iter()
        .filter(|o| o.cloud == wanted.cloud && o.ip == wanted.ip)
    {
        let clash = wanted.rules.iter().find(|r| {
            other
                .rules
                .iter()
                .any(|o| o.port == r.port && o.protocol.eq_ignore_ascii_case(&r.protocol))
        });
        if let Some(rule) = clash {
            let Rule {
                port,
                protocol,
                name,
            } = rule;
            let ip = wanted.ip;
            return Err(match wanted.cloud {
                Cloud::Gcp => format!(
                    "googleapi: Error 400: Invalid value for field 'resource.IPAddress': '{ip}'. Duplicate IP:port {ip}:{port}-{port}, invalid"
                ),
                Cloud::Azure => {
                    let suffix = other.family_suffix;
                    format!(
                        "checkLoadBalancerResourcesConflicts: service port {name} is trying to consume the port {port} which is being referenced by an existing loadBalancing rule {}-{}-{port}{suffix} with the same protocol {} and frontend IP config with ID {}/frontendIPConfigurations/{}{suffix}",
                        other.lb,
                        protocol.to_ascii_uppercase(),
                        transport(protocol),
                        subnet.lb_id,
                        other.lb
                    )
                }
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LB_ID: &str = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/infra-internal";

    fn svc(name: &str, ports: &[i64]) -> Value {
        let ports: Vec<Value> = ports
            .iter()
            .map(|p| json!({"name": format!("p{p}"), "port": p, "protocol": "TCP"}))
            .collect();
        json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
               "spec": {"ports": ports}})
    }

    fn gcp(range: &str) -> Subnet {
        Subnet {
            cloud: Cloud::Gcp,
            ipv4: Some(range.parse().unwrap()),
            ipv6: None,
            region: "us-central1".into(),
            lb_id: String::new(),
        }
    }

    fn azure(v4: Option<&str>, v6: Option<&str>) -> Subnet {
        Subnet {
            cloud: Cloud::Azure,
            ipv4: v4.map(|r| r.parse().unwrap()),
            ipv6: v6.map(|r| r.parse().unwrap()),
            region: String::new(),
            lb_id: LB_ID.into(),
        }
    }

    fn one(subnet: &Subnet, svc: &Value, ip: &str) -> Result<Frontend, String> {
        model(subnet, svc, &[ip]).map(|mut f| f.remove(0))
    }

    #[test]
    fn an_address_outside_the_subnet_is_refused() {
        let subnet = gcp("10.0.128.0/17");
        let err = one(&subnet, &svc("a", &[6443]), "10.0.0.9").unwrap_err();
        assert_eq!(
            err,
            r#"failed to get address by IP "10.0.0.9" after reservation attempt, err: "googleapi: Error 404: Address with IP \"10.0.0.9\" was not found in region \"us-central1\"", reservation err: "googleapi: Error 400: Invalid value for field 'resource.address': '10.0.0.9'. Address is not in the subnetwork's usable range, invalid""#
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
        assert_eq!(check(&any, &mcs, &[&api]), Ok(()));
        assert!(check(&any, &clash, &[&api, &mcs]).is_err());
        let gcp_subnet = Subnet {
            ipv4: None,
            ..gcp("10.0.0.0/8")
        };
        let gcp = one(&gcp_subnet, &svc("other", &[6443]), ip).unwrap();
        assert_eq!(
            check(&gcp_subnet, &gcp, &[&api]),
            Ok(()),
            "another cloud's frontend is not shared"
        );
        let gcp_api = one(&gcp_subnet, &svc("api", &[6443]), ip).unwrap();
        assert_eq!(
            check(&gcp_subnet, &gcp, &[&gcp_api]).unwrap_err(),
            "googleapi: Error 400: Invalid value for field 'resource.IPAddress': '10.0.1.253'. Duplicate IP:port 10.0.1.253:6443-6443, invalid"
        );
    }

    /// cloud-provider-azure's own words (`checkLoadBalancerResourcesConflicts`): the Service
    /// port's name, the port, the other Service's rule and its frontend's id; a dual-stack
    /// Service's IPv6 rule and frontend carry `-IPv6`.
    #[test]
    fn azure_port_conflict_in_the_providers_words() {
        let any = azure(None, None);
        let api = one(&any, &svc("api", &[6443]), "10.0.1.253").unwrap();
        let clash = one(&any, &svc("other", &[80, 6443]), "10.0.1.253").unwrap();
        assert_eq!(
            check(&any, &clash, &[&api]).unwrap_err(),
            format!(
                "checkLoadBalancerResourcesConflicts: service port p6443 is trying to consume the port 6443 which is being referenced by an existing loadBalancing rule auidapi-TCP-6443 with the same protocol Tcp and frontend IP config with ID {LB_ID}/frontendIPConfigurations/auidapi"
            )
        );
        let ips = ["10.0.1.253", "fd00::5"];
        let dual = model(&any, &svc("api", &[6443]), &ips).unwrap();
        let other = model(&any, &svc("other", &[6443]), &ips).unwrap();
        let err = check(&any, &other[1], &[&dual[0], &dual[1]]).unwrap_err();
        assert!(
            err.contains("rule auidapi-TCP-6443-IPv6 ")
                && err.ends_with("frontendIPConfigurations/auidapi-IPv6"),
            "{err}"
        );
    }
}
