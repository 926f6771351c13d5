//! A small in-process ARM for the settle tests: resource groups with their tags, the compute
//! subnet, CheckIPAddressAvailability; other clusters act through `react`.
#![allow(clippy::unwrap_used)]

use super::super::*;
use crate::azure::arm::ArmClient;
use crate::azure::wire_test_support::{StaticToken, read_request};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

pub(super) const TAG: &str = "m-1-rsvd-private-ipv4";
pub(super) const RG: &str = "m-rg";

/// Resource group -> its tags.
pub(super) type Groups = BTreeMap<String, BTreeMap<String, String>>;

/// What the fake saw, for `react`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Event {
    /// The n-th `ResourceGroups_List` (from 1), before it is answered.
    ListRead(usize),
    /// A tag write of ours (`Merge` / `Delete`, name, value), after it was applied.
    TagWrite(String, String, String),
}

pub(super) type React = Box<dyn FnMut(&Event, &mut Groups) + Send>;

#[derive(Default)]
pub(super) struct World {
    pub(super) groups: Groups,
    /// Addresses a NIC holds: CheckIPAddressAvailability calls them not available.
    pub(super) in_use: BTreeSet<Ipv4Addr>,
    /// Addresses a NIC takes right as our claim of them is written (another cluster's
    /// bootstrap host gets its second address): in use from then on.
    pub(super) taken_on_claim: BTreeSet<Ipv4Addr>,
    pub(super) events: Vec<Event>,
    /// Addresses asked about, in order.
    pub(super) checked: Vec<Ipv4Addr>,
    pub(super) react: Option<React>,
    /// `ResourceGroups_List` requests (from 1, the refused ones counted) ARM throttles:
    /// 429 `SubscriptionRequestsThrottled` with `Retry-After: throttle_seconds`.
    pub(super) throttled_lists: BTreeSet<usize>,
    pub(super) throttle_seconds: u64,
    pub(super) list_requests: usize,
    /// The caller may not list the resource groups: 403 `AuthorizationFailed`, as ARM answers.
    pub(super) lists_forbidden: bool,
    /// Groups per page of the list (None: all in one), each page's `nextLink` a `$skiptoken`.
    /// ARM may answer fewer than `$top` a page: it drops what the caller may not read after
    /// paging (azure-sdk-for-net#15715: empty pages, each with a `nextLink`).
    pub(super) page_size: Option<usize>,
    /// The fake's own `http://127.0.0.1:port/` (set by `Fake::start`), for `nextLink`s.
    pub(super) origin: String,
}

impl World {
    fn event(&mut self, event: Event) {
        if let Event::TagWrite(_, _, value) = &event
            && let Some(ip) = value.strip_prefix("claim:").and_then(|ip| ip.parse().ok())
            && self.taken_on_claim.contains(&ip)
        {
            self.in_use.insert(ip);
        }
        if let Some(mut react) = self.react.take() {
            react(&event, &mut self.groups);
            self.react = Some(react);
        }
        self.events.push(event);
    }

