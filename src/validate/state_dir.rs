//! The state dir of a command that takes its lock, checked in the one pass before anything is
//! touched. `Journal::open` creates the lock file when nothing is there; anything else at its
//! path (a directory, a FIFO, a link to nothing, a file the agent may not write), or a state
//! dir that is a file, would stop the command only after it started: exit 1, alone, instead
//! of exit 2 in the one report of every problem.

use super::files::{Found, stat};
use crate::error::InputError;
use crate::options::flag;
use std::path::Path;

const LOCK_EXPECTED: &str = "expected the state dir's lock file: a regular file the agent may write, or nothing (it is created)";

/// What keeps the agent from taking `dir`'s lock, if anything; nothing is created or changed.
pub fn lock_problem(dir: &Path) -> Option<InputError> {
    if let Ok(Found::File(_)) = stat(dir) {
        return Some(InputError::new(
            flag("state-dir", "BOOTSTRAP_AGENT_STATE_DIR"),
            dir.display().to_string(),
            "is a file; expected a directory (created when absent)",
        ));
    }
    let path = crate::journal::lock_path(dir);
    let problem = match stat(&path) {
        Ok(Found::Absent) => return None,
        Err(e) => return Some(e),
        Ok(Found::Dir) => "is a directory".to_string(),
        Ok(Found::File(meta)) if !meta.is_file() => {
            "is not a regular file (a FIFO, a socket or a device)".to_string()
        }
        // Opened as `Journal::open` opens it, but neither created nor truncated: left as it is.
        Ok(Found::File(_)) => match std::fs::OpenOptions::new().write(true).open(&path) {
            Ok(_) => return None,
            Err(e) => format!("cannot be opened for writing ({e})"),
        },
    };
    Some(InputError::new(
        path,
        "(file)",
        format!("{problem}; {LOCK_EXPECTED}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_directory_at_the_lock_path_is_refused_naming_it_and_left_alone() {
        let state = tempfile::tempdir().unwrap();
        let lock = crate::journal::lock_path(state.path());
        std::fs::create_dir(&lock).unwrap();
        let err = lock_problem(state.path()).unwrap();
        assert_eq!(err.file, lock);
        assert!(err.problem.starts_with("is a directory; expected"), "{err}");
        assert_eq!(listing(state.path()), ["lock"]);
        assert!(listing(&lock).is_empty());
    }

    #[test]
    fn a_lock_file_or_none_at_all_is_fine_and_none_is_created() {
        let state = tempfile::tempdir().unwrap();
        assert!(lock_problem(state.path()).is_none());
        assert!(listing(state.path()).is_empty());
        std::fs::write(crate::journal::lock_path(state.path()), "").unwrap();
        assert!(lock_problem(state.path()).is_none());
        let absent = state.path().join("not-yet");
        assert!(lock_problem(&absent).is_none());
        assert!(!absent.exists());
    }

    #[test]
    fn a_state_dir_that_is_a_file_is_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state");
        std::fs::write(&file, "").unwrap();
        let err = lock_problem(&file).unwrap();
        assert!(err.to_string().starts_with("--state-dir"), "{err}");
        assert!(err.to_string().contains("expected a directory"), "{err}");
    }

    #[test]
    fn a_dangling_link_at_the_lock_path_is_refused_so_nothing_is_created_elsewhere() {
        let state = tempfile::tempdir().unwrap();
        let target = state.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, crate::journal::lock_path(state.path())).unwrap();
        assert!(lock_problem(state.path()).is_some());
        assert!(!target.exists());
    }
}
