//! Observation: the cloud as it is, plus what only the journal knows.

use crate::assets::ClusterSpec;
use crate::journal::JournalState;
use crate::plan::{Observed, ObservedRecord, Step, reads_records, records_of_interest};
use crate::providers::Providers;
use anyhow::Result;
use bootstrap_cloud::{RecordKey, Zone, ZoneRef};
use std::collections::BTreeMap;

/// The cloud as observed, plus the provider zones found on the way.
pub struct Observation {
    pub observed: Observed,
    pub(super) zones: BTreeMap<ZoneRef, Zone>,
}

/// Reads the cloud (owned reservations, subnet placements, the record sets we care about) and
/// adds what only the journal knows: the IPs already handed over to their load balancers and
/// (progressive DNS) which reserved IPs their load balancers serve. The one place the two meet.
pub async fn observe(
    spec: &ClusterSpec,
    providers: &Providers,
    recorded: &JournalState,
) -> Result<Observation> {
    observe_inner(spec, providers, recorded, None).await
}

/// As [`observe`], for planning `step` alone: the record sets only when the step needs them
/// ([`reads_records`]), so that `reserve` (run by every agent of an account at once) costs the
/// DNS API nothing.
pub async fn observe_for(
    spec: &ClusterSpec,
    providers: &Providers,
    recorded: &JournalState,
    step: Step,
) -> Result<Observation> {
    observe_inner(spec, providers, recorded, Some(step)).await
}

async fn observe_inner(
    spec: &ClusterSpec,
    providers: &Providers,
    recorded: &JournalState,
    step: Option<Step>,
) -> Result<Observation> {
    let p = providers;
    let reservations = p.addresses.observe().await?;
    let found = p
        .addresses
        .find_user_made(&crate::adopt::queries(spec, &recorded.adopted))
        .await?;
    let adopted = crate::adopt::settle(spec, found, &recorded.adopted)?;
    let placements = p.addresses.placements(&subnets(spec)).await?;
    let interest = if step.is_none_or(|step| reads_records(step, &reservations)) {
        records_of_interest(spec)
    } else {
        Vec::new()
    };
    let mut zones = BTreeMap::new();
    let mut keys_of: BTreeMap<ZoneRef, Vec<RecordKey>> = BTreeMap::new();
    for (zone_ref, key) in &interest {
        if !zones.contains_key(zone_ref) {
            let zone = p.dns.find_zone(zone_ref).await?;
            zones.insert(zone_ref.clone(), zone);
        }
        keys_of
            .entry(zone_ref.clone())
            .or_default()
            .push(key.clone());
    }
    // A zone's record sets in one read: the step's first compare-and-swap starts from it.
    let mut read = BTreeMap::new();
    for (zone_ref, keys) in &keys_of {
        read.insert(zone_ref, p.dns.read_zone(&zones[zone_ref], keys).await?);
    }
    let records = interest
        .iter()
        .map(|(zone_ref, key)| ObservedRecord {
            zone: zone_ref.clone(),
            key: key.clone(),
            current: read
                .get(zone_ref)
                .and_then(|sets| sets.get(key))
                .cloned()
                .flatten(),
        })
        .collect();
    let mut observed = Observed {
        reservations,
        records,
        placements,
        handed_over: recorded.handed_over.clone(),
        adopted,
        serving: recorded.serving.clone(),
        // `plan` reads the pool; a step's allocation checks it itself, right before.
        address_pool: None,
    };
    crate::adopt::remember(&mut observed, &recorded.adopted);
    Ok(Observation { observed, zones })
}

fn subnets(spec: &ClusterSpec) -> Vec<String> {
    match &spec.platform {
        crate::assets::Platform::Aws(aws) => {
            let ids: std::collections::BTreeSet<&String> =
                aws.public_subnets().chain(aws.private_subnets()).collect();
            ids.into_iter().cloned().collect()
        }
        _ => Vec::new(),
    }
}
