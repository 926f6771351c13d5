//! GCP: regional static addresses through Compute Engine, record sets through Cloud DNS, with
//! the official `google-cloud-compute-v1` and `google-cloud-dns-v1` clients.
//!
//! - **Ownership** is carried by labels (GCP has no tags with `/` or `.` in keys): every
//!   address we create has `kubernetes-io-cluster-<infra-id>: owned` (the label the installer
//!   and the GCP cloud provider use) and `bootstrap-agent-reservation: <scope>-<family>` (the
//!   `ReservationKey` text form; GCP reservations have no placement, so it is always a valid
//!   label value). Label keys and values are lowercase `[a-z0-9_-]`, at most 63 characters;
//!   [`label_text`] maps anything else to `_` and truncates.
//! - **Idempotency:** `addresses.insert` takes a `requestId` that must be a UUID. It is derived
//!   from the planner's token with UUID v5 ([`request_id`]), so a retry or a resume after a
//!   crash sends the same id and GCE answers with the same operation instead of a second
//!   address.
//! - **Endpoints and credentials:** the service account key from the installer's creds secret,
//!   else Application Default Credentials. [`COMPUTE_ENDPOINT_ENV`] and [`DNS_ENDPOINT_ENV`]
//!   override the endpoints (for the local fakes); an override that is a plain `http://` URL
//!   gets anonymous credentials, because a token must never be sent in clear text and the
//!   fakes do not check it.

/// Builds one google-cloud client: the settings' credentials for `endpoint`, our retry and
/// backoff policies, and the endpoint override when there is one.
macro_rules! build_client {
    ($client:ty, $settings:expr, $endpoint:expr, $what:expr) => {{
        let endpoint: Option<&str> = $endpoint;
        let mut builder = <$client>::builder()
            .with_credentials(super::credentials_for($settings, endpoint)?)
            .with_retry_policy(super::retry_policy())
            .with_backoff_policy(super::backoff_policy());
        if let Some(endpoint) = endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        builder.build().await.map_err(|e| {
            $crate::CloudError::fatal(
                concat!($what, " client"),
                format!("cannot build the client: {e}"),
            )
        })?
    }};
}

mod addresses;
mod adopt;
mod backend_health;
mod bootstrap_host;
mod dns;
mod permissions;
mod preflight;
mod rest;

pub use addresses::GceAddresses;
pub use dns::CloudDns;
pub use permissions::RESOURCE_MANAGER_ENDPOINT_ENV;
pub use preflight::{GcpNetwork, GcpPreflight};

use crate::{CloudError, ErrorKind};
use google_cloud_auth::credentials::{self, Credentials};
use google_cloud_gax::error::Error as GaxError;
use google_cloud_gax::retry_policy::RetryPolicyExt;
use std::fmt;

/// Overrides the Compute Engine endpoint (default `https://compute.googleapis.com`).
pub const COMPUTE_ENDPOINT_ENV: &str = "BOOTSTRAP_AGENT_GCP_COMPUTE_ENDPOINT";
/// Overrides the Cloud DNS endpoint (default `https://dns.googleapis.com`).
pub const DNS_ENDPOINT_ENV: &str = "BOOTSTRAP_AGENT_GCP_DNS_ENDPOINT";

/// Label key naming the reservation's purpose (`public-ipv4`, `private-ipv4`).
pub const RESERVATION_LABEL: &str = "bootstrap-agent-reservation";

/// Label key marking what we own; value `owned`.
pub fn cluster_label(infra_id: &str) -> String {
    label_text(&format!("kubernetes-io-cluster-{infra_id}"))
}

/// A GCP label key or value: lowercase letters, digits, `_` and `-`, at most 63 characters.
/// Anything else becomes `_` (infra ids are already lowercase `[a-z0-9-]`, so in practice the
/// mapping is the identity).
pub fn label_text(text: &str) -> String {
    text.chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(63)
        .collect()
}

/// The `requestId` for a reservation token: a UUID (GCE rejects anything else), the same for
/// the same token on every run, different for different tokens.
pub fn request_id(token: &str) -> String {
    const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6b1d_3f0e_8a52_4c1b_9e07_5d2f_a4c8_b310);
    uuid::Uuid::new_v5(&NAMESPACE, token.as_bytes()).to_string()
}

