//! The HTTP/1.1 server, the routing of REST paths, query parsing and Google's error envelope.

use super::{World, compute, dns, iam, instances, lb_store, operations, reads, zonal};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

/// An error in Google's envelope.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "notFound", message)
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(400, "invalid", message)
    }

    fn status(&self) -> &'static str {
        match self.code {
            400 => "INVALID_ARGUMENT",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            409 => "ALREADY_EXISTS",
            412 => "FAILED_PRECONDITION",
            429 => "RESOURCE_EXHAUSTED",
            503 => "UNAVAILABLE",
            _ => "INTERNAL",
        }
    }

    pub fn body(&self) -> Value {
        json!({"error": {
            "code": self.code,
            "message": self.message,
            "errors": [{"message": self.message, "domain": "global", "reason": self.reason}],
            "status": self.status(),
        }})
    }
}

pub type Reply = Result<Value, ApiError>;

/// One request as the handlers see it.
pub struct Req {
    pub method: Method,
    pub segments: Vec<String>,
    pub query: BTreeMap<String, String>,
    pub body: Value,
}

impl Req {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A compute list's `filter`, and its page: (first item, items per page) from `pageToken`
    /// and `maxResults` (at most 500, the default).
    pub fn list_params(&self) -> Result<(super::Filter, usize, usize), ApiError> {
        let filter =
            super::Filter::parse(self.param("filter").unwrap_or("")).map_err(ApiError::invalid)?;
        let max = match self.param("maxResults") {
            Some(m) => m
                .parse::<usize>()
                .ok()
                .filter(|m| *m <= 500)
                .ok_or_else(|| {
                    ApiError::invalid(format!(
                        "Invalid value for field 'maxResults': '{m}'. Must be less than or equal to 500"
                    ))
                })?,
            None => 500,
        };
        let start = match self.param("pageToken") {
            Some(t) => t.parse::<usize>().map_err(|_| {
                ApiError::invalid(format!("Invalid value for field 'pageToken': '{t}'."))
            })?,
            None => 0,
        };
        Ok((filter, start, max.max(1)))
    }
}

#[cfg(test)]
impl Req {
    /// A request as a test writes it: `path` (segments split at `/`) with an optional
    /// `?k=v&...` query, percent-decoded as the router decodes it.
    pub fn for_test(method: Method, path: &str, body: Value) -> Self {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        Req {
            method,
            segments: path.split('/').map(str::to_string).collect(),
            query: query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), crate::percent::decode(v)))
                .collect(),
            body,
        }
    }
}

/// One page of a compute list: `kind`, `id` (the collection's path), `items`, `selfLink`, and
/// `nextPageToken` while more remain.
pub fn list_page(kind: &str, path: &str, matching: &[Value], start: usize, max: usize) -> Value {
    let page: Vec<Value> = matching.iter().skip(start).take(max).cloned().collect();
    let mut out = json!({
        "kind": kind,
        "id": path,
        "items": page,
        "selfLink": format!("{}/{path}", super::compute::BASE),
    });
    if start + max < matching.len() {
        out["nextPageToken"] = json!((start + max).to_string());
    }
    out
}

pub async fn serve(listener: TcpListener, world: Arc<Mutex<World>>) {
    while let Ok((stream, _)) = listener.accept().await {
        let world = world.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| handle(req, world.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(
    req: Request<Incoming>,
    world: Arc<Mutex<World>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    if let Some(rest) = parts.uri.path().strip_prefix("/computeMetadata/v1/") {
        let flavor = parts
            .headers
            .get("metadata-flavor")
            .and_then(|v| v.to_str().ok());
        let (status, content_type, text) = {
            let mut w = world.lock().unwrap_or_else(|p| p.into_inner());
            w.log
                .push(("GET".into(), format!("/computeMetadata/v1/{rest}")));
            super::metadata::answer(&w, rest, flavor)
        };
        let mut response = Response::new(Full::new(Bytes::from(text)));
        *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static(content_type),
        );
        response.headers_mut().insert(
            "metadata-flavor",
            hyper::header::HeaderValue::from_static("Google"),
        );
        return Ok(response);
    }
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let path = parts.uri.path().to_string();
    let query = parse_query(parts.uri.query().unwrap_or(""));
    let body: Result<Value, _> = if bytes.is_empty() {
        Ok(Value::Null)
    } else {
        serde_json::from_slice(&bytes)
    };
    let reply = match body {
        Err(e) => Err(ApiError::new(
            400,
            "parseError",
            format!("Invalid JSON payload received. {e}"),
        )),
        Ok(body) => {
            let req = Req {
                method: parts.method.clone(),
                segments: path
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(crate::percent::decode)
                    .collect(),
                query,
                body,
            };
            route(&req, &world).await
        }
    };
    let (status, value) = match reply {
        Ok(v) => (200, v),
        Err(e) => (e.code, e.body()),
    };
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    Ok(response)
}

async fn route(req: &Req, world: &Arc<Mutex<World>>) -> Reply {
    {
        let mut w = world.lock().unwrap_or_else(|p| p.into_inner());
        w.log.push((
            req.method.to_string(),
            format!("/{}", req.segments.join("/")),
        ));
        w.tick();
    }
    let s: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    match s.as_slice() {
        // regionOperations.wait blocks (at most 2 minutes) until the operation is DONE.
        [
            "compute",
            "v1",
            "projects",
            p,
            "regions",
            r,
            "operations",
            op,
            "wait",
        ] if req.method == Method::POST => operations::wait_operation(world, p, r, op).await,
        // zoneOperations.wait, likewise.
        [
            "compute",
            "v1",
            "projects",
            p,
            "zones",
            z,
            "operations",
            op,
            "wait",
        ] if req.method == Method::POST => instances::wait_operation(world, p, z, op).await,
        // globalOperations.wait, likewise.
        [
            "compute",
            "v1",
            "projects",
            p,
            "global",
            "operations",
            op,
            "wait",
        ] if req.method == Method::POST => lb_store::wait_global_operation(world, p, op).await,
        ["compute", "v1", "projects", ..] => {
            let mut w = world.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(reply) =
                zonal::route(&mut w, req, &s[3..]).or_else(|| lb_store::route(&mut w, req, &s[3..]))
            {
                return reply;
            }
            match reads::route(&w, req, &s[3..]) {
                Some(reply) => reply,
                None => match instances::route(&mut w, req, &s[3..]) {
                    Some(reply) => reply,
                    None => compute::route(&mut w, req, &s[3..]),
                },
            }
        }
        ["dns", "v1", "projects", ..] => {
            let mut w = world.lock().unwrap_or_else(|p| p.into_inner());
            dns::route(&mut w, req, &s[3..])
        }
        // Cloud Resource Manager v1 (its own host on GCP; one port here).
        ["v1", "projects", ..] => {
            let w = world.lock().unwrap_or_else(|p| p.into_inner());
            iam::route(&w, req, &s[2..]).unwrap_or_else(|| {
                Err(ApiError::not_found(format!(
                    "The requested URL /{} was not found on this server.",
                    s.join("/")
                )))
            })
        }
        _ => Err(ApiError::not_found(format!(
            "The requested URL /{} was not found on this server.",
            s.join("/")
        ))),
    }
}

fn parse_query(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (crate::percent::decode(k), crate::percent::decode(v))
        })
        .collect()
}
