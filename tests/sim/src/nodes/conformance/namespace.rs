//! One node of the judge, run by `bootstrap-sim nodes-conformance-node` inside the network
//! and mount namespaces `unshare --net --mount` made for it ([`super::harness`] starts it):
//! a veth `eth0` holding the node's addresses with a default route out of it, a private `/run`
//! (tmpfs: `/run/cloud-routes`, `/run/gcp-routes`), a hosts file bind-mounted over
//! `/etc/hosts` answering api-int as the stage's zone does, a stand-in kube-apiserver on
//! `0.0.0.0:6443` (TLS, `/readyz` 200) that is up or down, on GCP a stand-in metadata server
//! on 169.254.169.254:80 listing the node's forwarded IPs, and the real programs: the
//! apiserver-watcher (masters) and the node's route script. Nothing here leaves the
//! namespace: every address it dials is inside it.

use super::standins::{METADATA_IP, StandIn, metadata_server};
use super::{API_INT, Design, Local, NodeSpec, node_specs};
use crate::nodes::routes::Script;
use crate::nodes::{Cloud, OnHost, Role};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, timeout};

/// The next hop of the node's default route: a neighbour that never answers, so a
/// connection that is not made local leaves through `eth0` and is counted there.
const GATEWAY: &str = "10.255.255.254";

/// What the parent passes: the node and the real programs.
pub struct NodeRun {
    pub cloud: Cloud,
    pub role: Role,
    pub design: Design,
    pub work: PathBuf,
    pub watcher: Option<PathBuf>,
    pub script: Option<PathBuf>,
}

fn sh(program: &str, args: &[&str]) -> Result<()> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn setup_network(spec: &NodeSpec) -> Result<()> {
    sh("ip", &["link", "set", "lo", "up"])?;
    sh(
        "ip",
        &[
            "link", "add", "eth0", "type", "veth", "peer", "name", "fabric0",
        ],
    )?;
    sh("ip", &["link", "set", "fabric0", "up"])?;
    for addr in std::iter::once(&spec.ip).chain(&spec.aliases) {
        sh("ip", &["addr", "add", &format!("{addr}/32"), "dev", "eth0"])?;
    }
    sh("ip", &["link", "set", "eth0", "up"])?;
    sh(
        "ip",
        &["route", "add", &format!("{GATEWAY}/32"), "dev", "eth0"],
    )?;
    sh(
        "ip",
        &[
            "neigh",
            "add",
            GATEWAY,
            "lladdr",
            "02:00:00:00:00:01",
            "dev",
            "eth0",
            "nud",
            "permanent",
        ],
    )?;
    sh(
        "ip",
        &["route", "add", "default", "via", GATEWAY, "dev", "eth0"],
    )?;
    if spec.cloud == Cloud::Gcp {
        sh(
            "ip",
            &["addr", "add", &format!("{METADATA_IP}/32"), "dev", "lo"],
        )?;
    }
    Ok(())
}

