//! The persisted step journal: what each step intended before it acted and what came of it
//! after. Observation of the cloud is the source of truth on resume; the journal adds what
//! observation cannot recover (when a step started, attempts, the last error, the bootstrap IP
//! that was seeded, which values we wrote). Writes are atomic (temp + fsync + rename + dir
//! fsync), the file is 0600, and an exclusive lock keeps a second agent out.

mod files;
mod state;

pub use files::{CorruptJournal, dir_and_name, now, read_state, write_atomically};
pub use state::{
    Condition, JournalState, Mutation, MutationState, RecordValues, ScopeChange, StepRecord,
    StepState,
};

use crate::error::LockedError;
use crate::plan::Change;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub const JOURNAL_FILE: &str = "journal.json";
const LOCK_FILE: &str = "lock";
const FORMAT_VERSION: u32 = 1;

/// The lock file of the state dir `dir`, which [`Journal::open`] creates and locks.
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join(LOCK_FILE)
}

/// A random token generation in `[2, 2^31)` for a state dir bound afresh. Two state dirs of
/// one cluster share a token only when their generations meet: about one chance in 2^31 per
/// `teardown --all` between them. 1 stays the default of a journal read before binding.
fn fresh_generation() -> u32 {
    generation_from(bootstrap_cloud::retry::random_u64())
}

/// How many fresh generations there are: `[2, 2^31)`, so `teardown --all`'s `+ 1` never
/// overflows.
const FRESH_GENERATIONS: u64 = (1 << 31) - 2;

/// PURE: the fresh generation a random number picks.
fn generation_from(random: u64) -> u32 {
    2 + u32::try_from(random % FRESH_GENERATIONS).unwrap_or(0)
}

/// The journal of one state dir, held under its exclusive lock.
pub struct Journal {
    dir: PathBuf,
    pub state: JournalState,
    _lock: File,
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
        let lock_path = lock_path(dir);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(LockedError {
                    dir: dir.to_path_buf(),
                }
                .into());
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()));
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
                // A new state dir for this cluster: a token generation no other state dir of
                // it used, so its idempotency tokens are new (GCE answers a reused requestId
                // with the earlier operation, for an address that may be released since).
                self.state.generation = fresh_generation();
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

#[cfg(test)]
mod tests;
