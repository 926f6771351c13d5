//! A small typed client for the handful of Azure Resource Manager calls the agent makes.
//!
//! Why not an SDK: the official `azure_mgmt_*` 1.x crates are empty placeholders and the last
//! legacy `azure_mgmt_network` (0.21) is unmaintained (see DESIGN). So this is plain HTTPS with
//! `reqwest` (rustls, the process-wide aws-lc-rs provider), a bearer token from `azure_identity`'s
//! `ClientSecretCredential`, and ARM's conventions implemented once:
//!
//! - every request carries `api-version` and `Authorization: Bearer <token>`;
//! - errors come as `{"error":{"code","message"}}` and map to [`ErrorKind`] (404 NotFound,
//!   412 PreconditionFailed -> Conflict, 409 AnotherOperationInProgress / 429 / 5xx ->
//!   Transient, the rest Fatal);
//! - long-running operations (201/202 with `Azure-AsyncOperation` and/or `Location`) are
//!   followed to a terminal status, honouring `Retry-After`; a PUT ends with a GET of the
//!   resource, as ARM's RPC specifies;
//! - throttling, 5xx and connection failures are retried by the one per-call policy
//!   (`retry::PER_CALL`: attempts, backoff, `Retry-After`, a budget per call); the caller's
//!   step deadline bounds the whole thing.
//!
//! The token is never logged: only method, path and status are traced.

use crate::poll::Poll;
use crate::{CloudError, ErrorKind};
use azure_core::credentials::TokenCredential;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// One call as `send` was asked to make it; each attempt sends it again.
struct ArmCall<'a> {
    operation: &'a str,
    method: Method,
    url: Url,
    headers: &'a [(&'a str, &'a str)],
    body: Option<&'a Value>,
}

/// A response with its JSON body (Null when empty).
#[derive(Debug)]
pub struct ArmResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl ArmResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub struct ArmClient {
    http: reqwest::Client,
    base: Url,
    credential: Arc<dyn TokenCredential>,
    scope: String,
    /// Upper bound for one wait between polls of a long-running operation.
    max_poll_delay: Duration,
    /// How long one long-running operation may take before we report it (transient).
    lro_timeout: Duration,
}

impl ArmClient {
    pub fn new(
        http: reqwest::Client,
        base: Url,
        credential: Arc<dyn TokenCredential>,
        scope: String,
    ) -> Self {
        Self {
            http,
            base,
            credential,
            scope,
            max_poll_delay: Duration::from_secs(10),
            lro_timeout: crate::poll::OPERATION_BUDGET,
        }
    }

    async fn token(&self, operation: &str) -> Result<String, CloudError> {
        let token = self
            .credential
            .get_token(&[self.scope.as_str()], None)
            .await
            .map_err(|e| {
                // azure_identity's messages carry the authority's error code, never the secret.
                let kind = match e.kind() {
                    azure_core::error::ErrorKind::Io => ErrorKind::Transient,
                    _ => ErrorKind::Fatal,
                };
                CloudError::new(kind, operation, format!("cannot get an ARM token: {e}"))
            })?;
        // The log writer scrubs it should any layer below ever print it.
        crate::redact::register(token.token.secret());
        Ok(token.token.secret().to_string())
    }

    /// `<base><path>?api-version=<v>[&query...]`.
    pub fn url(
        &self,
        path: &str,
        api_version: &str,
        query: &[(&str, &str)],
    ) -> Result<Url, CloudError> {
        let mut url = self
            .base
            .join(path.trim_start_matches('/'))
            .map_err(|e| CloudError::fatal("arm", format!("bad path {path}: {e}")))?;
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("api-version", api_version);
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        Ok(url)
    }

    /// Only URLs on the ARM endpoint ever get our token (LRO headers come from the server).
    fn same_origin(&self, url: &Url) -> bool {
        url.scheme() == self.base.scheme()
            && url.host_str() == self.base.host_str()
            && url.port_or_known_default() == self.base.port_or_known_default()
    }

