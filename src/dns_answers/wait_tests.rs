//! The wait for the user's DNS, driven by a scripted view: each read answers the next scripted
//! state, so the tests follow events (reads), never the clock.

use super::*;
use crate::assets::DnsManagement;
use crate::dns_answers::records::tests::{BOOTSTRAP, PRIVATE, PUBLIC, ip, reserved, spec};
use std::sync::Mutex as StdMutex;

const NO_PAUSE: Pace = Pace {
    first: Duration::ZERO,
    max: Duration::ZERO,
};

/// One state of the user's DNS: each record name (without the cluster domain) -> its values.
type Dns = Vec<(&'static str, Vec<&'static str>)>;

/// Answers the scripted states one read round after the other (a round = one read per record
/// set), then the last one forever; `never` after the script: a read that never returns.
struct Scripted {
    states: Vec<Dns>,
    reads: StdMutex<usize>,
    records: usize,
    hang_after: bool,
}

impl Scripted {
    fn new(states: Vec<Dns>, records: usize) -> Self {
        Self {
            states,
            reads: StdMutex::new(0),
            records,
            hang_after: false,
        }
    }

    /// A script for the records `spec` asks for now (one read round = one read per record).
    fn for_records(spec: &ClusterSpec, recorded: &JournalState, states: Vec<Dns>) -> Self {
        Self::new(states, records_now(spec, recorded).len())
    }

    fn rounds(&self) -> usize {
        *self.reads.lock().unwrap() / self.records
    }
}

#[async_trait]
impl Answers for Scripted {
    async fn answers(
        &self,
        _zone: &ZoneRef,
        key: &RecordKey,
    ) -> Result<BTreeSet<IpAddr>, CloudError> {
        let round = {
            let mut reads = self.reads.lock().unwrap();
            *reads += 1;
            (*reads - 1) / self.records
        };
        if self.hang_after && round >= self.states.len() {
            std::future::pending::<()>().await;
        }
        let state = &self.states[round.min(self.states.len() - 1)];
        let host = key.name.split('.').next().unwrap_or_default();
        Ok(state
            .iter()
            .find(|(name, _)| *name == host)
            .map(|(_, values)| values.iter().map(|v| ip(v)).collect())
            .unwrap_or_default())
    }
}

fn all_of_stage_1() -> Dns {
    vec![
        ("api", vec![PUBLIC, BOOTSTRAP, PRIVATE]),
        ("api-int", vec![BOOTSTRAP, PRIVATE]),
    ]
}

async fn wait(
    spec: &ClusterSpec,
    recorded: &JournalState,
    view: &Scripted,
    deadline: Duration,
) -> (Result<()>, Vec<String>) {
    let lines = StdMutex::new(Vec::new());
    let result = until_answered(spec, recorded, view, "seed-dns", deadline, NO_PAUSE, |l| {
        lines.lock().unwrap().push(l.to_string());
    })
    .await;
    (result, lines.into_inner().unwrap())
}

#[tokio::test]
async fn the_wait_moves_on_once_a_late_writer_created_every_record() {
    let spec = spec();
    let recorded = reserved(&spec);
    // Nothing, then a wrong value, then the records as printed.
    let view = Scripted::for_records(
        &spec,
        &recorded,
        vec![
            vec![],
            vec![("api-int", vec![BOOTSTRAP, "10.0.1.99"])],
            all_of_stage_1(),
        ],
    );
    let (result, lines) = wait(&spec, &recorded, &view, Duration::from_secs(3600)).await;
    result.unwrap();
    assert_eq!(view.rounds(), 3, "it stops reading once they answer");
    assert!(
        lines[0].starts_with("waiting for your DNS (seed-dns): "),
        "{lines:?}"
    );
    assert!(
        lines[0].contains(&format!("MISSING {BOOTSTRAP}, {PRIVATE}")),
        "{lines:?}"
    );
    assert!(
        lines[1].contains(&format!(
            "api-int.mycluster.example.com A: MISSING {PRIVATE}"
        )),
        "the wrong value keeps it waiting, named: {lines:?}"
    );
}

#[tokio::test]
async fn a_wrong_value_keeps_it_waiting_until_the_deadline_ends_it_with_what_is_missing() {
    let spec = spec();
    let recorded = reserved(&spec);
    let mut view = Scripted::for_records(
        &spec,
        &recorded,
        vec![vec![
            ("api", vec![PUBLIC, BOOTSTRAP, PRIVATE]),
            ("api-int", vec![BOOTSTRAP, "10.0.1.99"]),
        ]],
    );
    // After the wrong answer the next read never returns: the deadline, not a count of
    // reads, ends the wait.
    view.hang_after = true;
    let (result, lines) = wait(&spec, &recorded, &view, Duration::from_millis(200)).await;
    let error = format!("{:#}", result.unwrap_err());
    assert!(
        error.starts_with("your DNS did not answer within the step deadline (200ms)"),
        "{error}"
    );
    assert!(error.contains(&format!("MISSING {PRIVATE}")), "{error}");
    assert!(error.contains("another writer's) 10.0.1.99"), "{error}");
    assert_eq!(lines.len(), 1, "one status line per change: {lines:?}");
}

