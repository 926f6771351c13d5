//! What observation found: the cloud's reservations and record sets, and what only the
//! journal knows (handed-over IPs, served IPs).

use super::Value;
use bootstrap_cloud::{Placement, RecordKey, RecordSet, Reservation, ReservationKey, ZoneRef};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// What the runner found in the cloud before planning.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Observed {
    /// Reservations carrying our ownership tag.
    pub reservations: Vec<Reservation>,
    /// Current record sets (None = absent) for the records we care about; none at all when
    /// the step planned needs no record ([`reads_records`]).
    pub records: Vec<ObservedRecord>,
    /// Subnet -> zone/network, where the cloud reports it.
    pub placements: BTreeMap<String, Placement>,
    /// Reservations released to their load balancer (AWS ENIs freed right before the Service
    /// claims their IP). The cloud no longer shows them as ours; the journal remembers them.
    #[serde(default)]
    pub handed_over: Vec<Reservation>,
    /// Reservations the user made (UPI), found by the seed's names or `--reservations`: used
    /// like ours, never released, changed or tagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<Reservation>,
    /// Progressive DNS: only these reserved IPs may join the records (their load balancer
    /// serves them). None: all at once, as the seed does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<BTreeSet<IpAddr>>,
    /// AWS `publicIpv4Pool`: the pool and its free addresses (read by `plan` online only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_pool: Option<bootstrap_cloud::AddressPool>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObservedRecord {
    pub zone: ZoneRef,
    pub key: RecordKey,
    pub current: Option<RecordSet>,
}

impl Observed {
    pub(super) fn record(&self, zone: &ZoneRef, key: &RecordKey) -> Option<&RecordSet> {
        self.records
            .iter()
            .find(|r| &r.zone == zone && &r.key == key)
            .and_then(|r| r.current.as_ref())
    }

    /// The IP of a reservation, if it exists. With duplicates, the one the planner keeps.
    pub fn resolve(&self, value: &Value) -> Option<IpAddr> {
        match value {
            Value::Ip(ip) => Some(*ip),
            Value::Reserved(key) => self.kept().get(key).map(|r| r.ip),
        }
    }

    /// One reservation per key: what the cloud holds of ours, else the user's, else what was
    /// handed over.
    pub fn kept(&self) -> BTreeMap<ReservationKey, Reservation> {
        let mut kept: BTreeMap<ReservationKey, Reservation> = self
            .handed_over
            .iter()
            .chain(&self.adopted)
            .map(|r| (r.key.clone(), r.clone()))
            .collect();
        for (key, r) in kept_reservations(&self.reservations, &self.in_dns()) {
            kept.insert(key, r.clone());
        }
        kept
    }

    /// The wanted reservations of `spec` that nothing kept stands for, by key.
    pub fn missing_reservations(&self, spec: &crate::assets::ClusterSpec) -> Vec<String> {
        let kept = self.kept();
        super::desired::reservations(spec)
            .into_iter()
            .filter(|w| !kept.contains_key(&w.key))
            .map(|w| w.key.to_string())
            .collect()
    }

    /// The wanted reservations a load balancer claims that do not exist: what the Services
    /// need. The bootstrap host's second address is in no Service (`render`, `apply` do
    /// without it).
    pub fn missing_claimed_reservations(&self, spec: &crate::assets::ClusterSpec) -> Vec<String> {
        let kept = self.kept();
        super::desired::reservations(spec)
            .into_iter()
            .filter(|w| w.key.scope.load_balanced() && !kept.contains_key(&w.key))
            .map(|w| w.key.to_string())
            .collect()
    }

    pub(super) fn in_dns(&self) -> BTreeSet<IpAddr> {
        self.records
            .iter()
            .filter_map(|r| r.current.as_ref())
            .flat_map(|c| c.values.iter().copied())
            .collect()
    }
}

/// Whether observing for `step` must read the record sets, given the owned `reservations`
/// already read. The steps that change no record (`reserve`, `hand-over`) read them only to
/// choose among duplicates of one key (the one in DNS is kept, [`kept_reservations`]); without
/// duplicates their plan is the same either way, and DNS, the scarcest API of a shared
/// account (Route53: 5 requests per second), is left alone.
pub fn reads_records(step: super::Step, reservations: &[Reservation]) -> bool {
    use super::Step;
    let dns_free = matches!(step, Step::Reserve | Step::HandOver);
    !dns_free || has_duplicates(reservations)
}

/// More than one owned reservation for one key (a lost answer to a reservation retried).
fn has_duplicates(reservations: &[Reservation]) -> bool {
    let mut keys = BTreeSet::new();
    reservations.iter().any(|r| !keys.insert(&r.key))
}

/// Among owned reservations, the one to keep per key: the one already in DNS, else the lowest
/// id. More than one per key only happens after a lost idempotency token (e.g. an EIP
/// allocated twice by a retry); the extras are released.
pub(super) fn kept_reservations<'a>(
    observed: &'a [Reservation],
    in_dns: &BTreeSet<IpAddr>,
) -> BTreeMap<ReservationKey, &'a Reservation> {
    let mut kept: BTreeMap<ReservationKey, &Reservation> = BTreeMap::new();
    for r in observed {
        match kept.get(&r.key) {
            Some(k) if in_dns.contains(&k.ip) && !in_dns.contains(&r.ip) => {}
            Some(k) if in_dns.contains(&r.ip) == in_dns.contains(&k.ip) && k.id <= r.id => {}
            _ => {
                kept.insert(r.key.clone(), r);
            }
        }
    }
    kept
}
