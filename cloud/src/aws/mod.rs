//! AWS: elastic IPs and ENIs through EC2, record sets through Route53.
//!
//! Endpoints and credentials come the standard way (`AWS_ENDPOINT_URL_EC2`,
//! `AWS_ENDPOINT_URL_ROUTE_53`, the default credential chain) unless the installer's creds
//! secret supplies static keys. Retries for throttling and 5xx are the SDK's standard mode
//! (but never for AllocateAddress, see `ec2`); the caller puts a deadline around each step.

mod adopt;
mod backend_sg;
mod ec2;
mod preflight;
mod route53;
mod subnets;

pub use ec2::Ec2Addresses;
pub use preflight::AwsPreflight;
pub use route53::Route53Dns;

use crate::{CloudError, ErrorKind};
use aws_config::BehaviorVersion;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider, future};
use aws_sdk_ec2::config::{Credentials, Region};
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use std::fmt;
use std::time::Duration;

/// Tag (key) marking what we own; value `owned`, as the Kubernetes cloud provider does.
pub fn cluster_tag(infra_id: &str) -> String {
    format!("kubernetes.io/cluster/{infra_id}")
}

/// Tag naming the reservation's purpose (its `ReservationKey` text form).
pub const RESERVATION_TAG: &str = "bootstrap-agent.openshift.io/reservation";

/// Static keys from the installer's creds secret. Debug never shows the secret.
#[derive(Clone)]
pub struct StaticKeys {
    pub access_key_id: String,
    pub secret_access_key: String,
}

impl fmt::Debug for StaticKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticKeys")
            .field("access_key_id", &"<redacted>")
            .field("secret_access_key", &"<redacted>")
            .finish()
    }
}

/// What the AWS providers need to connect.
#[derive(Debug, Clone)]
pub struct AwsSettings {
    pub region: String,
    pub infra_id: String,
    pub keys: Option<StaticKeys>,
    /// `platform.aws.publicIpv4Pool`: the BYO-IP pool every EIP is allocated from.
    pub public_ipv4_pool: Option<String>,
}

/// Hands out the credentials of the provider it wraps (static keys or the SDK's default
/// chain), registering each with [`crate::redact`] before the SDK sees it: the SDK's own
/// `Credentials` Debug prints the access key id, and its orchestrator traces every identity
/// it resolves, so the log writer must know what to scrub by then. Debug shows nothing.
struct RedactingCredentials(SharedCredentialsProvider);

impl fmt::Debug for RedactingCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RedactingCredentials(<redacted>)")
    }
}

impl ProvideCredentials for RedactingCredentials {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(async move {
            let credentials = self.0.provide_credentials().await?;
            register_credentials(&credentials);
            Ok(credentials)
        })
    }
}

fn register_credentials(credentials: &Credentials) {
    crate::redact::register(credentials.access_key_id());
    crate::redact::register(credentials.secret_access_key());
    if let Some(token) = credentials.session_token() {
        crate::redact::register(token);
    }
}

/// The SDK's standard retry strategy (throttling and transient errors, with its jitter) set
/// from the one per-call policy. The SDK has no total budget of its own: its waits are
/// bounded by one `max_delay` per retry, which [`crate::retry::PER_CALL`] keeps within the
/// budget.
pub(crate) fn retry_config() -> RetryConfig {
    let policy = crate::retry::PER_CALL;
    retry_config_backing_off(policy.initial_delay, policy.max_delay)
}

/// The per-call policy's attempts with another backoff: from `first`, doubling, at most `cap`
/// (Route53's reads and compare-and-swap writes, `route53.rs`).
pub(crate) fn retry_config_backing_off(first: Duration, cap: Duration) -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(crate::retry::PER_CALL.max_attempts)
        .with_initial_backoff(first)
        .with_max_backoff(cap)
}

/// Loads the shared SDK configuration once for both clients. Whatever the credentials'
/// source, they go through [`RedactingCredentials`].
pub async fn load_config(settings: &AwsSettings) -> aws_config::SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(settings.region.clone()))
        // The one per-call policy (`retry::PER_CALL`); the step's retry, which re-observes
        // first, backs off longer on top.
        .retry_config(retry_config())
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(10))
                .operation_attempt_timeout(Duration::from_secs(60))
                .build(),
        );
    if let Some(keys) = &settings.keys {
        let credentials = Credentials::new(
            keys.access_key_id.clone(),
            keys.secret_access_key.clone(),
            None,
            None,
            "installer-creds-secret",
        );
        register_credentials(&credentials);
        loader = loader.credentials_provider(credentials);
    }
    let config = loader.load().await;
    match config.credentials_provider() {
        Some(inner) => config
            .into_builder()
            .credentials_provider(SharedCredentialsProvider::new(RedactingCredentials(inner)))
            .build(),
        None => config,
    }
}

/// `config` for the one client built from it, with `endpoint` (a `serviceEndpoints` URL) when
/// given; None keeps the SDK's resolution (`AWS_ENDPOINT_URL_<SERVICE>`, else the region's).
/// An endpoint given here wins over the environment: a service's client takes the service's
/// own variable before the shared config's endpoint, so that lookup is switched off.
pub fn with_endpoint(
    config: &aws_config::SdkConfig,
    endpoint: Option<&str>,
) -> aws_config::SdkConfig {
    match endpoint {
        Some(url) => {
            let mut builder = config.to_builder();
            builder.set_service_config(None::<NoServiceConfig>);
            builder.endpoint_url(url).build()
        }
        None => config.clone(),
    }
}