#[tokio::test]
async fn after_the_bootstrap_ip_was_removed_it_waits_until_the_bootstrap_ip_is_gone() {
    let spec = spec();
    let mut recorded = reserved(&spec);
    recorded.bootstrap_removed = true;
    let view = Scripted::for_records(
        &spec,
        &recorded,
        vec![
            all_of_stage_1(),
            vec![("api", vec![PUBLIC, PRIVATE]), ("api-int", vec![PRIVATE])],
        ],
    );
    let (result, lines) = wait(&spec, &recorded, &view, Duration::from_secs(3600)).await;
    result.unwrap();
    assert_eq!(view.rounds(), 2);
    assert!(
        lines[0].contains(&format!("the bootstrap IP {BOOTSTRAP} still answers")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn records_answered_at_once_mean_no_waiting_and_no_status_line() {
    let spec = spec();
    let recorded = reserved(&spec);
    let view = Scripted::for_records(&spec, &recorded, vec![all_of_stage_1()]);
    let (result, lines) = wait(&spec, &recorded, &view, Duration::from_secs(3600)).await;
    result.unwrap();
    assert_eq!(view.rounds(), 1);
    assert!(lines.is_empty(), "{lines:?}");
}

#[tokio::test]
async fn it_refuses_to_wait_for_ips_not_reserved_yet() {
    let spec = spec();
    let view = Scripted::new(vec![all_of_stage_1()], 1);
    let (result, _) = wait(
        &spec,
        &JournalState::default(),
        &view,
        Duration::from_secs(3600),
    )
    .await;
    let error = result.unwrap_err().to_string();
    assert!(error.contains("not reserved yet"), "{error}");
    assert_eq!(view.rounds(), 0, "nothing read");
}

#[test]
fn the_wait_flag_with_cloud_dns_is_bad_input_naming_the_flag() {
    let mut spec = spec();
    let args = DnsWaitArgs {
        dns_wait: true,
        dns_check: DnsCheck::Resolver,
    };
    assert_eq!(
        args.check(Path::new("/assets"), &spec).unwrap(),
        Some(DnsCheck::Resolver)
    );
    spec.dns = DnsManagement::Cloud;
    let error = args.check(Path::new("/assets"), &spec).unwrap_err();
    assert_eq!(error.field, "--dns-wait");
    let off = DnsWaitArgs {
        dns_wait: false,
        dns_check: DnsCheck::Zone,
    };
    assert_eq!(off.check(Path::new("/assets"), &spec).unwrap(), None);
}

#[tokio::test]
async fn the_resolver_view_answers_the_hosts_own_name_of_the_records_family() {
    let key = |rtype| RecordKey {
        name: "localhost".into(),
        rtype,
    };
    let zone = ZoneRef::default();
    let v4 = ResolverAnswers
        .answers(&zone, &key(RecordType::A))
        .await
        .unwrap();
    assert!(v4.contains(&ip("127.0.0.1")), "{v4:?}");
    assert!(v4.iter().all(IpAddr::is_ipv4));
    let v6 = ResolverAnswers
        .answers(&zone, &key(RecordType::Aaaa))
        .await
        .unwrap();
    assert!(v6.iter().all(IpAddr::is_ipv6), "{v6:?}");
    let none = RecordKey {
        name: "no-such-name.invalid".into(),
        rtype: RecordType::A,
    };
    assert!(
        ResolverAnswers
            .answers(&zone, &none)
            .await
            .unwrap()
            .is_empty()
    );
}

#[path = "wait_view_tests.rs"]
mod view_tests;

/// GCP and Azure: the bootstrap host's second address leaves with the bootstrap IP. After stage
/// 3 (which released it: the journal's reservations no longer know it) the wait neither asks
/// for it (old code: "cannot wait for your DNS: bootstrap-ipv4, bootstrap-ipv4 not reserved
/// yet") nor takes it for another writer's: it waits until the user took it out too.
#[tokio::test]
async fn after_stage_3_it_waits_until_the_second_address_is_gone_too() {
    const SECOND: &str = "10.0.1.11";
    let mut spec = spec();
    spec.second_bootstrap_address = crate::assets::SecondAddress::Cloud;
    let mut recorded = reserved(&spec);
    crate::bootstrap_ip::record_seeded(&mut recorded, &spec);
    assert_eq!(recorded.bootstrap_second_address, Some(ip(SECOND)));
    let seeded = records_now(&spec, &recorded);
    let api_int = |records: &[UserRecord]| {
        records
            .iter()
            .find(|r| r.record.name.starts_with("api-int."))
            .map(|r| r.values.clone())
            .unwrap()
    };
    assert_eq!(
        api_int(&seeded),
        [
            Value::Ip(ip(BOOTSTRAP)),
            Value::Ip(ip(SECOND)),
            Value::Ip(ip(PRIVATE))
        ]
    );
    // Stage 3: out of DNS, then released.
    recorded.bootstrap_removed = true;
    recorded
        .reservations
        .retain(|r| r.key.scope != bootstrap_cloud::Scope::Bootstrap);
    assert_eq!(
        api_int(&records_now(&spec, &recorded)),
        [Value::Ip(ip(PRIVATE))]
    );
    let view = Scripted::for_records(
        &spec,
        &recorded,
        vec![
            vec![
                ("api", vec![PUBLIC, PRIVATE, SECOND]),
                ("api-int", vec![PRIVATE, SECOND]),
            ],
            vec![("api", vec![PUBLIC, PRIVATE]), ("api-int", vec![PRIVATE])],
        ],
    );
    let (result, lines) = wait(&spec, &recorded, &view, Duration::from_secs(3600)).await;
    result.unwrap();
    assert_eq!(view.rounds(), 2, "{lines:?}");
    assert!(
        lines[0].contains(&format!(
            "the bootstrap host's second address {SECOND} still answers"
        )),
        "{lines:?}"
    );
    // (The script answers by name, so the public `api` shows up in the private one.)
    let others: Vec<&str> = lines[0]
        .split("also answers (another writer's) ")
        .skip(1)
        .map(|rest| rest.split(';').next().unwrap_or_default())
        .collect();
    assert!(
        others.iter().all(|o| !o.contains(SECOND)),
        "not another writer's: {others:?}"
    );
}
