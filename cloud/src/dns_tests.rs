use super::*;
use crate::{RecordType, ZoneRef};
use async_trait::async_trait;
use std::sync::Mutex;

/// An in-memory record set whose writes compare like Route53 (exact old set), with a rival
/// writer that sneaks in `rival_writes` changes between our read and our write.
struct RacyDns {
    set: Mutex<Option<RecordSet>>,
    rival_writes: Mutex<Vec<IpAddr>>,
    writes: Mutex<u32>,
    /// When each write came (tokio's clock, paused in tests).
    write_times: Mutex<Vec<tokio::time::Instant>>,
}

impl RacyDns {
    fn new(set: Option<RecordSet>, rival_writes: impl IntoIterator<Item = IpAddr>) -> Self {
        RacyDns {
            set: Mutex::new(set),
            rival_writes: Mutex::new(rival_writes.into_iter().collect()),
            writes: Mutex::new(0),
            write_times: Mutex::new(Vec::new()),
        }
    }
}

/// The edit both race tests make: add our 10.0.0.5 (TTL 60 if the set is created).
async fn add_ours(dns: &RacyDns) -> Result<Option<BTreeSet<IpAddr>>, CloudError> {
    let edit = DnsEdit {
        add: ips(&["10.0.0.5"]),
        ttl: 60,
        ..Default::default()
    };
    edit_record_values(dns, &zone(), &key(), &edit).await
}

#[async_trait]
impl DnsProvider for RacyDns {
    async fn find_zone(&self, _: &ZoneRef) -> Result<Zone, CloudError> {
        unreachable!()
    }
    async fn read(&self, _: &Zone, _: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        let current = self.set.lock().unwrap().clone();
        if let Some(ip) = self.rival_writes.lock().unwrap().pop() {
            let mut set = self.set.lock().unwrap();
            set.get_or_insert(RecordSet {
                ttl: 300,
                values: BTreeSet::new(),
                version: None,
            })
            .values
            .insert(ip);
        }
        Ok(current)
    }
    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        *self.writes.lock().unwrap() += 1;
        self.write_times
            .lock()
            .unwrap()
            .push(tokio::time::Instant::now());
        let mut set = self.set.lock().unwrap();
        if set.as_ref() != write.current {
            return Err(CloudError::new(
                ErrorKind::Conflict,
                "write",
                "values do not match",
            ));
        }
        *set = (!write.values.is_empty()).then(|| RecordSet {
            ttl: write.ttl,
            values: write.values.clone(),
            version: None,
        });
        Ok(())
    }
}

fn zone() -> Zone {
    Zone {
        reference: ZoneRef {
            domain: "d".into(),
            private: true,
            id: None,
            tags: Default::default(),
        },
        id: "z".into(),
    }
}

fn key() -> RecordKey {
    RecordKey {
        name: "api.d".into(),
        rtype: RecordType::A,
    }
}

#[tokio::test(start_paused = true)]
async fn lost_race_is_retried_and_keeps_the_rivals_values() {
    let held = RecordSet {
        ttl: 300,
        values: ips(&["192.0.2.1"]),
        version: None,
    };
    let dns = RacyDns::new(Some(held), ips(&["192.0.2.2", "192.0.2.3"]));
    add_ours(&dns).await.unwrap();
    let final_set = dns.set.lock().unwrap().clone().unwrap();
    assert_eq!(
        final_set.values,
        ips(&["10.0.0.5", "192.0.2.1", "192.0.2.2", "192.0.2.3"])
    );
    assert_eq!(final_set.ttl, 300, "an existing set keeps its TTL");
    assert_eq!(*dns.writes.lock().unwrap(), 3, "two lost races, one win");
}

#[tokio::test(start_paused = true)]
async fn a_writer_that_never_stops_racing_is_an_error_not_a_loop() {
    let dns = RacyDns::new(None, (0..50u8).map(|i| IpAddr::from([192, 0, 2, i])));
    let err = add_ours(&dns).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert_eq!(*dns.writes.lock().unwrap(), MAX_CONFLICT_RETRIES + 1);
    // Every retry waited: exponential with jitter, within [ceiling / 2, ceiling].
    let times = dns.write_times.lock().unwrap().clone();
    let (initial, max) = CONFLICT_BACKOFF;
    for (i, pair) in times.windows(2).enumerate() {
        let attempt = u32::try_from(i).unwrap() + 1;
        let ceiling = (initial * 2u32.pow(attempt - 1)).min(max);
        let waited = pair[1] - pair[0];
        assert!(
            waited >= ceiling / 2 && waited <= ceiling + Duration::from_millis(5),
            "retry {attempt} waited {waited:?}, expected up to {ceiling:?}"
        );
    }
}

