//! Public IPs the user made (UPI), in the cluster resource group by the seed's names
//! (`<infra-id>-rsvd-public-ipv4`, `-ipv6`) or as `--reservations` names them, checked against
//! what the load balancer needs: the cluster's region, Standard SKU, Static, the family of
//! their purpose. Read only, never tagged.

use crate::{IpFamily, Reservation, UserMade, UserReservationQuery};
use serde_json::Value;
use std::net::IpAddr;

/// Azure writes regions both ways (`East US`, `eastus`): compare them without case or spaces.
fn same_region(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.replace(' ', "").to_ascii_lowercase();
    norm(a) == norm(b)
}

/// The user's public IP `resource` for `query`: fits, or what keeps it from serving.
pub(super) fn check_public(
    resource: &Value,
    query: &UserReservationQuery,
    region: &str,
) -> UserMade {
    let name = resource["name"].as_str().unwrap_or_default().to_string();
    let id = resource["id"].as_str().unwrap_or_default().to_string();
    let misfit = |problem: String| UserMade::Misfit {
        resource: format!("public IP {name} ({id})"),
        problem,
    };
    let props = &resource["properties"];
    let location = resource["location"].as_str().unwrap_or_default();
    if !same_region(location, region) {
        return misfit(format!(
            "is in region {location}; the cluster is in {region}"
        ));
    }
    let sku = resource["sku"]["name"].as_str().unwrap_or("Basic");
    if sku != "Standard" {
        return misfit(format!(
            "has SKU {sku}; a Standard load balancer takes only a Standard public IP"
        ));
    }
    let allocation = props["publicIPAllocationMethod"]
        .as_str()
        .unwrap_or("Dynamic");
    if allocation != "Static" {
        return misfit(format!(
            "is {allocation}; it must be Static, so its address never changes"
        ));
    }
    let version = props["publicIPAddressVersion"].as_str().unwrap_or("IPv4");
    let wanted = match query.key.family {
        IpFamily::Ipv4 => "IPv4",
        IpFamily::Ipv6 => "IPv6",
    };
    if version != wanted {
        return misfit(format!("is {version}; {} needs {wanted}", query.key));
    }
    let ip = props["ipAddress"]
        .as_str()
        .and_then(|s| s.parse::<IpAddr>().ok());
    let Some(ip) = ip else {
        return misfit("has no address yet".into());
    };
    if let Some(holder) = props["ipConfiguration"]["id"].as_str()
        && query.adopted_before != Some(ip)
    {
        return misfit(format!(
            "is associated with {holder}; the load balancer needs it unassociated"
        ));
    }
    UserMade::Fits(Reservation {
        key: query.key.clone(),
        id,
        name,
        ip,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReservationKey, UserLookup};
    use serde_json::json;

    fn pip() -> Value {
        json!({
            "name": "c-1-rsvd-public-ipv4",
            "id": "/subscriptions/s/resourceGroups/c-1-rg/providers/Microsoft.Network/publicIPAddresses/c-1-rsvd-public-ipv4",
            "location": "centralus",
            "sku": {"name": "Standard"},
            "properties": {"publicIPAllocationMethod": "Static", "publicIPAddressVersion": "IPv4", "ipAddress": "52.0.0.9"},
        })
    }

    fn query() -> UserReservationQuery {
        UserReservationQuery {
            key: ReservationKey::parse("public-ipv4").unwrap(),
            lookup: UserLookup::Name("c-1-rsvd-public-ipv4".into()),
            adopted_before: None,
        }
    }

    fn problem(v: Value) -> String {
        match check_public(&v, &query(), "Central US") {
            UserMade::Misfit { resource, problem } => format!("{resource}: {problem}"),
            UserMade::Fits(r) => panic!("fits: {r:?}"),
        }
    }

    #[test]
    fn a_standard_static_ipv4_in_the_region_fits() {
        assert!(
            matches!(check_public(&pip(), &query(), "Central US"), UserMade::Fits(r) if r.ip.to_string() == "52.0.0.9")
        );
    }

    #[test]
    fn wrong_region_sku_allocation_or_family_is_named() {
        let mut v = pip();
        v["location"] = json!("westeurope");
        assert!(problem(v).contains("region westeurope"));
        let mut v = pip();
        v["sku"]["name"] = json!("Basic");
        assert!(problem(v).contains("SKU Basic"));
        let mut v = pip();
        v["properties"]["publicIPAllocationMethod"] = json!("Dynamic");
        assert!(problem(v).contains("Dynamic"));
        let mut v = pip();
        v["properties"]["publicIPAddressVersion"] = json!("IPv6");
        let p = problem(v);
        assert!(
            p.contains("c-1-rsvd-public-ipv4") && p.contains("needs IPv4"),
            "{p}"
        );
        let mut v = pip();
        v["properties"]["ipConfiguration"] = json!({"id": "/x/nic-1"});
        assert!(problem(v).contains("associated with /x/nic-1"));
    }
}
