//! Each cloud's published request limits, as the proxies enforce them ([`Limits`]): which
//! quotas a request spends, how each refills, and the refusal the cloud writes when one is
//! spent. One proxy is one account / project / subscription (and region). A request is let
//! through only if every quota it spends has a token; it then takes one from each. A refused
//! request never reaches the emulator. Sources (docs/design.md, "Published rate limits"):
//!
//! - EC2: "Request throttling for the Amazon EC2 API", section "Request token bucket sizes and
//!   refill rates" (docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html): token
//!   buckets per account and region, per action category (non-mutating 100 at 20/s;
//!   unfiltered and unpaginated non-mutating 50 at 10/s; mutating 50 at 5/s) and some actions
//!   with their own bucket (CreateNetworkInterface, DeleteNetworkInterface,
//!   AssignPrivateIpAddresses, ModifyNetworkInterfaceAttribute 100 at 5/s; CreateTags,
//!   DeleteTags 100 at 10/s). Refused with 503 `RequestLimitExceeded`.
//! - Route53: five requests per second per account (DNSLimitations.html, "Limits on API
//!   requests"); 400 `Throttling` "Rate exceeded".
//! - Compute Engine: per-project rate quotas per group, enforced per minute and refilled at the
//!   start of the next interval (cloud.google.com/compute/docs/api-rate-limits: "Queries",
//!   the mutations, 1,500 per minute; "Read requests" 1,500 per minute); "you receive a 403
//!   error with the reason rateLimitExceeded".
//! - Cloud DNS: its quota page names a per-minute read/write quota but gives no default
//!   figure; 5 per second (300 per minute) is assumed, answered as Google's 429
//!   `RESOURCE_EXHAUSTED` `rateLimitExceeded`.
//! - ARM: per subscription, region and principal, token buckets for reads (250 at 25/s),
//!   writes (200 at 10/s) and deletes (200 at 10/s); then the resource provider's own:
//!   Microsoft.Network 10,000 reads and 1,000 writes+deletes per 5 minutes per subscription and
//!   region, and Azure DNS / Private DNS 500 reads (GET) per 5 minutes ("Understand how Azure
//!   Resource Manager throttles requests", learn.microsoft.com, sections "Regional throttling
//!   and token bucket algorithm" and "Network throttling"). Refused with 429 and `Retry-After`
//!   (seconds until the quota has a token again).

use crate::proxy::Service;
use std::time::{Duration, Instant};

/// How a quota gets its tokens back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refill {
    /// A token bucket: this many tokens per second, continuously, up to the capacity.
    PerSecond(f64),
    /// A fixed window: the whole capacity again at the start of each window of this length
    /// (Google's per-minute quotas, Azure's per-5-minutes provider limits).
    Window(Duration),
}

/// One published limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    /// As the cloud names it (EC2's action category, Google's quota metric, ARM's operation).
    pub name: &'static str,
    /// Bucket size, or requests per window.
    pub capacity: f64,
    pub refill: Refill,
}

/// Which quotas a request spends: the names of [`Limits::quotas`].
pub type Classifier = fn(&hyper::Method, &str, &[u8]) -> Vec<&'static str>;

/// A service's limits: its quotas and which a request spends.
#[derive(Debug, Clone)]
pub struct Limits {
    pub quotas: Vec<Quota>,
    pub spends: Classifier,
}

const fn bucket(name: &'static str, capacity: f64, per_second: f64) -> Quota {
    Quota {
        name,
        capacity,
        refill: Refill::PerSecond(per_second),
    }
}

const fn window(name: &'static str, capacity: f64, seconds: u64) -> Quota {
    Quota {
        name,
        capacity,
        refill: Refill::Window(Duration::from_secs(seconds)),
    }
}

/// EC2's actions with a bucket of their own that the agent calls.
const EC2_OWN_BUCKETS: [Quota; 6] = [
    bucket("CreateNetworkInterface", 100.0, 5.0),
    bucket("DeleteNetworkInterface", 100.0, 5.0),
    bucket("AssignPrivateIpAddresses", 100.0, 5.0),
    bucket("ModifyNetworkInterfaceAttribute", 100.0, 5.0),
    bucket("CreateTags", 100.0, 10.0),
    bucket("DeleteTags", 100.0, 10.0),
];

/// EC2's non-mutating actions that take from the smaller bucket when asked without a filter
/// and without pagination.
const EC2_UNFILTERED: [&str; 7] = [
    "DescribeInstances",
    "DescribeInstanceStatus",
    "DescribeNetworkInterfaces",
    "DescribeSecurityGroups",
    "DescribeSnapshots",
    "DescribeSpotInstanceRequests",
    "DescribeVolumes",
];

