use super::*;
use std::os::unix::fs::PermissionsExt;
use std::time::SystemTime;

#[test]
fn second_agent_on_the_same_state_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Journal::open(dir.path()).unwrap();
    let err = Journal::open(dir.path()).err().unwrap();
    assert!(err.is::<LockedError>(), "{err:#}");
}

#[test]
fn journal_is_private_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut j = Journal::open(dir.path()).unwrap();
        j.bind_cluster("c-1").unwrap();
        j.begin_step("reserve").unwrap();
        j.finish_step("reserve", Err("boom".into())).unwrap();
    }
    let mode = fs::metadata(dir.path().join(JOURNAL_FILE))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let j = Journal::open(dir.path()).unwrap();
    assert_eq!(j.state.steps["reserve"].state, StepState::Failed);
    assert_eq!(j.state.last_error.as_deref(), Some("boom"));
}

#[test]
fn state_dir_of_another_cluster_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Journal::open(dir.path())
        .unwrap()
        .bind_cluster("c-1")
        .unwrap();
    let err = Journal::open(dir.path())
        .unwrap()
        .bind_cluster("c-2")
        .unwrap_err();
    assert!(err.to_string().contains("belongs to cluster c-1"));
}

#[test]
fn intent_left_by_a_dead_process_is_marked_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut j = Journal::open(dir.path()).unwrap();
        j.intent("dns-teardown", &change()).unwrap();
    }
    let j = Journal::open(dir.path()).unwrap();
    assert_eq!(j.state.mutations[0].state, MutationState::Interrupted);
}

#[test]
fn corrupt_journal_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(JOURNAL_FILE), "{half").unwrap();
    let err = Journal::open(dir.path()).err().unwrap();
    assert!(format!("{err:#}").contains("not a valid journal"));
}

fn change() -> Change {
    Change::RemoveRecordValues {
        zone: bootstrap_cloud::ZoneRef {
            domain: "d".into(),
            private: true,
            id: None,
            tags: Default::default(),
        },
        record: bootstrap_cloud::RecordKey {
            name: "api.d".into(),
            rtype: bootstrap_cloud::RecordType::A,
        },
        values: vec![],
    }
}

#[test]
fn every_mutation_ends_done_or_failed_and_only_its_own_record_changes() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut j = Journal::open(dir.path()).unwrap();
        j.begin_step("seed-dns").unwrap();
        let first = j.intent("seed-dns", &change()).unwrap();
        let second = j.intent("seed-dns", &change()).unwrap();
        assert_eq!((first, second), (1, 2));
        j.outcome(second, Err("throttled".into())).unwrap();
        assert_eq!(
            j.state.mutations[0].state,
            MutationState::Intent,
            "seq 1 untouched"
        );
        j.outcome(first, Ok(serde_json::json!({"ok": true})))
            .unwrap();
        assert_eq!(j.state.steps["seed-dns"].mutations, 2);
    }
    // Persisted, not only in memory: a reopen finds them finished (not interrupted).
    let state = read_state(dir.path()).unwrap().unwrap();
    assert_eq!(state.mutations[0].state, MutationState::Done);
    assert_eq!(
        state.mutations[0].result,
        Some(serde_json::json!({"ok": true}))
    );
    assert_eq!(state.mutations[1].state, MutationState::Failed);
    assert_eq!(state.mutations[1].error.as_deref(), Some("throttled"));
    let j = Journal::open(dir.path()).unwrap();
    assert!(
        j.state
            .mutations
            .iter()
            .all(|m| m.state != MutationState::Interrupted),
        "{:?}",
        j.state.mutations
    );
}

#[test]
fn an_unreadable_journal_is_an_error_naming_the_file_never_no_journal() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        read_state(dir.path()).unwrap().is_none(),
        "absent: no journal"
    );
    // A directory where the file should be: reading fails with something other than NotFound.
    fs::create_dir(dir.path().join(JOURNAL_FILE)).unwrap();
    let err = read_state(dir.path()).unwrap_err();
    assert!(
        format!("{err:#}").contains(&dir.path().join(JOURNAL_FILE).display().to_string()),
        "{err:#}"
    );
}

