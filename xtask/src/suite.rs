//! `test`: the README's test command. It runs the suite as
//! `cargo nextest run --workspace --all-features` (the extra arguments appended), after
//! installing the test runner when this machine lacks it: a fresh machine with only the
//! README's prerequisites (Rust, a C compiler, python3-venv) then needs no other step.
//!
//! The runner is installed with `cargo install --locked` at a pinned version (the one the
//! suite's time was measured with, docs/testing.md); one already installed, of any version,
//! is used as it is.

use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

/// The cargo-nextest a machine without one gets.
const NEXTEST_VERSION: &str = "0.9.143";

/// What the suite runs: the arguments after `cargo`.
const RUN: [&str; 4] = ["nextest", "run", "--workspace", "--all-features"];

/// The variables `cargo run` sets for xtask itself, which would otherwise reach the suite
/// (nextest and cargo set their own for every test binary and build script).
const CARGO_RUN_VARS: [&str; 6] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_PKG_",
    "CARGO_BIN_NAME",
    "CARGO_CRATE_NAME",
    "CARGO_PRIMARY_PACKAGE",
];

/// Installs cargo-nextest when `cargo nextest` does not run, then runs the suite from `root`
/// with `extra` appended; the suite's exit code is the task's.
pub fn test(cargo: &Path, root: &Path, extra: &[String]) -> Result<ExitCode> {
    if !nextest_runs(cargo, root) {
        eprintln!(
            "xtask test: cargo-nextest is missing; installing {NEXTEST_VERSION} (`cargo install cargo-nextest --version {NEXTEST_VERSION} --locked`)"
        );
        let status = cargo_command(cargo, root)
            .args(install_args())
            .status()
            .with_context(|| format!("running {}", cargo.display()))?;
        anyhow::ensure!(
            status.success(),
            "installing cargo-nextest {NEXTEST_VERSION} failed ({status}): see cargo's output above"
        );
        anyhow::ensure!(
            nextest_runs(cargo, root),
            "cargo-nextest {NEXTEST_VERSION} was installed but `cargo nextest` does not run: is cargo's bin directory ($CARGO_HOME/bin) the one it was installed into?"
        );
    }
    let args = run_args(extra);
    eprintln!("xtask test: cargo {}", args.join(" "));
    let status = cargo_command(cargo, root)
        .args(&args)
        .status()
        .with_context(|| format!("running {}", cargo.display()))?;
    // A suite killed by a signal has no code: a failure all the same.
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// The arguments of the suite's run.
fn run_args(extra: &[String]) -> Vec<String> {
    RUN.iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .collect()
}

/// The arguments of the runner's install.
fn install_args() -> Vec<String> {
    [
        "install",
        "cargo-nextest",
        "--version",
        NEXTEST_VERSION,
        "--locked",
    ]
    .map(str::to_string)
    .to_vec()
}

/// Whether `cargo nextest --version` succeeds (cargo finds subcommands on PATH and in
/// `$CARGO_HOME/bin`).
fn nextest_runs(cargo: &Path, root: &Path) -> bool {
    cargo_command(cargo, root)
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn cargo_command(cargo: &Path, root: &Path) -> Command {
    let mut command = Command::new(cargo);
    command.current_dir(root);
    let inherited: Vec<OsString> = std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            let name = name.to_string_lossy();
            CARGO_RUN_VARS.iter().any(|var| name.starts_with(var))
        })
        .collect();
    for name in inherited {
        command.env_remove(name);
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    /// A stand-in for cargo: it logs every call's arguments, answers `nextest --version` only
    /// once `install` has run (or from the start, `installed`), and exits 3 from `nextest run`.
    fn fake_cargo(installed: bool) -> (PathBuf, PathBuf) {
        let dir = crate::tests::scratch(&format!("test-{installed}"));
        let marker = dir.join("installed");
        if installed {
            std::fs::write(&marker, "").unwrap();
        }
        let log = dir.join("calls");
        let script = dir.join("cargo");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$*\" >> '{log}'\ncase \"$1 $2\" in\n  'nextest --version') [ -e '{marker}' ] ;;\n  'install cargo-nextest') touch '{marker}' ;;\n  'nextest run') exit 3 ;;\nesac\n",
                log = log.display(),
                marker = marker.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        (script, log)
    }

    #[test]
    fn a_machine_without_nextest_gets_the_pinned_one_then_runs_the_suite() {
        let (cargo, log) = fake_cargo(false);
        let code = test(
            &cargo,
            cargo.parent().unwrap(),
            &["-E".into(), "test(/x/)".into()],
        )
        .unwrap();
        assert_eq!(
            code,
            ExitCode::from(3),
            "the suite's exit code is the task's"
        );
        let calls = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            calls.lines().collect::<Vec<_>>(),
            [
                "nextest --version",
                "install cargo-nextest --version 0.9.143 --locked",
                "nextest --version",
                "nextest run --workspace --all-features -E test(/x/)",
            ]
        );
        std::fs::remove_dir_all(cargo.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_machine_with_nextest_installs_nothing() {
        let (cargo, log) = fake_cargo(true);
        test(&cargo, cargo.parent().unwrap(), &[]).unwrap();
        let calls = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            calls.lines().collect::<Vec<_>>(),
            [
                "nextest --version",
                "nextest run --workspace --all-features"
            ]
        );
        std::fs::remove_dir_all(cargo.parent().unwrap()).unwrap();
    }
}
