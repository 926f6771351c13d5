//! What observation reads of DNS per step: `reserve` and `hand-over` nothing, unless they
//! must choose among duplicates of one reservation (the one in DNS is kept); every other
//! step, and every command that observes the whole cloud, the record sets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::observe::observe_for;
use super::*;
use crate::assets::ClusterSpec;
use crate::journal::JournalState;
use async_trait::async_trait;
use bootstrap_cloud::{
    AddressProvider, DnsProvider, RecordKey, RecordSet, RecordWrite, Reservation, ReserveRequest,
    Zone, ZoneRef,
};
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The cloud: what it holds of ours, what was released, and how often DNS was asked.
#[derive(Default)]
struct World {
    held: Mutex<Vec<Reservation>>,
    released: Mutex<Vec<String>>,
    dns_calls: Mutex<u32>,
    /// The IPs every record set holds.
    in_dns: BTreeSet<IpAddr>,
}

struct Addresses(Arc<World>);
struct Dns(Arc<World>);

#[async_trait]
impl AddressProvider for Addresses {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        Ok(self.0.held.lock().unwrap().clone())
    }

    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        Err(CloudError::fatal(
            "reserve",
            format!("unexpected: {}", request.key),
        ))
    }

    async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        self.0
            .held
            .lock()
            .unwrap()
            .retain(|r| r.id != reservation.id);
        self.0.released.lock().unwrap().push(reservation.id.clone());
        Ok(())
    }
}

#[async_trait]
impl DnsProvider for Dns {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        *self.0.dns_calls.lock().unwrap() += 1;
        Ok(zone.with_id(zone.domain.clone()))
    }

    async fn read(&self, _: &Zone, _: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        *self.0.dns_calls.lock().unwrap() += 1;
        Ok(Some(RecordSet {
            ttl: 60,
            values: self.0.in_dns.clone(),
            version: None,
        }))
    }

    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        Err(CloudError::fatal(
            "dns write",
            format!("unexpected: {}", write.key.name),
        ))
    }
}

fn spec() -> ClusterSpec {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/aws");
    crate::assets::load(&fixture).unwrap()
}

/// Every wanted reservation of `spec`, held, ids `r-10`, `r-11`, ...
fn all_held(spec: &ClusterSpec) -> Vec<Reservation> {
    crate::plan::wanted_reservations(spec)
        .into_iter()
        .enumerate()
        .map(|(i, w)| Reservation {
            key: w.key,
            id: format!("r-{}", 10 + i),
            name: w.name,
            ip: IpAddr::from([10, 0, 9, u8::try_from(10 + i).unwrap()]),
        })
        .collect()
}

fn providers(world: &Arc<World>) -> Providers {
    Providers {
        addresses: Box::new(Addresses(world.clone())),
        dns: Box::new(Dns(world.clone())),
        preflight: None,
    }
}

#[tokio::test]
async fn reserve_and_hand_over_observe_no_dns_and_the_other_steps_do() {
    let spec = spec();
    let world = Arc::new(World::default());
    *world.held.lock().unwrap() = all_held(&spec);
    let providers = providers(&world);
    let recorded = JournalState::default();
    for step in Step::ALL.into_iter().filter(|s| !s.is_kubernetes()) {
        *world.dns_calls.lock().unwrap() = 0;
        let seen = observe_for(&spec, &providers, &recorded, step)
            .await
            .unwrap();
        let calls = *world.dns_calls.lock().unwrap();
        if matches!(step, Step::Reserve | Step::HandOver) {
            assert_eq!(calls, 0, "{}", step.name());
            assert!(seen.observed.records.is_empty(), "{}", step.name());
            assert!(seen.zones.is_empty(), "{}", step.name());
        } else {
            assert!(calls > 0, "{}", step.name());
            assert!(!seen.observed.records.is_empty(), "{}", step.name());
        }
        assert_eq!(seen.observed.reservations.len(), 6, "{}", step.name());
    }
    *world.dns_calls.lock().unwrap() = 0;
    let whole = observe(&spec, &providers, &recorded).await.unwrap();
    assert!(*world.dns_calls.lock().unwrap() > 0);
    assert_eq!(
        whole.observed.records.len(),
        crate::plan::records_of_interest(&spec).len()
    );
}

/// A duplicate with a lower id than the reservation DNS holds: `reserve` reads DNS to find
/// out, keeps the one in DNS and releases the duplicate (without DNS it would keep the lowest
/// id and release the address the records serve).
#[tokio::test(flavor = "multi_thread")]
async fn reserve_with_a_duplicate_reads_dns_and_keeps_the_one_in_it() {
    let spec = spec();
    let mut held = all_held(&spec);
    let original = held[0].clone();
    let duplicate = Reservation {
        id: "r-00".into(),
        ip: IpAddr::from([10, 0, 9, 99]),
        ..original.clone()
    };
    held.push(duplicate.clone());
    let world = Arc::new(World {
        held: Mutex::new(held),
        in_dns: BTreeSet::from([original.ip]),
        ..World::default()
    });
    let providers = providers(&world);
    let state = tempfile::tempdir().unwrap();
    let mut journal = crate::journal::Journal::open(state.path()).unwrap();
    let report = Runner {
        spec: &spec,
        journal: &mut journal,
        providers: &providers,
        kube: None,
        step_timeout: Duration::from_secs(60),
    }
    .run(Step::Reserve)
    .await
    .unwrap();
    assert_eq!(*world.released.lock().unwrap(), vec![duplicate.id.clone()]);
    assert_eq!(report.mutations, 1);
    assert!(*world.dns_calls.lock().unwrap() > 0);
}
