use std::fmt;
use std::time::Duration;

/// How a caller should react to a cloud error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The object changed since it was read (DNS compare-and-swap lost): re-read and retry.
    Conflict,
    /// Throttling, 5xx, timeouts: worth another attempt later.
    Transient,
    /// Not found where something was expected.
    NotFound,
    /// Anything else: bad request, permissions, quota. Retrying will not help.
    Fatal,
}

/// An error from a cloud call. The message never carries credentials: providers build it from
/// the service's error code and message only.
#[derive(Debug, Clone)]
pub struct CloudError {
    pub kind: ErrorKind,
    pub operation: String,
    pub message: String,
    /// How long the service asked us to wait before trying again (`Retry-After`), if it did.
    pub retry_after: Option<Duration>,
}

impl CloudError {
    pub fn new(kind: ErrorKind, operation: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind,
            operation: operation.into(),
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    pub fn fatal(operation: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Fatal, operation, message)
    }

    pub fn is_transient(&self) -> bool {
        matches!(self.kind, ErrorKind::Transient | ErrorKind::Conflict)
    }

    /// The service asked us to slow down: a `Retry-After`, or its throttling code or status
    /// in the message (Route53/EC2 `Throttling`, `RequestLimitExceeded`, GCP
    /// `rateLimitExceeded`/`RESOURCE_EXHAUSTED`, ARM 429 `TooManyRequests`). Nothing was
    /// done: the same call may simply be made again later.
    pub fn is_throttled(&self) -> bool {
        const THROTTLED: [&str; 7] = [
            "throttl",
            "requestlimitexceeded",
            "ratelimitexceeded",
            "rate exceeded",
            "toomanyrequests",
            "resource_exhausted",
            "429",
        ];
        if self.kind != ErrorKind::Transient {
            return false;
        }
        let message = self.message.to_ascii_lowercase();
        self.retry_after.is_some() || THROTTLED.iter().any(|t| message.contains(t))
    }
}

impl fmt::Display for CloudError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ErrorKind::Conflict => "conflict",
            ErrorKind::Transient => "transient",
            ErrorKind::NotFound => "not found",
            ErrorKind::Fatal => "failed",
        };
        write!(f, "{} {kind}: {}", self.operation, self.message)
    }
}

impl std::error::Error for CloudError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_reads_operation_kind_and_message() {
        let shown = CloudError::new(ErrorKind::Conflict, "ChangeResourceRecordSets", "lost");
        assert_eq!(shown.to_string(), "ChangeResourceRecordSets conflict: lost");
        assert_eq!(
            CloudError::fatal("GetChange", "AccessDenied").to_string(),
            "GetChange failed: AccessDenied"
        );
    }

    #[test]
    fn throttling_is_told_by_code_status_or_retry_after_and_only_when_transient() {
        let transient = |m: &str| CloudError::new(ErrorKind::Transient, "op", m);
        for throttled in [
            transient("Throttling: Rate exceeded"),
            transient("RequestLimitExceeded: Request limit exceeded."),
            transient("HTTP 429 SubscriptionRequestsThrottled"),
            transient("RESOURCE_EXHAUSTED: quota"),
            transient("HTTP 503").with_retry_after(Some(Duration::from_secs(1))),
        ] {
            assert!(throttled.is_throttled(), "{throttled}");
        }
        for other in [
            transient("HTTP 503 Service Unavailable"),
            CloudError::fatal("op", "Throttling"),
            CloudError::new(ErrorKind::Conflict, "op", "rate exceeded"),
        ] {
            assert!(!other.is_throttled(), "{other}");
        }
    }
}
