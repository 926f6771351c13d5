//! `bootstrap-sim demo aws`: the README's main job. Starts moto + ministack and the local
//! Kubernetes API server (with its simulated service controller), builds the AWS world from
//! the example assets, then runs the real agent binary: `plan`, the whole `run` (reserve, seed
//! DNS, hand over, apply the Services, gate, remove the bootstrap IP), `plan` again (nothing
//! left to do) and `status`; it stops everything at the end.

use anyhow::{Context, Result, bail};
use bootstrap_sim::AwsPeers;
use std::path::{Path, PathBuf};

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
        ["demo", "aws"] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            demo_aws().await
        }
        ["venv"] => {
            let venv = bootstrap_sim::venv::ensure()?;
            println!("{}", venv.display());
            Ok(())
        }
        _ => bail!(
            "usage: bootstrap-sim demo aws   run plan, run, plan, status against moto + ministack + a local API server\n       \
             bootstrap-sim venv       install the emulators into target/sim-venv\n\
             (build the agent first: cargo build --features aws --workspace --bins)"
        ),
    }
}

fn agent_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let agent = exe.with_file_name("bootstrap-agent");
    if !agent.exists() {
        bail!(
            "{} not found; build it first: cargo build --features aws --workspace --bins",
            agent.display()
        );
    }
    Ok(agent)
}

async fn demo_aws() -> Result<()> {
    let agent = agent_binary()?;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let work = bootstrap_sim::venv::target_dir().join("demo-aws");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let assets = work.join("assets");
    let state = work.join("state");

    println!(
        "# starting moto (EC2), ministack (Route53) and the local Kubernetes API server on loopback"
    );
    let peers = AwsPeers::start().await?;
    let kube = bootstrap_sim::kube::KubeSim::start(Default::default()).await?;
    println!("# kubeconfig: {}", kube.kubeconfig_path().display());
    let world = peers
        .setup_world(&repo.join("tests/fixtures/assets/aws"), &assets)
        .await?;
    println!("# world: {world}");
    println!(
        "# assets: {} (tests/fixtures/assets/aws with moto's subnet ids)",
        assets.display()
    );

    let steps: &[&[&str]] = &[&["plan"], &["run"], &["plan"], &["status"]];
    for step in steps {
        println!("\n$ bootstrap-agent {}", step.join(" "));
        let mut cmd = tokio::process::Command::new(&agent);
        cmd.args(*step)
            .arg("--state-dir")
            .arg(&state)
            .envs(peers.agent_env());
        if step[0] != "status" {
            cmd.arg("--assets")
                .arg(&assets)
                .args(["--bootstrap-ip", "10.0.1.10"]);
        }
        if step[0] == "run" {
            cmd.arg("--kubeconfig")
                .arg(kube.kubeconfig_path())
                .arg("--done-file")
                .arg(work.join("gate-passed.json"));
        }
        let status = cmd.status().await.context("cannot run the agent")?;
        if !status.success() {
            bail!("bootstrap-agent {} failed: {status}", step.join(" "));
        }
    }
    println!(
        "\n# mutating AWS calls made by the agent: {}",
        peers.mutating_calls().len()
    );
    println!(
        "# what exists now (boto3's view):\n{}",
        serde_json::to_string_pretty(&peers.inspect().await?)?
    );
    Ok(())
}