/// How the clients authenticate. Debug never shows the key.
#[derive(Clone, Default)]
pub enum GcpCredentials {
    /// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, metadata).
    #[default]
    Default,
    /// The service account key JSON from the installer's `gcp-credentials` secret.
    ServiceAccount(String),
}

impl fmt::Debug for GcpCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GcpCredentials::Default => "GcpCredentials::Default",
            GcpCredentials::ServiceAccount(_) => "GcpCredentials::ServiceAccount(<redacted>)",
        })
    }
}

/// What the GCP providers need to connect.
#[derive(Debug, Clone)]
pub struct GcpSettings {
    pub project: String,
    pub region: String,
    /// The compute subnetwork's name: the internal address is taken from its range, because
    /// the cloud provider creates internal forwarding rules there.
    pub subnetwork: String,
    /// Shared VPC (`networkProjectID`): the host project holding the subnetwork. Addresses
    /// are still created in `project`.
    pub network_project: Option<String>,
    pub infra_id: String,
    pub credentials: GcpCredentials,
    pub compute_endpoint: Option<String>,
    pub dns_endpoint: Option<String>,
    /// Cloud Resource Manager, for preflight's `projects.testIamPermissions`.
    pub resource_manager_endpoint: Option<String>,
    /// The bootstrap IP of the host that gets a second address (None: off).
    pub second_address_host: Option<std::net::IpAddr>,
}

impl GcpSettings {
    /// Reads the endpoint overrides from the environment.
    pub fn with_env_endpoints(mut self) -> Self {
        let read = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        self.compute_endpoint = read(COMPUTE_ENDPOINT_ENV);
        self.dns_endpoint = read(DNS_ENDPOINT_ENV);
        self.resource_manager_endpoint = read(RESOURCE_MANAGER_ENDPOINT_ENV);
        self
    }

    /// The subnetwork's URL as GCE expects it in `Address.subnetwork`: under the project that
    /// holds it (a Shared VPC's host project), or GCE cannot find it.
    pub fn subnetwork_url(&self) -> String {
        format!(
            "projects/{}/regions/{}/subnetworks/{}",
            self.network_project.as_deref().unwrap_or(&self.project),
            self.region,
            self.subnetwork
        )
    }
}

/// Registers the key's secret parts with [`crate::redact`]: the whole JSON, and its
/// `private_key` and `private_key_id`, which a client could print on their own.
fn register_key(json: &str) {
    crate::redact::register(json);
    if let Ok(key) = serde_json::from_str::<serde_json::Value>(json) {
        for field in ["private_key", "private_key_id"] {
            if let Some(text) = key[field].as_str() {
                crate::redact::register(text);
            }
        }
    }
}

/// The credentials for one endpoint: anonymous for a plain-HTTP override (a local fake),
/// else the service account key or ADC.
pub(crate) fn credentials_for(
    settings: &GcpSettings,
    endpoint: Option<&str>,
) -> Result<Credentials, CloudError> {
    if let GcpCredentials::ServiceAccount(json) = &settings.credentials {
        register_key(json);
    }
    if endpoint.is_some_and(|e| e.starts_with("http://")) {
        return Ok(credentials::anonymous::Builder::new().build());
    }
    match &settings.credentials {
        GcpCredentials::Default => credentials::Builder::default().build().map_err(|e| {
            CloudError::fatal(
                "credentials",
                format!("no Application Default Credentials: {e}"),
            )
        }),
        GcpCredentials::ServiceAccount(json) => {
            // The parse error of serde_json never quotes the input, so the key cannot leak.
            let key: serde_json::Value = serde_json::from_str(json).map_err(|e| {
                CloudError::fatal(
                    "credentials",
                    format!("service_account.json is not JSON: {e}"),
                )
            })?;
            credentials::service_account::Builder::new(key)
                .build()
                .map_err(|_| {
                    CloudError::fatal(
                        "credentials",
                        "service_account.json is not a valid service account key",
                    )
                })
        }
    }
}

