#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::journal::Journal;
use async_trait::async_trait;
use bootstrap_cloud::{AddressProvider, ErrorKind, Placement, Reservation, ReserveRequest};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// An address provider whose first public reservation comes back twice (a lost answer the
/// SDK retried), and whose `observe` fails transiently on the given call (1-based).
#[derive(Default)]
struct Flaky {
    held: Mutex<Vec<Reservation>>,
    observe_calls: Mutex<u32>,
    fail_observe_at: u32,
    next_id: Mutex<u32>,
    released: Mutex<Vec<String>>,
}

impl Flaky {
    fn create(&self, request: &ReserveRequest) -> Reservation {
        let mut id = self.next_id.lock().unwrap();
        *id += 1;
        let r = Reservation {
            key: request.key.clone(),
            id: format!("r-{:03}", *id),
            name: request.name.clone(),
            ip: IpAddr::from([10, 0, 9, u8::try_from(*id).unwrap()]),
        };
        self.held.lock().unwrap().push(r.clone());
        r
    }
}

/// The provider the runner owns; the test keeps another handle to look inside.
struct Shared(Arc<Flaky>);

#[async_trait]
impl AddressProvider for Shared {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        let this = &self.0;
        let mut calls = this.observe_calls.lock().unwrap();
        *calls += 1;
        if *calls == this.fail_observe_at {
            return Err(CloudError::new(
                ErrorKind::Transient,
                "DescribeAddresses",
                "InternalError: injected",
            ));
        }
        let mut held = this.held.lock().unwrap().clone();
        held.sort();
        Ok(held)
    }

    async fn placements(&self, ids: &[String]) -> Result<BTreeMap<String, Placement>, CloudError> {
        Ok(ids
            .iter()
            .map(|id| {
                let placement = Placement {
                    zone: "us-east-1a".into(),
                    network: "vpc-1".into(),
                };
                (id.clone(), placement)
            })
            .collect())
    }

    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        let this = &self.0;
        let first_public = request.key.scope == bootstrap_cloud::Scope::Public
            && *this.next_id.lock().unwrap() == 0;
        if first_public {
            this.create(request); // the lost answer's allocation
        }
        Ok(this.create(request))
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

#[tokio::test(flavor = "multi_thread")]
async fn a_transient_error_while_verifying_a_reserve_is_retried_and_the_duplicate_released() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/aws");
    let spec = crate::assets::load(&fixture).unwrap();
    let flaky = Arc::new(Flaky {
        // 1: the first pass; 2: the verifying pass, which fails.
        fail_observe_at: 2,
        ..Default::default()
    });
    let providers = Providers {
        addresses: Box::new(Shared(flaky.clone())),
        // Reserving writes no record: DNS where nothing exists and nothing may be written.
        dns: Box::new(crate::providers::NoCloud),
        preflight: None,
    };
    let (result, journal, _state) =
        run_fresh(&spec, &providers, Duration::from_secs(60), Step::Reserve).await;
    let report = result.unwrap();

    let held = flaky.held.lock().unwrap().clone();
    let keys: BTreeSet<String> = held.iter().map(|r| r.key.to_string()).collect();
    assert_eq!(held.len(), 6, "3 EIPs + 3 ENIs, no duplicate: {held:?}");
    assert_eq!(keys.len(), 6);
    assert_eq!(
        flaky.released.lock().unwrap().len(),
        1,
        "the duplicate was released after the failed verification was retried"
    );
    assert_eq!(report.mutations, 7, "6 reservations and 1 release");
    assert!(*flaky.observe_calls.lock().unwrap() >= 4);
    let step = &journal.state.steps["reserve"];
    assert_eq!(
        step.retries,
        BTreeMap::from([("server-or-network".to_string(), 1)]),
        "the retry is counted by cause in the journal, for `status`"
    );
}

#[test]
fn retry_causes_are_told_apart() {
    let cause = |kind, message: &str, after: Option<Duration>| {
        retry_cause(&anyhow::Error::new(
            CloudError::new(kind, "Op", message).with_retry_after(after),
        ))
    };
    assert_eq!(
        cause(
            ErrorKind::Transient,
            "RequestLimitExceeded: slow down",
            None
        ),
        "throttled"
    );
    assert_eq!(cause(ErrorKind::Transient, "HTTP 429", None), "throttled");
    assert_eq!(
        cause(ErrorKind::Transient, "busy", Some(Duration::from_secs(1))),
        "throttled"
    );
    assert_eq!(
        cause(ErrorKind::Transient, "InternalError: 500", None),
        "server-or-network"
    );
    assert_eq!(
        cause(ErrorKind::Conflict, "PriorRequestNotComplete", None),
        "conflict"
    );
    assert_eq!(
        retry_cause(&anyhow::anyhow!("timed out")),
        "server-or-network"
    );
}

