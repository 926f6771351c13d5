//! `bootstrap-sim nodes-conformance gcp|azure`: the node model of [`crate::nodes`] judged by
//! OpenShift's real node-side components. For every stage of the hand-over (progressive
//! seeding, the agent's design), every node role and every one of our addresses, with the
//! node's kube-apiserver up and down, it records where a node's own connection to
//! `<ip>:6443` goes (served on the node, refused, or out of the node) and compares that with
//! [`World::on_host`].
//!
//! This module is the pure part, tested in CI: the cells to measure ([`node_specs`]), what the
//! model decides for them ([`model_table`]), the comparison ([`compare`]) and the extraction
//! of a script from an MCO template ([`script_from_template`]). The measurement, which needs
//! the real `apiserver-watcher` binary, MCO's templates, RHCOS's `gcp-routes.sh`, `unshare`
//! and `nft`, is in [`harness`] (the parent) and [`namespace`] (one node in a network and
//! mount namespace of its own).

pub mod harness;
pub mod namespace;
mod standins;

use super::routes::Script;
use super::watcher::{FAILURE_THRESHOLD, Watcher};
use super::{API, Apiserver, Cloud, Node, OnHost, Role, World};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

/// The judge's addresses: our four, and the nodes'. Inside namespaces the harness makes.
pub const BOOTSTRAP_IP: &str = "10.0.1.10";
pub const SECOND_ADDRESS: &str = "10.0.1.11";
pub const INTERNAL_VIP: &str = "10.0.2.5";
pub const PUBLIC_IP: &str = "203.0.113.5";
pub const MASTER_IP: &str = "10.0.0.20";
pub const WORKER_IP: &str = "10.0.32.30";
/// The name the watcher's `--health-check-url` carries.
pub const API_INT: &str = "api-int.judge.example";

/// What api-int holds in each stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// The agent's default on GCP (on Azure before issue 42): the bootstrap host's two
    /// addresses until the VIP serves.
    SecondAddress,
    /// `--bootstrap-second-address off`: the bootstrap IP alone.
    BootstrapAlone,
    /// `--dns-seeding all-at-once`: the bootstrap IP and the VIP from the start.
    AllAtOnce,
    /// The bootstrap host's second address without its IP in api-int until the VIP serves
    /// (the agent's default on Azure; on GCP the simulation's `--nodes-without-bootstrap-ip
    /// true`).
    SecondAddressAlone,
    /// The two addresses, with the watcher's `--health-check-url` naming the VIP as an IP
    /// literal (a MachineConfig overriding the static pod).
    WatcherOnVip,
}

impl Design {
    pub fn parse(s: &str) -> Result<Design> {
        Ok(match s {
            "second-address" => Design::SecondAddress,
            "bootstrap-alone" => Design::BootstrapAlone,
            "all-at-once" => Design::AllAtOnce,
            "second-address-alone" => Design::SecondAddressAlone,
            "watcher-on-vip" => Design::WatcherOnVip,
            other => bail!(
                "--design: expected second-address, bootstrap-alone, all-at-once, second-address-alone or watcher-on-vip, found {other:?}"
            ),
        })
    }
}

/// The node's own kube-apiserver in a cell: a master's up or down, the bootstrap host's up,
/// a worker has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Local {
    Up,
    Down,
    None,
}

impl Local {
    pub fn as_str(self) -> &'static str {
        match self {
            Local::Up => "up",
            Local::Down => "down",
            Local::None => "none",
        }
    }
}

fn ip(s: &str) -> IpAddr {
    // The constants above are literals; a typo is a bug caught by the unit tests.
    s.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))
}

pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Master => "master",
        Role::Worker => "worker",
        Role::Bootstrap => "bootstrap",
    }
}

