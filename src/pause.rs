//! The pause switch: `bootstrap-agent pause` makes a running `run` stop before its next step,
//! holding its lock, until `bootstrap-agent resume`. The switch is a file in the state dir, so
//! a paused agent stays paused across restarts, and `status` (which takes no lock) sees it.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

const SWITCH: &str = "paused";

/// How often a paused agent looks at the switch: a person's pace, not a hot path.
const LOOK_EVERY: Duration = Duration::from_millis(500);

fn switch(state_dir: &Path) -> PathBuf {
    state_dir.join(SWITCH)
}

pub fn is_paused(state_dir: &Path) -> bool {
    switch(state_dir).exists()
}

/// Sets the switch (idempotent). The state dir must exist: pausing an agent that never ran
/// is a mistake worth saying.
pub fn pause(state_dir: &Path) -> Result<()> {
    if !state_dir.is_dir() {
        return Err(crate::error::InputError::new(
            state_dir,
            "--state-dir",
            "no such state dir: nothing runs there to pause",
        )
        .into());
    }
    crate::journal::write_atomically(state_dir, SWITCH, crate::journal::now().as_bytes())
}

/// Clears the switch (idempotent).
pub fn resume(state_dir: &Path) -> Result<()> {
    match std::fs::remove_file(switch(state_dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", switch(state_dir).display()))
        }
        _ => Ok(()),
    }
}

/// Returns once the switch is off; while it is on, `waiting` was told once.
pub async fn wait_while_paused(state_dir: &Path, mut waiting: impl FnMut()) {
    if !is_paused(state_dir) {
        return;
    }
    waiting();
    while is_paused(state_dir) {
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_and_resume_are_idempotent_and_need_a_state_dir() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_paused(dir.path()));
        pause(dir.path()).unwrap();
        pause(dir.path()).unwrap();
        assert!(is_paused(dir.path()));
        resume(dir.path()).unwrap();
        resume(dir.path()).unwrap();
        assert!(!is_paused(dir.path()));
        let missing = dir.path().join("nope");
        let err = pause(&missing).unwrap_err();
        assert!(
            err.downcast_ref::<crate::error::InputError>().is_some(),
            "{err:#}"
        );
    }
}
