//! `bootstrap-sim demo <aws|gcp|azure>`: the README's main job. Starts the cloud's local peers
//! (AWS: moto + ministack; GCP and Azure: the faithful fakes of this crate), each behind a
//! counting proxy, and the local Kubernetes API server with its simulated controllers, strict
//! like the real ones: endpoints only from pods the selectors match, and load balancers only on
//! addresses the cloud lets them have (AWS: claimed in moto). Then it runs the real agent
//! binary on the example assets: `preflight` (the checklist), `plan`, the whole `run` (reserve, seed DNS, set capabilities,
//! hand over, apply the Services, gate, remove the bootstrap IP), `plan` again (nothing left
//! to do) and `status`, prints what the load balancers hold, and stops everything at the end.

use anyhow::{Context, Result, bail};
use bootstrap_sim::kube::{KubeSim, KubeSimOptions};
use bootstrap_sim::peers::Peers;
use std::path::PathBuf;

const USAGE: &str = "usage: bootstrap-sim demo <aws|gcp|azure>   plan, run, plan, status against local peers\n       \
                     bootstrap-sim handover <aws|gcp|azure> [--dns-seeding progressive|all-at-once] [--bootstrap-second-address cloud|off] [--ttl 30s] [--scope-round-trip true] [--openshift-nodes true [--gce-hairpin returns|balances] [--watcher-host api-int|vip] [--nodes-without-bootstrap-ip true] [--restart-watchers off|restart|restart-clean]] [--output text|json]\n       \
                     \x20   API clients through a whole run: failures and p99 per stage\n       \
                     bootstrap-sim nodes-conformance <gcp|azure> --apiserver-watcher BIN --mco DIR [--rhcos DIR] [--design second-address|bootstrap-alone|all-at-once|second-address-alone|watcher-on-vip] [--output text|json]\n       \
                     \x20   the node model against the real apiserver-watcher and route scripts, in network namespaces (root, nft); exit 2 when something is missing\n       \
                     bootstrap-sim real-ccm <gcp|azure> (--ccm PATH | --simulated) [--kubeconfig FILE [--least-privilege]] [--upi] [--output json|text]\n       \
                     \x20   run, run, teardown --all with the real cloud-controller-manager building the load balancers\n       \
                     bootstrap-sim faults <aws|gcp|azure> [--p 0.4] [--cycles 10] [--seed 4] [--output text|json]\n       \
                     \x20   install/teardown cycles through injected faults: leaks, duplicates, others touched\n       \
                     bootstrap-sim soak <aws|gcp|azure> [--cycles 50] [--long-gate 30m] [--output text|json]\n       \
                     \x20   cycles in a row under the published limits: leaks, peak RSS, state dir, time\n       \
                     bootstrap-sim fleet <aws|gcp|azure> [--agents 100] [--shared-record-set] [--output text|json]\n       \
                     \x20   agents at once in one account under the published limits: failures, throttling, cost, slowest/lone\n       \
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
        ["handover", cloud, rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            handover(cloud, rest).await
        }
        ["real-ccm", rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            let code = bootstrap_sim::real_ccm::command(rest).await?;
            if code != 0 {
                std::process::exit(code);
            }
            Ok(())
        }
        ["nodes-conformance", cloud, rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            nodes_conformance(cloud, rest).await
        }
        ["nodes-conformance-node", rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            let cells = bootstrap_sim::nodes::conformance::harness::node_main(rest).await?;
            println!("{}", serde_json::Value::Array(cells));
            // The path unit's watch thread never ends: exit without waiting for it.
            std::process::exit(0)
        }
        ["faults", cloud, rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            let report =
                bootstrap_sim::baddays::faults::command(cloud, rest, agent_binary()?).await?;
            all_cycles_clean(report.clean, report.cycles)
        }
        ["soak", cloud, rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            let report =
                bootstrap_sim::baddays::soak::command(cloud, rest, agent_binary()?).await?;
            all_cycles_clean(report.clean, report.cycles)
        }
        ["fleet", cloud, rest @ ..] => {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            let report = bootstrap_sim::fleet::command(cloud, rest, agent_binary()?).await?;
            if report.failed_agents > 0 || !report.world_diff.is_empty() {
                bail!(
                    "{} agents failed, {} differences in the world",
                    report.failed_agents,
                    report.world_diff.len()
                );
            }
            Ok(())
        }
        ["venv"] => {
            let venv = bootstrap_sim::venv::ensure()?;
            println!("{}", venv.display());
            Ok(())
        }
        _ => bail!("{USAGE}"),
    }
}

