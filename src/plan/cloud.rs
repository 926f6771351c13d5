//! The cloud's stages, one planner each: reserve, seed DNS, hand over, remove the bootstrap
//! IP, tear down; and what DNS the user must create when it is theirs.

use super::observed::kept_reservations;
use super::{Change, Observed, UserDns, UserRecord, Value, desired};
use crate::assets::ClusterSpec;
use bootstrap_cloud::{RecordKey, ReservationKey, ZoneRef};
use std::collections::BTreeSet;
use std::net::IpAddr;

/// What the user must create when DNS is theirs; None when the agent writes it.
pub(super) fn user_dns(spec: &ClusterSpec, observed: &Observed) -> Option<UserDns> {
    let because = spec.user_managed_dns()?;
    Some(UserDns {
        because: because.to_string(),
        records: records_to_hold(spec, observed),
        bootstrap_ip: spec.bootstrap_ip,
    })
}

/// Every record set `api` / `api-int` must hold while the bootstrap host serves, with every
/// value (the bootstrap IP and the reserved IPs, as IPs once `observed` knows them): what the
/// user creates with user-managed DNS and what the agent seeds otherwise. The one code path of
/// `plan`, `dns seed`, `status` and `dns records`.
pub fn records_to_hold(spec: &ClusterSpec, observed: &Observed) -> Vec<UserRecord> {
    desired::records(spec)
        .into_iter()
        .map(|w| UserRecord {
            zone: w.zone,
            record: w.key,
            values: w
                .values
                .into_iter()
                .map(|v| match observed.resolve(&v) {
                    Some(ip) => Value::Ip(ip),
                    None => v,
                })
                .collect(),
            ttl: spec.record_ttl,
        })
        .collect()
}

/// Whether the agent writes (and so reads) cloud DNS at all. The one check of the
/// user-managed mode: with it false, no zone is looked up and no record planned.
pub(super) fn cloud_dns(spec: &ClusterSpec) -> bool {
    spec.user_managed_dns().is_none()
}

pub(super) fn reserve(spec: &ClusterSpec, observed: &Observed, generation: u32) -> Vec<Change> {
    let wanted = desired::reservations(spec);
    let kept = kept_reservations(&observed.reservations, &observed.in_dns());
    // Handed over, or the user's: never reserved again.
    let handed_over: BTreeSet<&ReservationKey> = observed
        .handed_over
        .iter()
        .chain(&observed.adopted)
        .map(|r| &r.key)
        .collect();
    let mut changes: Vec<Change> = wanted
        .iter()
        .filter(|_| !spec.adoption.adopt_only)
        .filter(|w| !kept.contains_key(&w.key) && !handed_over.contains(&w.key))
        .map(|w| Change::ReserveAddress {
            request: desired::request(spec, w, generation),
        })
        .collect();
    for r in &observed.reservations {
        if kept.get(&r.key).is_some_and(|k| k.id != r.id) {
            changes.push(Change::ReleaseAddress {
                reservation: r.clone(),
                reason: format!("duplicate of {}", kept[&r.key].id),
            });
        }
    }
    changes
}

/// Seeds the records: the bootstrap IP and the reserved IPs. Progressive DNS (`serving` known)
/// holds back a reserved IP until its load balancer serves it; the same stage, run again as
/// IPs start to serve, adds each then (one compare-and-swap per record).
pub(super) fn seed_dns(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    if !cloud_dns(spec) {
        return Vec::new();
    }
    // The bootstrap host serves its second address from the start: it never waits.
    let may_join = |v: &Value| match (v, &observed.serving) {
        (Value::Reserved(key), Some(serving)) if key.scope.load_balanced() => {
            observed.resolve(v).is_some_and(|ip| serving.contains(&ip))
        }
        _ => true,
    };
    desired::records(spec)
        .into_iter()
        .filter_map(|w| {
            let current = observed.record(&w.zone, &w.key);
            let missing: Vec<Value> = w
                .values
                .into_iter()
                .filter(|v| may_join(v))
                .filter(|v| match (observed.resolve(v), current) {
                    (Some(ip), Some(set)) => !set.values.contains(&ip),
                    _ => true,
                })
                .collect();
            (!missing.is_empty()).then_some(Change::AddRecordValues {
                zone: w.zone,
                record: w.key,
                values: missing,
                ttl: spec.record_ttl,
            })
        })
        .collect()
}

/// Only AWS holds private IPs in placeholders (ENIs) that must be freed for the NLB.
pub(super) fn hand_over(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    if !matches!(spec.platform, crate::assets::Platform::Aws(_)) {
        return Vec::new();
    }
    observed
        .reservations
        .iter()
        .filter(|r| r.key.scope == bootstrap_cloud::Scope::Private)
        .map(|r| Change::HandOverAddress {
            reservation: r.clone(),
        })
        .collect()
}

/// Removes `ours` from every observed record but what `keep` says that record keeps.
fn remove_values(
    spec: &ClusterSpec,
    observed: &Observed,
    ours: &BTreeSet<IpAddr>,
    keep: impl Fn(&super::ObservedRecord) -> BTreeSet<IpAddr>,
) -> Vec<Change> {
    if !cloud_dns(spec) {
        return Vec::new();
    }
    observed
        .records
        .iter()
        .filter_map(|r| {
            let current = r.current.as_ref()?;
            let kept = keep(r);
            let values: Vec<Value> = current
                .values
                .intersection(ours)
                .filter(|ip| !kept.contains(ip))
                .copied()
                .map(Value::Ip)
                .collect();
            (!values.is_empty()).then(|| Change::RemoveRecordValues {
                zone: r.zone.clone(),
                record: r.key.clone(),
                values,
            })
        })
        .collect()
}

