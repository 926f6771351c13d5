//! The persisted step journal: what each step intended before it acted and what came of it
//! after. Observation of the cloud is the source of truth on resume; the journal adds what
//! observation cannot recover (when a step started, attempts, the last error, the bootstrap IP
//! that was seeded, which values we wrote). Writes are atomic (temp + fsync + rename + dir
//! fsync), the file is 0600, and an exclusive lock keeps a second agent out.

use crate::error::LockedError;
use crate::plan::Change;
use anyhow::{Context, Result};
use bootstrap_cloud::Reservation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::net::IpAddr;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub const JOURNAL_FILE: &str = "journal.json";
const LOCK_FILE: &str = "lock";
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepState {
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    pub state: StepState,
    pub attempt: u32,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Mutating calls this step made in its last attempt.
    #[serde(default)]
    pub mutations: u32,
    /// Transient failures the step retried in its last attempt, by cause (`throttled`,
    /// `server-or-network`, `conflict`). Retries inside one cloud call (the SDKs' own) are
    /// not counted here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retries: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MutationState {
    /// Written before the call. Still here on the next start = the process died mid-call.
    Intent,
    Done,
    Failed,
    /// Found as an intent from a dead process; the next run re-observed the cloud instead.
    Interrupted,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mutation {
    pub seq: u64,
    pub step: String,
    pub change: Change,
    pub state: MutationState,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Values we wrote into a record set, as of our last write.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordValues {
    pub zone: String,
    pub record: String,
    pub values: Vec<IpAddr>,
}

impl RecordValues {
    /// The records of user-managed DNS with the IPs that exist in `observed`.
    pub fn of_user_dns(dns: &crate::plan::UserDns, observed: &crate::plan::Observed) -> Vec<Self> {
        dns.records
            .iter()
            .map(|r| RecordValues {
                zone: r.zone.to_string(),
                record: r.record.to_string(),
                values: r
                    .values
                    .iter()
                    .filter_map(|v| observed.resolve(v))
                    .collect(),
            })
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalState {
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infra_id: Option<String>,
    /// Bumped by `teardown --all` so idempotency tokens of released resources are not reused.
    pub generation: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_ip: Option<IpAddr>,
    /// Stage 3 removed the bootstrap IP from DNS; `dns seed` will not add it back.
    #[serde(default)]
    pub bootstrap_removed: bool,
    #[serde(default)]
    pub steps: BTreeMap<String, StepRecord>,
    #[serde(default)]
    pub reservations: Vec<Reservation>,
    /// Reservations whose placeholder was released so the load balancer can claim the IP.
    /// Observation cannot find them any more; this is the only record of their IPs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handed_over: Vec<Reservation>,
    /// Reservations the user made that the agent uses (UPI): never released. Kept here too,
    /// so a resume or `teardown --all` knows them even once the cloud no longer shows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<Reservation>,
    #[serde(default)]
    pub records: Vec<RecordValues>,
    /// User-managed DNS: the records the user must create, as of the last `dns seed` (the
    /// agent wrote none of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_dns: Vec<RecordValues>,
    /// Where `run` is in its state machine (see machine::Step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_step: Option<crate::machine::Step>,
    /// The Services `run` applied, which the gate waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<crate::render::ServiceClaim>,
    /// The readiness gate's last report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<serde_json::Value>,
    /// Progressive DNS (`run`'s default): the reserved IPs whose load balancer serves them, the
    /// only ones DNS may hold. None: all at once (the stage commands, `--dns-seeding
    /// all-at-once`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<std::collections::BTreeSet<IpAddr>>,
    /// When the drain after removing the bootstrap IP ends (RFC 3339): set once, so a restart
    /// during the drain waits only for what is left of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_until: Option<String>,
    /// What the proof on the wire says now (`run`, before the bootstrap IP may leave DNS):
    /// why the bootstrap IP stays, that every kept IP passed, or that the proof is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire_proof: Option<String>,
    #[serde(default)]
    pub mutations: Vec<Mutation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl Default for JournalState {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            infra_id: None,
            generation: 1,
            bootstrap_ip: None,
            bootstrap_removed: false,
            steps: BTreeMap::new(),
            reservations: Vec::new(),
            handed_over: Vec::new(),
            adopted: Vec::new(),
            records: Vec::new(),
            user_dns: Vec::new(),
            run_step: None,
            services: Vec::new(),
            gate: None,
            serving: None,
            drain_until: None,
            wire_proof: None,
            mutations: Vec::new(),
            last_error: None,
        }
    }
}

/// The journal of one state dir, held under its exclusive lock.
pub struct Journal {
    dir: PathBuf,
    pub state: JournalState,
    _lock: File,
}

pub fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

impl Journal {
    /// Opens (creating if needed) the state dir and takes its lock. Intents left by a process
    /// that died are marked interrupted: the runner re-observes the cloud instead of trusting them.
    pub fn open(dir: &Path) -> Result<Self> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create state dir {}", dir.display()))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join(LOCK_FILE))
            .with_context(|| format!("cannot open {}", dir.join(LOCK_FILE).display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(LockedError {
                    dir: dir.to_path_buf(),
                }
                .into());
            }
            Err(TryLockError::Error(e)) => {
                return Err(e)
                    .with_context(|| format!("cannot lock {}", dir.join(LOCK_FILE).display()));
            }
        }
        let mut state = read_state(dir)?.unwrap_or_default();
        for m in &mut state.mutations {
            if m.state == MutationState::Intent {
                m.state = MutationState::Interrupted;
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            state,
            _lock: lock,
        })
    }

    /// Refuses a state dir that belongs to another cluster; adopts an empty one.
    pub fn bind_cluster(&mut self, infra_id: &str) -> Result<()> {
        match &self.state.infra_id {
            Some(id) if id != infra_id => Err(crate::error::InputError::new(
                self.dir.join(JOURNAL_FILE),
                "infra_id",
                format!("this state dir belongs to cluster {id}, not {infra_id}; use another --state-dir"),
            )
            .into()),
            Some(_) => Ok(()),
            None => {
                self.state.infra_id = Some(infra_id.to_string());
                self.save()
            }
        }
    }

    /// The state dir this journal lives in (and whose lock it holds).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn save(&self) -> Result<()> {
        let json = serde_json::to_vec_pretty(&self.state).context("cannot encode journal")?;
        write_atomically(&self.dir, JOURNAL_FILE, &json)
    }

    pub fn begin_step(&mut self, step: &str) -> Result<()> {
        let attempt = self.state.steps.get(step).map_or(0, |s| s.attempt) + 1;
        self.state.steps.insert(
            step.to_string(),
            StepRecord {
                state: StepState::Running,
                attempt,
                started_at: now(),
                finished_at: None,
                last_error: None,
                mutations: 0,
                retries: BTreeMap::new(),
            },
        );
        self.save()
    }

    /// Counts one retry of `step` after a transient failure of kind `cause`.
    pub fn record_retry(&mut self, step: &str, cause: &str) -> Result<()> {
        if let Some(s) = self.state.steps.get_mut(step) {
            *s.retries.entry(cause.to_string()).or_default() += 1;
        }
        self.save()
    }

    pub fn finish_step(&mut self, step: &str, outcome: Result<(), String>) -> Result<()> {
        if let Some(s) = self.state.steps.get_mut(step) {
            s.finished_at = Some(now());
            match &outcome {
                Ok(()) => {
                    s.state = StepState::Done;
                    s.last_error = None;
                }
                Err(e) => {
                    s.state = StepState::Failed;
                    s.last_error = Some(e.clone());
                }
            }
        }
        self.state.last_error = outcome.err();
        self.save()
    }

    /// Records the intent of a mutation before it is made; returns its sequence number.
    pub fn intent(&mut self, step: &str, change: &Change) -> Result<u64> {
        let seq = self.state.mutations.last().map_or(1, |m| m.seq + 1);
        self.state.mutations.push(Mutation {
            seq,
            step: step.to_string(),
            change: change.clone(),
            state: MutationState::Intent,
            at: now(),
            result: None,
            error: None,
        });
        if let Some(s) = self.state.steps.get_mut(step) {
            s.mutations += 1;
        }
        self.save()?;
        Ok(seq)
    }

    /// Records the outcome of mutation `seq`.
    pub fn outcome(&mut self, seq: u64, outcome: Result<serde_json::Value, String>) -> Result<()> {
        if let Some(m) = self.state.mutations.iter_mut().find(|m| m.seq == seq) {
            match outcome {
                Ok(result) => {
                    m.state = MutationState::Done;
                    m.result = Some(result);
                }
                Err(e) => {
                    m.state = MutationState::Failed;
                    m.error = Some(e);
                }
            }
        }
        self.save()
    }
}

/// The journal exists but cannot be used: unreadable, not JSON, wrong shape, unknown format.
/// Not transient (a restart cannot fix it), so it has its own exit code, and the file is left
/// exactly as it is.
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: {problem}. The journal is left untouched; repair it rather than delete it: only it knows the handed-over IPs and the seeded bootstrap IP. Inspect it with `python3 -m json.tool {path}`; keep a copy before editing"
)]
pub struct CorruptJournal {
    pub path: String,
    pub problem: String,
}