/// The clients' retry policy, from the one per-call policy (`retry::PER_CALL`): what
/// [`classify`] calls transient (throttling, 5xx, a lost connection) is retried up to its
/// attempts and within its budget (gax counts the attempts' time in it too), but only for
/// requests that are safe to repeat. Reads are; of the writes the agent marks idempotent only
/// those it made so ([`idempotent`]). The runner retries our transient errors on top,
/// re-observing each time.
pub(crate) fn retry_policy() -> impl google_cloud_gax::retry_policy::RetryPolicy {
    let policy = crate::retry::PER_CALL;
    TransientErrors
        .with_attempt_limit(policy.max_attempts)
        .with_time_limit(policy.budget)
}

/// The clients' backoff between attempts, from the one per-call policy, with the gax
/// policy's full jitter.
pub(crate) fn backoff_policy() -> google_cloud_gax::exponential_backoff::ExponentialBackoff {
    let policy = crate::retry::PER_CALL;
    google_cloud_gax::exponential_backoff::ExponentialBackoffBuilder::new()
        .with_initial_delay(policy.initial_delay)
        .with_maximum_delay(policy.max_delay)
        .with_scaling(2.0)
        .build()
        .unwrap_or_default()
}

/// Writes that are safe to send again after a lost answer:
/// - `addresses.insert` carries a `requestId`: GCE answers a repeat with the first operation;
/// - `addresses.delete` of a gone address is a 404, which `release` takes as done;
/// - `changes.create` is a compare-and-swap: a repeat of an applied change no longer matches
///   (412/409/404, a conflict), and the shared edit re-reads and finds it done.
pub(crate) const IDEMPOTENT: bool = true;

/// Retries what [`classify`] calls transient, for idempotent requests only (AIP-194 retries
/// only UNAVAILABLE; Google's throttling is 429 RESOURCE_EXHAUSTED and its 500 is INTERNAL).
#[derive(Debug)]
struct TransientErrors;

impl google_cloud_gax::retry_policy::RetryPolicy for TransientErrors {
    fn on_error(
        &self,
        state: &google_cloud_gax::retry_state::RetryState,
        error: GaxError,
    ) -> google_cloud_gax::retry_result::RetryResult {
        use google_cloud_gax::retry_result::RetryResult;
        if error.is_transient_and_before_rpc() {
            return RetryResult::Continue(error);
        }
        if !state.idempotent {
            return RetryResult::Permanent(error);
        }
        if is_transient(&error) {
            RetryResult::Continue(error)
        } else {
            RetryResult::Permanent(error)
        }
    }
}

/// Throttling, 5xx, timeouts and broken connections.
fn is_transient(err: &GaxError) -> bool {
    use google_cloud_gax::error::rpc::Code;
    if let Some(http) = err.http_status_code() {
        let throttled = http == 403 && is_rate_limited(err);
        return http == 429 || throttled || (500..=599).contains(&http);
    }
    err.is_timeout()
        || err.is_io()
        || err.is_connect()
        || err.is_transport()
        || matches!(
            err.status().map(|s| s.code),
            Some(Code::Unavailable | Code::ResourceExhausted | Code::DeadlineExceeded)
        )
}

/// Compute Engine answers a spent per-minute rate quota with 403 and the reason
/// `rateLimitExceeded` (cloud.google.com/compute/docs/api-rate-limits: "you receive a 403
/// error with the reason rateLimitExceeded"), older APIs `userRateLimitExceeded`: throttling,
/// not a refusal.
pub(crate) fn is_rate_limit_reason(reason: &str) -> bool {
    matches!(reason, "rateLimitExceeded" | "userRateLimitExceeded")
}

/// Whether an error carries a rate-limit reason: in the envelope's `errors[]` (which the
/// client turns into ErrorInfo details) or in an ErrorInfo of its own (`RATE_LIMIT_EXCEEDED`).
fn is_rate_limited(err: &GaxError) -> bool {
    use google_cloud_gax::error::rpc::StatusDetails;
    let in_details = err.status().is_some_and(|status| {
        status.details.iter().any(|d| match d {
            StatusDetails::ErrorInfo(info) => {
                is_rate_limit_reason(&info.reason) || info.reason == "RATE_LIMIT_EXCEEDED"
            }
            _ => false,
        })
    });
    in_details || reason(err).is_some_and(|r| is_rate_limit_reason(&r))
}

