#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::proxy::Proxy;
use crate::proxy::tests::upstream;
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpStream;

/// A proxy for `service` under `limits` in front of an upstream that counts what reached it.
async fn limited(service: Service, limits: Limits) -> (Proxy, Arc<AtomicUsize>) {
    let (up, seen) = upstream().await;
    let proxy = Proxy::start(up, service).await.unwrap();
    proxy.limit(Some(limits));
    (proxy, seen)
}

/// Status, body and `Retry-After` of one request through `proxy`.
async fn send(
    proxy: &Proxy,
    method: Method,
    path: &str,
    body: &str,
) -> (u16, String, Option<String>) {
    let stream = TcpStream::connect(proxy.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let answer = sender.send_request(req).await.unwrap();
    let retry_after = answer
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let status = answer.status().as_u16();
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        String::from_utf8_lossy(&body).into_owned(),
        retry_after,
    )
}

/// Sends `n` requests; how many were let through.
async fn let_through(proxy: &Proxy, n: usize, method: Method, path: &str, body: &str) -> usize {
    let mut ok = 0;
    for _ in 0..n {
        if send(proxy, method.clone(), path, body).await.0 == 200 {
            ok += 1;
        }
    }
    ok
}

/// EC2: the mutating bucket (50) is spent by AllocateAddress while reads, CreateTags (its own
/// bucket) and a filtered describe still pass; an unfiltered DescribeNetworkInterfaces takes
/// from the smaller bucket (50), a filtered one from the larger. Refused as EC2 refuses:
/// 503 `RequestLimitExceeded` in its XML, never reaching the emulator.
#[tokio::test]
async fn ec2_refuses_past_each_action_categorys_bucket_as_ec2_does() {
    let (proxy, seen) = limited(Service::Ec2, Limits::of(Service::Ec2)).await;
    let allocate = "Action=AllocateAddress&Domain=vpc&Version=2016-11-15";
    // The bucket holds 50 and refills 5 a second: what passes before the first refusal is 50
    // plus what refilled while they were sent (a loaded machine sends slower, not wrongly).
    let (passed, body) = until_refused(&proxy, Method::POST, allocate).await;
    assert!(
        body.contains("<Response><Errors><Error><Code>RequestLimitExceeded</Code>"),
        "{body}"
    );
    let other = "Action=DescribeAddresses&Version=2016-11-15";
    assert_eq!(send(&proxy, Method::POST, "/", other).await.0, 200);
    let tags = "Action=CreateTags&ResourceId.1=eipalloc-1&Version=2016-11-15";
    assert_eq!(send(&proxy, Method::POST, "/", tags).await.0, 200);

    let unfiltered = "Action=DescribeNetworkInterfaces&Version=2016-11-15";
    let (described, _) = until_refused(&proxy, Method::POST, unfiltered).await;
    let filtered = "Action=DescribeNetworkInterfaces&Filter.1.Name=subnet-id&Filter.1.Value.1=s&Version=2016-11-15";
    assert_eq!(send(&proxy, Method::POST, "/", filtered).await.0, 200);

    let quotas = proxy.quota_use();
    let mutating = quotas.iter().find(|q| q.quota.name == "mutating").unwrap();
    assert_eq!((mutating.admitted, mutating.refused), (passed, 1));
    let (admitted, refused) = proxy.rate_limit_counts();
    assert_eq!(seen.load(Ordering::SeqCst), admitted);
    assert_eq!(admitted, passed + described + 3);
    assert_eq!(refused, 2);
}

/// Sends `body` until the first refusal (503): how many passed before it, bounded by the
/// bucket (50) and what it refilled (5 a second) meanwhile; the refusal's body.
async fn until_refused(proxy: &Proxy, method: Method, body: &str) -> (usize, String) {
    let started = Instant::now();
    let mut passed = 0;
    loop {
        let (status, answer, _) = send(proxy, method.clone(), "/", body).await;
        if status == 503 {
            let refilled = (started.elapsed().as_secs_f64() * 5.0).ceil() as usize;
            assert!(
                (50..=50 + refilled).contains(&passed),
                "{passed} (refilled {refilled})"
            );
            return (passed, answer);
        }
        assert_eq!(status, 200, "{answer}");
        passed += 1;
        assert!(passed <= 1_000, "never refused");
    }
}

