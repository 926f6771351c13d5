//! The fake's HTTP side: accepting connections (plain or TLS), turning a request into a
//! [`Call`] on the world and its [`Reply`] into a response, and the throwaway PKI of the
//! login endpoint. Apart from [`AzureSim`](super::AzureSim)'s controls so that what a request
//! goes through reads on its own.

use super::arm::{Call, Reply};
use super::{ALL_HOSTS, Shared, endpoints, lock};
use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Accepts connections on `listener`, over TLS when `tls` is given, and answers each request
/// with `handler(request, world)`.
pub(super) fn serve<H, F>(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    world: Shared,
    handler: H,
) -> tokio::task::JoinHandle<()>
where
    H: Fn(Request<Incoming>, Shared) -> F + Copy + Send + Sync + 'static,
    F: Future<Output = Result<Response<Full<Bytes>>, hyper::Error>> + Send + 'static,
{
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (w, tls) = (world.clone(), tls.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req| handler(req, w.clone()));
                let builder = http1::Builder::new();
                let _ = match tls {
                    None => {
                        builder
                            .serve_connection(TokioIo::new(stream), service)
                            .await
                    }
                    Some(tls) => match tls.accept(stream).await {
                        Ok(tls) => builder.serve_connection(TokioIo::new(tls), service).await,
                        Err(_) => return,
                    },
                };
            });
        }
    })
}

pub(super) async fn arm_handler(
    req: Request<Incoming>,
    world: Shared,
    scheme: &'static str,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let host = host_of(&parts.headers);
    let token = parts
        .headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::to_string);
    let reply = {
        let mut w = lock(&world);
        let cloud = w.cloud;
        let path = segments(&parts.uri);
        let api_version: Option<String> =
            url::form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
                .find(|(k, _)| k == "api-version")
                .map(|(_, v)| v.into_owned());
        let refused = |t: &String| {
            w.tokens
                .get(t)
                .and_then(|info| cloud.refuse(info))
                .or_else(|| cloud.refuse_provider(&path, api_version.as_deref()))
        };
        match token {
            _ if parts.method == hyper::Method::GET && path == ["metadata", "endpoints"] => {
                if endpoints::wants_array(api_version.as_deref()) {
                    endpoints::clouds(cloud, &format!("{scheme}://{host}"), &w.login_origin)
                } else {
                    cloud
                        .metadata()
                        .unwrap_or_else(|| Reply::error(404, "NotFound", "no such route"))
                }
            }
            None => Reply::error(
                401,
                "AuthenticationFailed",
                "Authentication failed. The 'Authorization' header is missing.",
            ),
            Some(t) if !w.tokens.contains_key(&t) => Reply::error(
                401,
                "InvalidAuthenticationToken",
                "The access token is invalid.",
            ),
            Some(t) if refused(&t).is_some() => {
                refused(&t).unwrap_or_else(|| Reply::json(500, json!({})))
            }
            Some(_) => {
                let query: BTreeMap<String, String> =
                    url::form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
                        .into_owned()
                        .collect();
                let segments: Vec<String> = parts
                    .uri
                    .path()
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        url::form_urlencoded::parse(format!("x={s}").as_bytes())
                            .next()
                            .map_or_else(|| s.to_string(), |(_, v)| v.into_owned())
                    })
                    .collect();
                let call = Call {
                    method: parts.method.as_str(),
                    segments: segments.iter().map(String::as_str).collect(),
                    query,
                    headers: &parts.headers,
                    body: &body,
                    origin: format!("{scheme}://{host}"),
                };
                w.handle(&call)
            }
        }
    };
    Ok(to_response(reply))
}

pub(super) fn to_response(reply: Reply) -> Response<Full<Bytes>> {
    let body = reply
        .body
        .map(|b| Bytes::from(b.to_string()))
        .unwrap_or_default();
    let has_body = !body.is_empty();
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = hyper::StatusCode::from_u16(reply.status)
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    if has_body {
        headers.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json; charset=utf-8"),
        );
    }
    headers.insert(
        "x-ms-request-id",
        hyper::header::HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
            .unwrap_or(hyper::header::HeaderValue::from_static("0")),
    );
    for (k, v) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(k.as_bytes()),
            hyper::header::HeaderValue::from_str(&v),
        ) {
            headers.insert(name, value);
        }
    }
    response
}

/// The non-empty segments of the request's path.
/// The `Host` the client asked for (the endpoints it is told name it).
pub(super) fn host_of(headers: &hyper::HeaderMap) -> String {
    headers
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_string()
}

pub(super) fn segments(uri: &hyper::Uri) -> Vec<&str> {
    uri.path().split('/').filter(|s| !s.is_empty()).collect()
}

/// A throwaway CA and a server certificate for 127.0.0.1 / localhost.
pub(super) fn pki() -> Result<(String, Arc<rustls::ServerConfig>)> {
    let mut names = vec!["127.0.0.1", "localhost"];
    names.extend_from_slice(ALL_HOSTS);
    let pki = crate::pki::generate("azure-sim-ca", "login.azure-sim", &names)?;
    Ok((pki.ca_pem, pki.server))
}
