//! Wire tests of the Azure ARM client against a small scripted HTTP server on 127.0.0.1
//! (afterburn's habit): each test says what the server answers, in order, and checks what the
//! client sent and what it made of the answers. No Python, no fake: a change of the provider's
//! HTTP behaviour shows here first.
#![cfg(feature = "azure")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_cloud::ErrorKind;
use bootstrap_cloud::azure::arm::ArmClient;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
#[path = "../src/azure/wire_test_support.rs"]
mod wire_test_support;
use wire_test_support::{Request, StaticToken, read_request};

const TOKEN: &str = "wire-test-token";

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    /// Path and query.
    target: String,
    authorization: Option<String>,
    headers: Vec<(String, String)>,
    body: Value,
    at: Instant,
}

/// One scripted answer: status, headers, JSON body (`Value::Null`: empty). `{origin}` in a
/// header value or the body becomes the server's `http://127.0.0.1:port`.
type Answer = (u16, Vec<(&'static str, String)>, Value);

/// A server that answers requests with `script`, in order (a request past its end gets 500),
/// and records them.
struct Server {
    origin: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(script: Vec<Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let (seen2, origin2) = (seen.clone(), origin.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (seen, script, origin) = (seen2.clone(), script.clone(), origin2.clone());
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    // Keep-alive: one request after the other on this connection.
                    while let Some(request) = read_request(&mut read).await {
                        seen.lock().unwrap().push(request.into());
                        let next = script.lock().unwrap().next();
                        let (status, headers, body) = next.unwrap_or((
                            500,
                            Vec::new(),
                            json!({"error": {"code": "EndOfScript"}}),
                        ));
                        let body = if body.is_null() {
                            String::new()
                        } else {
                            body.to_string().replace("{origin}", &origin)
                        };
                        let mut head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\n",
                            body.len()
                        );
                        for (name, value) in headers {
                            head.push_str(&format!(
                                "{name}: {}\r\n",
                                value.replace("{origin}", &origin)
                            ));
                        }
                        head.push_str("\r\n");
                        if write.write_all(head.as_bytes()).await.is_err()
                            || write.write_all(body.as_bytes()).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Self { origin, seen }
    }

    fn client(&self) -> ArmClient {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        ArmClient::new(
            reqwest::Client::builder().build().unwrap(),
            url::Url::parse(&format!("{}/", self.origin)).unwrap(),
            Arc::new(StaticToken(TOKEN)),
            "https://management.azure.com/.default".into(),
        )
    }

    /// The resource group's public IPs, as `ArmClient::list` gathers them from this server.
    async fn list_public_ips(&self) -> Vec<Value> {
        let arm = self.client();
        let url = arm
            .url(
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses",
                "2024-05-01",
                &[],
            )
            .unwrap();
        arm.list("ListPublicIps", url).await.unwrap()
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// The request as the server saw it, and when.
impl From<Request> for Seen {
    fn from(request: Request) -> Self {
        Seen {
            authorization: request
                .headers
                .iter()
                .find(|(n, _)| n == "authorization")
                .map(|(_, v)| v.clone()),
            method: request.method,
            target: request.target,
            headers: request.headers,
            body: request.body,
            at: Instant::now(),
        }
    }
}

const PIP: &str =
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/ip";

#[tokio::test]
async fn a_long_running_put_follows_azure_asyncoperation_then_reads_the_resource() {
    let op = "{origin}/subscriptions/s/providers/Microsoft.Network/locations/eastus/operations/1?api-version=2024-05-01";
    let server = Server::start(vec![
        (
            201,
            vec![
                ("Azure-AsyncOperation", op.to_string()),
                ("Retry-After", "0".into()),
            ],
            json!({"properties": {"provisioningState": "Updating"}}),
        ),
        (200, vec![("Retry-After", "0".into())], json!({"status": "InProgress"})),
        (200, vec![], json!({"status": "Succeeded"})),
        (
            200,
            vec![],
            json!({"name": "ip", "properties": {"provisioningState": "Succeeded", "ipAddress": "20.81.0.2"}}),
        ),
    ])
    .await;
    let arm = server.client();
    let url = arm.url(PIP, "2024-05-01", &[]).unwrap();
    let body = json!({"location": "eastus", "sku": {"name": "Standard"}});
    let resource = arm
        .long_running("CreatePublicIp", Method::PUT, url, Some(&body))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resource["properties"]["ipAddress"], "20.81.0.2");

    let seen = server.seen();
    let calls: Vec<(String, String)> = seen
        .iter()
        .map(|s| (s.method.clone(), s.target.clone()))
        .collect();
    let op_path = op.replace("{origin}", "");
    assert_eq!(
        calls,
        [
            ("PUT".to_string(), format!("{PIP}?api-version=2024-05-01")),
            ("GET".to_string(), op_path.clone()),
            ("GET".to_string(), op_path),
            ("GET".to_string(), format!("{PIP}?api-version=2024-05-01")),
        ]
    );
    assert_eq!(seen[0].body, body, "the body as given");
    for s in &seen {
        assert_eq!(
            s.authorization.as_deref(),
            Some(format!("Bearer {TOKEN}").as_str()),
            "{} {}",
            s.method,
            s.target
        );
    }
}

#[tokio::test]
async fn an_operation_url_on_another_host_never_gets_the_token() {
    let server = Server::start(vec![(
        201,
        vec![(
            "Azure-AsyncOperation",
            "http://127.0.0.2:9/operations/1?api-version=2024-05-01".to_string(),
        )],
        Value::Null,
    )])
    .await;
    let arm = server.client();
    let url = arm.url(PIP, "2024-05-01", &[]).unwrap();
    let err = arm
        .long_running("CreatePublicIp", Method::PUT, url, Some(&json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Fatal, "{err}");
    assert!(
        err.to_string().contains("refusing to send the ARM token"),
        "{err}"
    );
    assert_eq!(server.seen().len(), 1, "only the PUT reached a server");
}

#[tokio::test]
async fn a_stale_etag_is_a_conflict_and_is_not_retried() {
    let server = Server::start(vec![(
        412,
        vec![],
        json!({"error": {"code": "PreconditionFailed", "message": "The condition 'If-Match' was not met."}}),
    )])
    .await;
    let arm = server.client();
    let url = arm
        .url("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/dnsZones/example.com/A/api", "2018-05-01", &[])
        .unwrap();
    let err = arm
        .send(
            "PutRecordSet",
            Method::PUT,
            url,
            &[("If-Match", "\"etag-1\"")],
            Some(&json!({"properties": {"TTL": 60}})),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains("PreconditionFailed"), "{err}");
    let seen = server.seen();
    assert_eq!(
        seen.len(),
        1,
        "a conflict goes back to the compare-and-swap, not retried here"
    );
    assert!(
        seen[0]
            .headers
            .iter()
            .any(|(n, v)| n == "if-match" && v == "\"etag-1\""),
        "{:?}",
        seen[0].headers
    );
}

#[tokio::test]
async fn throttling_waits_as_retry_after_says_then_succeeds() {
    let server = Server::start(vec![
        (
            429,
            vec![("Retry-After", "1".into())],
            json!({"error": {"code": "SubscriptionRequestsThrottled", "message": "slow down"}}),
        ),
        (200, vec![], json!({"value": []})),
    ])
    .await;
    let items = server.list_public_ips().await;
    assert!(items.is_empty());
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let waited = seen[1].at - seen[0].at;
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(3),
        "waited {waited:?}, as Retry-After: 1 said"
    );
}

#[tokio::test]
async fn a_list_follows_next_link() {
    let server = Server::start(vec![
        (
            200,
            vec![],
            json!({"value": [{"name": "a"}], "nextLink": "{origin}/next?api-version=2024-05-01&$skiptoken=1"}),
        ),
        (200, vec![], json!({"value": [{"name": "b"}]})),
    ])
    .await;
    let items = server.list_public_ips().await;
    let names: Vec<&Value> = items.iter().map(|i| &i["name"]).collect();
    assert_eq!(names, [&json!("a"), &json!("b")]);
    let seen = server.seen();
    assert_eq!(seen[1].target, "/next?api-version=2024-05-01&$skiptoken=1");
}
