//! The agent's commands in a harness run: its arguments, environment and logs.

use super::CloudUnderTest;
use super::kube::Kube;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// How the agent runs beyond the cloud's environment: the UPI user's additions (`--upi`) and
/// a kubeconfig of its own (`--least-privilege`; else the API server's).
#[derive(Default)]
pub(super) struct AgentSetup {
    pub env: Vec<(String, String)>,
    pub kubeconfig: Option<PathBuf>,
}

/// One agent command (`run`, `teardown --all`); its output in `log` of `work`; its exit code.
pub(super) async fn agent_step(
    agent: &Path,
    step: &[&str],
    log: &str,
    cloud: &impl CloudUnderTest,
    kube: &Kube,
    work: &Path,
    setup: &AgentSetup,
) -> Result<i32> {
    let api = kube.host_port();
    let mut cmd = tokio::process::Command::new(agent);
    cmd.args(step)
        .arg("--state-dir")
        .arg(work.join("state"))
        .arg("--assets")
        .arg(cloud.assets())
        .args(["--bootstrap-ip", "10.0.1.10"])
        .arg("--kubeconfig")
        .arg(
            setup
                .kubeconfig
                .as_deref()
                .unwrap_or(kube.kubeconfig_path()),
        )
        .envs(cloud.agent_env())
        .envs(setup.env.iter().cloned())
        .stdout(log_file(work, log)?)
        .stderr(log_file(work, &format!("{log}.err"))?)
        .kill_on_drop(true);
    if step[0] == "run" {
        cmd.args(["--drain-wait", "0s"])
            .args(["--gate-timeout", "3m"])
            .arg("--done-file")
            .arg(work.join("bootstrap-agent.done.json"))
            // The wire proof dials each load-balancer IP: the API server stands in for them
            // all (never dial the cloud's addresses).
            .arg("--wire-dial-override")
            .arg(format!("*:6443={api},*:22623={api}"));
    } else {
        cmd.args(["--step-timeout", "90s"]);
    }
    let status = cmd
        .status()
        .await
        .with_context(|| format!("cannot run {}", agent.display()))?;
    Ok(status.code().unwrap_or(-1))
}

pub(super) fn log_file(work: &Path, name: &str) -> Result<std::fs::File> {
    let path = work.join(name);
    std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))
}