/// A journal opened on a fresh state dir, returned with the dir (dropping it removes the dir).
fn open_fresh() -> (tempfile::TempDir, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(dir.path()).unwrap();
    (dir, j)
}

#[test]
fn a_state_dir_bound_to_one_cluster_refuses_another_and_stays_bound() {
    let (dir, mut j) = open_fresh();
    j.bind_cluster("c-1").unwrap();
    j.bind_cluster("c-1").unwrap();
    let err = j.bind_cluster("c-2").unwrap_err();
    let input = err
        .downcast_ref::<crate::error::InputError>()
        .expect("bad input (exit 2)");
    assert_eq!(input.field, "infra_id");
    assert_eq!(j.state.infra_id.as_deref(), Some("c-1"));
    drop(j);
    assert_eq!(
        read_state(dir.path()).unwrap().unwrap().infra_id.as_deref(),
        Some("c-1"),
        "nothing touched on disk"
    );
}

#[test]
fn every_begin_of_a_step_is_a_new_attempt_with_a_real_timestamp() {
    let (_dir, mut j) = open_fresh();
    j.begin_step("reserve").unwrap();
    j.finish_step("reserve", Err("throttled".into())).unwrap();
    j.begin_step("reserve").unwrap();
    let step = &j.state.steps["reserve"];
    assert_eq!(step.attempt, 2);
    assert_eq!(step.state, StepState::Running);
    let started = humantime::parse_rfc3339(&step.started_at).expect("RFC 3339");
    let age = SystemTime::now()
        .duration_since(started)
        .unwrap_or_default();
    assert!(
        age < std::time::Duration::from_secs(3600),
        "{}",
        step.started_at
    );
    assert!(
        started > SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000),
        "{}",
        step.started_at
    );
}

#[test]
fn user_dns_records_journal_the_values_that_exist_now() {
    use crate::plan::{Observed, UserDns, UserRecord, Value};
    use bootstrap_cloud::{IpFamily, RecordKey, RecordType, ReservationKey, Scope, ZoneRef};
    let bootstrap: std::net::IpAddr = "10.0.0.5".parse().unwrap();
    let not_reserved_yet = ReservationKey {
        scope: Scope::Private,
        family: IpFamily::Ipv4,
        placement: None,
    };
    let dns = UserDns {
        because: "--dns manual".into(),
        records: vec![UserRecord {
            zone: ZoneRef {
                domain: "c.example.com".into(),
                private: true,
                ..Default::default()
            },
            record: RecordKey {
                name: "api-int.c.example.com".into(),
                rtype: RecordType::A,
            },
            values: vec![Value::Ip(bootstrap), Value::Reserved(not_reserved_yet)],
            ttl: 30,
        }],
        bootstrap_ip: Some(bootstrap),
    };
    let journaled = RecordValues::of_user_dns(&dns, &Observed::default());
    assert_eq!(
        journaled,
        vec![RecordValues {
            zone: "private zone c.example.com".into(),
            record: "api-int.c.example.com A".into(),
            values: vec![bootstrap],
        }]
    );
}

/// A journal written before the step names were unified (`dns-seed`, `dns-teardown`) is read
/// under today's names, so a resumed install finds its half-done steps; a record under
/// today's name wins over a legacy one.
#[test]
fn legacy_step_names_are_read_under_todays_names() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut j = Journal::open(dir.path()).unwrap();
        j.begin_step("dns-seed").unwrap();
        j.intent("dns-seed", &change()).unwrap();
        j.begin_step("dns-teardown").unwrap();
        j.finish_step("dns-teardown", Err("old".into())).unwrap();
        j.begin_step("remove-bootstrap").unwrap();
    }
    let j = Journal::open(dir.path()).unwrap();
    let names: Vec<&str> = j.state.steps.keys().map(String::as_str).collect();
    assert_eq!(names, ["remove-bootstrap", "seed-dns"]);
    assert_eq!(j.state.steps["seed-dns"].mutations, 1);
    assert_eq!(j.state.steps["remove-bootstrap"].state, StepState::Running);
    assert_eq!(j.state.mutations[0].step, "seed-dns");
}