impl Limits {
    /// A single bucket for every request (the proxy's [`crate::RateLimit`]).
    pub fn one_bucket(per_second: f64, burst: f64) -> Self {
        Self {
            quotas: vec![bucket("requests", burst, per_second)],
            spends: |_, _, _| vec!["requests"],
        }
    }

    /// The published limits of `service`.
    pub fn of(service: Service) -> Self {
        match service {
            Service::Ec2 => Self::ec2(),
            Service::Route53 => Self::one_bucket(5.0, 5.0),
            Service::Google => Self::compute(),
            Service::Arm => Self::arm(),
        }
    }

    /// EC2's request token buckets per action category.
    pub fn ec2() -> Self {
        let mut quotas = vec![
            bucket("non-mutating", 100.0, 20.0),
            bucket("unfiltered-non-mutating", 50.0, 10.0),
            bucket("mutating", 50.0, 5.0),
        ];
        quotas.extend(EC2_OWN_BUCKETS);
        Self {
            quotas,
            spends: |_, _, body| ec2_category(body).into_iter().collect(),
        }
    }

    /// Compute Engine's per-project, per-minute groups.
    pub fn compute() -> Self {
        Self {
            quotas: vec![
                window("Read requests", 1500.0, 60),
                window("Queries", 1500.0, 60),
            ],
            spends: |method, path, _| {
                let read = *method == hyper::Method::GET || path.ends_with("/getHealth");
                vec![if read { "Read requests" } else { "Queries" }]
            },
        }
    }

    /// Cloud DNS: no published default; 5 per second assumed (module docs).
    pub fn cloud_dns() -> Self {
        Self {
            quotas: vec![bucket("Cloud DNS requests", 5.0, 5.0)],
            spends: |_, _, _| vec!["Cloud DNS requests"],
        }
    }

    /// ARM's subscription buckets, then Microsoft.Network's and Azure DNS's own windows.
    pub fn arm() -> Self {
        Self {
            quotas: vec![
                bucket("reads", 250.0, 25.0),
                bucket("writes", 200.0, 10.0),
                bucket("deletes", 200.0, 10.0),
                window("Microsoft.Network reads", 10_000.0, 300),
                window("Microsoft.Network writes", 1_000.0, 300),
                window("DNS reads", 500.0, 300),
            ],
            spends: |method, path, _| arm_spends(method, path),
        }
    }
}

/// The EC2 bucket a Query API request takes from (None: not an EC2 action, e.g. STS's).
fn ec2_category(body: &[u8]) -> Option<&'static str> {
    let body = String::from_utf8_lossy(body);
    let param = |name: &str| {
        body.split('&')
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .map(str::to_string)
    };
    let action = param("Action")?;
    if param("Version").as_deref() == Some("2011-06-15") {
        return None; // STS
    }
    if let Some(own) = EC2_OWN_BUCKETS.iter().find(|q| q.name == action) {
        return Some(own.name);
    }
    let read = ["Describe", "Get", "List", "Search"]
        .iter()
        .any(|p| action.starts_with(p));
    if !read {
        return Some("mutating");
    }
    let narrowed = body
        .split('&')
        .any(|kv| kv.starts_with("Filter.") || kv.starts_with("MaxResults="));
    if EC2_UNFILTERED.contains(&action.as_str()) && !narrowed {
        Some("unfiltered-non-mutating")
    } else {
        Some("non-mutating")
    }
}

/// What an ARM request spends: its subscription bucket by operation type, and the resource
/// provider's window when it is Microsoft.Network (DNS reads besides).
fn arm_spends(method: &hyper::Method, path: &str) -> Vec<&'static str> {
    let lower = path.to_ascii_lowercase();
    if !lower.starts_with("/subscriptions/") {
        return Vec::new(); // the token endpoint, metadata: not ARM's subscription operations
    }
    let (bucket, network) = match *method {
        hyper::Method::GET | hyper::Method::HEAD => ("reads", "Microsoft.Network reads"),
        hyper::Method::DELETE => ("deletes", "Microsoft.Network writes"),
        // POST actions (checkIPAddressAvailability is a GET; listKeys-like POSTs read) count
        // as writes, as ARM counts every non-GET.
        _ => ("writes", "Microsoft.Network writes"),
    };
    let mut spends = vec![bucket];
    if lower.contains("/providers/microsoft.network/") {
        spends.push(network);
        let dns = lower.contains("/dnszones/") || lower.contains("/privatednszones/");
        if dns && bucket == "reads" {
            spends.push("DNS reads");
        }
    }
    spends
}

/// One quota's tokens and what it let through.
#[derive(Debug)]
struct Meter {
    quota: Quota,
    tokens: f64,
    /// Bucket: the last refill; window: the start of the current window.
    since: Instant,
    admitted: Vec<Instant>,
    refused: usize,
}

