//! Error kinds the CLI maps to exit codes. Everything else is an operational failure (1).

use std::path::PathBuf;

/// Exit codes, documented in the README.
pub mod exit {
    pub const OK: i32 = 0;
    pub const FAILED: i32 = 1;
    pub const INVALID_INPUT: i32 = 2;
    pub const LOCKED: i32 = 3;
    pub const GATE_TIMEOUT: i32 = 4;
}

/// Bad input: names the file, the field and what was expected. Nothing has been written.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {field}: {problem}")]
pub struct InputError {
    pub file: PathBuf,
    pub field: String,
    pub problem: String,
}

impl InputError {
    pub fn new(
        file: impl Into<PathBuf>,
        field: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// Another agent holds the state dir.
#[derive(Debug, thiserror::Error)]
#[error(
    "state dir {dir} is locked by another bootstrap-agent (lock file {dir}/lock); wait for it to finish or stop it"
)]
pub struct LockedError {
    pub dir: PathBuf,
}

/// Maps an error chain to the process exit code.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<InputError>() {
            return exit::INVALID_INPUT;
        }
        if cause.is::<LockedError>() {
            return exit::LOCKED;
        }
        if cause.is::<crate::cluster::gate::GateTimeout>() {
            return exit::GATE_TIMEOUT;
        }
    }
    exit::FAILED
}