fn write_hosts(path: &Path, api_int: &[IpAddr]) -> Result<()> {
    let mut text =
        format!("127.0.0.1 localhost\n::1 localhost\n{METADATA_IP} metadata.google.internal\n");
    for ip in api_int {
        text.push_str(&format!("{ip} {API_INT}\n"));
    }
    // In place (same inode): the bind mount over /etc/hosts follows it.
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Packets sent through `eth0` so far (`/proc/net/dev` is this namespace's).
fn tx_packets() -> Result<u64> {
    let text = std::fs::read_to_string("/proc/net/dev").context("/proc/net/dev")?;
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("eth0:"))
        .context("/proc/net/dev: no eth0")?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    // "eth0:" then 8 receive columns; transmit packets is the 10th field.
    fields
        .get(10)
        .and_then(|f| f.parse().ok())
        .context("/proc/net/dev: no transmit packets for eth0")
}

/// Where a connection to `ip:6443` from this node goes.
async fn probe(ip: IpAddr) -> Result<OnHost> {
    let before = tx_packets()?;
    let verdict = match timeout(
        Duration::from_millis(700),
        TcpStream::connect(SocketAddr::new(ip, 6443)),
    )
    .await
    {
        Ok(Ok(_)) => OnHost::Served,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => OnHost::Refused,
        other => {
            if tx_packets()? > before {
                OnHost::Leaves
            } else {
                bail!("{ip}:6443: neither answered nor sent out of eth0 ({other:?})")
            }
        }
    };
    Ok(verdict)
}

fn ruleset() -> String {
    Command::new("nft")
        .args(["list", "ruleset"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Waits until the nftables ruleset has not changed for `quiet` (the scripts react within a
/// second or two of a flag file; GCP's without inotifywait polls every second), at most `max`.
async fn settle(quiet: Duration, max: Duration) {
    let start = Instant::now();
    let mut last = ruleset();
    let mut since = Instant::now();
    while start.elapsed() < max {
        sleep(Duration::from_millis(250)).await;
        let now = ruleset();
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            return;
        }
    }
}

fn count_in(path: &Path, needle: &str) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.matches(needle).count())
        .unwrap_or(0)
}

/// Waits for the watcher's next `Running On{Success,Failure} trigger` line (at most 40 s: the
/// failure threshold is 16 s).
async fn await_trigger(log: &Path, needle: &str, seen: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline {
        if count_in(log, needle) > seen {
            return true;
        }
        sleep(Duration::from_millis(200)).await;
    }
    false
}

/// nftables before 1.0.7 refuses the standard priority name `dstnat` on the output hook,
/// which both MCO scripts use; `dstnat` is -100 (nft(8), "Standard priority names"). When
/// this namespace's `nft` refuses it, the scripts get an `nft` first on their PATH that
/// spells it -100 and changes nothing else. Returns that PATH, and a note for the report.
fn nft_path(work: &Path) -> Result<(String, Option<String>)> {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    let mut check = Command::new("nft")
        .args(["-c", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("cannot run nft")?;
    if let Some(mut stdin) = check.stdin.take() {
        use std::io::Write;
        stdin.write_all(
            b"add table inet judge-check
add chain inet judge-check o { type nat hook output priority dstnat; }
",
        )?;
    }
    if check.wait()?.success() {
        return Ok((path, None));
    }
    let real = path
        .split(':')
        .map(|d| Path::new(d).join("nft"))
        .find(|p| p.is_file())
        .context("nft: not on PATH")?;
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin)?;
    let shim = format!(
        "#!/bin/bash\nif [ \"$1\" = -f ] && [ \"$2\" = - ]; then sed 's/priority dstnat/priority -100/g' | {real} -f -; else exec {real} \"$@\"; fi\n",
        real = real.display()
    );
    std::fs::write(bin.join("nft"), shim)?;
    sh("chmod", &["0755", &bin.join("nft").to_string_lossy()])?;
    Ok((
        format!("{}:{path}", bin.display()),
        Some("this nft refuses `priority dstnat` on the output hook (nftables < 1.0.7): the scripts' nft input had it spelt -100".into()),
    ))
}

fn spawn_logged(cmd: &mut Command, log: &Path) -> Result<std::process::Child> {
    let out = std::fs::File::create(log).with_context(|| format!("{}", log.display()))?;
    let err = out.try_clone()?;
    cmd.stdout(out)
        .stderr(err)
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))
}

/// systemd's `openshift-azure-routes.path` (`PathChanged=/run/cloud-routes/`): runs the
/// script's `start` after every change of the directory (std has no inotify: polled).
/// `runs` counts the script's completed runs.
fn azure_path_unit(
    script: PathBuf,
    log: PathBuf,
    path: String,
    runs: Arc<AtomicUsize>,
) -> JoinHandle<()> {
    tokio::task::spawn_blocking(move || {
        let listing = || -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir("/run/cloud-routes")
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| !n.ends_with(".lock"))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names
        };
        let mut last = listing();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let now = listing();
            if now != last {
                last = now;
                let mut cmd = Command::new("bash");
                cmd.arg(&script).arg("start").env("PATH", &path);
                if let Ok(mut child) = spawn_logged(&mut cmd, &log) {
                    let _ = child.wait();
                }
                runs.fetch_add(1, Ordering::SeqCst);
            }
        }
    })
}