/// One node to measure, in every stage.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    pub cloud: Cloud,
    pub role: Role,
    pub ip: IpAddr,
    pub aliases: Vec<IpAddr>,
    /// GCP: what the metadata server lists as this node's forwarded IPs (the frontends whose
    /// backends hold it).
    pub forwarded: Vec<IpAddr>,
    /// api-int per stage (stages 1, 2, 3); the node boots in stage 1.
    pub api_int: Vec<Vec<IpAddr>>,
    pub locals: Vec<Local>,
    /// Our addresses, by name.
    pub targets: Vec<(&'static str, IpAddr)>,
    /// Runs the apiserver-watcher (masters).
    pub watcher: bool,
    /// The host of the watcher's `--health-check-url`: api-int, or this IP literal.
    pub watcher_literal: Option<IpAddr>,
    pub script: Option<Script>,
}

/// Whether the bootstrap host has its second address under `design`.
fn second(design: Design) -> bool {
    matches!(
        design,
        Design::SecondAddress | Design::SecondAddressAlone | Design::WatcherOnVip
    )
}

fn world(cloud: Cloud, design: Design) -> World {
    let mut bootstrap = Node::new("bootstrap", Role::Bootstrap, ip(BOOTSTRAP_IP));
    if second(design) {
        bootstrap.aliases.push(ip(SECOND_ADDRESS));
    }
    let nodes = vec![
        bootstrap,
        Node::new("master", Role::Master, ip(MASTER_IP)),
        Node::new("worker", Role::Worker, ip(WORKER_IP)),
    ];
    let mut w = World::new(cloud, nodes);
    for n in &mut w.nodes {
        n.up = true;
    }
    w.internal.insert(ip(INTERNAL_VIP));
    w.external.insert(ip(PUBLIC_IP));
    w
}

/// The three nodes of `cloud` under `design`.
pub fn node_specs(cloud: Cloud, design: Design) -> Vec<NodeSpec> {
    let (b, s, v) = (ip(BOOTSTRAP_IP), ip(SECOND_ADDRESS), ip(INTERNAL_VIP));
    let api_int = match design {
        Design::SecondAddress | Design::WatcherOnVip => {
            vec![vec![b, s], vec![b, s, v], vec![v]]
        }
        Design::SecondAddressAlone => vec![vec![s], vec![s, v], vec![v]],
        Design::BootstrapAlone => vec![vec![b], vec![b, v], vec![v]],
        Design::AllAtOnce => vec![vec![b, v], vec![b, v], vec![v]],
    };
    let mut targets = vec![("bootstrap-ip", b)];
    if second(design) {
        targets.push(("second-address", s));
    }
    targets.push(("internal-vip", v));
    targets.push(("public-ip", ip(PUBLIC_IP)));
    let w = world(cloud, design);
    (0..w.nodes.len())
        .map(|i| {
            let node = &w.nodes[i];
            NodeSpec {
                cloud,
                role: node.role,
                ip: node.ip,
                aliases: node.aliases.clone(),
                forwarded: match cloud {
                    Cloud::Gcp => w.forwarded_ips(i).into_iter().collect(),
                    Cloud::Azure => Vec::new(),
                },
                api_int: api_int.clone(),
                locals: match node.role {
                    Role::Master => vec![Local::Up, Local::Down],
                    Role::Bootstrap => vec![Local::Up],
                    Role::Worker => vec![Local::None],
                },
                targets: targets.clone(),
                watcher: node.role == Role::Master,
                watcher_literal: (design == Design::WatcherOnVip).then_some(v),
                script: Script::of(cloud, node.role),
            }
        })
        .collect()
}

/// One measured (or modelled) cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cell {
    pub role: &'static str,
    pub stage: u8,
    pub local: Local,
    pub target: &'static str,
    pub ip: IpAddr,
}

pub type Table = BTreeMap<Cell, OnHost>;

impl NodeSpec {
    /// The cells of stage `stage_index + 1` in local state `local`: one per target.
    pub fn cells(&self, stage_index: usize, local: Local) -> impl Iterator<Item = Cell> + '_ {
        self.targets.iter().map(move |(target, ip)| Cell {
            role: role_name(self.role),
            stage: stage_index as u8 + 1,
            local,
            target,
            ip: *ip,
        })
    }
}

