//! The request path of one connection: count the call, hold it, spoil or delay it, apply the
//! account's limits and IAM, then forward it to the emulator and hand its answer back.

use super::faults::{Fault, Injector};
use super::service_errors::{SERVER_ERROR, UNAVAILABLE, answer_in_words, throttled};
use super::{Hold, Service, State, classify, lock_state};
use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpStream;
use tokio::sync::Notify;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// What each connection's handler needs.
#[derive(Clone)]
pub(super) struct Route {
    pub(super) upstream: SocketAddr,
    pub(super) service: Service,
    pub(super) state: Arc<Mutex<State>>,
    pub(super) held: Arc<Notify>,
}

/// Answers one request and notes the time the agent waited on this peer.
pub(super) async fn handle(
    req: Request<Incoming>,
    route: Route,
) -> Result<Response<Full<Bytes>>, BoxError> {
    let arrived = std::time::Instant::now();
    let state = route.state.clone();
    let answer = answer(req, route).await;
    lock_state(&state)
        .busy
        .push((arrived, std::time::Instant::now()));
    answer
}

async fn answer(req: Request<Incoming>, route: Route) -> Result<Response<Full<Bytes>>, BoxError> {
    let Route {
        upstream,
        service,
        state,
        held,
    } = route;
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let call = classify(&parts.method, parts.uri.path(), &body);
    let (hold, fault, delay, authorizer, refused) = {
        let mut s = lock_state(&state);
        s.calls.push(call.clone());
        s.times.push(std::time::Instant::now());
        let nth = s.calls.iter().filter(|c| c.mutating).count();
        let hold = match s.hold {
            Some(h @ (Hold::Before(n) | Hold::After(n))) if call.mutating && n == nth => Some(h),
            _ => None,
        };
        let fault = s.injector.as_mut().and_then(Injector::decide);
        let mut refused = None;
        if fault.is_none()
            && let Some(limiter) = s.limiter.as_mut()
        {
            match limiter.admit(&parts.method, parts.uri.path(), &body) {
                Ok(()) => s.admitted += 1,
                Err(refusal) => {
                    s.rate_limited += 1;
                    refused = Some(refusal);
                }
            }
        }
        let delay = s.injector.as_mut().and_then(Injector::delay);
        if s.injector.is_some() {
            s.stats.requests += 1;
        }
        if delay.is_some() {
            s.stats.delayed += 1;
        }
        match fault {
            Some((Fault::Throttle, _)) => s.stats.throttled += 1,
            Some((Fault::ServerError, _)) => s.stats.server_errors += 1,
            Some((Fault::LostAnswer, _)) => s.stats.lost_answers += 1,
            Some((Fault::Unavailable, _)) => s.stats.unavailable += 1,
            Some((Fault::Reset, _)) => s.stats.resets += 1,
            None if refused.is_some() => s.stats.throttled += 1,
            None => {}
        }
        (hold, fault, delay, s.authorizer, refused)
    };
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let freeze = || {
        lock_state(&state).held = true;
        held.notify_waiters();
        std::future::pending::<()>()
    };
    if let Some(Hold::Before(_)) = hold {
        freeze().await;
    }
    if let Some(refused) = refused {
        return Ok(crate::limits::refusal(service, &refused));
    }
    match fault {
        Some((Fault::Throttle, pick)) => return Ok(throttled(service, &call, pick)),
        Some((Fault::ServerError, _)) => return Ok(answer_in_words(service, &SERVER_ERROR)),
        Some((Fault::Unavailable, _)) => return Ok(answer_in_words(service, &UNAVAILABLE)),
        Some((Fault::Reset, _)) => return Err("injected: the connection was reset".into()),
        _ => {}
    }
    if let Some(moto) = authorizer {
        match authorize(&parts, &body, moto).await {
            Ok(None) => {}
            Ok(Some(refusal)) => return Ok(refusal),
            Err(e) => {
                let mut r = Response::new(Full::new(Bytes::from(format!(
                    "proxy: the authorizer failed: {e:#}"
                ))));
                *r.status_mut() = hyper::StatusCode::BAD_GATEWAY;
                return Ok(r);
            }
        }
    }
    let response = forward(Request::from_parts(parts, Full::new(body)), upstream).await;
    if let Some(Hold::After(_)) = hold {
        freeze().await;
    }
    if let Some((Fault::LostAnswer, _)) = fault {
        // The emulator did it; an error from the service makes hyper close the connection
        // without writing a response, as a connection reset on the way back would.
        return Err("injected: the answer was lost".into());
    }
    Ok(response.unwrap_or_else(|e| {
        let mut r = Response::new(Full::new(Bytes::from(format!(
            "proxy: upstream failed: {e}"
        ))));
        *r.status_mut() = hyper::StatusCode::BAD_GATEWAY;
        r
    }))
}

/// Asks moto's `/moto-api/authorize` about a request: `None` when it is allowed, else the
/// refusal moto wrote, as the service writes it.
async fn authorize(
    parts: &hyper::http::request::Parts,
    body: &Bytes,
    moto: SocketAddr,
) -> Result<Option<Response<Full<Bytes>>>> {
    let headers: Vec<[String; 2]> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            [
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ]
        })
        .collect();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.to_string());
    let ask = serde_json::json!({
        "method": parts.method.as_str(),
        "path": path,
        "headers": headers,
        "body": String::from_utf8_lossy(body),
    });
    let request = Request::post("/moto-api/authorize")
        .header(hyper::header::HOST, moto.to_string())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(ask.to_string())))?;
    let answer = forward(request, moto).await?;
    match answer.status().as_u16() {
        200 => Ok(None),
        403 => Ok(Some(answer)),
        other => {
            let text = answer.into_body().collect().await?.to_bytes();
            anyhow::bail!(
                "moto /moto-api/authorize answered {other}: {}",
                String::from_utf8_lossy(&text)
            )
        }
    }
}

pub(super) async fn forward(
    req: Request<Full<Bytes>>,
    upstream: SocketAddr,
) -> Result<Response<Full<Bytes>>> {
    let stream = TcpStream::connect(upstream).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let response = sender.send_request(req).await?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(Response::from_parts(parts, Full::new(body)))
}