/// A zone whose `write_zone` is one atomic change (Route53, Cloud DNS): every record set
/// of the batch must be exactly as read, else nothing is written. A rival writer adds
/// its value to a record set right after one of our reads of it.
#[derive(Default)]
struct AtomicZone {
    sets: Mutex<BTreeMap<RecordKey, RecordSet>>,
    /// (record, value) a rival adds after our next read of that record.
    rivals: Mutex<Vec<(RecordKey, IpAddr)>>,
    reads: Mutex<u32>,
    /// The records of each write_zone call, in order.
    batches: Mutex<Vec<Vec<String>>>,
}

impl AtomicZone {
    fn with(sets: &[(&str, &[&str])]) -> Self {
        let zone = AtomicZone::default();
        for (name, values) in sets {
            zone.sets.lock().unwrap().insert(named(name), set(values));
        }
        zone
    }

    fn values(&self, name: &str) -> Option<BTreeSet<IpAddr>> {
        self.sets
            .lock()
            .unwrap()
            .get(&named(name))
            .map(|s| s.values.clone())
    }
}

#[async_trait]
impl DnsProvider for AtomicZone {
    async fn find_zone(&self, _: &ZoneRef) -> Result<Zone, CloudError> {
        unreachable!()
    }
    async fn read(&self, _: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        *self.reads.lock().unwrap() += 1;
        let current = self.sets.lock().unwrap().get(key).cloned();
        let mut rivals = self.rivals.lock().unwrap();
        if let Some(i) = rivals.iter().position(|(k, _)| k == key) {
            let (_, ip) = rivals.remove(i);
            let mut sets = self.sets.lock().unwrap();
            sets.entry(key.clone())
                .or_insert_with(|| set(&[]))
                .values
                .insert(ip);
        }
        Ok(current)
    }
    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError> {
        self.write_zone(std::slice::from_ref(write)).await
    }
    async fn write_zone(&self, writes: &[RecordWrite<'_>]) -> Result<(), CloudError> {
        self.batches
            .lock()
            .unwrap()
            .push(writes.iter().map(|w| w.key.name.clone()).collect());
        let mut sets = self.sets.lock().unwrap();
        if writes.iter().any(|w| sets.get(w.key) != w.current) {
            return Err(CloudError::new(ErrorKind::Conflict, "batch", "changed"));
        }
        for w in writes {
            if w.values.is_empty() {
                sets.remove(w.key);
            } else {
                let new = RecordSet {
                    ttl: w.ttl,
                    values: w.values.clone(),
                    version: None,
                };
                sets.insert(w.key.clone(), new);
            }
        }
        Ok(())
    }
}

fn named(name: &str) -> RecordKey {
    RecordKey {
        name: name.into(),
        rtype: RecordType::A,
    }
}

fn adding(values: &[&str]) -> DnsEdit {
    DnsEdit {
        add: ips(values),
        ttl: 30,
        ..Default::default()
    }
}

fn removing(values: &[&str]) -> DnsEdit {
    DnsEdit {
        remove: ips(values),
        ..Default::default()
    }
}

fn edits(list: &[(&str, DnsEdit)]) -> ZoneEdit {
    list.iter()
        .map(|(name, edit)| (named(name), edit.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_record_sets_that_change_go_in_one_write_and_the_rest_in_none() {
    let dns = AtomicZone::with(&[("api", &["192.0.2.9"]), ("done", &["10.0.0.5"])]);
    let edits = edits(&[
        ("api", adding(&["10.0.0.5"])),
        ("api-int", adding(&["10.0.0.5"])),
        ("done", adding(&["10.0.0.5"])),
    ]);
    let written = edit_zone(&dns, &zone(), &edits, &BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(
        *dns.batches.lock().unwrap(),
        vec![vec!["api".to_string(), "api-int".to_string()]],
        "one write, holding only the sets that change"
    );
    assert_eq!(
        written,
        BTreeMap::from([
            (named("api"), ips(&["10.0.0.5", "192.0.2.9"])),
            (named("api-int"), ips(&["10.0.0.5"])),
        ])
    );
    assert_eq!(dns.values("api"), Some(ips(&["10.0.0.5", "192.0.2.9"])));
    assert_eq!(
        dns.sets.lock().unwrap()[&named("api")].ttl,
        60,
        "an existing set keeps its TTL"
    );
    assert_eq!(
        dns.sets.lock().unwrap()[&named("api-int")].ttl,
        30,
        "a new set gets the edit's TTL"
    );
    // Done: reads only, no write.
    let again = edit_zone(&dns, &zone(), &edits, &BTreeMap::new())
        .await
        .unwrap();
    assert!(again.is_empty());
    assert_eq!(dns.batches.lock().unwrap().len(), 1, "no second write");
}

#[tokio::test(start_paused = true)]
async fn a_lost_race_on_one_set_retries_the_whole_batch_after_rereading_all_of_it() {
    let dns = AtomicZone::with(&[
        ("api", &["10.0.0.9", "192.0.2.9"]),
        ("api-int", &["10.0.0.9"]),
    ]);
    dns.rivals
        .lock()
        .unwrap()
        .push((named("api-int"), "192.0.2.7".parse().unwrap()));
    let edits = edits(&[
        ("api", removing(&["10.0.0.9"])),
        ("api-int", removing(&["10.0.0.9"])),
    ]);
    edit_zone(&dns, &zone(), &edits, &BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(
        dns.batches.lock().unwrap().len(),
        2,
        "the first batch lost (nothing of it written), the second won"
    );
    assert_eq!(*dns.reads.lock().unwrap(), 4, "both sets read twice");
    assert_eq!(dns.values("api"), Some(ips(&["192.0.2.9"])));
    assert_eq!(
        dns.values("api-int"),
        Some(ips(&["192.0.2.7"])),
        "the rival's value is kept, ours gone"
    );
}

#[tokio::test(start_paused = true)]
async fn known_sets_spare_the_first_read_and_a_stale_one_costs_a_retry() {
    let dns = AtomicZone::with(&[("api", &["192.0.2.9"])]);
    let fresh = BTreeMap::from([(named("api"), Some(set(&["192.0.2.9"])))]);
    let one = edits(&[("api", adding(&["10.0.0.5"]))]);
    edit_zone(&dns, &zone(), &one, &fresh).await.unwrap();
    assert_eq!(
        *dns.reads.lock().unwrap(),
        0,
        "the observation was the read"
    );
    assert_eq!(dns.values("api"), Some(ips(&["10.0.0.5", "192.0.2.9"])));

    // Stale: the set holds more than the caller saw. The write loses, the retry reads.
    let stale = BTreeMap::from([(named("api"), Some(set(&["192.0.2.9"])))]);
    let two = edits(&[("api", adding(&["10.0.0.6"]))]);
    edit_zone(&dns, &zone(), &two, &stale).await.unwrap();
    assert_eq!(*dns.reads.lock().unwrap(), 1);
    assert_eq!(dns.batches.lock().unwrap().len(), 3);
    assert_eq!(
        dns.values("api"),
        Some(ips(&["10.0.0.5", "10.0.0.6", "192.0.2.9"])),
        "nothing lost to the stale observation"
    );
}

#[test]
fn of_writes_made_at_once_the_error_that_retrying_cannot_fix_is_reported() {
    let conflict = || Err(CloudError::new(ErrorKind::Conflict, "w", "changed"));
    let fatal = || Err(CloudError::fatal("w", "refused"));
    assert!(worst(vec![Ok(()), Ok(())]).is_ok());
    assert!(worst(Vec::new()).is_ok());
    assert_eq!(
        worst(vec![Ok(()), conflict()]).unwrap_err().kind,
        ErrorKind::Conflict
    );
    for order in [vec![conflict(), fatal()], vec![fatal(), conflict()]] {
        assert_eq!(worst(order).unwrap_err().kind, ErrorKind::Fatal);
    }
}

#[test]
fn a_cname_in_the_way_is_fatal_and_names_the_record_and_the_cname() {
    let err = cname_in_the_way("op", &zone().reference, &named("api.d"), "said so");
    assert_eq!(err.kind, ErrorKind::Fatal);
    assert!(
        err.message.contains("api.d A cannot be written")
            && err.message.contains("a CNAME record api.d exists")
            && err.message.contains("said so"),
        "{err}"
    );
}

/// A cloud's refusal is reported as the CNAME in the way of the write it names, and kept as
/// the cloud said it when no write is named.
#[test]
fn a_cname_refusal_names_its_write_or_stays_the_clouds_error() {
    let (zone, key, values) = (zone(), named("api.d"), BTreeSet::new());
    let write = RecordWrite {
        zone: &zone,
        key: &key,
        current: None,
        values: &values,
        ttl: 60,
    };
    let refused = || {
        CloudError::fatal(
            "ChangeResourceRecordSets",
            "conflicting RRSet of type CNAME",
        )
    };
    let named = cname_refusal(refused(), Some(&write));
    assert!(
        named.message.contains("a CNAME record api.d exists")
            && named.message.contains("conflicting RRSet of type CNAME"),
        "{named}"
    );
    assert_eq!(named.operation, "ChangeResourceRecordSets");
    let unnamed = cname_refusal(refused(), None);
    assert_eq!(unnamed.message, "conflicting RRSet of type CNAME");
}

#[tokio::test(start_paused = true)]
async fn a_zone_without_batches_writes_its_sets_at_once_and_reports_the_worst() {
    // RacyDns has no write_zone of its own: the default writes each set.
    let dns = RacyDns::new(None, []);
    let edits = ZoneEdit::from([(key(), adding(&["10.0.0.5"]))]);
    edit_zone(&dns, &zone(), &edits, &BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(*dns.writes.lock().unwrap(), 1);
}

fn ips(list: &[&str]) -> BTreeSet<IpAddr> {
    list.iter().map(|s| s.parse().unwrap()).collect()
}

fn set(list: &[&str]) -> RecordSet {
    RecordSet {
        ttl: 60,
        values: ips(list),
        version: None,
    }
}

#[test]
fn adding_keeps_other_writers_values() {
    let edit = DnsEdit {
        add: ips(&["10.0.0.5"]),
        ..Default::default()
    };
    let next = next_values(Some(&set(&["192.0.2.9"])), &edit).unwrap();
    assert_eq!(next, ips(&["10.0.0.5", "192.0.2.9"]));
}

#[test]
fn removing_touches_only_our_value() {
    let edit = DnsEdit {
        remove: ips(&["10.0.0.5"]),
        ..Default::default()
    };
    let next = next_values(Some(&set(&["10.0.0.5", "192.0.2.9"])), &edit).unwrap();
    assert_eq!(next, ips(&["192.0.2.9"]));
}

#[test]
fn no_change_means_no_write() {
    let edit = DnsEdit {
        add: ips(&["10.0.0.5"]),
        remove: ips(&["10.0.0.9"]),
        ttl: 60,
    };
    assert_eq!(next_values(Some(&set(&["10.0.0.5"])), &edit), None);
    let remove_absent = DnsEdit {
        remove: ips(&["10.0.0.5"]),
        ..Default::default()
    };
    assert_eq!(next_values(None, &remove_absent), None);
}

#[test]
fn a_value_that_is_not_an_ip_is_an_error_naming_the_record() {
    let key = RecordKey {
        name: "api.d".into(),
        rtype: RecordType::A,
    };
    assert_eq!(
        parse_values("read", &key, ["10.0.0.5", "192.0.2.9"]).unwrap(),
        ips(&["10.0.0.5", "192.0.2.9"])
    );
    let err = parse_values("read", &key, ["10.0.0.5", "lb.example.com"]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Fatal);
    assert!(
        err.message.contains("api.d A") && err.message.contains("lb.example.com"),
        "{err}"
    );
}

#[test]
fn removing_the_last_value_empties_the_set() {
    let edit = DnsEdit {
        remove: ips(&["10.0.0.5"]),
        ..Default::default()
    };
    assert_eq!(
        next_values(Some(&set(&["10.0.0.5"])), &edit),
        Some(ips(&[]))
    );
}

#[cfg(any(feature = "aws", feature = "gcp"))]
#[test]
fn only_one_matching_zone_is_found_none_is_not_found_and_two_are_the_users_choice() {
    let reference = zone().reference;
    let one = the_one_zone("list", &reference, &["z1"], String::new, |_, _| {
        String::new()
    });
    assert_eq!(one.unwrap(), reference.with_id("z1"));
    let none = the_one_zone(
        "list",
        &reference,
        &[] as &[&str],
        || "no zone".to_string(),
        |_, _| String::new(),
    )
    .unwrap_err();
    assert_eq!(
        (none.kind, none.message.as_str()),
        (ErrorKind::NotFound, "no zone")
    );
    let many = the_one_zone("list", &reference, &["z1", "z2"], String::new, |n, ids| {
        format!("{n} zones: {ids}")
    })
    .unwrap_err();
    assert_eq!(
        (many.kind, many.message.as_str()),
        (ErrorKind::Fatal, "2 zones: z1, z2")
    );
}
