//! What the cluster wants, derived from the ClusterSpec alone: the reservations and the
//! record sets of stage 1 (see the README picture).

use super::Value;
use crate::assets::{ClusterSpec, Platform};
use bootstrap_cloud::{IpFamily, RecordKey, ReservationKey, ReserveRequest, Scope, ZoneRef};

/// Settled with the spec (the assets own the default; `--dns-ttl` overrides it).
pub use crate::assets::DEFAULT_TTL;

/// A wanted reservation with its resource name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedReservation {
    pub key: ReservationKey,
    pub name: String,
}

/// A record set and the values we want in it (other writers' values are left alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedRecord {
    pub zone: ZoneRef,
    pub key: RecordKey,
    pub values: Vec<Value>,
}

/// The reservations each cloud needs. AWS: one EIP per public subnet and one ENI-held private
/// IP per private subnet (IPv4 only: EIPs and NLB private addresses are IPv4). Azure: one
/// public address per family of the machine network, a private IPv4, and a private IPv6 when
/// the machine network has IPv6. GCP: IPv4 only, because its Service load balancers take one
/// IPv4 each (the plan notes say so).
pub fn reservations(spec: &ClusterSpec) -> Vec<WantedReservation> {
    let public = spec.publish.public_api();
    let mut keys = Vec::new();
    match &spec.platform {
        Platform::Aws(aws) => {
            if public {
                keys.extend(
                    aws.public_subnets()
                        .map(|s| key(Scope::Public, IpFamily::Ipv4, Some(s))),
                );
            }
            keys.extend(
                aws.private_subnets()
                    .map(|s| key(Scope::Private, IpFamily::Ipv4, Some(s))),
            );
        }
        Platform::Azure(_) => {
            for family in &spec.ip_families {
                if public {
                    keys.push(key(Scope::Public, *family, None));
                }
            }
            // The internal Standard LB takes a private IPv4 from the compute subnet, and a
            // private IPv6 too when the machine network is dual stack (the subnet then has an
            // IPv6 prefix next to the IPv4 one). Always the IPv4: Azure has no IPv6-only NICs.
            keys.push(key(Scope::Private, IpFamily::Ipv4, None));
            if spec.ip_families.contains(&IpFamily::Ipv6) {
                keys.push(key(Scope::Private, IpFamily::Ipv6, None));
            }
        }
        Platform::Gcp(_) => {
            if public {
                keys.push(key(Scope::Public, IpFamily::Ipv4, None));
            }
            keys.push(key(Scope::Private, IpFamily::Ipv4, None));
        }
        Platform::None => {}
    }
    keys.extend(second_bootstrap_address(spec));
    keys.into_iter()
        .map(|key| WantedReservation {
            name: reservation_name(&spec.infra_id, &key),
            key,
        })
        .collect()
}

/// GCP and Azure: the bootstrap host's second address, of the bootstrap IP's family, unless
/// it is off (AWS, where the masters run no apiserver-watcher; `--bootstrap-second-address
/// off`; stage 3 done) or every address must be the user's (`--adopt-only`).
fn second_bootstrap_address(spec: &ClusterSpec) -> Option<ReservationKey> {
    let cloud = matches!(spec.platform, Platform::Gcp(_) | Platform::Azure(_));
    let ip = spec.bootstrap_ip?;
    (cloud && !spec.second_bootstrap_address.is_off() && !spec.adoption.adopt_only)
        .then(|| key(Scope::Bootstrap, IpFamily::of(&ip), None))
}

/// The bootstrap IP of the host the cloud gives a second address, when the plan wants one
/// (the providers read the host only then: no call, and no permission, otherwise).
pub fn second_address_host(spec: &ClusterSpec) -> Option<std::net::IpAddr> {
    second_bootstrap_address(spec).and(spec.bootstrap_ip)
}

fn key(scope: Scope, family: IpFamily, placement: Option<&String>) -> ReservationKey {
    ReservationKey {
        scope,
        family,
        placement: placement.cloned(),
    }
}

/// `<infra-id>-rsvd-<scope>-<family>[-<subnet>]`.
pub fn reservation_name(infra_id: &str, key: &ReservationKey) -> String {
    match &key.placement {
        Some(p) => format!("{infra_id}-rsvd-{}-{p}", key.purpose()),
        None => format!("{infra_id}-rsvd-{}", key.purpose()),
    }
}

