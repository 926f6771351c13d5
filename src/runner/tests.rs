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
    let state = tempfile::tempdir().unwrap();
    let mut journal = Journal::open(state.path()).unwrap();
    let mut runner = Runner {
        spec: &spec,
        journal: &mut journal,
        providers: &providers,
        kube: None,
        step_timeout: Duration::from_secs(60),
    };
    let report = runner.run(Step::Reserve).await.unwrap();

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