#[test]
fn a_target_path_splits_into_its_dir_and_name_or_the_error_names_the_option() {
    use std::path::Path;
    assert_eq!(
        dir_and_name(Path::new("done.json"), "--done-file").unwrap(),
        (Path::new("."), "done.json")
    );
    assert_eq!(
        dir_and_name(Path::new("/run/agent/done.json"), "--done-file").unwrap(),
        (Path::new("/run/agent"), "done.json")
    );
    let err = dir_and_name(Path::new("/"), "--out").unwrap_err();
    assert_eq!(err.to_string(), "--out has no file name");
}

#[test]
fn a_state_dir_bound_afresh_starts_a_generation_no_other_state_dir_of_the_cluster_used() {
    let generations: std::collections::BTreeSet<u32> = (0..8)
        .map(|_| {
            let (_dir, mut j) = open_fresh();
            j.bind_cluster("c-1").unwrap();
            let bound = j.state.generation;
            j.bind_cluster("c-1").unwrap();
            assert_eq!(j.state.generation, bound, "binding again keeps it");
            assert!(bound >= 2, "never the default 1 of an unbound journal");
            bound
        })
        .collect();
    assert_eq!(generations.len(), 8, "{generations:?}");
}

#[test]
fn teardown_all_forgets_the_install_and_keeps_only_its_own_mutations() {
    let (dir, mut j) = open_fresh();
    j.bind_cluster("c-1").unwrap();
    let generation = j.state.generation;
    let ip: std::net::IpAddr = "10.0.0.5".parse().unwrap();
    j.state.serving = Some([ip].into());
    j.state.services = vec![
        serde_json::from_value(serde_json::json!(
            {"namespace": "openshift-kube-apiserver", "name": "api", "claims": ["10.0.0.5"]}
        ))
        .unwrap(),
    ];
    j.state
        .replacing
        .insert("openshift-kube-apiserver/api".into());
    j.state.gate = Some(crate::cluster::gate::GateReport {
        passed: true,
        services: vec![],
        elapsed_ms: 1,
    });
    j.state.records = vec![RecordValues {
        zone: "z".into(),
        record: "api".into(),
        values: vec![ip],
    }];
    j.state.user_dns = j.state.records.clone();
    j.state.handed_over = vec![];
    j.state.bootstrap_removed = true;
    j.state.bootstrap_second_address = Some(ip);
    j.state.drain_until = Some("2026-01-01T00:00:00Z".into());
    j.state.wire_proof = Some("passed".into());
    j.state.run_step = Some(crate::machine::State::Done);
    j.state.adopted = vec![];
    for step in [
        "reserve",
        "seed-dns",
        "teardown-all",
        "reserve",
        "teardown-all",
    ] {
        j.intent(step, &change()).unwrap();
    }
    j.begin_step("reserve").unwrap();

    j.state.forget_install("teardown-all");
    let s = &j.state;
    assert_eq!(
        s.serving, None,
        "the served IPs would keep new ones out of DNS"
    );
    assert!(s.services.is_empty() && s.replacing.is_empty() && s.gate.is_none());
    assert!(s.records.is_empty() && s.user_dns.is_empty());
    assert!(!s.bootstrap_removed && s.bootstrap_second_address.is_none());
    assert!(s.drain_until.is_none() && s.wire_proof.is_none() && s.run_step.is_none());
    let kept: Vec<(u64, &str)> = s
        .mutations
        .iter()
        .map(|m| (m.seq, m.step.as_str()))
        .collect();
    assert_eq!(kept, [(5, "teardown-all")], "only the last teardown's own");
    assert_eq!(s.infra_id.as_deref(), Some("c-1"));
    assert_eq!(s.generation, generation);
    assert!(s.steps.contains_key("reserve"));

    // Again with nothing new: this teardown's record stays; the next seq follows it.
    j.state.forget_install("teardown-all");
    assert_eq!(j.state.mutations.len(), 1);
    assert_eq!(j.intent("reserve", &change()).unwrap(), 6);
    drop(j);
    drop(dir);
}

#[test]
fn fresh_generations_span_2_to_2_pow_31() {
    assert_eq!(generation_from(0), 2);
    assert_eq!(generation_from(FRESH_GENERATIONS - 1), (1 << 31) - 1);
    assert_eq!(
        generation_from(FRESH_GENERATIONS),
        2,
        "wraps, never past 2^31"
    );
    assert!(generation_from(u64::MAX) < 1 << 31);
}