/// What the model decides for every cell of `spec`, driving its watcher as the harness drives
/// the real one: it starts with stage 1's api-int, then per stage and local state one
/// successful check (up) or the failure threshold's worth (down).
pub fn model_table(spec: &NodeSpec, design: Design) -> Table {
    let mut w = world(spec.cloud, design);
    let i = w
        .nodes
        .iter()
        .position(|n| n.role == spec.role)
        .unwrap_or(0);
    w.nodes[i].forwarded = spec.forwarded.iter().copied().collect();
    if spec.watcher {
        w.nodes[i].watcher = Some(Watcher::new(Duration::ZERO));
    }
    let mut table = Table::new();
    for (s, answer) in spec.api_int.iter().enumerate() {
        let now = Duration::from_secs(60 * s as u64);
        for local in &spec.locals {
            let node = &mut w.nodes[i];
            node.apiserver = match local {
                Local::Down => Apiserver::Down,
                _ => Apiserver::Ready,
            };
            if let Some(watcher) = node.watcher.as_mut() {
                let literal: Vec<IpAddr> = spec.watcher_literal.into_iter().collect();
                let answer = match literal.is_empty() {
                    true => answer.as_slice(),
                    false => literal.as_slice(),
                };
                watcher.maybe_start(now, API_INT, answer);
                let (ready, checks) = match local {
                    Local::Down => (false, FAILURE_THRESHOLD),
                    _ => (true, 1),
                };
                for _ in 0..checks {
                    watcher.on_check(ready, &mut node.run);
                }
            }
            for cell in spec.cells(s, *local) {
                table.insert(cell, w.on_host(i, cell.ip, API));
            }
        }
    }
    table
}

/// A cell where the model and the measurement differ (`None`: the cell is missing on that
/// side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub cell: Cell,
    pub model: Option<OnHost>,
    pub real: Option<OnHost>,
}

pub fn compare(model: &Table, real: &Table) -> Vec<Mismatch> {
    let mut cells: Vec<&Cell> = model.keys().chain(real.keys()).collect();
    cells.sort();
    cells.dedup();
    cells
        .into_iter()
        .filter_map(|cell| {
            let (m, r) = (model.get(cell).copied(), real.get(cell).copied());
            (m != r).then_some(Mismatch {
                cell: *cell,
                model: m,
                real: r,
            })
        })
        .collect()
}

pub fn cell_json(cell: &Cell) -> Value {
    json!({
        "role": cell.role,
        "stage": cell.stage,
        "local_apiserver": cell.local.as_str(),
        "target": cell.target,
        "ip": cell.ip,
    })
}

pub fn table_json(table: &Table) -> Vec<Value> {
    table
        .iter()
        .map(|(cell, verdict)| {
            let mut v = cell_json(cell);
            v["goes"] = json!(verdict.as_str());
            v
        })
        .collect()
}

pub fn mismatch_json(m: &Mismatch) -> Value {
    let mut v = cell_json(&m.cell);
    v["model"] = json!(m.model.map(OnHost::as_str));
    v["real"] = json!(m.real.map(OnHost::as_str));
    v
}

/// The script an MCO file template carries (`contents.inline`), checked to be a script and
/// free of Go template actions (which MCO would render first).
pub fn script_from_template(yaml: &str, file: &str) -> Result<String> {
    let doc: Value = serde_saphyr::from_str(yaml).with_context(|| format!("{file}: not YAML"))?;
    let inline = doc["contents"]["inline"]
        .as_str()
        .with_context(|| format!("{file}: no contents.inline string"))?;
    if !inline.starts_with("#!") {
        bail!("{file}: contents.inline is not a script (no #! line)");
    }
    if inline.contains("{{") {
        bail!("{file}: contents.inline has Go template actions; expected a plain script");
    }
    Ok(inline.to_string())
}

#[cfg(test)]
mod tests;
