//! The parent of `bootstrap-sim nodes-conformance`: checks that what it needs is there (exit
//! 2 naming what is missing), extracts the route scripts from the MCO templates (and RHCOS's
//! from its overlay), starts one `bootstrap-sim nodes-conformance-node` per node role under
//! `unshare --net --mount --fork` (each its own network and mount namespace), and compares what
//! they measured with [`model_table`]. It builds nothing: the watcher binary, MCO's tree and
//! RHCOS's are given.

use super::namespace::{self, NodeRun};
use super::{
    Design, NodeSpec, Table, mismatch_json, model_table, node_specs, role_name,
    script_from_template, table_json,
};
use crate::nodes::routes::Script;
use crate::nodes::{Cloud, OnHost, Role};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub const USAGE: &str = "bootstrap-sim nodes-conformance <gcp|azure> --apiserver-watcher BIN --mco DIR [--rhcos DIR] [--design second-address|bootstrap-alone|all-at-once|second-address-alone|watcher-on-vip] [--output text|json]";

/// The MCO templates of each script, relative to the MCO tree.
pub const MCO_GCP_SCRIPT: &str =
    "templates/master/00-master/gcp/files/opt-libexec-openshift-gcp-routes-sh.yaml";
pub const MCO_AZURE_SCRIPT: &str =
    "templates/master/00-master/azure/files/opt-libexec-openshift-azure-routes-sh.yaml";
/// RHCOS's own script, relative to a coreos/rhel-coreos-config tree.
pub const RHCOS_GCP_SCRIPT: &str = "overlay.d/06gcp-routes/usr/sbin/gcp-routes.sh";

pub struct Options {
    pub cloud: Cloud,
    pub watcher: PathBuf,
    pub mco: PathBuf,
    pub rhcos: Option<PathBuf>,
    pub design: Design,
    pub json: bool,
}

/// What the command needs and does not find: exit 2.
#[derive(Debug)]
pub struct Missing(pub Vec<String>);

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "missing: {}", self.0.join("; "))
    }
}

impl std::error::Error for Missing {}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

