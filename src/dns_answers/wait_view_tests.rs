//! The zone view, read errors and the wait's pace (a child of the wait's tests, for their
//! scripted view).

use super::*;
use bootstrap_cloud::{RecordSet, RecordWrite};

/// A zone provider that holds record sets and counts its zone look-ups (writes refused: the
/// wait reads only).
struct Zones {
    sets: Vec<(&'static str, Vec<&'static str>)>,
    lookups: StdMutex<Vec<String>>,
}

#[async_trait]
impl DnsProvider for Zones {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        self.lookups.lock().unwrap().push(zone.domain.clone());
        Ok(zone.with_id(format!("zone-{}", zone.domain)))
    }

    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        assert_eq!(zone.id, format!("zone-{}", zone.reference.domain));
        Ok(self
            .sets
            .iter()
            .find(|(name, _)| *name == key.name)
            .map(|(_, values)| RecordSet {
                ttl: 30,
                values: values.iter().map(|v| ip(v)).collect(),
                version: None,
            }))
    }

    async fn write(&self, _: &RecordWrite<'_>) -> Result<(), CloudError> {
        panic!("the wait never writes")
    }
}

#[tokio::test]
async fn the_zone_view_finds_each_zone_once_and_answers_what_its_record_sets_hold() {
    let provider = Zones {
        sets: vec![
            ("api-int.c.example.com", vec![PRIVATE, BOOTSTRAP]),
            ("api.c.example.com", vec![PUBLIC]),
        ],
        lookups: StdMutex::new(Vec::new()),
    };
    let view = view(DnsCheck::Zone, &provider);
    let zone = ZoneRef {
        domain: "c.example.com".into(),
        private: true,
        ..ZoneRef::default()
    };
    let key = |name: &str| RecordKey {
        name: name.into(),
        rtype: RecordType::A,
    };
    assert_eq!(
        view.answers(&zone, &key("api-int.c.example.com"))
            .await
            .unwrap(),
        BTreeSet::from([ip(PRIVATE), ip(BOOTSTRAP)])
    );
    assert_eq!(
        view.answers(&zone, &key("api.c.example.com"))
            .await
            .unwrap(),
        BTreeSet::from([ip(PUBLIC)])
    );
    assert!(
        view.answers(&zone, &key("nothing.c.example.com"))
            .await
            .unwrap()
            .is_empty(),
        "a record set that does not exist answers nothing"
    );
    assert_eq!(*provider.lookups.lock().unwrap(), ["c.example.com"]);
}

/// Fails the first read of each record set with `kind`, then answers as `then` does.
struct FailingFirst {
    kind: ErrorKind,
    failed: StdMutex<usize>,
    then: Scripted,
}

#[async_trait]
impl Answers for FailingFirst {
    async fn answers(
        &self,
        zone: &ZoneRef,
        key: &RecordKey,
    ) -> Result<BTreeSet<IpAddr>, CloudError> {
        {
            let mut failed = self.failed.lock().unwrap();
            if *failed < self.then.records {
                *failed += 1;
                return Err(CloudError::new(self.kind, "ReadRecordSet", "no luck"));
            }
        }
        self.then.answers(zone, key).await
    }
}

async fn wait_failing_first(kind: ErrorKind) -> (Result<()>, usize) {
    let spec = spec();
    let recorded = reserved(&spec);
    let view = FailingFirst {
        kind,
        failed: StdMutex::new(0),
        then: Scripted::for_records(&spec, &recorded, vec![all_of_stage_1()]),
    };
    let result = until_answered(
        &spec,
        &recorded,
        &view,
        "seed-dns",
        Duration::from_secs(3600),
        NO_PAUSE,
        |_| {},
    )
    .await;
    (result, view.then.rounds())
}

#[tokio::test]
async fn a_fatal_read_ends_the_wait_at_once_and_a_transient_one_is_read_again() {
    let (result, rounds) = wait_failing_first(ErrorKind::Fatal).await;
    let error = format!("{:#}", result.unwrap_err());
    assert!(
        error.starts_with("waiting for your DNS (seed-dns): ") && error.contains("no luck"),
        "{error}"
    );
    assert_eq!(rounds, 0, "nothing read after the fatal error");
    let (result, rounds) = wait_failing_first(ErrorKind::Transient).await;
    result.unwrap();
    assert_eq!(rounds, 1, "read again, and then they answered");
}

/// Records when each read round starts.
struct Timed {
    inner: Scripted,
    rounds: StdMutex<Vec<tokio::time::Instant>>,
}

#[async_trait]
impl Answers for Timed {
    async fn answers(
        &self,
        zone: &ZoneRef,
        key: &RecordKey,
    ) -> Result<BTreeSet<IpAddr>, CloudError> {
        if (*self.inner.reads.lock().unwrap()).is_multiple_of(self.inner.records) {
            self.rounds
                .lock()
                .unwrap()
                .push(tokio::time::Instant::now());
        }
        self.inner.answers(zone, key).await
    }
}

/// The same answers: the delay doubles up to `max`; answers that changed: back to `first`.
/// On tokio's paused clock: the gaps are exact, whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn the_delay_doubles_while_nothing_changes_and_starts_short_again_on_a_change() {
    let spec = spec();
    let recorded = reserved(&spec);
    let nothing: Dns = vec![];
    let wrong: Dns = vec![("api-int", vec![BOOTSTRAP, "10.0.1.99"])];
    let view = Timed {
        inner: Scripted::for_records(
            &spec,
            &recorded,
            vec![
                nothing.clone(),
                nothing.clone(),
                nothing.clone(),
                nothing.clone(),
                nothing,
                wrong,
                all_of_stage_1(),
            ],
        ),
        rounds: StdMutex::new(Vec::new()),
    };
    let pace = Pace {
        first: Duration::from_millis(100),
        max: Duration::from_millis(800),
    };
    until_answered(
        &spec,
        &recorded,
        &view,
        "seed-dns",
        Duration::from_secs(3600),
        pace,
        |_| {},
    )
    .await
    .unwrap();
    let at = view.rounds.lock().unwrap().clone();
    let gaps: Vec<Duration> = at.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.len(), 6, "{gaps:?}");
    // 100, 200, 400, 800 (max), 800, then the change: 100 again.
    let expected: Vec<Duration> = [100, 200, 400, 800, 800, 100]
        .into_iter()
        .map(Duration::from_millis)
        .collect();
    assert_eq!(gaps, expected);
}