/// No per-service settings from the environment or profile (see [`with_endpoint`]).
#[derive(Debug)]
struct NoServiceConfig;

impl aws_types::service_config::LoadServiceConfig for NoServiceConfig {
    fn load_config(&self, _: aws_types::service_config::ServiceConfigKey<'_>) -> Option<String> {
        None
    }
}

/// The HTTP status of a raw SDK response (every AWS SDK answers with the same response type).
pub(crate) trait HttpStatus {
    fn http_status(&self) -> u16;
}

impl HttpStatus for aws_sdk_ec2::config::http::HttpResponse {
    fn http_status(&self) -> u16 {
        self.status().as_u16()
    }
}

/// Service error codes that mean "try again": throttling and the services' own 5xx codes.
const TRANSIENT_CODES: &[&str] = &[
    "PriorRequestNotComplete",
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalError",
    "InternalFailure",
    "ServiceUnavailable",
    "Unavailable",
];

/// Maps an SDK error to ours using only the service's code and message (never the request,
/// which carries signed headers). Throttling and every 5xx are transient.
pub(crate) fn classify<E, R>(operation: &str, err: SdkError<E, R>) -> CloudError
where
    E: ProvideErrorMetadata + std::error::Error,
    R: fmt::Debug + HttpStatus,
{
    let server_error = err.raw_response().is_some_and(|r| r.http_status() >= 500);
    let kind = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            ErrorKind::Transient
        }
        SdkError::ServiceError(_) if server_error => ErrorKind::Transient,
        SdkError::ServiceError(_) => match err.code() {
            Some(code) if code.contains("NotFound") => ErrorKind::NotFound,
            // A lost compare-and-swap: the set we read is gone or changed, or one was created
            // meanwhile. Other InvalidChangeBatch causes (a CNAME there, a bad value) are fatal;
            // a CNAME's "conflicting RRSet ... already exists" too.
            Some("InvalidChangeBatch")
                if err.message().is_some_and(|m| {
                    !m.contains("conflicting RRSet")
                        && (m.contains("not found")
                            || m.contains("do not match")
                            || m.contains("already exists"))
                }) =>
            {
                ErrorKind::Conflict
            }
            Some(code) if TRANSIENT_CODES.contains(&code) => ErrorKind::Transient,
            _ => ErrorKind::Fatal,
        },
        _ => ErrorKind::Fatal,
    };
    let message = match (err.code(), err.message()) {
        (Some(code), Some(msg)) => format!("{code}: {msg}"),
        (Some(code), None) => code.to_string(),
        _ => match &err {
            SdkError::TimeoutError(_) => "timed out".to_string(),
            SdkError::DispatchFailure(d) if d.is_user() => "request could not be sent".to_string(),
            // Sent or not, and done or not, is unknown: the runner observes again first.
            SdkError::DispatchFailure(_) => "no answer: the connection failed".to_string(),
            _ => "unexpected response".to_string(),
        },
    };
    CloudError::new(kind, operation, message)
}

#[cfg(test)]
mod classify_tests {
    use super::*;
    use aws_sdk_ec2::config::http::HttpResponse;
    use aws_sdk_ec2::operation::allocate_address::AllocateAddressError;
    use aws_smithy_types::body::SdkBody;
    use aws_smithy_types::error::ErrorMetadata;

    fn service_error(status: u16, code: &str) -> SdkError<AllocateAddressError, HttpResponse> {
        let err =
            AllocateAddressError::generic(ErrorMetadata::builder().code(code).message("m").build());
        let raw = HttpResponse::new(status.try_into().unwrap(), SdkBody::empty());
        SdkError::service_error(err, raw)
    }

    #[test]
    fn every_5xx_and_throttling_is_transient_a_4xx_is_not() {
        for (status, code) in [
            (500, "InternalError"),
            (503, "Unavailable"),
            (502, "SomethingNew"),
            (503, "RequestLimitExceeded"),
            (400, "Throttling"),
            (400, "InternalFailure"),
        ] {
            let e = classify("AllocateAddress", service_error(status, code));
            assert_eq!(e.kind, ErrorKind::Transient, "{status} {code}");
        }
        for (status, code) in [
            (400, "InvalidParameterValue"),
            (403, "UnauthorizedOperation"),
        ] {
            let e = classify("AllocateAddress", service_error(status, code));
            assert_eq!(e.kind, ErrorKind::Fatal, "{status} {code}");
        }
        let e = classify(
            "AllocateAddress",
            service_error(400, "InvalidAllocationID.NotFound"),
        );
        assert_eq!(e.kind, ErrorKind::NotFound);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SDK retries as the one per-call policy says, and its worst wait fits the budget.
    #[test]
    fn the_sdk_retry_config_is_the_one_per_call_policy() {
        let (config, per_call) = (retry_config(), crate::retry::PER_CALL);
        assert_eq!(config.max_attempts(), per_call.max_attempts);
        assert_eq!(config.initial_backoff(), per_call.initial_delay);
        assert_eq!(config.max_backoff(), per_call.max_delay);
        assert!(per_call.worst_backoff() <= per_call.budget);
    }
}
