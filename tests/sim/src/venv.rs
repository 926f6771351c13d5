//! The Python venv holding the emulators, created under the target dir when missing.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Pinned emulator versions (the issue names them); boto3 drives the world from tests; the
/// official Kubernetes client is the independent oracle for the fake kube-apiserver.
pub const REQUIREMENTS: &[&str] = &[
    "moto[server]==5.2.5",
    "ministack==1.5.33",
    "boto3",
    "kubernetes==36.0.3",
    // Oracles for the GCP and Azure fakes: the official clients pointed at them.
    "google-api-python-client==2.202.0",
    "azure-mgmt-network==33.1.0",
    "azure-mgmt-dns==9.0.0",
    "azure-mgmt-privatedns==2.0.0",
];

/// `<workspace>/target`, or CARGO_TARGET_DIR.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// The venv dir, ready to use. Several test binaries may race here: a file lock serializes them.
pub fn ensure() -> Result<PathBuf> {
    let target = target_dir();
    fs::create_dir_all(&target).with_context(|| format!("cannot create {}", target.display()))?;
    let venv = target.join("sim-venv");
    let marker = venv.join(".requirements");
    let wanted = REQUIREMENTS.join("\n");
    if fs::read_to_string(&marker).is_ok_and(|m| m == wanted) {
        return Ok(venv);
    }
    let lock = File::create(target.join("sim-venv.lock")).context("cannot create venv lock")?;
    lock.lock().context("cannot lock venv")?;
    if fs::read_to_string(&marker).is_ok_and(|m| m == wanted) {
        return Ok(venv);
    }
    eprintln!(
        "sim: installing {} into {}",
        REQUIREMENTS.join(" "),
        venv.display()
    );
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(REQUIREMENTS))?;
    fs::write(&marker, wanted).context("cannot write venv marker")?;
    Ok(venv)
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

/// Runs `py/<script>` of this crate with the venv's python and `args`: what it printed, or an
/// error carrying its stderr.
pub async fn run_script(venv: &Path, script: &str, args: &[&str]) -> Result<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("py")
        .join(script);
    let out = tokio::process::Command::new(venv.join("bin/python"))
        .arg(path)
        .args(args)
        .output()
        .await
        .with_context(|| format!("cannot run {script}"))?;
    if !out.status.success() {
        bail!(
            "{script} {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out.stdout)
}

/// The JSON that `py/<script>` prints for `args`, creating the venv first when missing.
pub async fn run_json(script: &str, args: &[&str]) -> Result<Value> {
    let venv = tokio::task::spawn_blocking(ensure).await??;
    let stdout = run_script(&venv, script, args).await?;
    serde_json::from_slice(&stdout).with_context(|| format!("{script} printed no JSON"))
}
