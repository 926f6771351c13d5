//! Addresses the user reserved (UPI): regional addresses named as the seed says
//! (`<infra-id>-rsvd-public-ipv4`, `<infra-id>-rsvd-private-ipv4`) or as `--reservations`
//! names them, checked against what the Services need of them. Read only, never labelled.

use crate::{Reservation, Scope, UserMade, UserReservationQuery};
use google_cloud_compute_v1::model::{Address, address};
use std::net::IpAddr;

/// The user's address `a` for `query`: fits, or what keeps it from serving.
/// `region` is the cluster's; `subnetwork` the compute subnetwork's URL path
/// (`projects/<p>/regions/<r>/subnetworks/<s>`), where internal forwarding rules live.
pub(super) fn check(
    a: &Address,
    query: &UserReservationQuery,
    region: &str,
    subnetwork: &str,
) -> UserMade {
    let name = a.name.clone().unwrap_or_default();
    let misfit = |problem: String| UserMade::Misfit {
        resource: format!("address {name} (region {region})"),
        problem,
    };
    if let Some(r) = a.region.as_deref()
        && !r.ends_with(&format!("/regions/{region}"))
    {
        return misfit(format!("is in {r}; the cluster is in region {region}"));
    }
    if a.ip_version
        .as_ref()
        .is_some_and(|v| *v != address::IpVersion::Ipv4)
    {
        return misfit(format!(
            "is {:?}; the load balancers take an IPv4 address",
            a.ip_version
        ));
    }
    let kind = a
        .address_type
        .clone()
        .unwrap_or(address::AddressType::External);
    match query.key.scope {
        Scope::Bootstrap => {
            return misfit(format!(
                "cannot serve {}: the bootstrap host's second address is an alias IP the agent gives it",
                query.key
            ));
        }
        Scope::Public => {
            if kind != address::AddressType::External {
                return misfit(format!(
                    "is {}; the public API needs an EXTERNAL address",
                    kind.name().unwrap_or("of another type")
                ));
            }
            // The external Service carries no `cloud.google.com/network-tier`, so the cloud
            // provider wants a PREMIUM address and refuses another tier
            // (openshift/cloud-provider-gcp `providers/gce/gce_loadbalancer_external.go`,
            // `verifyUserRequestedIP`: "belongs to the Standard network tier; expected Premium").
            if let Some(tier) = a
                .network_tier
                .as_ref()
                .filter(|t| **t != address::NetworkTier::Premium)
            {
                return misfit(format!(
                    "has network tier {}; the external API Service needs a PREMIUM address (the cloud provider refuses another tier: SyncLoadBalancerFailed); reserve one with --network-tier=PREMIUM",
                    tier.name().unwrap_or("other than PREMIUM")
                ));
            }
        }
        Scope::Private => {
            if kind != address::AddressType::Internal {
                return misfit(format!(
                    "is {}; the internal API needs an INTERNAL address",
                    kind.name().unwrap_or("of another type")
                ));
            }
            if a.purpose != Some(address::Purpose::SharedLoadbalancerVip) {
                return misfit(format!(
                    "has purpose {}; the internal API and machine-config-server Services share it, which needs purpose SHARED_LOADBALANCER_VIP",
                    a.purpose
                        .as_ref()
                        .and_then(|p| p.name())
                        .unwrap_or("GCE_ENDPOINT (the default)")
                ));
            }
            let subnet = a.subnetwork.as_deref().unwrap_or("");
            if !subnet.ends_with(subnetwork) {
                return misfit(format!(
                    "is in subnetwork {subnet}; it must be in the compute subnetwork {subnetwork}, where the cloud provider creates internal forwarding rules"
                ));
            }
        }
    }
    match a.address.as_deref().and_then(|s| s.parse::<IpAddr>().ok()) {
        Some(ip) => UserMade::Fits(Reservation {
            key: query.key.clone(),
            id: name.clone(),
            name,
            ip,
        }),
        None => misfit("has no IP address yet (status RESERVING?)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReservationKey, UserLookup};

    const SUBNET: &str = "projects/p/regions/us-central1/subnetworks/c-1-worker-subnet";

    fn query(purpose: &str) -> UserReservationQuery {
        UserReservationQuery {
            key: ReservationKey::parse(purpose).unwrap(),
            lookup: UserLookup::Name(format!("c-1-rsvd-{purpose}")),
            adopted_before: None,
        }
    }

    fn internal() -> Address {
        Address::new()
            .set_name("c-1-rsvd-private-ipv4")
            .set_address("10.0.128.9")
            .set_region("https://www.googleapis.com/compute/v1/projects/p/regions/us-central1")
            .set_address_type(address::AddressType::Internal)
            .set_purpose(address::Purpose::SharedLoadbalancerVip)
            .set_subnetwork(format!("https://www.googleapis.com/compute/v1/{SUBNET}"))
    }

    /// The user's EXTERNAL address `name`, no network tier said.
    fn external(name: &str) -> Address {
        Address::new()
            .set_name(name)
            .set_address("203.0.113.5")
            .set_address_type(address::AddressType::External)
    }

    fn problem(made: UserMade) -> String {
        match made {
            UserMade::Misfit { resource, problem } => format!("{resource}: {problem}"),
            UserMade::Fits(r) => panic!("fits: {r:?}"),
        }
    }

    #[test]
    fn an_internal_shared_vip_in_the_compute_subnetwork_fits() {
        let made = check(&internal(), &query("private-ipv4"), "us-central1", SUBNET);
        assert!(matches!(made, UserMade::Fits(r) if r.ip.to_string() == "10.0.128.9"));
    }

    #[test]
    fn an_external_address_fits_the_public_api_in_the_premium_tier_or_unsaid() {
        let external = external("c-1-rsvd-public-ipv4");
        for found in [
            external.clone(),
            external.set_network_tier(address::NetworkTier::Premium),
        ] {
            let made = check(&found, &query("public-ipv4"), "us-central1", SUBNET);
            assert!(matches!(made, UserMade::Fits(_)), "{made:?}");
        }
    }

    #[test]
    fn wrong_type_purpose_subnetwork_or_region_is_named() {
        let external = external("c-1-rsvd-private-ipv4");
        let moved = "projects/p/regions/us-central1/subnetworks/c-1-master-subnet";
        // (case, the address found, the query's purpose, the region, what the problem names)
        let cases = [
            (
                "wrong purpose",
                internal().set_purpose(address::Purpose::GceEndpoint),
                "private-ipv4",
                "us-central1",
                &["c-1-rsvd-private-ipv4", "SHARED_LOADBALANCER_VIP"][..],
            ),
            (
                "wrong subnetwork",
                internal().set_subnetwork(moved),
                "private-ipv4",
                "us-central1",
                &["c-1-master-subnet", "compute subnetwork"],
            ),
            (
                "wrong region",
                internal(),
                "private-ipv4",
                "europe-west1",
                &["region europe-west1"],
            ),
            (
                "internal for a public query",
                internal(),
                "public-ipv4",
                "us-central1",
                &["INTERNAL", "EXTERNAL"],
            ),
            (
                "external for a private query",
                external.clone(),
                "private-ipv4",
                "us-central1",
                &["needs an INTERNAL address"],
            ),
            (
                "a STANDARD-tier address for the public API",
                external.set_network_tier(address::NetworkTier::Standard),
                "public-ipv4",
                "us-central1",
                &["c-1-rsvd-private-ipv4", "network tier STANDARD", "PREMIUM"],
            ),
        ];
        for (case, found, purpose, region, named) in cases {
            let p = problem(check(&found, &query(purpose), region, SUBNET));
            for part in named {
                assert!(p.contains(part), "{case}: {part:?} not in {p}");
            }
        }
    }
}
