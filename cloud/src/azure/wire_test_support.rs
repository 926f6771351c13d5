//! What the tests' in-process ARM servers share: the settle tests' fake (a unit test) and
//! `tests/arm_wire.rs` (which includes this file by path): a fixed bearer token for the
//! client, and the reading of one HTTP/1.1 request.
#![allow(clippy::unwrap_used, dead_code)] // each includer reads only the fields it needs

use azure_core::credentials::{AccessToken, TokenCredential, TokenRequestOptions};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

/// A credential that always hands out its token, valid for an hour.
#[derive(Debug)]
pub struct StaticToken(pub &'static str);

#[async_trait::async_trait]
impl TokenCredential for StaticToken {
    async fn get_token(
        &self,
        _scopes: &[&str],
        _options: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        Ok(AccessToken::new(
            self.0.to_string(),
            azure_core::time::OffsetDateTime::now_utc() + azure_core::time::Duration::hours(1),
        ))
    }
}

/// One request as a test server read it.
pub struct Request {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Names in lower case, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The JSON body (Null: empty or not JSON).
    pub body: Value,
}

/// Reads the next request of a connection: None at its end or when the request is malformed.
pub async fn read_request<R: tokio::io::AsyncBufRead + Unpin>(read: &mut R) -> Option<Request> {
    let mut line = String::new();
    if read.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        read.read_line(&mut header).await.ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some(Request {
        method,
        target,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