/// Stage 3: the bootstrap host's addresses leave DNS, then its second address is released
/// (the load balancers serve alone now).
pub(super) fn remove_bootstrap(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    let second: Vec<&bootstrap_cloud::Reservation> = observed
        .reservations
        .iter()
        .filter(|r| r.key.scope == bootstrap_cloud::Scope::Bootstrap)
        .collect();
    let ours: BTreeSet<IpAddr> = spec
        .bootstrap_ip
        .into_iter()
        .chain(second.iter().map(|r| r.ip))
        .collect();
    let mut changes = remove_values(spec, observed, &ours, |_| BTreeSet::new());
    changes.extend(second.into_iter().map(|r| Change::ReleaseAddress {
        reservation: r.clone(),
        reason: "the bootstrap host left DNS".into(),
    }));
    changes
}

pub(super) fn teardown_all(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    let ours: BTreeSet<IpAddr> = spec
        .bootstrap_ip
        .into_iter()
        .chain(observed.reservations.iter().map(|r| r.ip))
        .chain(observed.handed_over.iter().map(|r| r.ip))
        // The user's addresses stay, but the values we wrote for them leave DNS.
        .chain(observed.adopted.iter().map(|r| r.ip))
        .collect();
    let mut changes = remove_values(spec, observed, &ours, |_| BTreeSet::new());
    changes.extend(
        observed
            .reservations
            .iter()
            .map(|r| Change::ReleaseAddress {
                reservation: r.clone(),
                reason: "teardown --all".into(),
            }),
    );
    changes
}

/// A reservation holding the bootstrap IP means one of the two is wrong: a cloud does not
/// hand out an address in use, so the bootstrap IP given is probably mistyped. DNS must not be
/// touched then: removing the bootstrap IP later would remove the load balancer's IP too.
pub fn bootstrap_ip_conflict(spec: &ClusterSpec, observed: &Observed) -> Option<String> {
    let ip = spec.bootstrap_ip?;
    observed.kept().values().find(|r| r.ip == ip).map(|r| {
        format!(
            "{ip} is the IP of our reservation {} ({}); the bootstrap host cannot have it",
            r.key, r.id
        )
    })
}

/// The records observation must read (none when DNS is the user's: no zone is looked up):
/// the wanted ones and, during a scope change (`publish --scope`), the ones the prior
/// publishing wanted too, so that what it published (the public `api`) is seen and withdrawn.
pub fn records_of_interest(spec: &ClusterSpec) -> Vec<(ZoneRef, RecordKey)> {
    if !cloud_dns(spec) {
        return Vec::new();
    }
    let mut out: Vec<(ZoneRef, RecordKey)> = desired::records(spec)
        .into_iter()
        .map(|w| (w.zone, w.key))
        .collect();
    if let Some(prior) = prior_spec(spec) {
        for w in desired::records(&prior) {
            let key = (w.zone, w.key);
            if !out.contains(&key) {
                out.push(key);
            }
        }
    }
    out
}

/// The spec as it was before the scope change under way (None: no scope change).
pub(super) fn prior_spec(spec: &ClusterSpec) -> Option<ClusterSpec> {
    let prior = spec.prior_publish.filter(|p| *p != spec.publish)?;
    let mut before = spec.clone();
    before.publish = prior;
    before.prior_publish = None;
    Some(before)
}

/// `publish --scope`, first of all when the API goes private: every value of ours (a
/// reservation's IP, ours or the user's) that a record holds but the publishing no longer
/// wants there leaves it. Clients stop getting the public address before anything that
/// serves it goes; values of other writers stay.
pub(super) fn withdraw(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    let ours: BTreeSet<IpAddr> = observed
        .reservations
        .iter()
        .chain(&observed.handed_over)
        .chain(&observed.adopted)
        .map(|r| r.ip)
        .collect();
    let wanted = desired::records(spec);
    remove_values(spec, observed, &ours, |r| {
        wanted
            .iter()
            .filter(|w| w.zone == r.zone && w.key == r.key)
            .flat_map(|w| w.values.iter().filter_map(|v| observed.resolve(v)))
            .collect()
    })
}

/// `publish --scope`, once no Service of ours claims them any more: release our
/// reservations the publishing no longer wants (the public IPs when the API goes private).
/// The user's (adopted) are never released: the notes say so.
pub(super) fn unpublish(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    unwanted(spec, &observed.reservations)
        .into_iter()
        .map(|r| Change::ReleaseAddress {
            reservation: r.clone(),
            reason: format!("the API is published {} now", spec.publish.api()),
        })
        .collect()
}

/// The user's reservations the publishing no longer wants: left as they are.
pub(super) fn unwanted_adopted<'a>(
    spec: &ClusterSpec,
    observed: &'a Observed,
) -> Vec<&'a bootstrap_cloud::Reservation> {
    unwanted(spec, &observed.adopted)
}

/// Of `reservations`, those whose key the publishing does not want.
fn unwanted<'a>(
    spec: &ClusterSpec,
    reservations: &'a [bootstrap_cloud::Reservation],
) -> Vec<&'a bootstrap_cloud::Reservation> {
    let wanted: BTreeSet<ReservationKey> = desired::reservations(spec)
        .into_iter()
        .map(|w| w.key)
        .collect();
    reservations
        .iter()
        .filter(|r| !wanted.contains(&r.key))
        .collect()
}
