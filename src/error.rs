//! Error kinds that say what went wrong for a person (the exit codes are mapped in `exit`),
//! and the one-line rendering of an error chain.

use std::path::{Path, PathBuf};

/// Bad input: names the file, the field and what was expected. Nothing has been written.
#[derive(Debug, Clone, thiserror::Error)]
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

/// The text of an optional input file: None when it does not exist; any other failure to
/// read it is an input error naming the file.
pub fn read_if_present(path: &Path) -> Result<Option<String>, InputError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(InputError::new(path, "(file)", format!("cannot read: {e}"))),
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

/// `publish --scope Internal`: the admin did not delete the external Service within
/// `--gate-timeout` (exit 4, like the gate): the condition says what to do; a re-run resumes.
/// Here, not in `publish`, so that the exit codes know it without knowing a command.
#[derive(Debug, thiserror::Error)]
#[error(
    "waited {} for the external Service to be deleted: {message}",
    humantime::format_duration(*.after)
)]
pub struct AwaitingDeletion {
    pub after: std::time::Duration,
    pub message: String,
}

/// One readable line for a Kubernetes API error: HTTP code, reason, message and the causes'
/// fields (never the Debug dump of the `Status`, which kube's own Display includes).
pub fn kube_api_line(status: &kube::core::Status) -> String {
    let mut line = format!("HTTP {} {}: {}", status.code, status.reason, status.message);
    let causes: Vec<String> = status
        .details
        .iter()
        .flat_map(|d| &d.causes)
        .map(|c| match c.field.as_str() {
            "" => c.message.clone(),
            field => format!("{field}: {}", c.message),
        })
        .collect();
    if !causes.is_empty() {
        line.push_str(&format!(" (causes: {})", causes.join("; ")));
    }
    line
}

/// The error chain as one line, `outer: inner: ...`, with Kubernetes API errors made readable.
pub fn render_chain(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    let mut skip_status = false;
    for cause in err.chain() {
        // kube::Error::Api's source is the Status itself (boxed): already in the line above.
        if skip_status
            && (cause.is::<kube::core::Status>() || cause.is::<Box<kube::core::Status>>())
        {
            skip_status = false;
            continue;
        }
        match cause.downcast_ref::<kube::Error>() {
            Some(kube::Error::Api(status)) => {
                parts.push(kube_api_line(status));
                skip_status = true;
            }
            _ => parts.push(cause.to_string()),
        }
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kube_api_error_is_one_readable_line_with_its_causes() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 422, "reason": "Invalid",
            "message": "ClusterVersion.config.openshift.io \"version\" is invalid",
            "details": {"name": "version", "kind": "ClusterVersion", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "status.desired"},
                {"reason": "FieldValueRequired", "message": "Required value", "field": "status.versionHash"}]}
        }))
        .unwrap();
        let err = anyhow::Error::new(kube::Error::Api(Box::new(status)))
            .context("cannot update ClusterVersion version");
        let line = render_chain(&err);
        assert_eq!(
            line,
            "cannot update ClusterVersion version: HTTP 422 Invalid: ClusterVersion.config.openshift.io \"version\" is invalid (causes: status.desired: Required value; status.versionHash: Required value)"
        );
        assert!(!line.contains("Status {"), "{line}");
    }

    #[test]
    fn other_errors_keep_their_chain() {
        let err = anyhow::anyhow!("inner").context("outer");
        assert_eq!(render_chain(&err), "outer: inner");
    }

    #[test]
    fn an_optional_file_is_its_text_none_when_absent_and_an_input_error_when_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("release-metadata");
        assert!(read_if_present(&file).unwrap().is_none());
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(read_if_present(&file).unwrap().as_deref(), Some("{}"));
        // A directory exists but cannot be read as text.
        let e = read_if_present(dir.path()).unwrap_err();
        assert_eq!((e.file.as_path(), e.field.as_str()), (dir.path(), "(file)"));
        assert!(e.problem.starts_with("cannot read: "), "{e}");
    }
}
