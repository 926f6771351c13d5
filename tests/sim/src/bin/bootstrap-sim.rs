//! `bootstrap-sim demo <aws|gcp|azure>`: the README's main job. Starts the cloud's local peers
//! (AWS: moto + ministack; GCP and Azure: the faithful fakes of this crate), each behind a
//! counting proxy, and the local Kubernetes API server with its simulated controllers, strict
//! like the real ones: endpoints only from pods the selectors match, and load balancers only on
//! addresses the cloud lets them have (AWS: claimed in moto). Then it runs the real agent
//! binary on the example assets: `preflight` (the checklist), `plan`, the whole `run` (reserve, seed DNS, set capabilities,
//! hand over, apply the Services, gate, remove the bootstrap IP), `plan` again (nothing left
//! to do) and `status`, prints what the load balancers hold, and stops everything at the end.

use anyhow::{Context, Result, bail};
use bootstrap_sim::kube::{CloudOptions, KubeSim, KubeSimOptions};
use bootstrap_sim::{AwsPeers, azure::AzurePeers, gcp::GcpPeers};
use serde_json::Value;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: bootstrap-sim demo <aws|gcp|azure>   plan, run, plan, status against local peers\n       \
                     bootstrap-sim venv                   install the emulators into target/sim-venv\n\
                     (build the agent first: cargo build --all-features --workspace --bins)";

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["demo", cloud] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            demo(cloud).await
        }
        ["venv"] => {
            let venv = bootstrap_sim::venv::ensure()?;
            println!("{}", venv.display());
            Ok(())
        }
        _ => bail!("{USAGE}"),
    }
}

/// The cloud side of the demo.
enum Peers {
    Aws(AwsPeers),
    Gcp(GcpPeers),
    Azure(AzurePeers),
}

impl Peers {
    fn agent_env(&self) -> Vec<(String, String)> {
        match self {
            Peers::Aws(p) => p.agent_env(),
            Peers::Gcp(p) => p.agent_env(),
            Peers::Azure(p) => p.agent_env(),
        }
    }

    fn mutating_calls(&self) -> usize {
        match self {
            Peers::Aws(p) => p.mutating_calls().len(),
            Peers::Gcp(p) => p.mutating_calls().len(),
            Peers::Azure(p) => p.mutating_calls().len(),
        }
    }

    /// What the simulated load-balancer controllers know of this cloud.
    fn lb_cloud(&self) -> CloudOptions {
        match self {
            Peers::Aws(p) => p.lb_cloud(),
            Peers::Gcp(p) => p.lb_cloud(),
            Peers::Azure(p) => p.lb_cloud(),
        }
    }

    async fn inspect(&self) -> Result<Value> {
        match self {
            Peers::Aws(p) => p.inspect().await,
            Peers::Gcp(p) => Ok(p.inspect()),
            Peers::Azure(p) => p.inspect().await,
        }
    }
}

fn agent_binary() -> Result<PathBuf> {
    let agent = std::env::current_exe()?.with_file_name("bootstrap-agent");
    if !agent.exists() {
        bail!(
            "{} not found; build it first: cargo build --all-features --workspace --bins",
            agent.display()
        );
    }
    Ok(agent)
}

async fn demo(cloud: &str) -> Result<()> {
    let agent = agent_binary()?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/assets")
        .join(cloud);
    let work = bootstrap_sim::venv::target_dir().join(format!("demo-{cloud}"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let state = work.join("state");

    let (peers, assets) = match cloud {
        "aws" => {
            println!("# starting moto (EC2) and ministack (Route53) on loopback");
            let peers = AwsPeers::start().await?;
            let assets = work.join("assets");
            let world = peers.setup_world(&fixture, &assets).await?;
            println!("# world: {world}");
            println!(
                "# assets: {} (the example assets with moto's subnet ids)",
                assets.display()
            );
            (Peers::Aws(peers), assets)
        }
        "gcp" => {
            println!(
                "# starting the local GCP fake (compute.v1 addresses + operations, dns.v1) on loopback"
            );
            (Peers::Gcp(bootstrap_sim::gcp::demo_peers().await?), fixture)
        }
        "azure" => {
            println!(
                "# starting the local Azure fake (ARM network, DNS, Private DNS, token endpoint) on loopback"
            );
            (
                Peers::Azure(bootstrap_sim::azure::demo_peers().await?),
                fixture,
            )
        }
        other => bail!("unknown cloud {other:?}\n{USAGE}"),
    };
    println!(
        "# starting the local Kubernetes API server (control-plane pods on 3 nodes; load balancers checked against the {cloud} peers)"
    );
    let kube = KubeSim::start(KubeSimOptions {
        cloud: peers.lb_cloud(),
        ..Default::default()
    })
    .await?;
    println!("# kubeconfig: {}", kube.kubeconfig_path().display());
    let api = kube.url().trim_start_matches("https://").to_string();

    for step in [
        &["preflight"][..],
        &["plan"],
        &["run"],
        &["plan"],
        &["status"],
    ] {
        println!("\n$ bootstrap-agent {}", step.join(" "));
        let mut cmd = tokio::process::Command::new(&agent);
        cmd.args(step)
            .arg("--state-dir")
            .arg(&state)
            .envs(peers.agent_env());
        if step[0] != "status" {
            cmd.arg("--assets")
                .arg(&assets)
                .args(["--bootstrap-ip", "10.0.1.10"]);
        }
        if step[0] == "preflight" {
            cmd.arg("--kubeconfig").arg(kube.kubeconfig_path());
        }
        if step[0] == "run" {
            cmd.arg("--kubeconfig")
                .arg(kube.kubeconfig_path())
                .arg("--done-file")
                .arg(work.join("bootstrap-agent.done.json"))
                // A short drain, to show it without making the demo wait a whole TTL.
                .args(["--drain-wait", "3s"])
                // The proof on the wire dials every load-balancer IP; here the local API
                // server stands in for each load balancer (never dial the clouds' addresses).
                .arg("--wire-dial-override")
                .arg(format!("*:6443={api},*:22623={api}"));
        }
        let status = cmd.status().await.context("cannot run the agent")?;
        if !status.success() {
            bail!("bootstrap-agent {} failed: {status}", step.join(" "));
        }
    }
    println!(
        "\n# mutating {cloud} calls made by the agent: {}",
        peers.mutating_calls()
    );
    println!(
        "# what exists now (seen by the peers):\n{}",
        serde_json::to_string_pretty(&peers.inspect().await?)?
    );
    println!("# the Services' load balancers (seen by the local API server):");
    for svc in kube.list("", "v1", "services", None) {
        let (ns, name) = (
            svc["metadata"]["namespace"].as_str().unwrap_or(""),
            svc["metadata"]["name"].as_str().unwrap_or(""),
        );
        if svc["spec"]["type"] != "LoadBalancer" {
            continue;
        }
        let reasons: Vec<String> = kube
            .service_events(ns, name)
            .iter()
            .map(|e| {
                format!(
                    "{}/{}",
                    e["type"].as_str().unwrap_or(""),
                    e["reason"].as_str().unwrap_or("")
                )
            })
            .collect();
        println!(
            "  {ns}/{name}: ingress {} events [{}]",
            svc["status"]["loadBalancer"]["ingress"],
            reasons.join(", ")
        );
    }
    Ok(())
}
