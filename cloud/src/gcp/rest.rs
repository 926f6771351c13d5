//! Google APIs over plain REST, for the calls the official clients cannot make: Cloud Resource
//! Manager's `projects.testIamPermissions` (no Rust client of it here) and compute's
//! `instances.updateNetworkInterface` with an empty `aliasIpRanges` (the client leaves an empty
//! list out of the body). Same credentials, endpoint overrides and per-call retries
//! (`retry::PER_CALL`) as the clients; the token is never logged, and an error never holds the
//! request.

use super::{GcpSettings, credentials_for};
use crate::{CloudError, ErrorKind};
use google_cloud_auth::credentials::{CacheableResource, Credentials};
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;

/// How one API's error answer (HTTP status, Google's envelope) becomes ours.
pub(crate) type ErrorOf = fn(u16, &Value) -> CloudError;

pub(crate) struct GoogleRest {
    http: reqwest::Client,
    endpoint: String,
    credentials: Credentials,
    /// The call, as errors name it.
    operation: &'static str,
    error: ErrorOf,
}

impl GoogleRest {
    /// `endpoint`: the override (a local fake), else `default`.
    pub(crate) fn new(
        settings: &GcpSettings,
        endpoint: Option<&str>,
        default: &str,
        operation: &'static str,
        error: ErrorOf,
    ) -> Result<Self, CloudError> {
        let credentials = credentials_for(settings, endpoint)?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                CloudError::fatal(operation, format!("cannot build the HTTP client: {e}"))
            })?;
        Ok(Self {
            http,
            endpoint: endpoint
                .unwrap_or(default)
                .trim_end_matches('/')
                .to_string(),
            credentials,
            operation,
            error,
        })
    }

    /// One call, its transient failures retried; the answer's JSON (Null when it is none).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: &Value,
    ) -> Result<Value, CloudError> {
        crate::retry::PER_CALL
            .run(self.operation, CloudError::is_transient, || {
                self.once(method.clone(), path, query, body)
            })
            .await
    }

    async fn once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: &Value,
    ) -> Result<Value, CloudError> {
        let op = self.operation;
        let headers = match self.credentials.headers(Default::default()).await {
            Ok(CacheableResource::New { data, .. }) => data,
            Ok(CacheableResource::NotModified) => {
                return Err(CloudError::fatal(op, "no auth headers"));
            }
            // The credentials error never holds the key (it is registered for redaction too).
            Err(e) => {
                let kind = if e.is_transient() {
                    ErrorKind::Transient
                } else {
                    ErrorKind::Fatal
                };
                return Err(CloudError::new(
                    kind,
                    op,
                    format!("cannot get a token: {e}"),
                ));
            }
        };
        let response = self
            .http
            .request(method, format!("{}{path}", self.endpoint))
            .query(query)
            .headers(headers)
            .json(body)
            .send()
            .await
            .map_err(|e| {
                let what = if e.is_timeout() {
                    "timed out"
                } else {
                    "connection failed"
                };
                CloudError::new(ErrorKind::Transient, op, what)
            })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::retry::parse_retry_after);
        let bytes = response
            .bytes()
            .await
            .map_err(|_| CloudError::new(ErrorKind::Transient, op, "answer cut off"))?;
        let json: Value = serde_json::from_slice(&bytes).unwrap_or_default();
        if !(200..300).contains(&status) {
            return Err((self.error)(status, &json).with_retry_after(retry_after));
        }
        Ok(json)
    }
}
