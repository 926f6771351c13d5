//! A counting, fault-injecting HTTP/1.1 proxy. Tests put it between the agent and an emulator
//! to count the agent's mutating calls, and to freeze the agent between two mutations (hold
//! the n-th mutation before or after the emulator saw it) so it can be SIGKILLed right there.
//!
//! It also injects faults ([`Faults`]): at a given rate, from a seeded generator (the n-th
//! request gets the same verdict on every run with the same seed), a request is answered
//! with the service's own throttling error, with its own HTTP 500, or forwarded to the
//! emulator and then its connection dropped without an answer ("done, but the answer was
//! lost"). The error bodies are written as each real service writes them ([`Service`]).
//! Independently of those, it can delay requests ([`Latency`]): a slow network or a slow API,
//! the answer itself unchanged.

use crate::limits::{Limiter, Limits, QuotaUse};
use crate::rng::Rng;
use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The service behind a proxy: which error bodies it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// EC2's Query API: `<Response><Errors><Error><Code>..`; throttling is
    /// `RequestLimitExceeded` with HTTP 503.
    Ec2,
    /// Route53's REST-XML API: `<ErrorResponse><Error><Type><Code>..`; throttling is
    /// `Throttling` with HTTP 400.
    Route53,
    /// Azure Resource Manager: `{"error":{"code","message"}}`; throttling is HTTP 429 with
    /// `Retry-After`.
    Arm,
    /// Google APIs (compute.v1, dns.v1): `{"error":{"code","message","status","errors"}}`;
    /// throttling is HTTP 429 `RESOURCE_EXHAUSTED` or 503 `UNAVAILABLE`, reason
    /// `rateLimitExceeded`.
    Google,
}

/// What can go wrong with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// The service's own throttling error; the emulator never sees the request.
    Throttle,
    /// The service's own HTTP 500; the emulator never sees the request.
    ServerError,
    /// Forwarded and done by the emulator; the connection is then dropped unanswered.
    LostAnswer,
    /// The service's own HTTP 503 (unavailable); the emulator never sees the request.
    Unavailable,
    /// The connection is dropped before the request is forwarded: the emulator never sees it
    /// and the client hears nothing (a reset on the way there).
    Reset,
}

impl Fault {
    /// The three the seeded tests have always drawn from (their seeds' verdicts unchanged).
    pub const ALL: [Fault; 3] = [Fault::Throttle, Fault::ServerError, Fault::LostAnswer];
    /// Every kind: a bad day (`bootstrap-sim faults`).
    pub const BAD_DAY: [Fault; 5] = [
        Fault::Throttle,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::LostAnswer,
        Fault::Reset,
    ];
}

/// Fault injection settings: each request fails with probability `rate`, the fault picked
/// uniformly from `kinds`, until `limit` faults were injected (None: no limit); and, decided
/// apart (its own generator, so adding it leaves the faults of a seed as they were), each
/// request is delayed per `latency`.
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    pub rate: f64,
    pub seed: u64,
    pub kinds: Vec<Fault>,
    pub limit: Option<usize>,
    pub latency: Option<Latency>,
}

/// Added latency: with probability `rate` a request waits a uniform `min_ms..=max_ms` before
/// the proxy acts on it (forwards it, or answers with its fault).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub rate: f64,
    pub min_ms: u64,
    pub max_ms: u64,
}

impl Faults {
    /// Every kind of fault at `rate`.
    pub fn new(rate: f64, seed: u64) -> Self {
        Self {
            rate,
            seed,
            kinds: Fault::ALL.to_vec(),
            limit: None,
            latency: None,
        }
    }

    /// The same faults, and requests delayed per `latency` besides.
    pub fn with_latency(self, latency: Latency) -> Self {
        Self {
            latency: Some(latency),
            ..self
        }
    }

    /// Exactly the next `n` requests fail with `fault`.
    pub fn next(n: usize, fault: Fault) -> Self {
        Self {
            rate: 1.0,
            seed: 0,
            kinds: vec![fault],
            limit: Some(n),
            latency: None,
        }
    }
}

