//! Reading input files with their failures told apart: absent (allowed for optional files),
//! a symlink that leads nowhere or in a loop, unreadable, too big. None of them is ever taken
//! for "absent": a creds secret the agent cannot read must not make it fall back to another
//! identity.

use crate::error::InputError;
use std::io::{ErrorKind, Read};
use std::path::Path;

/// Installer assets, the creds secret, a kubeconfig, a template, a capability registry: the
/// real ones are a few KiB (a kubeconfig with embedded certificates ~20 KiB).
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;
/// One manifest file of a release payload: the largest CRDs are ~1-2 MiB.
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// What is at a path, following symlinks, with a dangling or looping link as an error.
pub enum Found {
    Absent,
    File(std::fs::Metadata),
    Dir,
}

pub fn stat(path: &Path) -> Result<Found, InputError> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(InputError::new(path, "(file)", format!("cannot read: {e}"))),
    };
    let meta = if link.file_type().is_symlink() {
        std::fs::metadata(path).map_err(|e| {
            let why = if e.kind() == ErrorKind::NotFound {
                "a symlink to nothing (dangling)".to_string()
            } else {
                format!("a symlink that cannot be followed ({e})")
            };
            InputError::new(path, "(file)", format!("{why}; expected a readable file"))
        })?
    } else {
        link
    };
    Ok(if meta.is_dir() {
        Found::Dir
    } else {
        Found::File(meta)
    })
}

/// The text of an optional file: None when nothing is there (not even a link).
pub fn read_optional(path: &Path, max: u64) -> Result<Option<String>, InputError> {
    match stat(path)? {
        Found::Absent => Ok(None),
        Found::Dir => Err(InputError::new(
            path,
            "(file)",
            "is a directory; expected a file",
        )),
        Found::File(meta) => {
            if !meta.is_file() {
                return Err(InputError::new(
                    path,
                    "(file)",
                    "is not a regular file (device, FIFO or socket); expected a file",
                ));
            }
            if meta.len() > max {
                return Err(too_big(path, meta.len(), max));
            }
            let mut text = String::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(max + 1).read_to_string(&mut text))
                .map_err(|e| {
                    let problem = if e.kind() == ErrorKind::InvalidData {
                        "is not UTF-8 text".to_string()
                    } else {
                        format!("cannot read: {e}")
                    };
                    InputError::new(path, "(file)", problem)
                })?;
            if text.len() as u64 > max {
                return Err(too_big(path, text.len() as u64, max));
            }
            Ok(Some(text))
        }
    }
}

/// The text of a file that must exist.
pub fn read_required(path: &Path, max: u64) -> Result<String, InputError> {
    read_optional(path, max)?.ok_or_else(|| {
        InputError::new(path, "(file)", "cannot read: no such file; expected a file")
    })
}

fn too_big(path: &Path, len: u64, max: u64) -> InputError {
    InputError::new(
        path,
        "(file)",
        format!(
            "is {len} bytes, more than the {} MiB an input may have; expected an installer-generated file",
            max / (1024 * 1024)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dangling_link_or_a_loop_is_an_error_and_absent_is_not() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_optional(&dir.path().join("none"), 10)
                .unwrap()
                .is_none()
        );
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let e = read_optional(&dangling, 10).unwrap_err();
        assert!(e.problem.contains("dangling"), "{e}");
        let a = dir.path().join("a");
        std::os::unix::fs::symlink(dir.path().join("b"), &a).unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("b")).unwrap();
        let e = read_optional(&a, 10).unwrap_err();
        assert!(e.problem.contains("cannot be followed"), "{e}");
    }

    #[test]
    fn a_big_file_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'a'; 2048]).unwrap();
        let e = read_optional(&path, 1024).unwrap_err();
        assert!(e.problem.contains("2048 bytes"), "{e}");
    }
}