    /// One request with retries of transient failures. Non-2xx answers become errors.
    pub async fn send(
        &self,
        operation: &str,
        method: Method,
        url: Url,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<ArmResponse, CloudError> {
        if !self.same_origin(&url) {
            return Err(CloudError::fatal(
                operation,
                format!("refusing to send the ARM token to {url}"),
            ));
        }
        // The one per-call policy: ARM's Retry-After when it throttles (429), else backoff
        // with jitter; a wait that does not fit the call's budget is the step's to make.
        let policy = crate::retry::PER_CALL;
        let call = ArmCall {
            operation,
            method,
            url,
            headers,
            body,
        };
        policy
            .run(
                operation,
                |e| e.kind == ErrorKind::Transient,
                || self.send_once(&call),
            )
            .await
    }

    async fn send_once(&self, call: &ArmCall<'_>) -> Result<ArmResponse, CloudError> {
        let (operation, headers, body) = (call.operation, call.headers, call.body);
        let (method, url) = (&call.method, &call.url);
        let token = self.token(operation).await?;
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| CloudError::fatal(operation, e.to_string()))?;
            let value = HeaderValue::from_str(v)
                .map_err(|e| CloudError::fatal(operation, e.to_string()))?;
            map.insert(name, value);
        }
        let mut auth = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| CloudError::fatal(operation, "token is not a valid header value"))?;
        auth.set_sensitive(true);
        map.insert(reqwest::header::AUTHORIZATION, auth);
        let mut request = self
            .http
            .request(method.clone(), url.clone())
            .headers(map)
            .timeout(Duration::from_secs(60));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(|e| {
            let what = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "connection failed"
            } else {
                "request failed"
            };
            CloudError::new(ErrorKind::Transient, operation, what)
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(|_| {
            CloudError::new(ErrorKind::Transient, operation, "response body cut short")
        })?;
        tracing::debug!(operation, %method, path = url.path(), status = status.as_u16(), "ARM");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        };
        if status.is_success() {
            return Ok(ArmResponse {
                status,
                headers,
                body,
            });
        }
        let retry_after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::retry::parse_retry_after);
        Err(classify(operation, status, &body).with_retry_after(retry_after))
    }

    /// GET; 404 -> None.
    pub async fn get_optional(
        &self,
        operation: &str,
        url: Url,
    ) -> Result<Option<Value>, CloudError> {
        match self.send(operation, Method::GET, url, &[], None).await {
            Ok(r) => Ok(Some(r.body)),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// GET of a list, following `nextLink`.
    pub async fn list(&self, operation: &str, url: Url) -> Result<Vec<Value>, CloudError> {
        let mut out = Vec::new();
        let mut next = Some(url);
        while let Some(url) = next.take() {
            let page = self
                .send(operation, Method::GET, url, &[], None)
                .await?
                .body;
            if let Some(items) = page["value"].as_array() {
                out.extend(items.iter().cloned());
            }
            if let Some(link) = page["nextLink"].as_str().filter(|l| !l.is_empty()) {
                next = Some(
                    Url::parse(link)
                        .map_err(|e| CloudError::fatal(operation, format!("bad nextLink: {e}")))?,
                );
            }
        }
        Ok(out)
    }

    /// Reads the operation status at `url` until `ended` says the operation ended (true) or
    /// failed (its error); each read waits as the previous answer's Retry-After asks, the
    /// first as `first`'s, within `poll`'s budget.
    async fn poll_operation(
        &self,
        operation: &str,
        poll: &mut Poll,
        url: Url,
        first: &ArmResponse,
        ended: impl Fn(&ArmResponse) -> Result<bool, CloudError>,
    ) -> Result<(), CloudError> {
        let mut asked = retry_after(first);
        loop {
            poll.wait(Some(asked)).await?;
            let status = self
                .send(operation, Method::GET, url.clone(), &[], None)
                .await?;
            if ended(&status)? {
                return Ok(());
            }
            asked = retry_after(&status);
        }
    }

    /// PUT or DELETE that may be long-running: sends it, follows the operation to its end and,
    /// for PUT, returns the resource as it is afterwards (None after a DELETE).
    pub async fn long_running(
        &self,
        operation: &str,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Result<Option<Value>, CloudError> {
        self.long_running_with(operation, method, url, &[], body)
            .await
    }

    /// `long_running` with headers on the first request (`If-Match`: a read-modify-write).
    pub async fn long_running_with(
        &self,
        operation: &str,
        method: Method,
        url: Url,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Option<Value>, CloudError> {
        let first = self
            .send(operation, method.clone(), url.clone(), headers, body)
            .await?;
        // One budget for the whole operation: its status polls and the provisioning state.
        let mut poll = Poll::new(
            operation,
            self.lro_timeout,
            Duration::from_millis(100),
            self.max_poll_delay,
        );
        if let Some(async_op) = first.header("azure-asyncoperation").map(str::to_string) {
            let url = Url::parse(&async_op).map_err(|e| {
                CloudError::fatal(operation, format!("bad Azure-AsyncOperation: {e}"))
            })?;
            self.poll_operation(operation, &mut poll, url, &first, |status| {
                match status.body["status"].as_str().unwrap_or("InProgress") {
                    "Succeeded" => Ok(true),
                    "Failed" | "Canceled" => Err(classify(operation, StatusCode::OK, &status.body)),
                    _ => Ok(false),
                }
            })
            .await?;
        } else if let Some(location) = first
            .header("location")
            .filter(|_| first.status == StatusCode::ACCEPTED)
            .map(str::to_string)
        {
            let url = Url::parse(&location)
                .map_err(|e| CloudError::fatal(operation, format!("bad Location: {e}")))?;
            self.poll_operation(operation, &mut poll, url, &first, |status| {
                Ok(status.status != StatusCode::ACCEPTED)
            })
            .await?;
        }
        if method == Method::DELETE {
            return Ok(None);
        }
        // The resource as the operation left it; wait out a provisioningState still moving
        // (an RP that answers 200 without an operation header).
        loop {
            let resource = self
                .send(operation, Method::GET, url.clone(), &[], None)
                .await?
                .body;
            match resource["properties"]["provisioningState"].as_str() {
                None | Some("Succeeded") => return Ok(Some(resource)),
                Some("Failed" | "Canceled") => {
                    return Err(CloudError::fatal(
                        operation,
                        format!(
                            "{} ended in provisioningState {}",
                            url.path(),
                            resource["properties"]["provisioningState"]
                        ),
                    ));
                }
                Some(_) => poll.wait(None).await?,
            }
        }
    }
}

fn retry_after(response: &ArmResponse) -> Duration {
    response
        .header("retry-after")
        .and_then(crate::retry::parse_retry_after)
        .unwrap_or(Duration::from_secs(1))
}

/// Maps an ARM error (status + `{"error":{"code","message"}}`) to ours. Operation-status
/// bodies carry the error the same way.
pub fn classify(operation: &str, status: StatusCode, body: &Value) -> CloudError {
    let error = if body["error"].is_object() {
        &body["error"]
    } else {
        body
    };
    let code = error["code"].as_str().unwrap_or("");
    let message = error["message"].as_str().unwrap_or("");
    let kind = match (status.as_u16(), code) {
        (412, _) | (_, "PreconditionFailed") => ErrorKind::Conflict,
        (404, _) => ErrorKind::NotFound,
        (_, "AnotherOperationInProgress" | "RetryableError" | "InternalServerError") => {
            ErrorKind::Transient
        }
        (408 | 429, _) => ErrorKind::Transient,
        (s, _) if s >= 500 => ErrorKind::Transient,
        _ => ErrorKind::Fatal,
    };
    let text = match (code.is_empty(), message.is_empty()) {
        (false, false) => format!("{code}: {message}"),
        (false, true) => code.to_string(),
        _ => format!("HTTP {}", status.as_u16()),
    };
    CloudError::new(kind, operation, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_arm_error_envelope_maps_to_our_kinds() {
        let cases = [
            (412, "PreconditionFailed", ErrorKind::Conflict),
            (404, "ResourceNotFound", ErrorKind::NotFound),
            (409, "AnotherOperationInProgress", ErrorKind::Transient),
            (429, "TooManyRequests", ErrorKind::Transient),
            (503, "ServiceUnavailable", ErrorKind::Transient),
            (400, "InvalidRequestFormat", ErrorKind::Fatal),
            (403, "AuthorizationFailed", ErrorKind::Fatal),
        ];
        for (status, code, kind) in cases {
            let body = json!({"error": {"code": code, "message": "m"}});
            let err = classify("op", StatusCode::from_u16(status).unwrap(), &body);
            assert_eq!(err.kind, kind, "{status} {code}");
            assert_eq!(err.message, format!("{code}: m"));
        }
    }

    #[test]
    fn a_failed_operation_status_carries_its_error() {
        let body = json!({"status": "Failed", "error": {"code": "QuotaExceeded", "message": "no"}});
        let err = classify("op", StatusCode::OK, &body);
        assert_eq!(err.kind, ErrorKind::Fatal);
        assert_eq!(err.message, "QuotaExceeded: no");
    }
}
