//! The journal on disk: read without the lock, written atomically, and the clock it stamps.

use super::{FORMAT_VERSION, JOURNAL_FILE, JournalState};
use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::SystemTime;

/// Now, as the journal stamps it (RFC 3339, seconds).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
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
    let mut state: JournalState =
        serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not a valid journal: {e}")))?;
    state.rename_legacy_steps();
    if state.version != FORMAT_VERSION {
        return Err(corrupt(format!(
            "journal format {} is not supported (expected {FORMAT_VERSION})",
            state.version
        ))
        .into());
    }
    Ok(Some(state))
}

/// The directory and file name [`write_atomically`] takes for `path` (a bare file name: the
/// current directory); an error naming `option` when `path` has no file name.
pub fn dir_and_name<'a>(path: &'a Path, option: &str) -> Result<(&'a Path, &'a str)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{option} has no file name"))?;
    Ok((dir, name))
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
