use super::*;
use crate::{ErrorKind, RecordType};
use std::collections::{BTreeSet, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A provider answering from scripts: each call takes the next scripted answer of its kind
/// (None: the default success), and counts itself.
#[derive(Default)]
struct Scripted {
    finds: AtomicUsize,
    reads: AtomicUsize,
    writes: AtomicUsize,
    find_answers: Mutex<VecDeque<CloudError>>,
    read_answers: Mutex<VecDeque<CloudError>>,
    write_answers: Mutex<VecDeque<CloudError>>,
}

impl Scripted {
    fn finding(answers: impl IntoIterator<Item = CloudError>) -> Self {
        let s = Self::default();
        s.find_answers.lock().unwrap().extend(answers);
        s
    }

    fn reading(answers: impl IntoIterator<Item = CloudError>) -> Self {
        let s = Self::default();
        s.read_answers.lock().unwrap().extend(answers);
        s
    }

    fn writing(answers: impl IntoIterator<Item = CloudError>) -> Self {
        let s = Self::default();
        s.write_answers.lock().unwrap().extend(answers);
        s
    }
}

/// The public zone of example.com, as `dns` finds it.
async fn public_zone(dns: &PatientDns<&Scripted>) -> Zone {
    dns.find_zone(&zone_ref("example.com", false))
        .await
        .unwrap()
}

/// A write of `values` to [`key`] in `zone`, from nothing.
fn write_of<'a>(
    zone: &'a Zone,
    key: &'a RecordKey,
    values: &'a BTreeSet<IpAddr>,
) -> RecordWrite<'a> {
    RecordWrite {
        zone,
        key,
        current: None,
        values,
        ttl: 30,
    }
}

fn next(answers: &Mutex<VecDeque<CloudError>>) -> Option<CloudError> {
    answers.lock().unwrap().pop_front()
}

#[async_trait]
impl DnsProvider for &Scripted {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        self.finds.fetch_add(1, Ordering::SeqCst);
        next(&self.find_answers).map_or_else(|| Ok(zone.with_id(format!("Z-{}", zone.domain))), Err)
    }

    async fn read(&self, _: &Zone, _: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        next(&self.read_answers).map_or(Ok(None), Err)
    }

    async fn write(&self, _: &RecordWrite<'_>) -> Result<(), CloudError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        next(&self.write_answers).map_or(Ok(()), Err)
    }
}

fn throttled() -> CloudError {
    CloudError::new(
        ErrorKind::Transient,
        "ListResourceRecordSets",
        "Throttling: Rate exceeded",
    )
}

fn zone_ref(domain: &str, private: bool) -> ZoneRef {
    ZoneRef {
        domain: domain.into(),
        private,
        ..ZoneRef::default()
    }
}

fn key() -> RecordKey {
    RecordKey {
        name: "api.c.example.com".into(),
        rtype: RecordType::A,
    }
}

#[tokio::test(start_paused = true)]
async fn a_zone_is_looked_up_once_per_reference() {
    let scripted = Scripted::default();
    let dns = PatientDns::new(&scripted);
    let public = zone_ref("example.com", false);
    let private = zone_ref("example.com", true);
    for _ in 0..3 {
        assert_eq!(dns.find_zone(&public).await.unwrap().id, "Z-example.com");
        dns.find_zone(&private).await.unwrap();
    }
    assert_eq!(scripted.finds.load(Ordering::SeqCst), 2, "one look-up each");
}