/// A service's request rate limit per account, as a token bucket: `per_second` tokens
/// added per second up to `burst`; a request takes one, and without one it is answered with
/// the service's own throttling error (Route53: "five requests per second per AWS account",
/// GetChange included, docs.aws.amazon.com/Route53/latest/DeveloperGuide/DNSLimitations.html
/// "Limits on API requests"; answered 400 `Throttling` "Rate exceeded"). The emulator never
/// sees a throttled request. One proxy is one account.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    pub per_second: f64,
    pub burst: f64,
}

impl RateLimit {
    /// Route53's: 5 requests per second per account.
    pub const ROUTE53: RateLimit = RateLimit {
        per_second: 5.0,
        burst: 5.0,
    };
    /// Azure Resource Manager's per-subscription token bucket for writes: 200 tokens,
    /// refilled 10 per second ("Understand how Azure Resource Manager throttles requests",
    /// learn.microsoft.com; reads have a larger bucket, 250 at 25 per second, so one bucket at
    /// the write rate for every request is the stricter of the two).
    pub const ARM_WRITES: RateLimit = RateLimit {
        per_second: 10.0,
        burst: 200.0,
    };
    /// Cloud DNS: quotas are per project per minute and set in the console; its quota page
    /// gives no default figure. 5 per second (300 per minute), as Route53's, so a fleet is
    /// throttled and must back off on Google's own 429/503 `rateLimitExceeded`.
    pub const CLOUD_DNS: RateLimit = RateLimit {
        per_second: 5.0,
        burst: 5.0,
    };
}

/// How many requests the proxy saw and how many of them it spoiled, by fault.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultStats {
    pub requests: usize,
    pub throttled: usize,
    pub server_errors: usize,
    pub lost_answers: usize,
    pub unavailable: usize,
    pub resets: usize,
    /// Requests delayed by [`Latency`] (not a failure: not counted by [`Self::injected`]).
    pub delayed: usize,
}

impl FaultStats {
    pub fn injected(&self) -> usize {
        self.throttled + self.server_errors + self.lost_answers + self.unavailable + self.resets
    }

    pub fn add(&mut self, other: &FaultStats) {
        self.requests += other.requests;
        self.throttled += other.throttled;
        self.server_errors += other.server_errors;
        self.lost_answers += other.lost_answers;
        self.unavailable += other.unavailable;
        self.resets += other.resets;
        self.delayed += other.delayed;
    }
}

struct Injector {
    faults: Faults,
    rng: Rng,
    latency_rng: Rng,
    injected: usize,
}

impl Injector {
    fn new(faults: Faults) -> Self {
        Self {
            rng: Rng(faults.seed),
            latency_rng: Rng(faults.seed ^ 0x5eed_1a7e_0000_0000),
            faults,
            injected: 0,
        }
    }

    /// How long this request waits first, if at all.
    fn delay(&mut self) -> Option<std::time::Duration> {
        let latency = self.faults.latency?;
        let roll = self.latency_rng.next_f64();
        let pick = self.latency_rng.next_u64();
        if roll >= latency.rate {
            return None;
        }
        let span = latency.max_ms.saturating_sub(latency.min_ms) + 1;
        Some(std::time::Duration::from_millis(
            latency.min_ms + pick % span,
        ))
    }

    fn decide(&mut self) -> Option<(Fault, u64)> {
        let roll = self.rng.next_f64();
        let pick = self.rng.next_u64();
        let spent = self.faults.limit.is_some_and(|l| self.injected >= l);
        if roll >= self.faults.rate || self.faults.kinds.is_empty() || spent {
            return None;
        }
        self.injected += 1;
        let kinds = &self.faults.kinds;
        let fault = kinds[(pick % kinds.len() as u64) as usize];
        Some((fault, pick))
    }
}

/// One request the proxy saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// EC2 Query `Action`, or `METHOD /path` for REST APIs (Route53).
    pub action: String,
    pub mutating: bool,
}

