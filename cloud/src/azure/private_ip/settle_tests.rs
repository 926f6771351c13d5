//! The async half of the private-IP choice (pick, claim, settle) against a small in-process
//! ARM: resource groups with their tags, the compute subnet, CheckIPAddressAvailability. Other
//! clusters act through `react`, called on every list read and tag write.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::azure::arm::ArmClient;
use crate::azure::{AzureSettings, ClientSecret};
use azure_core::credentials::{AccessToken, TokenCredential, TokenRequestOptions};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

const TAG: &str = "m-1-rsvd-private-ipv4";
const RG: &str = "m-rg";

#[derive(Debug)]
struct StaticToken;

#[async_trait::async_trait]
impl TokenCredential for StaticToken {
    async fn get_token(
        &self,
        _scopes: &[&str],
        _options: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        Ok(AccessToken::new(
            "settle-test-token".to_string(),
            azure_core::time::OffsetDateTime::now_utc() + azure_core::time::Duration::hours(1),
        ))
    }
}

/// Resource group -> its tags.
type Groups = BTreeMap<String, BTreeMap<String, String>>;

/// What the fake saw, for `react`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    /// The n-th `ResourceGroups_List` (from 1), before it is answered.
    ListRead(usize),
    /// A tag write of ours (`Merge` / `Delete`, name, value), after it was applied.
    TagWrite(String, String, String),
}

type React = Box<dyn FnMut(&Event, &mut Groups) + Send>;

#[derive(Default)]
struct World {
    groups: Groups,
    /// Addresses a NIC holds: CheckIPAddressAvailability calls them not available.
    in_use: BTreeSet<Ipv4Addr>,
    events: Vec<Event>,
    /// Addresses asked about, in order.
    checked: Vec<Ipv4Addr>,
    react: Option<React>,
}

impl World {
    fn event(&mut self, event: Event) {
        if let Some(mut react) = self.react.take() {
            react(&event, &mut self.groups);
            self.react = Some(react);
        }
        self.events.push(event);
    }