/// The idempotency token of one reservation: stable across retries and restarts of the same
/// generation, different after `teardown --all` (a new generation), at most 64 characters
/// (EC2 ClientToken's limit), deterministic from infra-id + key.
pub fn idempotency_token(infra_id: &str, key: &ReservationKey, generation: u32) -> String {
    let scope = match key.scope {
        Scope::Public => "pub",
        Scope::Private => "prv",
        Scope::Bootstrap => "bst",
    };
    let family = match key.family {
        IpFamily::Ipv4 => 4,
        IpFamily::Ipv6 => 6,
    };
    let token = match &key.placement {
        Some(p) => format!("{infra_id}-{scope}{family}-{p}-g{generation}"),
        None => format!("{infra_id}-{scope}{family}-g{generation}"),
    };
    if token.len() <= 64 {
        token
    } else {
        // Infra ids longer than the installer's 27 characters: keep it bounded and stable.
        format!("{:016x}-g{generation}", fnv1a(token.as_bytes()))
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

pub fn request(spec: &ClusterSpec, wanted: &WantedReservation, generation: u32) -> ReserveRequest {
    ReserveRequest {
        key: wanted.key.clone(),
        name: wanted.name.clone(),
        token: idempotency_token(&spec.infra_id, &wanted.key, generation),
    }
}

/// Step 1 records: private `api` and `api-int` = the bootstrap host's addresses (its IP, and on
/// GCP and Azure its second address) + reserved private IPs; public
/// `api` = reserved public IPs (public API only). Platform none writes no DNS.
///
/// Azure Stack Hub has no private DNS: `api-int` goes into the base-domain zone, and so does
/// the private `api` unless the public `api` is there (the installer's Stack records:
/// openshift/installer data/data/azurestack/cluster/dns/dns.tf: `api` = the public IP when External,
/// else the internal one; `api-int` = the internal one).
pub fn records(spec: &ClusterSpec) -> Vec<WantedRecord> {
    if matches!(spec.platform, Platform::None) {
        return Vec::new();
    }
    let cluster_domain = spec.cluster_domain();
    let single_zone = matches!(&spec.platform, Platform::Azure(a) if !a.cloud.has_private_dns());
    let public_zone = spec.zones.public.clone();
    let private_zone = if single_zone {
        public_zone.clone()
    } else {
        spec.zones.private.clone()
    };
    let wanted = reservations(spec);
    let reserved = |scope: Scope, family: IpFamily| -> Vec<Value> {
        wanted
            .iter()
            .filter(|w| w.key.scope == scope && w.key.family == family)
            .map(|w| Value::Reserved(w.key.clone()))
            .collect()
    };
    let mut out = Vec::new();
    for family in [IpFamily::Ipv4, IpFamily::Ipv6] {
        let public_values = reserved(Scope::Public, family);
        let bootstrap_ip: Vec<Value> = spec
            .bootstrap_ip
            .filter(|ip| IpFamily::of(ip) == family)
            .map(Value::Ip)
            .into_iter()
            .collect();
        let second_address = reserved(Scope::Bootstrap, family);
        let reserved_private = reserved(Scope::Private, family);
        if !reserved_private.is_empty() {
            for host in ["api", "api-int"] {
                if single_zone && host == "api" && !public_values.is_empty() {
                    continue;
                }
                // The bootstrap host's addresses first: its IP, then its second address.
                let with_bootstrap_ip =
                    !(host == "api-int" && api_int_without_bootstrap_ip(spec, &second_address));
                let values = bootstrap_ip
                    .iter()
                    .filter(|_| with_bootstrap_ip)
                    .chain(&second_address)
                    .chain(&reserved_private)
                    .cloned()
                    .collect();
                out.push(WantedRecord {
                    zone: private_zone.clone(),
                    key: RecordKey {
                        name: format!("{host}.{cluster_domain}"),
                        rtype: family.record_type(),
                    },
                    values,
                });
            }
        }
        if !public_values.is_empty() {
            out.push(WantedRecord {
                zone: public_zone.clone(),
                key: RecordKey {
                    name: format!("api.{cluster_domain}"),
                    rtype: family.record_type(),
                },
                values: public_values,
            });
        }
    }
    out
}

/// Azure, when the bootstrap host has a second address: `api-int` holds that address (and the
/// private VIP once it serves) but not the bootstrap IP. The masters' apiserver-watcher (4.8+)
/// takes every api-int address as a VIP, and openshift-azure-routes then sends each of them,
/// on every port, to the master itself: the bootstrap IP in api-int would be taken from the
/// masters while it is the one address that serves (docs/clouds.md, A1). The second address
/// is the bootstrap host's alone, so losing it to the masters' redirect loses nothing they
/// need. GCP keeps the bootstrap IP: its figures are no better without it.
fn api_int_without_bootstrap_ip(spec: &ClusterSpec, second_address: &[Value]) -> bool {
    matches!(spec.platform, Platform::Azure(_)) && !second_address.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `api` and `api-int`'s values per cloud and family (the private zone's records).
    fn private_values(spec: &ClusterSpec, host: &str, family: IpFamily) -> Vec<Value> {
        let name = format!("{host}.{}", spec.cluster_domain());
        let found: Vec<WantedRecord> = records(spec)
            .into_iter()
            .filter(|r| r.key.name == name && r.key.rtype == family.record_type())
            .filter(|r| {
                r.values
                    .iter()
                    .any(|v| !matches!(v, Value::Reserved(k) if k.scope == Scope::Public))
            })
            .collect();
        assert_eq!(found.len(), 1, "{host} {family:?}: {found:?}");
        found[0].values.clone()
    }

    fn with_second(name: &str, second: crate::assets::SecondAddress) -> ClusterSpec {
        let mut spec = crate::fixtures::spec(name);
        spec.bootstrap_ip = Some("10.0.0.5".parse().unwrap());
        spec.second_bootstrap_address = second;
        spec
    }

    #[test]
    fn azure_api_int_holds_the_second_address_without_the_bootstrap_ip_gcp_keeps_both() {
        use crate::assets::SecondAddress;
        let bootstrap = Value::Ip("10.0.0.5".parse().unwrap());
        let second = Value::Reserved(key(Scope::Bootstrap, IpFamily::Ipv4, None));
        let vip = Value::Reserved(key(Scope::Private, IpFamily::Ipv4, None));
        let both = vec![bootstrap.clone(), second.clone(), vip.clone()];
        for second_mode in [SecondAddress::Host, SecondAddress::Cloud] {
            for name in ["azure", "azure-dualstack", "azure-stack"] {
                let spec = with_second(name, second_mode);
                let api_int = private_values(&spec, "api-int", IpFamily::Ipv4);
                assert_eq!(api_int, [second.clone(), vip.clone()], "{name}");
            }
            let azure = with_second("azure", second_mode);
            assert_eq!(
                private_values(&azure, "api", IpFamily::Ipv4),
                both,
                "azure api"
            );
            let gcp = with_second("gcp", second_mode);
            for host in ["api", "api-int"] {
                assert_eq!(
                    private_values(&gcp, host, IpFamily::Ipv4),
                    both,
                    "gcp {host}"
                );
            }
        }
        // IPv6: no bootstrap address of that family, the private VIP alone.
        let dual = with_second("azure-dualstack", SecondAddress::Host);
        let vip6 = Value::Reserved(key(Scope::Private, IpFamily::Ipv6, None));
        for host in ["api", "api-int"] {
            assert_eq!(
                private_values(&dual, host, IpFamily::Ipv6),
                std::slice::from_ref(&vip6),
                "{host}"
            );
        }
        // Without a second address api-int keeps the bootstrap IP: the one address serving.
        let mut off = with_second("azure", SecondAddress::Off);
        for host in ["api", "api-int"] {
            assert_eq!(
                private_values(&off, host, IpFamily::Ipv4),
                [bootstrap.clone(), vip.clone()],
                "off: {host}"
            );
        }
        off.second_bootstrap_address = SecondAddress::Host;
        off.adoption.adopt_only = true;
        let adopt_only = private_values(&off, "api-int", IpFamily::Ipv4);
        assert_eq!(
            adopt_only.first(),
            Some(&bootstrap),
            "adopt-only: {adopt_only:?}"
        );
    }

    #[test]
    fn tokens_fit_ec2_client_token_limit_for_the_longest_valid_inputs() {
        let infra = "a".repeat(32);
        let key = ReservationKey::parse("private-ipv4@subnet-0123456789abcdef0").unwrap();
        let token = idempotency_token(&infra, &key, 9999);
        assert!(token.len() <= 64, "{token}");
        assert!(token.is_ascii());
    }

    #[test]
    fn tokens_are_stable_and_distinct_per_subnet_and_generation() {
        let a = ReservationKey::parse("private-ipv4@subnet-0aaa").unwrap();
        let b = ReservationKey::parse("private-ipv4@subnet-0bbb").unwrap();
        let token = idempotency_token("c-1", &a, 1);
        assert_eq!(token, idempotency_token("c-1", &a, 1));
        for (other, changed) in [
            (idempotency_token("c-1", &b, 1), "subnet"),
            (idempotency_token("c-1", &a, 2), "generation"),
            (idempotency_token("c-2", &a, 1), "infra id"),
        ] {
            assert_ne!(token, other, "another {changed}, the same token");
        }
    }
}