/// Parses the command line (after the cloud).
pub fn parse(cloud: &str, args: &[&str]) -> Result<Options> {
    let cloud = match cloud {
        "gcp" => Cloud::Gcp,
        "azure" => Cloud::Azure,
        other => bail!("nodes-conformance: expected gcp or azure, found {other:?}\n{USAGE}"),
    };
    let (mut watcher, mut mco, mut rhcos) = (None, None, None);
    let (mut design, mut json) = (Design::SecondAddress, false);
    for (flag, value) in crate::args::flag_values(args, USAGE)? {
        match flag {
            "--apiserver-watcher" => watcher = Some(PathBuf::from(value)),
            "--mco" => mco = Some(PathBuf::from(value)),
            "--rhcos" => rhcos = Some(PathBuf::from(value)),
            "--design" => design = Design::parse(value)?,
            "--output" => json = crate::output_arg(value)?,
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    Ok(Options {
        cloud,
        watcher: watcher.context(format!("--apiserver-watcher is required\n{USAGE}"))?,
        mco: mco.context(format!("--mco is required\n{USAGE}"))?,
        rhcos,
        design,
        json,
    })
}

/// Everything the run needs that is not there.
pub fn missing(opts: &Options) -> Vec<String> {
    let mut out = Vec::new();
    if !opts.watcher.is_file() {
        out.push(format!(
            "--apiserver-watcher {}: no such file (build it from machine-config-operator's cmd/apiserver-watcher)",
            opts.watcher.display()
        ));
    }
    let template = match opts.cloud {
        Cloud::Gcp => MCO_GCP_SCRIPT,
        Cloud::Azure => MCO_AZURE_SCRIPT,
    };
    if !opts.mco.join(template).is_file() {
        out.push(format!(
            "--mco {}: no {template} (a machine-config-operator tree)",
            opts.mco.display()
        ));
    }
    if let Some(rhcos) = &opts.rhcos
        && !rhcos.join(RHCOS_GCP_SCRIPT).is_file()
    {
        out.push(format!(
            "--rhcos {}: no {RHCOS_GCP_SCRIPT} (a coreos/rhel-coreos-config tree)",
            rhcos.display()
        ));
    }
    let mut tools = vec!["unshare", "ip", "nft", "bash", "mount"];
    if opts.cloud == Cloud::Gcp {
        tools.push("curl");
    }
    for tool in tools {
        if !on_path(tool) {
            let hint = match tool {
                "nft" => " (apt-get install -y nftables)",
                _ => "",
            };
            out.push(format!("{tool}: not on PATH{hint}"));
        }
    }
    out
}

/// The script file a node's role runs, written into `work` (None: RHCOS's tree not given).
fn script_file(opts: &Options, script: Script, work: &Path) -> Result<Option<PathBuf>> {
    let (text, name) = match script {
        Script::McoGcp | Script::McoAzure => {
            let rel = match script {
                Script::McoGcp => MCO_GCP_SCRIPT,
                _ => MCO_AZURE_SCRIPT,
            };
            let path = opts.mco.join(rel);
            let yaml = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            (
                script_from_template(&yaml, &path.display().to_string())?,
                format!("{script:?}.sh"),
            )
        }
        Script::RhcosGcp => {
            let Some(rhcos) = &opts.rhcos else {
                return Ok(None);
            };
            let path = rhcos.join(RHCOS_GCP_SCRIPT);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            (text, "RhcosGcp.sh".to_string())
        }
    };
    let out = work.join(name);
    std::fs::write(&out, text).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(Some(out))
}

/// The measured cells of one child's JSON, keyed as the model's.
pub fn parse_measured(spec: &NodeSpec, design: Design, cells: &[Value]) -> Result<Table> {
    let model = model_table(spec, design);
    let mut table = Table::new();
    for v in cells {
        let cell = model
            .keys()
            .find(|c| {
                v["role"] == c.role
                    && v["stage"] == c.stage
                    && v["local_apiserver"] == c.local.as_str()
                    && v["target"] == c.target
            })
            .with_context(|| format!("a measured cell the model does not have: {v}"))?;
        let goes = match v["goes"].as_str() {
            Some("served-locally") => OnHost::Served,
            Some("refused") => OnHost::Refused,
            Some("leaves-the-host") => OnHost::Leaves,
            other => bail!("measured cell {v}: goes {other:?}"),
        };
        table.insert(*cell, goes);
    }
    Ok(table)
}

/// Runs every role; the report (mismatches included) as JSON.
pub async fn run(opts: &Options) -> Result<Value> {
    let gaps = missing(opts);
    if !gaps.is_empty() {
        return Err(Missing(gaps).into());
    }
    let work = tempfile::Builder::new()
        .prefix("nodes-conformance-")
        .tempdir()
        .context("cannot make a scratch dir")?;
    let exe = std::env::current_exe().context("cannot find bootstrap-sim itself")?;
    let cloud = match opts.cloud {
        Cloud::Gcp => "gcp",
        Cloud::Azure => "azure",
    };
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    for spec in node_specs(opts.cloud, opts.design) {
        let role = role_name(spec.role);
        let dir = work.path().join(role);
        std::fs::create_dir_all(&dir)?;
        let script = match spec.script {
            Some(s) => match script_file(opts, s, &dir)? {
                Some(p) => Some(p),
                None => {
                    skipped.push(format!("{role}: runs RHCOS's gcp-routes.sh; no --rhcos"));
                    continue;
                }
            },
            None => None,
        };
        let mut cmd = tokio::process::Command::new("unshare");
        cmd.args(["--net", "--mount", "--fork", "--"])
            .arg(&exe)
            .args([
                "nodes-conformance-node",
                cloud,
                role,
                design_name(opts.design),
            ])
            .arg(&dir);
        if spec.watcher {
            cmd.arg("--apiserver-watcher").arg(&opts.watcher);
        }
        if let Some(script) = &script {
            cmd.arg("--script").arg(script);
        }
        cmd.kill_on_drop(true)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().context("cannot start unshare")?;
        runs.push((spec, child));
    }
    let (mut model, mut real) = (Table::new(), Table::new());
    let mut notes = Vec::new();
    for (spec, child) in runs {
        let out = child
            .wait_with_output()
            .await
            .context("cannot run unshare")?;
        let role = role_name(spec.role);
        if !out.status.success() {
            bail!(
                "{role}: the namespace run failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let cells: Vec<Value> = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("{role}: the namespace run's output is not JSON"))?;
        if let Some(note) = cells.iter().find_map(|c| c["note"].as_str()) {
            notes.push(format!("{role}: {note}"));
        }
        if cells.iter().any(|c| c["watcher_triggered"] == false) {
            notes.push(format!("{role}: the watcher missed a trigger in some cell"));
        }
        model.extend(model_table(&spec, opts.design));
        real.extend(parse_measured(&spec, opts.design, &cells)?);
    }
    let mismatches = super::compare(&model, &real);
    Ok(json!({
        "cloud": cloud,
        "design": design_name(opts.design),
        "apiserver_watcher": opts.watcher,
        "mco": opts.mco,
        "rhcos": opts.rhcos,
        "cells": real.len(),
        "skipped": skipped,
        "notes": notes,
        "mismatches": mismatches.iter().map(mismatch_json).collect::<Vec<_>>(),
        "real": table_json(&real),
    }))
}

pub fn design_name(d: Design) -> &'static str {
    match d {
        Design::SecondAddress => "second-address",
        Design::BootstrapAlone => "bootstrap-alone",
        Design::AllAtOnce => "all-at-once",
        Design::SecondAddressAlone => "second-address-alone",
        Design::WatcherOnVip => "watcher-on-vip",
    }
}

/// The report as text: one line per measured cell, then every mismatch.
pub fn to_text(report: &Value) -> String {
    let mut out = format!(
        "# nodes-conformance {} ({}): {} cells, {} mismatches\n",
        report["cloud"].as_str().unwrap_or(""),
        report["design"].as_str().unwrap_or(""),
        report["cells"],
        report["mismatches"].as_array().map_or(0, Vec::len)
    );
    for v in report["real"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "{:<9} stage {} apiserver {:<4} {:<14} {:<12} -> {}\n",
            v["role"].as_str().unwrap_or(""),
            v["stage"],
            v["local_apiserver"].as_str().unwrap_or(""),
            v["target"].as_str().unwrap_or(""),
            v["ip"].as_str().unwrap_or(""),
            v["goes"].as_str().unwrap_or("")
        ));
    }
    for v in report["mismatches"].as_array().into_iter().flatten() {
        out.push_str(&format!("MISMATCH {v}\n"));
    }
    for v in report["skipped"].as_array().into_iter().flatten() {
        out.push_str(&format!("skipped: {}\n", v.as_str().unwrap_or("")));
    }
    out
}

/// `bootstrap-sim nodes-conformance-node <cloud> <role> <design> <dir> [--apiserver-watcher
/// BIN] [--script FILE]`, inside the namespaces: the measured cells as JSON on stdout.
pub async fn node_main(args: &[&str]) -> Result<Vec<Value>> {
    let [cloud, role, design, dir, rest @ ..] = args else {
        bail!("nodes-conformance-node: <cloud> <role> <design> <dir> expected");
    };
    let cloud = match *cloud {
        "gcp" => Cloud::Gcp,
        "azure" => Cloud::Azure,
        other => bail!("nodes-conformance-node: cloud {other:?}"),
    };
    let role = match *role {
        "master" => Role::Master,
        "worker" => Role::Worker,
        "bootstrap" => Role::Bootstrap,
        other => bail!("nodes-conformance-node: role {other:?}"),
    };
    let mut run = NodeRun {
        cloud,
        role,
        design: Design::parse(design)?,
        work: PathBuf::from(dir),
        watcher: None,
        script: None,
    };
    for (flag, value) in crate::args::flag_values(rest, "")? {
        match flag {
            "--apiserver-watcher" => run.watcher = Some(PathBuf::from(value)),
            "--script" => run.script = Some(PathBuf::from(value)),
            other => bail!("nodes-conformance-node: unknown option {other:?}"),
        }
    }
    namespace::run(run).await
}