#[tokio::test(start_paused = true)]
async fn a_failed_look_up_is_not_remembered() {
    let scripted = Scripted::finding([CloudError::new(
        ErrorKind::NotFound,
        "ListHostedZonesByName",
        "no zone",
    )]);
    let dns = PatientDns::new(&scripted);
    let public = zone_ref("example.com", false);
    assert!(dns.find_zone(&public).await.is_err());
    assert!(dns.find_zone(&public).await.is_ok());
    assert_eq!(scripted.finds.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_throttled_read_waits_its_turn_and_succeeds() {
    let scripted = Scripted::reading([throttled(), throttled(), throttled()]);
    let dns = PatientDns::new(&scripted);
    let zone = public_zone(&dns).await;
    let started = Instant::now();
    assert_eq!(dns.read(&zone, &key()).await.unwrap(), None);
    assert_eq!(
        scripted.reads.load(Ordering::SeqCst),
        4,
        "three throttled, then read"
    );
    // Jittered backoff: half to all of 1 s, 2 s, 4 s.
    assert_waited(
        started,
        Duration::from_millis(3500)..=Duration::from_secs(7),
    );
}

/// The (paused) clock moved by an amount in `range` since `started`.
fn assert_waited(started: Instant, range: std::ops::RangeInclusive<Duration>) {
    let waited = started.elapsed();
    assert!(
        range.contains(&waited),
        "waited {waited:?}, not in {range:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_service_s_retry_after_is_what_a_throttled_read_waits() {
    let scripted = Scripted::reading([throttled().with_retry_after(Some(Duration::from_secs(12)))]);
    let dns = PatientDns::new(&scripted);
    let zone = public_zone(&dns).await;
    let started = Instant::now();
    dns.read(&zone, &key()).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(12));
}

#[tokio::test(start_paused = true)]
async fn patience_ends_with_the_throttling_error() {
    let scripted = Scripted::reading(std::iter::repeat_with(throttled).take(1000));
    let dns = PatientDns::with_patience(&scripted, Duration::from_secs(60));
    let zone = public_zone(&dns).await;
    let started = Instant::now();
    let err = dns.read(&zone, &key()).await.unwrap_err();
    assert!(err.is_throttled(), "{err}");
    assert!(
        started.elapsed() <= Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let asked = scripted.reads.load(Ordering::SeqCst);
    // At most 10 s apart, at least 0.5 s: more than eight asks in a minute, not hundreds.
    assert!((8..=120).contains(&asked), "{asked}");
}

#[tokio::test(start_paused = true)]
async fn other_failures_are_not_retried_here() {
    for error in [
        CloudError::new(ErrorKind::Transient, "ListResourceRecordSets", "HTTP 503"),
        CloudError::fatal("ListResourceRecordSets", "AccessDenied"),
        CloudError::new(ErrorKind::Fatal, "ListResourceRecordSets", "Throttling"),
    ] {
        let scripted = Scripted::reading([error.clone()]);
        let dns = PatientDns::new(&scripted);
        let zone = public_zone(&dns).await;
        assert_eq!(
            dns.read(&zone, &key()).await.unwrap_err().message,
            error.message
        );
        assert_eq!(scripted.reads.load(Ordering::SeqCst), 1, "{error}");
    }
}

#[tokio::test(start_paused = true)]
async fn writes_are_not_retried_here() {
    let scripted = Scripted::writing([throttled()]);
    let dns = PatientDns::new(&scripted);
    let zone = public_zone(&dns).await;
    let (key, values) = (key(), BTreeSet::new());
    let write = write_of(&zone, &key, &values);
    assert!(dns.write_zone(&[write]).await.unwrap_err().is_throttled());
    assert_eq!(scripted.writes.load(Ordering::SeqCst), 1);
}

/// An answer that says the zone is not what we took it for forgets it: the next step looks it
/// up again. A transient failure or a lost compare-and-swap keeps it.
#[tokio::test(start_paused = true)]
async fn a_refused_call_forgets_the_zone_a_transient_one_keeps_it() {
    let public = zone_ref("example.com", false);
    for (error, finds) in [
        (
            CloudError::fatal("ListResourceRecordSets", "NoSuchHostedZone"),
            2,
        ),
        (
            CloudError::new(ErrorKind::Transient, "ListResourceRecordSets", "HTTP 500"),
            1,
        ),
        (
            CloudError::new(ErrorKind::Conflict, "ChangeResourceRecordSets", "lost"),
            1,
        ),
    ] {
        let conflict = error.kind == ErrorKind::Conflict;
        let scripted = if conflict {
            Scripted::writing([error.clone()])
        } else {
            Scripted::reading([error.clone()])
        };
        let dns = PatientDns::new(&scripted);
        let zone = dns.find_zone(&public).await.unwrap();
        if conflict {
            let (key, values) = (key(), BTreeSet::new());
            assert!(dns.write(&write_of(&zone, &key, &values)).await.is_err());
        } else {
            assert!(dns.read(&zone, &key()).await.is_err());
        }
        dns.find_zone(&public).await.unwrap();
        assert_eq!(scripted.finds.load(Ordering::SeqCst), finds, "{error}");
    }
}

/// A wait that ends exactly when patience does is still taken (the same rule as a poll's).
#[tokio::test(start_paused = true)]
async fn a_wait_that_ends_exactly_at_patience_is_still_taken() {
    let scripted = Scripted::reading([throttled().with_retry_after(Some(Duration::from_secs(12)))]);
    let dns = PatientDns::with_patience(&scripted, Duration::from_secs(12));
    let zone = public_zone(&dns).await;
    assert_eq!(dns.read(&zone, &key()).await.unwrap(), None);
    assert_eq!(scripted.reads.load(Ordering::SeqCst), 2);
}

/// A throttled compare-and-swap write asks again sooner than a read (its read ages): half to
/// all of 50 ms, 100 ms, 200 ms, then 250 ms at most.
#[tokio::test(start_paused = true)]
async fn a_throttled_write_asks_again_sooner_than_a_read() {
    let answers = Mutex::new((0..4).map(|_| throttled()).collect::<VecDeque<_>>());
    let started = Instant::now();
    let asked = AtomicUsize::new(0);
    patiently(
        "ChangeResourceRecordSets",
        PATIENCE,
        WRITE_BACKOFF,
        || async {
            asked.fetch_add(1, Ordering::SeqCst);
            next(&answers).map_or(Ok(()), Err)
        },
    )
    .await
    .unwrap();
    assert_eq!(
        asked.load(Ordering::SeqCst),
        5,
        "four throttled, then written"
    );
    assert_waited(
        started,
        Duration::from_millis(300)..=Duration::from_millis(600),
    );
}

/// A zone's record sets read together are as patient as one read (a throttled read waits its
/// turn), and a refused zone read forgets the zone as a refused read does.
#[tokio::test(start_paused = true)]
async fn a_zone_read_waits_its_turn_and_a_refused_one_forgets_the_zone() {
    let other = RecordKey {
        name: "api-int.c.example.com".into(),
        rtype: RecordType::A,
    };
    let scripted = Scripted::reading([throttled(), throttled()]);
    let dns = PatientDns::new(&scripted);
    let zone = public_zone(&dns).await;
    let started = Instant::now();
    let read = dns.read_zone(&zone, &[key(), other.clone()]).await.unwrap();
    assert_eq!(read, BTreeMap::from([(key(), None), (other.clone(), None)]));
    assert!(started.elapsed() >= Duration::from_millis(500), "it waited");
    assert_eq!(
        scripted.finds.load(Ordering::SeqCst),
        1,
        "a throttle keeps the zone"
    );

    let refused = CloudError::fatal("ListResourceRecordSets", "NoSuchHostedZone");
    let scripted = Scripted::reading([refused]);
    let dns = PatientDns::new(&scripted);
    let zone = public_zone(&dns).await;
    assert!(dns.read_zone(&zone, &[key(), other]).await.is_err());
    public_zone(&dns).await;
    assert_eq!(scripted.finds.load(Ordering::SeqCst), 2, "looked up again");
}