/// Whether a REST answer is Google's throttling: 429, or 403 with a rate-limit reason.
pub(crate) fn is_throttling(http: u16, body: &serde_json::Value) -> bool {
    http == 429
        || (http == 403
            && body["error"]["errors"][0]["reason"]
                .as_str()
                .is_some_and(is_rate_limit_reason))
}

/// Google's reason (`errors[0].reason`, e.g. `conditionNotMet`, `alreadyExists`) from the
/// error envelope, when the payload has one.
pub(crate) fn reason(err: &GaxError) -> Option<String> {
    let payload = err.http_payload()?;
    let body: serde_json::Value = serde_json::from_slice(payload).ok()?;
    body["error"]["errors"][0]["reason"]
        .as_str()
        .map(str::to_string)
}

/// What the service last answered: a retry loop that ran out of time (or was held back by the
/// client's retry throttler) returns an `exhausted` error wrapping that answer, which alone
/// says whether it was throttling (under a fleet's rate limit, the usual case) or fatal.
fn last_answer(err: &GaxError) -> &GaxError {
    if !err.is_exhausted() {
        return err;
    }
    std::error::Error::source(err)
        .and_then(|source| source.downcast_ref::<GaxError>())
        .unwrap_or(err)
}

/// Maps a client error to ours from the HTTP status, Google's status and message only (never
/// the request, which carries the bearer token).
pub(crate) fn classify(operation: &str, err: GaxError) -> CloudError {
    let err = last_answer(&err);
    let http = err.http_status_code();
    let kind = if is_transient(err) {
        ErrorKind::Transient
    } else {
        match http {
            Some(404) => ErrorKind::NotFound,
            Some(409) | Some(412) => ErrorKind::Conflict,
            _ => match err.status().map(|s| s.code) {
                Some(google_cloud_gax::error::rpc::Code::NotFound) => ErrorKind::NotFound,
                _ => ErrorKind::Fatal,
            },
        }
    };
    let message = match (err.status(), reason(err)) {
        (Some(status), Some(reason)) => format!("{reason}: {}", status.message),
        (Some(status), None) => format!("{}: {}", status.code, status.message),
        (None, _) if err.is_timeout() => "timed out".to_string(),
        (None, _) if err.is_connect() || err.is_io() => "connection failed".to_string(),
        (None, _) => match http {
            Some(code) => format!("HTTP {code}"),
            None => "request failed".to_string(),
        },
    };
    CloudError::new(kind, operation, with_permissions(operation, http, message))
}

/// A refusal (403) names the permissions the call needs, from the table: Compute names the
/// one it missed, but Cloud DNS answers only "Forbidden".
fn with_permissions(operation: &str, http: Option<u16>, message: String) -> String {
    let needs = crate::permissions::gcp_permissions_of_call(operation);
    if http != Some(403) || needs.is_empty() {
        return message;
    }
    format!("{message} ({operation} needs {})", needs.join(", "))
}

/// The end of a GCE operation (regional or zonal): once it is DONE (polled with `fetch` by its
/// name, bounded: `poll::OPERATION_BUDGET`), its error turned into ours.
pub(crate) async fn until_done<F, Fut>(
    what: &str,
    mut op: google_cloud_compute_v1::model::Operation,
    mut fetch: F,
) -> Result<(), CloudError>
where
    F: FnMut(String) -> Fut,
    Fut:
        std::future::Future<Output = Result<google_cloud_compute_v1::model::Operation, CloudError>>,
{
    use google_cloud_compute_v1::model::operation;
    let mut poll = crate::poll::Poll::new(
        what,
        crate::poll::OPERATION_BUDGET,
        std::time::Duration::from_millis(100),
        std::time::Duration::from_secs(2),
    );
    loop {
        if op.status == Some(operation::Status::Done) {
            return match &op.error {
                Some(error) if !error.errors.is_empty() => {
                    Err(addresses::operation_error(what, &op))
                }
                _ => Ok(()),
            };
        }
        let name = op
            .name
            .clone()
            .ok_or_else(|| CloudError::fatal(what, "operation without a name cannot be awaited"))?;
        poll.wait(None).await?;
        op = fetch(name).await?;
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