impl Meter {
    fn new(quota: Quota, now: Instant) -> Self {
        Self {
            quota,
            tokens: quota.capacity,
            since: now,
            admitted: Vec::new(),
            refused: 0,
        }
    }

    fn refill(&mut self, now: Instant) {
        match self.quota.refill {
            Refill::PerSecond(rate) => {
                let added = (now - self.since).as_secs_f64() * rate;
                self.tokens = (self.tokens + added).min(self.quota.capacity);
                self.since = now;
            }
            Refill::Window(length) => {
                if now - self.since >= length {
                    let windows =
                        ((now - self.since).as_secs_f64() / length.as_secs_f64()).floor() as u32;
                    self.since += length * windows;
                    self.tokens = self.quota.capacity;
                }
            }
        }
    }

    /// How long until a token is back (whole seconds, at least 1: ARM's `Retry-After`).
    fn retry_after(&self, now: Instant) -> Duration {
        let wait = match self.quota.refill {
            Refill::PerSecond(rate) => {
                Duration::from_secs_f64(((1.0 - self.tokens) / rate).max(0.0))
            }
            Refill::Window(length) => (self.since + length).saturating_duration_since(now),
        };
        Duration::from_secs(wait.as_secs_f64().ceil().max(1.0) as u64)
    }
}

/// A refusal: which quota, and when to come back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refusal {
    pub quota: Quota,
    pub retry_after: Duration,
}

/// The limits of one account, as they stand.
#[derive(Debug)]
pub struct Limiter {
    spends: Classifier,
    meters: Vec<Meter>,
}

impl Limiter {
    pub fn new(limits: Limits) -> Self {
        let now = Instant::now();
        Self {
            spends: limits.spends,
            meters: limits
                .quotas
                .into_iter()
                .map(|q| Meter::new(q, now))
                .collect(),
        }
    }

    /// Lets the request through (taking a token from each quota it spends), or refuses it
    /// with the first quota that has none (taking nothing).
    pub fn admit(
        &mut self,
        method: &hyper::Method,
        path: &str,
        body: &[u8],
    ) -> Result<(), Refusal> {
        let now = Instant::now();
        let names = (self.spends)(method, path, body);
        let spent: Vec<usize> = self
            .meters
            .iter()
            .enumerate()
            .filter(|(_, m)| names.contains(&m.quota.name))
            .map(|(i, _)| i)
            .collect();
        for &i in &spent {
            let meter = &mut self.meters[i];
            meter.refill(now);
            if meter.tokens < 1.0 {
                meter.refused += 1;
                return Err(Refusal {
                    quota: meter.quota,
                    retry_after: meter.retry_after(now),
                });
            }
        }
        for &i in &spent {
            self.meters[i].tokens -= 1.0;
            self.meters[i].admitted.push(now);
        }
        Ok(())
    }

    /// Per quota: what it let through and refused, and its peak use.
    pub fn report(&self) -> Vec<QuotaUse> {
        self.meters.iter().map(QuotaUse::of).collect()
    }
}

/// How much of one quota was used: requests let through and refused, the most let through in
/// any one second and in any one window (for a bucket, its capacity is the most one second
/// can take and its refill what it sustains).
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaUse {
    pub quota: Quota,
    pub admitted: usize,
    pub refused: usize,
    pub peak_per_second: usize,
    /// Windows: the most in one window (as long as the quota's); buckets: the most in any 10 s.
    pub peak_per_window: usize,
}

impl QuotaUse {
    fn of(meter: &Meter) -> Self {
        let span = match meter.quota.refill {
            Refill::Window(length) => length,
            Refill::PerSecond(_) => Duration::from_secs(10),
        };
        Self {
            quota: meter.quota,
            admitted: meter.admitted.len(),
            refused: meter.refused,
            peak_per_second: peak_within(&meter.admitted, Duration::from_secs(1)),
            peak_per_window: peak_within(&meter.admitted, span),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        let (refill, per) = match self.quota.refill {
            Refill::PerSecond(rate) => (rate, "second".to_string()),
            Refill::Window(length) => (self.quota.capacity, format!("{}s", length.as_secs())),
        };
        serde_json::json!({
            "quota": self.quota.name,
            "capacity": self.quota.capacity,
            "refill": refill,
            "refill_per": per,
            "admitted": self.admitted,
            "refused": self.refused,
            "peak_per_second": self.peak_per_second,
            "peak_per_window": self.peak_per_window,
        })
    }
}

/// The most instants (sorted) within any span of `width`.
fn peak_within(times: &[Instant], width: Duration) -> usize {
    let mut peak = 0;
    let mut start = 0;
    for end in 0..times.len() {
        while times[end] - times[start] >= width {
            start += 1;
        }
        peak = peak.max(end - start + 1);
    }
    peak
}

#[path = "limits_refusal.rs"]
mod refusal;
pub use refusal::refusal;

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
