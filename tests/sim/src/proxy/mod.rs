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
//!
//! The request path (hold, fault, limit, authorize, forward) is in `forwarding`, the fault
//! settings and their seeded decisions in `faults`, each service's error bodies in
//! `service_errors`; this file holds the proxy itself and what it counts.

mod faults;
mod forwarding;
mod service_errors;

pub use faults::{Fault, FaultStats, Faults, Latency};
pub(crate) use service_errors::{arm_error, ec2_error, google_error, route53_error};

use crate::limits::{Limiter, Limits, QuotaUse};
use anyhow::Result;
use faults::Injector;
use forwarding::{Route, handle};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::Notify;

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

    use super::forwarding::forward;
    use super::*;
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::body::Incoming;
    use hyper::{Request, Response};
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