    pub(super) fn list_reads(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::ListRead(_)))
            .count()
    }

    /// The `Retry-After` of a throttled list request, counting it; None: it is answered.
    fn throttles(&mut self, method: &str, target: &str) -> Option<u64> {
        let path = target.split_once('?').map_or(target, |(p, _)| p);
        if method != "GET" || !path.ends_with("/resourcegroups") {
            return None;
        }
        self.list_requests += 1;
        let throttled = self.throttled_lists.contains(&self.list_requests);
        throttled.then_some(self.throttle_seconds)
    }

    fn answer(&mut self, method: &str, target: &str, body: &Value) -> (u16, Value) {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if method == "GET" && path.ends_with("/resourcegroups") && self.lists_forbidden {
            return (
                403,
                json!({"error": {"code": "AuthorizationFailed", "message": "The client does not have authorization to perform action 'Microsoft.Resources/subscriptions/resourcegroups/read'."}}),
            );
        }
        if method == "GET" && path.ends_with("/resourcegroups") {
            // One page holds every group (a subscription has at most 980): ARM's page size.
            assert!(
                query.split('&').any(|kv| kv == "%24top=1000"),
                "the list asks for pages of 1000: {target}"
            );
            let skip: Option<usize> = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("%24skiptoken="))
                .map(|n| n.parse().unwrap());
            // A list is its first page; the pages after it are the same list.
            if skip.is_none() {
                let n = self.list_reads() + 1;
                self.event(Event::ListRead(n));
            }
            // The cluster's group exists (tagged or not), as on Azure.
            self.groups.entry(RG.to_string()).or_default();
            let value: Vec<Value> = self
                .groups
                .iter()
                .map(|(name, tags)| json!({"name": name, "tags": tags}))
                .collect();
            let Some(size) = self.page_size else {
                return (200, json!({ "value": value }));
            };
            let from = skip.unwrap_or(0);
            let mut page =
                json!({ "value": value.iter().skip(from).take(size).collect::<Vec<_>>() });
            if from + size < value.len() {
                let kept: Vec<&str> = query
                    .split('&')
                    .filter(|kv| !kv.starts_with("%24skiptoken="))
                    .collect();
                page["nextLink"] = json!(format!(
                    "{}{path}?{}&%24skiptoken={}",
                    self.origin.trim_end_matches('/'),
                    kept.join("&"),
                    from + size
                ));
            }
            return (200, page);
        }
        if path.ends_with("/providers/Microsoft.Resources/tags/default") {
            let rg = path
                .split('/')
                .skip_while(|s| *s != "resourceGroups")
                .nth(1)
                .unwrap()
                .to_string();
            if method == "PATCH" {
                let op = body["operation"].as_str().unwrap().to_string();
                for (name, value) in body["properties"]["tags"].as_object().unwrap() {
                    let value = value.as_str().unwrap().to_string();
                    let tags = self.groups.entry(rg.clone()).or_default();
                    if op == "Delete" {
                        tags.remove(name);
                    } else {
                        tags.insert(name.clone(), value.clone());
                    }
                    self.event(Event::TagWrite(op.clone(), name.clone(), value));
                }
            }
            let tags = self.groups.get(&rg).cloned().unwrap_or_default();
            return (200, json!({"properties": {"tags": tags}}));
        }
        if method == "GET" && path.ends_with("/subnets/compute") {
            // Dual-stack, the IPv6 prefix first: the IPv4 one must be found by its family.
            return (
                200,
                json!({"name": "compute", "properties": {
                    "addressPrefixes": ["fd00:10:0:1::/64", "10.0.1.0/24"]}}),
            );
        }
        if method == "GET" && path.ends_with("/CheckIPAddressAvailability") {
            let ip: Ipv4Addr = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("ipAddress="))
                .unwrap()
                .parse()
                .unwrap();
            self.checked.push(ip);
            let available = !self.in_use.contains(&ip);
            return (
                200,
                json!({"available": available, "availableIPAddresses": []}),
            );
        }
        (
            404,
            json!({"error": {"code": "NotFound", "message": target}}),
        )
    }
}

pub(super) struct Fake {
    pub(super) world: Arc<Mutex<World>>,
    pub(super) addresses: AzureAddresses,
}

impl Fake {
    pub(super) async fn start(world: World) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}/", listener.local_addr().unwrap());
        let world = Arc::new(Mutex::new(World {
            origin: origin.clone(),
            ..world
        }));
        let shared = world.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let world = shared.clone();
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    while let Some(request) = read_request(&mut read).await {
                        let (status, body, retry_after) = {
                            let mut world = world.lock().unwrap();
                            match world.throttles(&request.method, &request.target) {
                                Some(seconds) => (
                                    429,
                                    json!({"error": {"code": "SubscriptionRequestsThrottled", "message": "throttled"}}),
                                    format!("retry-after: {seconds}\r\n"),
                                ),
                                None => {
                                    let (status, body) = world.answer(
                                        &request.method,
                                        &request.target,
                                        &request.body,
                                    );
                                    (status, body, String::new())
                                }
                            }
                        };
                        let body = body.to_string();
                        let head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\n{retry_after}\r\n",
                            body.len()
                        );
                        if write.write_all(head.as_bytes()).await.is_err()
                            || write.write_all(body.as_bytes()).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let arm = ArmClient::new(
            reqwest::Client::builder().build().unwrap(),
            url::Url::parse(&origin).unwrap(),
            Arc::new(StaticToken("settle-test-token")),
            "https://management.azure.com/.default".into(),
        );
        Self {
            world,
            addresses: AzureAddresses::new(Arc::new(arm), &super::settings()),
        }
    }

    pub(super) fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap()
    }

    /// Our tag writes, in order.
    pub(super) fn our_writes(&self) -> Vec<(String, String)> {
        self.world()
            .events
            .iter()
            .filter_map(|e| match e {
                Event::TagWrite(op, name, value) if name == TAG => {
                    Some((op.clone(), value.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// Settles; a test fails within seconds, not after eight rounds of SETTLE_WAIT.
    pub(super) async fn settle(&self) -> Result<Ipv4Addr, CloudError> {
        self.settle_within(Duration::from_secs(5)).await
    }

    pub(super) async fn settle_within(&self, limit: Duration) -> Result<Ipv4Addr, CloudError> {
        tokio::time::timeout(limit, self.addresses.settle_private_ipv4(TAG))
            .await
            .expect("settling ended in time")
    }
}