/// Reads the journal without the lock (for `status` while an agent runs; writes are atomic).
pub fn read_state(dir: &Path) -> Result<Option<JournalState>> {
    let path = dir.join(JOURNAL_FILE);
    let corrupt = |problem: String| CorruptJournal {
        path: path.display().to_string(),
        problem,
    };
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(corrupt(format!("cannot read: {e}")).into()),
    };
    let state: JournalState =
        serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not a valid journal: {e}")))?;
    if state.version != FORMAT_VERSION {
        return Err(corrupt(format!(
            "journal format {} is not supported (expected {FORMAT_VERSION})",
            state.version
        ))
        .into());
    }
    Ok(Some(state))
}

/// temp file in the same dir, fsync, rename over the target, fsync the dir.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let target = dir.join(name);
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, &target).with_context(|| format!("cannot replace {}", target.display()))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync {}", dir.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
            j.begin_step("dns-seed").unwrap();
            let first = j.intent("dns-seed", &change()).unwrap();
            let second = j.intent("dns-seed", &change()).unwrap();
            assert_eq!((first, second), (1, 2));
            j.outcome(second, Err("throttled".into())).unwrap();
            assert_eq!(
                j.state.mutations[0].state,
                MutationState::Intent,
                "seq 1 untouched"
            );
            j.outcome(first, Ok(serde_json::json!({"ok": true})))
                .unwrap();
            assert_eq!(j.state.steps["dns-seed"].mutations, 2);
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

    #[test]
    fn a_state_dir_bound_to_one_cluster_refuses_another_and_stays_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path()).unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path()).unwrap();
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
}