    fn list_reads(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::ListRead(_)))
            .count()
    }

    fn answer(&mut self, method: &str, target: &str, body: &Value) -> (u16, Value) {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if method == "GET" && path.ends_with("/resourcegroups") {
            let n = self.list_reads() + 1;
            self.event(Event::ListRead(n));
            let value: Vec<Value> = self
                .groups
                .iter()
                .map(|(name, tags)| json!({"name": name, "tags": tags}))
                .collect();
            return (200, json!({ "value": value }));
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

struct Fake {
    world: Arc<Mutex<World>>,
    addresses: AzureAddresses,
}

impl Fake {
    async fn start(world: World) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}/", listener.local_addr().unwrap());
        let world = Arc::new(Mutex::new(world));
        let shared = world.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let world = shared.clone();
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    while let Some((method, target, body)) = read_request(&mut read).await {
                        let (status, body) = world.lock().unwrap().answer(&method, &target, &body);
                        let body = body.to_string();
                        let head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\n\r\n",
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
            Arc::new(StaticToken),
            "https://management.azure.com/.default".into(),
        );
        Self {
            world,
            addresses: AzureAddresses::new(Arc::new(arm), &settings()),
        }
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap()
    }

    /// Our tag writes, in order.
    fn our_writes(&self) -> Vec<(String, String)> {
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
    async fn settle(&self) -> Result<Ipv4Addr, CloudError> {
        self.settle_within(Duration::from_secs(5)).await
    }

    async fn settle_within(&self, limit: Duration) -> Result<Ipv4Addr, CloudError> {
        tokio::time::timeout(limit, self.addresses.settle_private_ipv4(TAG))
            .await
            .expect("settling ended in time")
    }
}

async fn read_request<R: tokio::io::AsyncBufRead + Unpin>(
    read: &mut R,
) -> Option<(String, String, Value)> {
    let mut line = String::new();
    if read.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut length = 0;
    loop {
        let mut header = String::new();
        read.read_line(&mut header).await.ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some((
        method,
        target,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    ))
}

fn settings() -> AzureSettings {
    AzureSettings {
        subscription_id: "sub".into(),
        infra_id: "m-1".into(),
        region: "eastus".into(),
        resource_group: RG.into(),
        base_domain_resource_group: "dns-rg".into(),
        network_resource_group: "net-rg".into(),
        virtual_network: "vnet".into(),
        compute_subnet: "compute".into(),
        credential: ClientSecret {
            tenant_id: "t".into(),
            client_id: "c".into(),
            client_secret: "s".into(),
        },
        arm_endpoint: String::new(),
        authority_host: String::new(),
        token_scope: String::new(),
    }
}

/// The candidates of round `round` for this cluster's compute subnet.
fn candidate(round: u32, n: usize) -> Ipv4Addr {
    candidates(Ipv4Addr::new(10, 0, 1, 0), 24, "m-1", round)
        .nth(n)
        .unwrap()
}

fn groups(entries: &[(&str, &str, &str)]) -> Groups {
    let mut groups = Groups::new();
    for (rg, tag, value) in entries {
        groups
            .entry((*rg).to_string())
            .or_default()
            .insert((*tag).to_string(), (*value).to_string());
    }
    groups
}

fn write(op: &str, value: impl ToString) -> (String, String) {
    (op.to_string(), value.to_string())
}

#[tokio::test]
async fn the_pick_skips_what_other_clusters_record_and_what_azure_calls_taken_then_keeps_it() {
    let (c0, c1, c2) = (candidate(0, 0), candidate(0, 1), candidate(0, 2));
    let fake = Fake::start(World {
        // Another cluster chose c0 (no NIC holds it yet, so Azure calls it free); a NIC
        // holds c1.
        groups: groups(&[
            ("a-rg", "a-1-rsvd-private-ipv4", &c0.to_string()),
            (RG, "owner", "team"),
        ]),
        in_use: BTreeSet::from([c1]),
        ..World::default()
    })
    .await;
    assert_eq!(fake.settle().await.unwrap(), c2);
    assert_eq!(fake.world().checked, [c1, c2], "c0 is never asked about");
    assert_eq!(
        fake.our_writes(),
        [write("Merge", format!("claim:{c2}")), write("Merge", c2)]
    );
    assert_eq!(fake.world().groups[RG][TAG], c2.to_string());
}

#[tokio::test]
async fn a_holder_that_shows_with_our_claim_wins_and_the_pick_starts_again() {
    let x = candidate(0, 0);
    let fake = Fake::start(World {
        // Another agent kept x, having read before our claim was written.
        react: Some(Box::new(move |event, groups| {
            if *event == Event::TagWrite("Merge".into(), TAG.into(), format!("claim:{x}")) {
                groups
                    .entry("a-rg".into())
                    .or_default()
                    .insert("a-1-rsvd-private-ipv4".into(), x.to_string());
            }
        })),
        ..World::default()
    })
    .await;
    let kept = fake.settle().await.unwrap();
    assert_ne!(kept, x);
    assert_eq!(
        fake.our_writes(),
        [
            write("Merge", format!("claim:{x}")),
            write("Merge", format!("claim:{kept}")),
            write("Merge", kept)
        ]
    );
}

#[tokio::test]
async fn a_claim_waits_for_a_higher_ranked_claim_to_yield_then_keeps_the_address() {
    let x = candidate(0, 0);
    let fake = Fake::start(World {
        // z-1 claimed x too (it ranks after us): it sees our claim and yields two reads later.
        react: Some(Box::new(move |event, groups| match event {
            Event::TagWrite(op, tag, value)
                if op == "Merge" && tag == TAG && *value == format!("claim:{x}") =>
            {
                groups
                    .entry("z-rg".into())
                    .or_default()
                    .insert("z-1-rsvd-private-ipv4".into(), format!("claim:{x}"));
            }
            Event::ListRead(4) => {
                groups.remove("z-rg");
            }
            _ => {}
        })),
        ..World::default()
    })
    .await;
    assert_eq!(fake.settle().await.unwrap(), x);
    assert_eq!(
        fake.our_writes(),
        [write("Merge", format!("claim:{x}")), write("Merge", x)]
    );
    assert_eq!(fake.world().list_reads(), 4, "one to pick, three to settle");
}

/// The claim that read before ours and kept its address never yields: after SETTLE_WAIT ours
/// does, having read the records with a growing delay (not a busy loop).
#[tokio::test]
async fn a_higher_ranked_claim_that_stays_past_the_settle_wait_wins() {
    let x = candidate(0, 0);
    let fake = Fake::start(World {
        react: Some(Box::new(move |event, groups| {
            if *event == Event::TagWrite("Merge".into(), TAG.into(), format!("claim:{x}")) {
                groups
                    .entry("z-rg".into())
                    .or_default()
                    .insert("z-1-rsvd-private-ipv4".into(), format!("claim:{x}"));
            }
        })),
        ..World::default()
    })
    .await;
    let started = Instant::now();
    let kept = fake
        .settle_within(SETTLE_WAIT + Duration::from_secs(10))
        .await
        .unwrap();
    assert!(started.elapsed() >= SETTLE_WAIT, "{:?}", started.elapsed());
    assert_ne!(kept, x);
    let reads = fake.world().list_reads();
    // 1 to pick, ~9 while waiting (0.2 s doubling up to 2 s), 1 to pick again, 1 to settle.
    assert!((8..=16).contains(&reads), "{reads} reads of the records");
}

#[tokio::test]
async fn after_eight_lost_picks_the_claim_is_withdrawn_and_the_error_says_why() {
    let fake = Fake::start(World {
        // Whatever we claim, another cluster holds it by then.
        react: Some(Box::new(move |event, groups| {
            if let Event::TagWrite(op, tag, value) = event
                && op == "Merge"
                && tag == TAG
                && let Some(ip) = value.strip_prefix(CLAIM)
            {
                groups
                    .entry(format!("other-{ip}"))
                    .or_default()
                    .insert("o-1-rsvd-private-ipv4".into(), ip.to_string());
            }
        })),
        ..World::default()
    })
    .await;
    let e = fake.settle().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Transient);
    assert!(e.message.contains("in 8 picks"), "{}", e.message);
    let writes = fake.our_writes();
    assert_eq!(writes.len(), 9, "{writes:?}");
    assert_eq!(writes[8].0, "Delete");
    assert!(!fake.world().groups[RG].contains_key(TAG));
}

#[tokio::test]
async fn a_claim_found_after_a_restart_is_ours_only_while_no_other_cluster_records_it() {
    let x: IpAddr = candidate(0, 0).into();
    let alone = Fake::start(World {
        groups: groups(&[(RG, TAG, &format!("claim:{x}"))]),
        ..World::default()
    })
    .await;
    assert_eq!(
        alone.addresses.unrivalled_claim(TAG, x).await.unwrap(),
        Some(x)
    );
    let rivalled = Fake::start(World {
        groups: groups(&[
            (RG, TAG, &format!("claim:{x}")),
            ("a-rg", "a-1-rsvd-private-ipv4", &x.to_string()),
        ]),
        ..World::default()
    })
    .await;
    assert_eq!(
        rivalled.addresses.unrivalled_claim(TAG, x).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn own_records_are_on_our_resource_group_and_named_for_our_infra_id() {
    let fake = Fake::start(World::default()).await;
    let own = |rg: &str, tag: &str| {
        fake.addresses.is_own(&Record {
            rg: rg.into(),
            tag: tag.into(),
            recorded: Recorded::Held(IpAddr::V4(Ipv4Addr::new(10, 0, 1, 9))),
        })
    };
    assert!(
        own("M-RG", "M-1-rsvd-private-ipv4"),
        "ARM names ignore case"
    );
    assert!(!own("a-rg", TAG), "another resource group");
    assert!(!own(RG, "m-10-rsvd-private-ipv4"), "another infra id");
}