/// An address provider holding fixed reservations whose `observe` is throttled the first
/// `throttled` times.
struct Throttled {
    held: Vec<Reservation>,
    throttled: Mutex<u32>,
}

#[async_trait]
impl AddressProvider for Throttled {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        let mut left = self.throttled.lock().unwrap();
        if *left > 0 {
            *left -= 1;
            return Err(CloudError::new(
                ErrorKind::Transient,
                "DescribeAddresses",
                "Throttling: Rate exceeded",
            ));
        }
        Ok(self.held.clone())
    }

    async fn reserve(&self, _: &ReserveRequest) -> Result<Reservation, CloudError> {
        unreachable!("nothing to reserve")
    }

    async fn release(&self, _: &Reservation) -> Result<(), CloudError> {
        unreachable!("nothing to release")
    }
}

/// A DNS whose zones are in memory; every `write_zone` is one atomic change, recorded.
#[derive(Default)]
struct Zones {
    sets: Mutex<BTreeMap<(String, bootstrap_cloud::RecordKey), bootstrap_cloud::RecordSet>>,
    /// (zone id, the records of one write), in order.
    writes: Mutex<Vec<(String, Vec<String>)>>,
}

struct SharedZones(Arc<Zones>);

#[async_trait]
impl bootstrap_cloud::DnsProvider for SharedZones {
    async fn find_zone(
        &self,
        zone: &bootstrap_cloud::ZoneRef,
    ) -> Result<bootstrap_cloud::Zone, CloudError> {
        Ok(zone.with_id(format!("{}-{}", zone.domain, zone.private)))
    }

    async fn read(
        &self,
        zone: &bootstrap_cloud::Zone,
        key: &bootstrap_cloud::RecordKey,
    ) -> Result<Option<bootstrap_cloud::RecordSet>, CloudError> {
        let sets = self.0.sets.lock().unwrap();
        Ok(sets.get(&(zone.id.clone(), key.clone())).cloned())
    }

    async fn write(&self, write: &bootstrap_cloud::RecordWrite<'_>) -> Result<(), CloudError> {
        self.write_zone(std::slice::from_ref(write)).await
    }

    async fn write_zone(
        &self,
        writes: &[bootstrap_cloud::RecordWrite<'_>],
    ) -> Result<(), CloudError> {
        let zone = writes[0].zone.id.clone();
        assert!(
            writes.iter().all(|w| w.zone.id == zone),
            "one zone per write"
        );
        self.0.writes.lock().unwrap().push((
            zone.clone(),
            writes.iter().map(|w| w.key.to_string()).collect(),
        ));
        let mut sets = self.0.sets.lock().unwrap();
        for w in writes {
            let set = bootstrap_cloud::RecordSet {
                ttl: w.ttl,
                values: w.values.clone(),
                version: None,
            };
            sets.insert((zone.clone(), w.key.clone()), set);
        }
        Ok(())
    }
}

fn aws_spec() -> crate::assets::ClusterSpec {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/aws");
    let mut spec = crate::assets::load(&fixture).unwrap();
    spec.bootstrap_ip = Some("10.0.1.10".parse().unwrap());
    spec
}

/// Reservations as the fixture's reserve makes them (3 EIPs, 3 ENIs).
fn reserved(spec: &crate::assets::ClusterSpec) -> Vec<Reservation> {
    let observed = crate::plan::Observed::default();
    crate::plan::Plan::calculate(spec, &observed, &[Step::Reserve], 0)
        .changes
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            crate::plan::Change::ReserveAddress { request } => Some(Reservation {
                key: request.key.clone(),
                id: format!("r-{i}"),
                name: request.name.clone(),
                ip: IpAddr::from([10, 0, 9, u8::try_from(i + 1).unwrap()]),
            }),
            _ => None,
        })
        .collect()
}