/// Compute Engine: 1,500 reads per minute per project; the 1,501st in the minute is refused
/// with 403 `rateLimitExceeded` (as the quota page says), while a mutation (the "Queries"
/// group) still passes.
#[tokio::test]
async fn compute_refuses_past_a_groups_quota_per_minute_with_403_rate_limit_exceeded() {
    let (proxy, seen) = limited(Service::Google, Limits::compute()).await;
    let get = "/compute/v1/projects/p/regions/r/addresses/a";
    assert_eq!(let_through(&proxy, 1500, Method::GET, get, "").await, 1500);
    let (status, body, _) = send(&proxy, Method::GET, get, "").await;
    assert_eq!(status, 403, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["error"]["code"], 403);
    assert_eq!(json["error"]["errors"][0]["reason"], "rateLimitExceeded");
    assert_eq!(json["error"]["errors"][0]["domain"], "usageLimits");
    let insert = "/compute/v1/projects/p/regions/r/addresses";
    assert_eq!(send(&proxy, Method::POST, insert, "{}").await.0, 200);
    assert_eq!(seen.load(Ordering::SeqCst), 1501);
    let reads = proxy.quota_use()[0].clone();
    assert_eq!(
        (reads.admitted, reads.refused, reads.peak_per_window),
        (1500, 1, 1500)
    );
}

/// Cloud DNS: 429 `RESOURCE_EXHAUSTED` `rateLimitExceeded` past its bucket.
#[tokio::test]
async fn cloud_dns_refuses_past_its_rate_with_429() {
    let (proxy, _) = limited(Service::Google, Limits::cloud_dns()).await;
    let changes = "/dns/v1/projects/p/managedZones/z/changes";
    assert!(let_through(&proxy, 10, Method::POST, changes, "{}").await < 10);
    let (status, body, _) = send(&proxy, Method::POST, changes, "{}").await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("\"reason\":\"rateLimitExceeded\""), "{body}");
    assert!(body.contains("RESOURCE_EXHAUSTED"), "{body}");
}

/// ARM: reads, writes and deletes each their own bucket per subscription; past one, 429
/// `SubscriptionRequestsThrottled` with `Retry-After` in seconds, the others still open.
#[tokio::test]
async fn arm_refuses_past_each_operation_types_bucket_with_retry_after() {
    let (proxy, _) = limited(Service::Arm, Limits::arm()).await;
    let ip = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/a";
    let passed = let_through(&proxy, 230, Method::PUT, ip, "{}").await;
    assert!((200..230).contains(&passed), "{passed}");
    let (status, body, retry_after) = send(&proxy, Method::PUT, ip, "{}").await;
    assert_eq!(status, 429, "{body}");
    assert!(
        body.contains("\"code\":\"SubscriptionRequestsThrottled\""),
        "{body}"
    );
    assert_eq!(
        retry_after.as_deref(),
        Some("1"),
        "10 a second come back within 1 s"
    );
    assert_eq!(send(&proxy, Method::GET, ip, "").await.0, 200);
    assert_eq!(send(&proxy, Method::DELETE, ip, "").await.0, 200);
    // The token endpoint is no subscription operation.
    assert_eq!(
        send(&proxy, Method::POST, "/tenant/oauth2/v2.0/token", "")
            .await
            .0,
        200
    );
}

/// Azure DNS's own limit: 500 GETs per 5 minutes, whatever ARM's read bucket allows; the
/// refusal says to come back when the window turns (up to 300 s).
#[test]
fn azure_dns_reads_are_limited_per_five_minutes_beyond_arms_read_bucket() {
    let mut limits = Limits::arm();
    for q in &mut limits.quotas {
        if q.name == "reads" {
            q.capacity = 10_000.0;
        }
    }
    let mut limiter = Limiter::new(limits);
    let zone =
        "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/dnszones/example.com/A/api";
    for _ in 0..500 {
        limiter.admit(&Method::GET, zone, b"").unwrap();
    }
    let refused = limiter.admit(&Method::GET, zone, b"").unwrap_err();
    assert_eq!(refused.quota.name, "DNS reads");
    assert!(
        refused.retry_after > Duration::from_secs(290),
        "{refused:?}"
    );
    let refusal = refusal(Service::Arm, &refused);
    assert_eq!(refusal.status().as_u16(), 429);
    assert!(refusal.headers().contains_key("retry-after"));
    // Other network reads are within Microsoft.Network's 10,000.
    let ip = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/a";
    assert!(limiter.admit(&Method::GET, ip, b"").is_ok());
}

#[test]
fn a_bucket_refills_at_its_rate_and_a_window_at_its_turn() {
    let mut limiter = Limiter::new(Limits::one_bucket(1000.0, 2.0));
    assert!(limiter.admit(&Method::GET, "/", b"").is_ok());
    assert!(limiter.admit(&Method::GET, "/", b"").is_ok());
    assert!(limiter.admit(&Method::GET, "/", b"").is_err());
    std::thread::sleep(Duration::from_millis(5));
    assert!(limiter.admit(&Method::GET, "/", b"").is_ok());
    let times: Vec<Instant> = {
        let t = Instant::now();
        [0, 100, 900, 1200, 1300, 1400]
            .iter()
            .map(|ms| t + Duration::from_millis(*ms))
            .collect()
    };
    assert_eq!(peak_within(&times, Duration::from_secs(1)), 4);
}