/// Runs the node through every stage; the measured cells as JSON.
pub async fn run(node: NodeRun) -> Result<Vec<Value>> {
    let spec = node_specs(node.cloud, node.design)
        .into_iter()
        .find(|s| s.role == node.role)
        .context("no such role")?;
    std::fs::create_dir_all(&node.work)?;
    setup_network(&spec)?;
    sh("mount", &["-t", "tmpfs", "tmpfs", "/run"])?;
    std::fs::create_dir_all("/run/cloud-routes")?;
    let hosts = node.work.join("hosts");
    write_hosts(&hosts, &spec.api_int[0])?;
    sh("mount", &["--bind", &hosts.to_string_lossy(), "/etc/hosts"])?;
    // GCP: the metadata server's forwarded-IP listings; Azure: the path unit's script runs.
    let reads = Arc::new(AtomicUsize::new(0));
    if spec.cloud == Cloud::Gcp {
        metadata_server(spec.forwarded.clone(), reads.clone()).await?;
    }
    let mut standin = StandIn::new()?;
    if spec.role == Role::Bootstrap {
        standin.up().await?;
    }
    let mut children = Vec::new();
    let script_log = node.work.join("script.log");
    let (script_path, nft_note) = nft_path(&node.work)?;
    match (spec.script, &node.script) {
        (Some(Script::McoAzure), Some(path)) => {
            azure_path_unit(path.clone(), script_log, script_path, reads.clone());
        }
        (Some(_), Some(path)) => {
            let mut cmd = Command::new("bash");
            cmd.arg(path).arg("start").env("PATH", &script_path);
            children.push(spawn_logged(&mut cmd, &script_log)?);
            // Its first read of the metadata, then its rules.
            let deadline = Instant::now() + Duration::from_secs(20);
            while reads.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                sleep(Duration::from_millis(100)).await;
            }
            settle(Duration::from_secs(2), Duration::from_secs(10)).await;
        }
        (Some(s), None) => bail!("{s:?}: no script given"),
        (None, _) => {}
    }
    let watcher_log = node.work.join("watcher.log");
    let mut cells = Vec::new();
    for (s, api_int) in spec.api_int.iter().enumerate() {
        write_hosts(&hosts, api_int)?;
        for local in &spec.locals {
            let needle = match local {
                Local::Up => "Running OnSuccess trigger",
                _ => "Running OnFailure trigger",
            };
            let seen = count_in(&watcher_log, needle);
            match local {
                Local::Up => standin.up().await?,
                Local::Down => standin.down(),
                Local::None => {}
            }
            if s == 0 && *local == spec.locals[0] && spec.watcher {
                let bin = node
                    .watcher
                    .as_ref()
                    .context("no apiserver-watcher given")?;
                let mut cmd = Command::new(bin);
                cmd.args([
                    "run",
                    &format!(
                        "--health-check-url=https://{}:6443/readyz",
                        spec.watcher_literal
                            .map_or(API_INT.to_string(), |ip| ip.to_string())
                    ),
                    "--root-mount=/",
                ]);
                children.push(spawn_logged(&mut cmd, &watcher_log)?);
            }
            // The script's reaction to the watcher's files: GCP's re-reads the metadata after
            // every change of the run dir, Azure's path unit runs it once more.
            // (Azure's runs only on a change, which the trigger makes: counted from before it;
            // GCP's also re-reads every few seconds: counted from after it.)
            let before = reads.load(Ordering::SeqCst);
            let triggered = !spec.watcher || await_trigger(&watcher_log, needle, seen).await;
            let reacted = match spec.script {
                Some(Script::McoGcp) => reads.load(Ordering::SeqCst),
                _ => before,
            };
            if spec.watcher && matches!(spec.script, Some(Script::McoAzure | Script::McoGcp)) {
                let deadline = Instant::now() + Duration::from_secs(15);
                while reads.load(Ordering::SeqCst) == reacted && Instant::now() < deadline {
                    sleep(Duration::from_millis(100)).await;
                }
            }
            settle(Duration::from_secs(3), Duration::from_secs(20)).await;
            for cell in spec.cells(s, *local) {
                let mut v = super::cell_json(&cell);
                v["goes"] = json!(probe(cell.ip).await?.as_str());
                v["watcher_triggered"] = json!(triggered);
                v["note"] = json!(nft_note.as_ref().filter(|_| spec.script.is_some()));
                cells.push(v);
            }
        }
        std::fs::write(node.work.join(format!("ruleset-stage{}", s + 1)), ruleset())?;
    }
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(cells)
}