/// Where to freeze the n-th mutating call (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The emulator never sees it.
    Before(usize),
    /// The emulator did it; the client never hears back.
    After(usize),
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    /// When each of `calls` came.
    times: Vec<std::time::Instant>,
    hold: Option<Hold>,
    held: bool,
    injector: Option<Injector>,
    stats: FaultStats,
    /// The account's published limits ([`crate::limits`]), when enforced.
    limiter: Option<Limiter>,
    /// Requests answered with the throttling error because a quota was spent.
    rate_limited: usize,
    /// Requests let through the limits.
    admitted: usize,
    /// When each request came and when its answer went, in the order answered (benches
    /// tell the peers' time from the agent's with it).
    busy: Vec<(std::time::Instant, std::time::Instant)>,
    /// Where to ask whether a request is allowed (moto's `/moto-api/authorize`), when IAM is
    /// enforced: see [`Proxy::authorize_with`].
    authorizer: Option<SocketAddr>,
}

pub struct Proxy {
    pub addr: SocketAddr,
    pub service: Service,
    state: Arc<Mutex<State>>,
    held: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// A proxy in front of `upstream`, which speaks `service`.
    pub async fn start(upstream: SocketAddr, service: Service) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::default()));
        let held = Arc::new(Notify::new());
        let route = Route {
            upstream,
            service,
            state: state.clone(),
            held: held.clone(),
        };
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let route = route.clone();
                tokio::spawn(async move {
                    let handler = service_fn(move |req| handle(req, route.clone()));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), handler)
                        .await;
                });
            }
        });
        Ok(Self {
            addr,
            service,
            state,
            held,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// Every call since the last reset with the moment it came (benches draw the critical
    /// path from it).
    pub fn timed_calls(&self) -> Vec<(std::time::Instant, Call)> {
        let s = self.lock();
        s.times
            .iter()
            .copied()
            .zip(s.calls.iter().cloned())
            .collect()
    }

    /// From each request's arrival to its answer, since the last reset: the time the agent
    /// waited on this peer.
    pub fn busy_spans(&self) -> Vec<(std::time::Instant, std::time::Instant)> {
        self.lock().busy.clone()
    }

    /// The calls of `action` (e.g. EC2's `ReleaseAddress`).
    pub fn calls_named(&self, action: &str) -> Vec<Call> {
        self.lock()
            .calls
            .iter()
            .filter(|c| c.action == action)
            .cloned()
            .collect()
    }

    pub fn mutating_calls(&self) -> Vec<String> {
        self.lock()
            .calls
            .iter()
            .filter(|c| c.mutating)
            .map(|c| c.action.clone())
            .collect()
    }

    pub fn reset(&self) {
        let mut s = self.lock();
        s.calls.clear();
        s.times.clear();
        s.busy.clear();
        s.hold = None;
        s.held = false;
    }

    /// Injects `faults` into every request from now on (replacing earlier settings and
    /// restarting the generator from the seed); the counts start afresh.
    pub fn inject(&self, faults: Faults) {
        let mut s = self.lock();
        s.stats = FaultStats::default();
        s.injector = Some(Injector::new(faults));
    }

    /// Stops injecting faults; the counts stay readable.
    pub fn stop_faults(&self) {
        self.lock().injector = None;
    }

    /// Requests seen and faults injected since the last [`Proxy::inject`].
    pub fn fault_stats(&self) -> FaultStats {
        self.lock().stats.clone()
    }

    /// Limits the request rate as `limit` says from now on (None: no limit); the counts start
    /// afresh.
    pub fn rate_limit(&self, limit: Option<RateLimit>) {
        self.limit(limit.map(|l| Limits::one_bucket(l.per_second, l.burst)));
    }

    /// Enforces `limits` (a cloud's published ones: [`Limits::of`]) from now on (None: no
    /// limit); the counts start afresh.
    pub fn limit(&self, limits: Option<Limits>) {
        let mut s = self.lock();
        s.limiter = limits.map(Limiter::new);
        s.rate_limited = 0;
        s.admitted = 0;
    }

    /// Per quota since the last [`Proxy::limit`]: let through, refused, peak use.
    pub fn quota_use(&self) -> Vec<QuotaUse> {
        self.lock()
            .limiter
            .as_ref()
            .map(Limiter::report)
            .unwrap_or_default()
    }

    /// Route53's IAM, which ministack lacks: with `Some(moto)`, every request is first posted
    /// to moto's `POST /moto-api/authorize` (tests/sim/py/moto_server.py: the same users,
    /// policies and evaluation as EC2's), and a refusal (Route53's own 403 `AccessDenied`,
    /// `InvalidClientTokenId`, `SignatureDoesNotMatch`) is the answer, the emulator never
    /// seeing the request. `None`: nothing is checked. Only Route53 is authorized this way.
    pub fn authorize_with(&self, moto: Option<SocketAddr>) {
        self.lock().authorizer = moto.filter(|_| self.service == Service::Route53);
    }

    /// Since the last [`Proxy::rate_limit`]: (requests let through, requests throttled).
    pub fn rate_limit_counts(&self) -> (usize, usize) {
        let s = self.lock();
        (s.admitted, s.rate_limited)
    }

    pub fn hold(&self, hold: Hold) {
        let mut s = self.lock();
        s.hold = Some(hold);
        s.held = false;
    }

    /// Resolves once a held call is frozen.
    pub async fn wait_held(&self) {
        loop {
            let notified = self.held.notified();
            if self.lock().held {
                return;
            }
            notified.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock_state(&self.state)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Classifies a request: EC2's Query API names the action in the form body; REST APIs by
/// method (anything but GET/HEAD mutates).
pub fn classify(method: &hyper::Method, path: &str, body: &[u8]) -> Call {
    let body = String::from_utf8_lossy(body);
    if let Some(action) = body.split('&').find_map(|kv| kv.strip_prefix("Action=")) {
        // A dry run (preflight's permission check) asks, it changes nothing.
        let dry_run = body.split('&').any(|kv| kv == "DryRun=true");
        let read_only = dry_run
            || ["Describe", "Get", "List"]
                .iter()
                .any(|p| action.starts_with(p));
        return Call {
            action: action.to_string(),
            mutating: !read_only,
        };
    }
    // Preflight's Route53 probe (a DELETE of a record that does not exist, which Route53
    // refuses whole after authorizing it) asks like a dry run: it changes nothing.
    let probe = path.split('?').next().unwrap_or(path).ends_with("/rrset")
        && body.contains("<Name>bootstrap-agent-preflight-")
        && !body.contains("<Action>CREATE</Action>")
        && !body.contains("<Action>UPSERT</Action>");
    let path = path.split('?').next().unwrap_or(path);
    // Compute's `getHealth` is a read sent as a POST (its body names the instance group).
    let read_by_post = path.ends_with("/getHealth");
    let mutating =
        !probe && !read_by_post && !matches!(*method, hyper::Method::GET | hyper::Method::HEAD);
    Call {
        action: format!("{method} {path}"),
        mutating,
    }
}

/// The proxy's state; a panic elsewhere while it was held leaves it readable.
fn lock_state(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// What each connection's handler needs.
#[derive(Clone)]
struct Route {
    upstream: SocketAddr,
    service: Service,
    state: Arc<Mutex<State>>,
    held: Arc<Notify>,
}

/// Answers one request and notes the time the agent waited on this peer.
async fn handle(req: Request<Incoming>, route: Route) -> Result<Response<Full<Bytes>>, BoxError> {
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

fn response(status: u16, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    r
}

fn request_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(crate) fn ec2_error(status: u16, code: &str, message: &str) -> Response<Full<Bytes>> {
    response(
        status,
        "text/xml;charset=UTF-8",
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors><RequestID>{}</RequestID></Response>",
            request_id()
        ),
    )
}

pub(crate) fn route53_error(
    status: u16,
    kind: &str,
    code: &str,
    message: &str,
) -> Response<Full<Bytes>> {
    response(
        status,
        "text/xml",
        format!(
            "<?xml version=\"1.0\"?>\n<ErrorResponse xmlns=\"https://route53.amazonaws.com/doc/2013-04-01/\"><Error><Type>{kind}</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>{}</RequestId></ErrorResponse>",
            request_id()
        ),
    )
}

pub(crate) fn arm_error(status: u16, code: &str, message: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    let mut r = response(status, "application/json; charset=utf-8", body.to_string());
    if let Ok(id) = hyper::header::HeaderValue::from_str(&request_id()) {
        r.headers_mut().insert("x-ms-request-id", id);
    }
    r
}

pub(crate) fn google_error(
    code: u16,
    status: &str,
    reason: &str,
    message: &str,
) -> Response<Full<Bytes>> {
    let domain = if reason == "rateLimitExceeded" {
        "usageLimits"
    } else {
        "global"
    };
    let body = serde_json::json!({"error": {
        "code": code,
        "message": message,
        "status": status,
        "errors": [{"message": message, "domain": domain, "reason": reason}],
    }});
    response(code, "application/json; charset=UTF-8", body.to_string())
}

/// The service's own "slow down".
fn throttled(service: Service, call: &Call, pick: u64) -> Response<Full<Bytes>> {
    match service {
        Service::Ec2 => ec2_error(503, "RequestLimitExceeded", "Request limit exceeded."),
        Service::Route53 => route53_error(400, "Sender", "Throttling", "Rate exceeded"),
        Service::Arm => {
            let kind = if call.mutating { "write" } else { "read" };
            let mut r = arm_error(
                429,
                "SubscriptionRequestsThrottled",
                &format!(
                    "Number of '{kind}' requests for subscription '00000000-0000-0000-0000-000000000001' actor 'bootstrap-agent' exceeded. Please try again after '1' seconds after the last request."
                ),
            );
            r.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("1"),
            );
            r
        }
        // Both answers Google gives for a rate limit, picked by the fault's other roll.
        Service::Google if (pick >> 32).is_multiple_of(2) => {
            let api = if call.action.contains("/dns/") {
                "dns.googleapis.com"
            } else {
                "compute.googleapis.com"
            };
            google_error(
                429,
                "RESOURCE_EXHAUSTED",
                "rateLimitExceeded",
                &format!(
                    "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service '{api}'."
                ),
            )
        }
        Service::Google => google_error(
            503,
            "UNAVAILABLE",
            "rateLimitExceeded",
            "Rate Limit Exceeded",
        ),
    }
}

/// A fault's answer in each service's own words: EC2 and ARM give (code, message), Route53
/// (type, code, message), Google (status, reason, message).
struct Words {
    status: u16,
    ec2: [&'static str; 2],
    route53: [&'static str; 3],
    arm: [&'static str; 2],
    google: [&'static str; 3],
}

/// The service's own HTTP 503.
const UNAVAILABLE: Words = Words {
    status: 503,
    ec2: [
        "Unavailable",
        "The server is overloaded and can't handle the request.",
    ],
    route53: [
        "Receiver",
        "ServiceUnavailable",
        "The service is unavailable. Please try again later.",
    ],
    arm: [
        "ServiceUnavailable",
        "The service is currently unavailable. Please try again later.",
    ],
    google: [
        "UNAVAILABLE",
        "backendError",
        "The service is currently unavailable.",
    ],
};

/// The service's own HTTP 500.
const SERVER_ERROR: Words = Words {
    status: 500,
    ec2: [
        "InternalError",
        "An internal error has occurred. Retry your request, but if the problem persists, contact us.",
    ],
    route53: [
        "Receiver",
        "InternalFailure",
        "The request processing has failed because of an unknown error, exception or failure.",
    ],
    arm: [
        "InternalServerError",
        "Encountered internal server error. Diagnostic information: timestamp '20240101T000000Z'.",
    ],
    google: [
        "INTERNAL",
        "backendError",
        "Internal error. Please try again or contact Google Support.",
    ],
};

fn answer_in_words(service: Service, words: &Words) -> Response<Full<Bytes>> {
    let status = words.status;
    match service {
        Service::Ec2 => ec2_error(status, words.ec2[0], words.ec2[1]),
        Service::Route53 => {
            let [kind, code, message] = words.route53;
            route53_error(status, kind, code, message)
        }
        Service::Arm => arm_error(status, words.arm[0], words.arm[1]),
        Service::Google => {
            let [code, reason, message] = words.google;
            google_error(status, code, reason, message)
        }
    }
}

async fn forward(req: Request<Full<Bytes>>, upstream: SocketAddr) -> Result<Response<Full<Bytes>>> {
    let stream = TcpStream::connect(upstream).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let response = sender.send_request(req).await?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(Response::from_parts(parts, Full::new(body)))
}

/// The agent-facing counting proxies of a world (`$proxy` fields of `$world`), as one:
/// the calls, counts and faults over all of them. Each proxy injects faults with its own
/// seed, `faults.seed` plus its place in the list.
macro_rules! counting_proxies {
    ($world:ty: $($proxy:ident),+) => {
        impl $world {
            /// Mutating calls the agent made through the proxies since the last reset.
            pub fn mutating_calls(&self) -> Vec<String> {
                let proxies = [$(&self.$proxy),+];
                proxies.iter().flat_map(|p| p.mutating_calls()).collect()
            }

            /// Every counting proxy of this world.
            pub fn proxies(&self) -> Vec<&$crate::proxy::Proxy> {
                vec![$(&self.$proxy),+]
            }

            pub fn reset_counts(&self) {
                $(self.$proxy.reset();)+
            }

            /// Injects `faults` into every call the agent makes.
            pub fn inject_faults(&self, faults: &$crate::proxy::Faults) {
                let mut seed = faults.seed;
                for proxy in [$(&self.$proxy),+] {
                    proxy.inject($crate::proxy::Faults {
                        seed,
                        ..faults.clone()
                    });
                    seed = seed.wrapping_add(1);
                }
            }

            pub fn stop_faults(&self) {
                $(self.$proxy.stop_faults();)+
            }

            /// Requests seen and faults injected, over all proxies, since
            /// [`Self::inject_faults`].
            pub fn fault_stats(&self) -> $crate::proxy::FaultStats {
                let mut stats = $crate::proxy::FaultStats::default();
                $(stats.add(&self.$proxy.fault_stats());)+
                stats
            }
        }
    };
}
pub(crate) use counting_proxies;

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_dry_run_mutates_nothing() {
        let post = hyper::Method::POST;
        assert!(classify(&post, "/", b"Action=AllocateAddress&Domain=vpc").mutating);
        assert!(!classify(&post, "/", b"Action=AllocateAddress&Domain=vpc&DryRun=true").mutating);
        assert!(!classify(&post, "/", b"Action=GetCallerIdentity&Version=2011-06-15").mutating);
    }

    #[test]
    fn compute_get_health_is_a_read_other_posts_mutate() {
        let post = hyper::Method::POST;
        let rbs = "/compute/v1/projects/p/regions/r/backendServices/a1";
        let body = br#"{"group": "g"}"#;
        assert!(!classify(&post, &format!("{rbs}/getHealth"), body).mutating);
        assert!(classify(&post, &format!("{rbs}/setSecurityPolicy"), body).mutating);
        assert!(classify(&post, "/compute/v1/projects/p/regions/r/addresses", body).mutating);
    }

    /// An upstream that answers 200 `{}` and counts what reached it.
    pub(crate) async fn upstream() -> (SocketAddr, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let counter = counter.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |_req: Request<Incoming>| {
                        counter.fetch_add(1, Ordering::SeqCst);
                        async { Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::from("{}")))) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        (addr, seen)
    }

    async fn send(
        proxy: &Proxy,
        method: &str,
        body: &str,
    ) -> Result<(u16, String, Option<String>)> {
        let req = Request::builder()
            .method(method)
            .uri("/x")
            .header("host", "localhost")
            .body(Full::new(Bytes::from(body.to_string())))?;
        let response = forward(req, proxy.addr).await?;
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let status = response.status().as_u16();
        let body =
            String::from_utf8_lossy(&response.into_body().collect().await?.to_bytes()).to_string();
        Ok((status, body, retry_after))
    }

    fn only(kind: Fault) -> Faults {
        Faults {
            limit: None,
            ..Faults::next(1, kind)
        }
    }

    #[tokio::test]
    async fn latency_delays_requests_apart_from_the_faults_and_keeps_the_answer() {
        let (up, seen) = upstream().await;
        let proxy = Proxy::start(up, Service::Ec2).await.unwrap();
        let latency = Latency {
            rate: 1.0,
            min_ms: 30,
            max_ms: 40,
        };
        proxy.inject(Faults::new(0.0, 7).with_latency(latency));
        let started = std::time::Instant::now();
        let (status, _, _) = send(&proxy, "GET", "").await.unwrap();
        // A lower bound only: the sleep guarantees it, however fast or slow the machine is.
        assert!(started.elapsed() >= std::time::Duration::from_millis(30));
        assert_eq!(status, 200, "the upstream's answer, unchanged");
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        let stats = proxy.fault_stats();
        assert_eq!((stats.delayed, stats.injected()), (1, 0), "{stats:?}");

        // Latency draws from its own generator: a seed's faults are the same with or without it.
        let verdicts = |latency: Option<Latency>| {
            let mut injector = Injector::new(Faults {
                latency,
                ..Faults::new(0.3, 42)
            });
            (0..200)
                .map(|_| {
                    let fault = injector.decide();
                    injector.delay();
                    fault
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(verdicts(None), verdicts(Some(latency)));
    }

    /// One proxy is one account: past its burst, requests come faster than the rate allows
    /// are answered with the service's own throttling error and never reach the emulator;
    /// the bucket refills at the rate.
    #[tokio::test]
    async fn the_rate_limit_throttles_past_the_burst_with_each_services_own_answer() {
        let (up, seen) = upstream().await;
        let cases = [
            (
                Service::Route53,
                400,
                "<Code>Throttling</Code><Message>Rate exceeded</Message>",
                None,
            ),
            (
                Service::Google,
                429,
                "\"reason\":\"rateLimitExceeded\"",
                None,
            ),
            (
                Service::Arm,
                429,
                "SubscriptionRequestsThrottled",
                Some("1"),
            ),
        ];
        for (service, status, body, retry_after) in cases {
            let proxy = Proxy::start(up, service).await.unwrap();
            let limit = RateLimit {
                per_second: 5.0,
                burst: 3.0,
            };
            proxy.rate_limit(Some(limit));
            let before = seen.load(Ordering::SeqCst);
            for _ in 0..3 {
                assert_eq!(send(&proxy, "GET", "").await.unwrap().0, 200, "{service:?}");
            }
            let (got, text, after) = send(&proxy, "GET", "").await.unwrap();
            assert_eq!(got, status, "{service:?}: {text}");
            assert!(text.contains(body), "{service:?}: {text}");
            assert_eq!(after.as_deref(), retry_after, "{service:?}");
            assert_eq!(seen.load(Ordering::SeqCst) - before, 3, "{service:?}");
            assert_eq!(proxy.rate_limit_counts(), (3, 1));
            // One token back after 1/5 s.
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            assert_eq!(send(&proxy, "GET", "").await.unwrap().0, 200, "{service:?}");
            proxy.rate_limit(None);
            for _ in 0..10 {
                assert_eq!(send(&proxy, "GET", "").await.unwrap().0, 200);
            }
        }
    }

    #[tokio::test]
    async fn a_lost_answer_is_done_upstream_and_the_connection_closes_unanswered() {
        let (up, seen) = upstream().await;
        let proxy = Proxy::start(up, Service::Ec2).await.unwrap();
        proxy.inject(only(Fault::LostAnswer));
        let err = send(&proxy, "POST", "Action=AllocateAddress").await;
        assert!(err.is_err(), "no answer: {err:?}");
        assert_eq!(seen.load(Ordering::SeqCst), 1, "the upstream did it");
        assert_eq!(proxy.fault_stats().lost_answers, 1);
        proxy.stop_faults();
        assert_eq!(send(&proxy, "GET", "").await.unwrap().0, 200);
    }

    #[tokio::test]
    async fn throttles_and_500s_are_each_services_own_and_never_reach_upstream() {
        let (up, seen) = upstream().await;
        let cases = [
            (
                Service::Ec2,
                Fault::Throttle,
                &[503][..],
                "<Response><Errors><Error><Code>RequestLimitExceeded</Code>",
            ),
            (
                Service::Ec2,
                Fault::ServerError,
                &[500],
                "<Code>InternalError</Code>",
            ),
            (
                Service::Route53,
                Fault::Throttle,
                &[400],
                "<ErrorResponse xmlns=\"https://route53.amazonaws.com/doc/2013-04-01/\"><Error><Type>Sender</Type><Code>Throttling</Code>",
            ),
            (
                Service::Route53,
                Fault::ServerError,
                &[500],
                "<Code>InternalFailure</Code>",
            ),
            (
                Service::Arm,
                Fault::Throttle,
                &[429],
                "\"code\":\"SubscriptionRequestsThrottled\"",
            ),
            (
                Service::Arm,
                Fault::ServerError,
                &[500],
                "\"code\":\"InternalServerError\"",
            ),
            (
                Service::Google,
                Fault::Throttle,
                &[429, 503],
                "\"reason\":\"rateLimitExceeded\"",
            ),
            (
                Service::Google,
                Fault::ServerError,
                &[500],
                "\"status\":\"INTERNAL\"",
            ),
        ];
        for (service, fault, statuses, needle) in cases {
            let proxy = Proxy::start(up, service).await.unwrap();
            proxy.inject(only(fault));
            let (status, body, retry_after) = send(&proxy, "POST", "{}").await.unwrap();
            assert!(
                statuses.contains(&status),
                "{service:?} {fault:?}: {status}"
            );
            assert!(body.contains(needle), "{service:?} {fault:?}: {body}");
            if matches!(service, Service::Arm | Service::Google) {
                let json: serde_json::Value = serde_json::from_str(&body).unwrap();
                assert!(json["error"]["message"].is_string(), "{body}");
            }
            if service == Service::Google {
                let json: serde_json::Value = serde_json::from_str(&body).unwrap();
                assert_eq!(json["error"]["code"], status, "{body}");
            }
            assert_eq!(
                retry_after.is_some(),
                service == Service::Arm && fault == Fault::Throttle,
                "{service:?} {fault:?}"
            );
        }
        assert_eq!(seen.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_limit_stops_injecting_after_that_many_faults() {
        let mut injector = Injector::new(Faults::next(2, Fault::Throttle));
        let verdicts: Vec<_> = (0..5).map(|_| injector.decide().map(|(f, _)| f)).collect();
        assert_eq!(
            verdicts,
            [
                Some(Fault::Throttle),
                Some(Fault::Throttle),
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn the_same_seed_spoils_the_same_requests_at_about_the_rate() {
        let verdicts = |seed| {
            let mut injector = Injector::new(Faults::new(0.2, seed));
            (0..2000)
                .map(|_| injector.decide().map(|(f, _)| f))
                .collect::<Vec<_>>()
        };
        let a = verdicts(42);
        assert_eq!(a, verdicts(42), "reproducible");
        assert_ne!(a, verdicts(43));
        let spoiled = a.iter().filter(|v| v.is_some()).count();
        assert!(
            (320..480).contains(&spoiled),
            "about 20% of 2000: {spoiled}"
        );
        for kind in Fault::ALL {
            assert!(a.contains(&Some(kind)), "{kind:?} is injected");
        }
    }
}
