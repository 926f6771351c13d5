//! Many clusters in one VPC (R3): agents at once against ONE moto and ONE ministack, in the
//! same subnets, each with its own infra id, bootstrap host and state dir.
//!
//! - `own_records`: each cluster its own name (`clu00`..), all writing into one shared public
//!   zone (`example.com`) and one shared private zone (`example.com`, named by
//!   `platform.aws.hostedZone`).
//! - `one_record_set`: all clusters with the same name, so every agent writes its values into
//!   the SAME three record sets (`api`/`api-int` private, `api` public), next to another
//!   writer's value.
//!
//! Both: every agent reserves and seeds at once; then half of them `teardown --all` at once
//! while the other half keep theirs; then the rest. After each phase, through boto3: no IP is
//! held twice (EIPs, ENIs, bootstrap hosts), every live agent holds exactly its reservations
//! and its values are all in DNS, a torn-down agent left nothing behind, and the other
//! writer's values are intact.
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::AwsPeers;
use common::*;
use futures::future::join_all;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

/// Agents at once: 20, or `MANY_CLUSTERS=n` (at most 200: their bootstrap hosts share one
/// /24). 20 take about 9 s per test on the 2-core machine, 40 about 17 s (README,
/// "Reliability").
fn agents() -> usize {
    std::env::var("MANY_CLUSTERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20)
        .clamp(2, 200)
}

/// Another writer's value in the public record sets (the private ones get `OTHER_WRITER`).
const OTHER_PUBLIC: &str = "198.51.100.7";

struct Cluster {
    agent: Agent,
    infra_id: String,
    /// `api`'s record name (`api.<cluster>.example.com`).
    api: String,
    api_int: String,
}

/// What each phase's agents printed that the README reports: lost compare-and-swaps and
/// stage retries.
#[derive(Default, Debug)]
struct Tally {
    conflicts: usize,
    stage_retries: usize,
    record_writes: usize,
}

fn strings_of(value: &Value) -> BTreeSet<String> {
    strings(value).into_iter().collect()
}

struct Fleet {
    peers: AwsPeers,
    clusters: Vec<Cluster>,
    /// Where the private records live: the world's private zone or the shared one.
    private_zone: String,
    public_zone: String,
    tally: std::sync::Mutex<Tally>,
}

impl Fleet {
    /// `shared_record_set`: every cluster named `mycluster` (one record set for all); else
    /// `clu00`.. with the private records in one shared private zone `example.com`.
    async fn new(shared_record_set: bool) -> Self {
        let peers = AwsPeers::start().await.unwrap();
        let base = tempfile::tempdir().unwrap();
        let base_assets = base.path().join("assets");
        let setup = peers
            .setup_world(&fixture("aws"), &base_assets)
            .await
            .unwrap();
        let public_zone = setup["zones"]["public"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        let private_zone = if shared_record_set {
            setup["zones"]["private"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        } else {
            peers.create_zone("example.com", true).await.unwrap()
        };
        // Every cluster's bootstrap host lives in the first private subnet; setup made the
        // first one's (10.0.1.10).
        let first_subnet = setup["subnets"]["subnet-0a1b2c3d4e5f60001"]
            .as_str()
            .unwrap()
            .to_string();
        let bootstrap_ips: Vec<&'static str> = (0..agents())
            .map(|i| &*Box::leak(format!("10.0.1.{}", 10 + i).into_boxed_str()))
            .collect();
        peers
            .create_enis(&first_subnet, &bootstrap_ips[1..], "bootstrap host")
            .await
            .unwrap();

        let clusters = (0..agents())
            .map(|i| {
                let name = if shared_record_set {
                    "mycluster".to_string()
                } else {
                    format!("clu{i:02}")
                };
                let infra_id = format!("clu{i:02}-7xk2p");
                let dir = tempfile::tempdir().unwrap();
                let assets = dir.path().join("assets");
                fixtures::copy_dir(&base_assets, &assets);
                rewrite(&assets, |text| {
                    let text = text.replace("mycluster-7xk2p", &infra_id);
                    if shared_record_set {
                        text
                    } else {
                        text.replace("mycluster", &name).replace(
                            "        region: us-east-1\n",
                            &format!(
                                "        region: us-east-1\n        hostedZone: {private_zone}\n"
                            ),
                        )
                    }
                });
                let agent = Agent::new(dir, assets, bootstrap_ips[i], peers.agent_env());
                Cluster {
                    agent,
                    infra_id,
                    api: format!("api.{name}.example.com A"),
                    api_int: format!("api-int.{name}.example.com A"),
                }
            })
            .collect();
        let fleet = Self {
            peers,
            clusters,
            private_zone,
            public_zone,
            tally: Default::default(),
        };
        // Another writer's values, in record sets the agents write (the first cluster's, or
        // the one all share).
        let first = &fleet.clusters[0];
        for name in [&first.api, &first.api_int] {
            let name = name.trim_end_matches(" A");
            fleet
                .peers
                .write_record_in(&fleet.private_zone, name, &[OTHER_WRITER])
                .await
                .unwrap();
        }
        fleet
            .peers
            .write_record_in(
                &fleet.public_zone,
                first.api.trim_end_matches(" A"),
                &[OTHER_PUBLIC],
            )
            .await
            .unwrap();
        drop(base);
        fleet
    }

    /// Runs `commands` in order on each of `which`, all of them at once; each must succeed.
    async fn run(&self, which: &[usize], commands: &[&[&str]]) {
        let runs = which.iter().map(|&i| async move {
            let agent = &self.clusters[i].agent;
            for args in commands {
                let out = agent.run(args).await;
                let stderr = String::from_utf8_lossy(&out.stderr);
                let mut tally = self.tally.lock().unwrap();
                tally.conflicts += stderr.matches("record set changed under us").count();
                tally.stage_retries += stderr.matches("transient failure, retrying").count();
                tally.record_writes += stderr.matches("record set edited").count();
            }
        });
        join_all(runs).await;
    }

    async fn world(&self) -> Value {
        self.peers.inspect().await.unwrap()
    }

    /// The record set `name` ("fqdn TYPE") of a zone, by id.
    fn record(world: &Value, zone: &str, name: &str) -> BTreeSet<String> {
        strings_of(&world["zones_by_id"][zone][name])
    }

    /// Checks the world with `live` agents holding everything and the rest holding nothing.
    async fn assert_holding(&self, live: &[usize]) {
        let world = self.world().await;
        let ours = |kind: &str, infra_id: &str| -> Vec<Value> {
            world[kind]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["tags"][format!("kubernetes.io/cluster/{infra_id}")] == "owned")
                .filter(|r| r["tags"]["bootstrap-agent.openshift.io/reservation"].is_string())
                .cloned()
                .collect()
        };
        let ips = |rs: &[Value]| -> BTreeSet<String> {
            rs.iter()
                .map(|r| r["ip"].as_str().unwrap().to_string())
                .collect()
        };

        // No address is held twice in the whole VPC: not by two agents, not by an agent and a
        // bootstrap host.
        for kind in ["eips", "enis"] {
            let all: Vec<&str> = world[kind]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["ip"].as_str().unwrap())
                .collect();
            let distinct: BTreeSet<&str> = all.iter().copied().collect();
            assert_eq!(distinct.len(), all.len(), "an IP is held twice: {all:?}");
        }

        // Per record set (name -> values), what the live agents must have put there.
        let mut private: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut public: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut gone: BTreeSet<String> = BTreeSet::new();
        let mut held_by: BTreeMap<String, String> = BTreeMap::new();
        for (i, c) in self.clusters.iter().enumerate() {
            let (eips, enis) = (ours("eips", &c.infra_id), ours("enis", &c.infra_id));
            if !live.contains(&i) {
                assert!(
                    eips.is_empty() && enis.is_empty(),
                    "{} tore down, yet holds {eips:?} {enis:?}",
                    c.infra_id
                );
                gone.insert(c.agent.bootstrap_ip.to_string());
                continue;
            }
            assert_eq!(eips.len(), 3, "{}: one EIP per public subnet", c.infra_id);
            assert_eq!(enis.len(), 3, "{}: one ENI per private subnet", c.infra_id);
            let (eip_ips, eni_ips) = (ips(&eips), ips(&enis));
            for ip in eip_ips.iter().chain(&eni_ips) {
                if let Some(other) = held_by.insert(ip.clone(), c.infra_id.clone()) {
                    panic!("{ip} is held by {other} and {}", c.infra_id);
                }
            }
            let mut values = eni_ips.clone();
            values.insert(c.agent.bootstrap_ip.to_string());
            for name in [&c.api, &c.api_int] {
                private
                    .entry(name.clone())
                    .or_default()
                    .extend(values.iter().cloned());
            }
            public.entry(c.api.clone()).or_default().extend(eip_ips);
        }
        // The other writer's values are in the first cluster's (or the shared) record sets.
        let first = &self.clusters[0];
        for name in [&first.api, &first.api_int] {
            private
                .entry(name.clone())
                .or_default()
                .insert(OTHER_WRITER.to_string());
        }
        public
            .entry(first.api.clone())
            .or_default()
            .insert(OTHER_PUBLIC.to_string());

        for (name, want) in &private {
            assert_eq!(
                &Self::record(&world, &self.private_zone, name),
                want,
                "private {name}: every live agent's values and the other writer's, nothing else"
            );
        }
        for (name, want) in &public {
            assert_eq!(
                &Self::record(&world, &self.public_zone, name),
                want,
                "public {name}"
            );
        }
        // A torn-down agent's record sets are gone (unless shared with live ones or another
        // writer, checked above), and its bootstrap IP is in no record.
        for (i, c) in self.clusters.iter().enumerate() {
            if live.contains(&i) || private.contains_key(&c.api) {
                continue;
            }
            assert!(Self::record(&world, &self.private_zone, &c.api).is_empty());
            assert!(Self::record(&world, &self.public_zone, &c.api).is_empty());
        }
        for zone in [&self.private_zone, &self.public_zone] {
            for values in world["zones_by_id"][zone].as_object().unwrap().values() {
                for ip in strings(values) {
                    assert!(!gone.contains(&ip), "a torn-down agent's {ip} is in DNS");
                }
            }
        }
    }

    async fn exercise(&self, label: &str) {
        let all: Vec<usize> = (0..agents()).collect();
        let (even, odd): (Vec<usize>, Vec<usize>) = all.iter().partition(|i| *i % 2 == 0);

        let started = Instant::now();
        self.run(&all, BOOTSTRAP).await;
        let seeded = started.elapsed();
        self.assert_holding(&all).await;

        let started = Instant::now();
        self.run(&even, &[&["teardown", "--all"]]).await;
        let half = started.elapsed();
        self.assert_holding(&odd).await;

        let started = Instant::now();
        self.run(&odd, &[&["teardown", "--all"]]).await;
        let rest = started.elapsed();
        self.assert_holding(&[]).await;

        eprintln!(
            "{label}: {} agents; reserve + dns seed at once {seeded:?}, teardown --all of \
             {} at once {half:?}, of the other {} {rest:?}; {:?}",
            all.len(),
            even.len(),
            odd.len(),
            self.tally.lock().unwrap()
        );
    }
}

/// Applies `edit` to every file under `dir`.
fn rewrite(dir: &Path, edit: impl Fn(String) -> String + Copy) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rewrite(&path, edit);
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, edit(text)).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_clusters_in_one_vpc_with_shared_zones_hold_distinct_ips_and_tear_down_only_their_own()
 {
    Fleet::new(false).await.exercise("own record sets").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_clusters_writing_one_shared_record_set_keep_each_others_values() {
    Fleet::new(true)
        .await
        .exercise("one shared record set")
        .await;
}