/// `faults` and `soak` fail (exit 1) unless every cycle ended clean.
fn all_cycles_clean(clean: usize, cycles: usize) -> Result<()> {
    if clean < cycles {
        bail!("{} of {cycles} cycles not clean", cycles - clean);
    }
    Ok(())
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
    let peers_are = match cloud {
        "aws" => "moto for EC2, ministack for Route53",
        "gcp" => "the GCP fake: compute.v1 addresses + operations, dns.v1",
        "azure" => "the Azure fake: ARM network, DNS, Private DNS, token endpoint",
        other => bail!("unknown cloud {other:?}\n{USAGE}"),
    };
    let work = bootstrap_sim::venv::target_dir().join(format!("demo-{cloud}"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let state = work.join("state");
    println!("# starting the local {cloud} peers on loopback ({peers_are})");
    let (peers, assets) = Peers::start(cloud, &work).await?;
    println!("# assets: {}", assets.display());
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

/// `--flag true|false`.
fn bool_arg(flag: &str, value: &str) -> Result<bool> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        other => bail!("{flag}: expected true or false, found {other:?}"),
    }
}

/// `bootstrap-sim handover <cloud> [options]`: see `bootstrap_sim::handover`.
async fn handover(cloud: &str, args: &[&str]) -> Result<()> {
    let mut opts = bootstrap_sim::handover::Options::new(cloud, agent_binary()?, PathBuf::new());
    let mut json = false;
    for (flag, value) in bootstrap_sim::args::flag_values(args, USAGE)? {
        match flag {
            "--dns-seeding" => opts.dns_seeding = value.to_string(),
            "--bootstrap-second-address" => opts.second_address = Some(value.to_string()),
            "--scope-round-trip" => opts.scope_round_trip = bool_arg(flag, value)?,
            "--openshift-nodes" => opts.openshift_nodes = bool_arg(flag, value)?,
            "--gce-hairpin" => {
                opts.node_design.hairpin = match value {
                    "returns" => bootstrap_sim::nodes::Hairpin::Returns,
                    "balances" => bootstrap_sim::nodes::Hairpin::Balances,
                    other => bail!("--gce-hairpin: expected returns or balances, found {other:?}"),
                }
            }
            "--nodes-without-bootstrap-ip" => {
                opts.node_design.second_address_alone = bool_arg(flag, value)?
            }
            "--watcher-host" => {
                opts.node_design.watcher_host = match value {
                    "api-int" => bootstrap_sim::handover::openshift::WatcherHost::ApiInt,
                    "vip" => bootstrap_sim::handover::openshift::WatcherHost::Vip,
                    other => bail!("--watcher-host: expected api-int or vip, found {other:?}"),
                }
            }
            "--restart-watchers" => {
                use bootstrap_sim::handover::openshift::WatcherRestart;
                opts.node_design.restart = match value {
                    "off" => WatcherRestart::Off,
                    "restart" => WatcherRestart::Restart,
                    "restart-clean" => WatcherRestart::RestartClean,
                    other => bail!(
                        "--restart-watchers: expected off, restart or restart-clean, found {other:?}"
                    ),
                }
            }
            "--ttl" => {
                opts.ttl = humantime::parse_duration(value).with_context(|| {
                    format!("--ttl: expected a duration like 30s, found {value:?}")
                })?;
                opts.linger = opts.ttl + std::time::Duration::from_secs(5);
            }
            "--output" => json = bootstrap_sim::output_arg(value)?,
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    opts.work = bootstrap_sim::venv::target_dir().join(format!(
        "handover-{cloud}-{}-{}",
        opts.dns_seeding, opts.openshift_nodes
    ));
    let report = bootstrap_sim::handover::run(opts).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// `bootstrap-sim nodes-conformance <cloud> ...`: see `bootstrap_sim::nodes::conformance`.
/// Exit 2 when a binary, a tree or a tool is missing, 1 on a mismatch.
async fn nodes_conformance(cloud: &str, args: &[&str]) -> Result<()> {
    use bootstrap_sim::nodes::conformance::harness;
    let opts = harness::parse(cloud, args)?;
    let report = match harness::run(&opts).await {
        Ok(r) => r,
        Err(e) => match e.downcast_ref::<harness::Missing>() {
            Some(missing) => {
                eprintln!("error: {missing}");
                std::process::exit(2)
            }
            None => return Err(e),
        },
    };
    match opts.json {
        true => println!("{}", serde_json::to_string_pretty(&report)?),
        false => print!("{}", harness::to_text(&report)),
    }
    if report["mismatches"]
        .as_array()
        .is_some_and(|m| !m.is_empty())
    {
        std::process::exit(1);
    }
    Ok(())
}