/// Issue 27: the seed's record changes go in one write per zone, journaled as one mutation
/// each that lists its records (old code: one write and one mutation per record set).
#[tokio::test(flavor = "multi_thread")]
async fn the_seed_writes_each_zone_once_and_journals_each_write_as_one_mutation() {
    let spec = aws_spec();
    let zones = Arc::new(Zones::default());
    let providers = throttled_providers(&spec, 0, zones.clone());
    let (result, mut journal, _state) =
        run_fresh(&spec, &providers, Duration::from_secs(60), Step::SeedDns).await;
    let report = result.unwrap();
    assert_eq!(report.plan.changes.len(), 3, "planned per record set");
    let mut writes = zones.writes.lock().unwrap().clone();
    writes.sort();
    assert_eq!(
        writes,
        vec![
            (
                "example.com-false".to_string(),
                vec!["api.mycluster.example.com A".to_string()]
            ),
            (
                "mycluster.example.com-true".to_string(),
                vec![
                    "api-int.mycluster.example.com A".to_string(),
                    "api.mycluster.example.com A".to_string()
                ]
            ),
        ],
        "one write per zone"
    );
    assert_eq!(report.mutations, 2);
    let mutations = &journal.state.mutations;
    assert_eq!(mutations.len(), 2, "{mutations:#?}");
    for m in mutations {
        assert_eq!(m.state, crate::journal::MutationState::Done);
        let crate::plan::Change::EditZone { records, .. } = &m.change else {
            panic!("not a zone's batch: {m:#?}");
        };
        assert!(!records.is_empty());
    }
    let private = mutations
        .iter()
        .find(|m| matches!(&m.change, crate::plan::Change::EditZone { zone, .. } if zone.private))
        .unwrap();
    let result = private.result.as_ref().unwrap();
    assert_eq!(
        result["values"]["api-int.mycluster.example.com A"]
            .as_array()
            .unwrap()
            .len(),
        4,
        "the bootstrap IP and the 3 private IPs: {result}"
    );
    // `status` still knows our values per record set.
    assert_eq!(journal.state.records.len(), 3);

    // Done: the rerun writes nothing.
    let again = run_step(
        &spec,
        &providers,
        &mut journal,
        Duration::from_secs(60),
        Step::SeedDns,
    )
    .await
    .unwrap();
    assert_eq!(again.mutations, 0);
    assert_eq!(zones.writes.lock().unwrap().len(), 2);
}

/// A step the service keeps throttling is retried past the five retries of other transient
/// failures, with backoff, until it passes (or its deadline ends it): under a per-account rate
/// limit shared by a fleet, slowing down is the fix, giving up is not.
#[tokio::test(start_paused = true)]
async fn a_throttled_step_is_retried_past_the_retry_count_within_its_deadline() {
    let spec = aws_spec();
    let providers = throttled_providers(&spec, 9, Arc::default());
    let started = tokio::time::Instant::now();
    let (result, journal, _state) =
        run_fresh(&spec, &providers, Duration::from_secs(600), Step::SeedDns).await;
    result.unwrap();
    let waited = started.elapsed();
    assert_eq!(
        journal.state.steps["seed-dns"].retries,
        BTreeMap::from([("throttled".to_string(), 9)])
    );
    // 9 backoffs from 1 s doubling to 30 s, jittered down to half at least.
    assert!(
        waited >= Duration::from_secs(60) && waited <= Duration::from_secs(200),
        "{waited:?}"
    );

    // With a deadline, the same throttling ends the step (resumably) instead.
    let providers = throttled_providers(&spec, u32::MAX, Arc::default());
    let (result, _journal, _state) =
        run_fresh(&spec, &providers, Duration::from_secs(120), Step::SeedDns).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("did not finish within"), "{err:#}");
}

/// Runs `step` as [`run_step`] does on a fresh state dir: its result, the journal after, and
/// the dir (kept while the journal is read).
async fn run_fresh(
    spec: &crate::assets::ClusterSpec,
    providers: &Providers,
    step_timeout: Duration,
    step: Step,
) -> (Result<StepReport>, Journal, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let mut journal = Journal::open(state.path()).unwrap();
    let result = run_step(spec, providers, &mut journal, step_timeout, step).await;
    (result, journal, state)
}

/// Runs `step` as the daemon does, with the step deadline `step_timeout`.
async fn run_step(
    spec: &crate::assets::ClusterSpec,
    providers: &Providers,
    journal: &mut Journal,
    step_timeout: Duration,
    step: Step,
) -> Result<StepReport> {
    Runner {
        spec,
        journal,
        providers,
        kube: None,
        step_timeout,
    }
    .run(step)
    .await
}

/// Providers over `spec`'s reservations whose `observe` is throttled `throttled` times, and
/// the DNS `zones`.
fn throttled_providers(
    spec: &crate::assets::ClusterSpec,
    throttled: u32,
    zones: Arc<Zones>,
) -> Providers {
    Providers {
        addresses: Box::new(Throttled {
            held: reserved(spec),
            throttled: Mutex::new(throttled),
        }),
        dns: Box::new(SharedZones(zones)),
        preflight: None,
    }
}
