//! Repository chores, run as `cargo xtask <task>` (`.cargo/config.toml`: the alias of
//! `cargo run -p xtask --`).
//!
//! `test [ARGS]`: the README's test command (`suite`): installs cargo-nextest when missing,
//! then runs `cargo nextest run --workspace --all-features [ARGS]`.
//!
//! `gen-docs` writes the reference generated from the CLI's clap definitions
//! (`bootstrap_agent::cli::command()`, the one source of `--help`): a man page per command in
//! `docs/man/` (clap_mangen) and the shell completions in `docs/completions/` (clap_complete).
//! It also writes `docs/permissions.md`, the policy documents per cloud
//! (`bootstrap_agent::permissions::markdown`).
//! `gen-docs --check` writes nothing and fails when the checked-in files differ from what the
//! code generates, or when a file there is no longer generated: CI runs it, so the reference
//! cannot drift from `--help`.
//! `gen-feature-gates --api DIR --commit SHA` writes `templates/feature-gates.yaml` from an
//! openshift/api checkout (see `feature_gates.rs`).

mod feature_gates;
mod suite;

use anyhow::{Context, Result, bail};
use clap_complete::Shell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The directories `gen-docs` owns, relative to the repository root: every file in them is
/// generated.
const MAN_DIR: &str = "docs/man";
const COMPLETIONS_DIR: &str = "docs/completions";
/// The permissions each cloud's calls need, from the tables preflight asks from.
const PERMISSIONS: &str = "docs/permissions.md";

/// The shells completions are written for.
const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

const USAGE: &str = "usage: cargo xtask gen-docs [--check]\n       cargo xtask test [ARGS for cargo nextest run]\n       cargo xtask gen-feature-gates --api DIR --commit SHA";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["gen-docs"] => gen_docs(&repo_root(), Mode::Write),
        ["gen-docs", "--check"] => gen_docs(&repo_root(), Mode::Check),
        ["test", extra @ ..] => {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let extra: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
            match suite::test(Path::new(&cargo), &repo_root(), &extra) {
                Ok(code) => return code,
                Err(e) => Err(e),
            }
        }
        ["gen-feature-gates", "--api", api, "--commit", commit] => {
            feature_gates::gen_feature_gates(&repo_root(), Path::new(api), commit)
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Write,
    Check,
}

/// Every generated file, by its path relative to the repository root.
fn generated() -> Result<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    let mut root = bootstrap_agent::cli::command().disable_help_subcommand(true);
    root.build();
    man_pages(&root, &mut files)?;
    let name = root.get_name().to_string();
    for shell in SHELLS {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut root.clone(), &name, &mut out);
        let file = match shell {
            Shell::Zsh => format!("_{name}"),
            other => format!("{name}.{other}"),
        };
        files.insert(format!("{COMPLETIONS_DIR}/{file}"), out);
    }
    let fixtures = repo_root().join("tests/fixtures/assets");
    files.insert(
        PERMISSIONS.to_string(),
        bootstrap_agent::permissions::markdown(&fixtures)?.into_bytes(),
    );
    Ok(files)
}

/// One page per command, as clap_mangen's `generate_to` names them
/// (`bootstrap-agent-dns-seed.1`), the hidden ones left out.
fn man_pages(cmd: &clap::Command, files: &mut BTreeMap<String, Vec<u8>>) -> Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub, files)?;
    }
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render(&mut out)
        .with_context(|| format!("rendering the man page of {}", cmd.get_name()))?;
    files.insert(format!("{MAN_DIR}/{}", man.get_filename()), out);
    Ok(())
}

/// The files now in the owned directories, relative to the repository root.
fn existing(root: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for dir in [MAN_DIR, COMPLETIONS_DIR] {
        let entries = match std::fs::read_dir(root.join(dir)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {dir}")),
        };
        for entry in entries {
            let entry = entry.with_context(|| format!("reading {dir}"))?;
            found.push(format!("{dir}/{}", entry.file_name().to_string_lossy()));
        }
    }
    found.sort();
    Ok(found)
}

fn gen_docs(root: &Path, mode: Mode) -> Result<()> {
    let files = generated()?;
    let stale: Vec<String> = existing(root)?
        .into_iter()
        .filter(|f| !files.contains_key(f))
        .collect();
    let mut differ = Vec::new();
    for (path, content) in &files {
        let full = root.join(path);
        let same = match std::fs::read(&full) {
            Ok(on_disk) => on_disk == *content,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(e).with_context(|| format!("reading {path}")),
        };
        if same {
            continue;
        }
        differ.push(path.clone());
        if mode == Mode::Write {
            if let Some(dir) = full.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&full, content).with_context(|| format!("writing {path}"))?;
        }
    }
    match mode {
        Mode::Write => {
            for path in &stale {
                std::fs::remove_file(root.join(path))
                    .with_context(|| format!("removing {path}"))?;
            }
            println!(
                "gen-docs: {} file(s) generated, {} written, {} stale removed",
                files.len(),
                differ.len(),
                stale.len()
            );
            Ok(())
        }
        Mode::Check if differ.is_empty() && stale.is_empty() => {
            println!("gen-docs: {} file(s) up to date", files.len());
            Ok(())
        }
        Mode::Check => {
            let mut report = String::new();
            for path in &differ {
                report.push_str(&format!("\n  differs from the code: {path}"));
            }
            for path in &stale {
                report.push_str(&format!("\n  no longer generated: {path}"));
            }
            bail!(
                "the generated reference is out of date (run `cargo run -p xtask -- gen-docs` and commit docs/man, docs/completions and docs/permissions.md):{report}"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory of this test's own (`what`: whose), under the system's temp dir.
    pub(crate) fn scratch(what: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "xtask-{what}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn every_command_gets_a_page_and_every_shell_its_completions() {
        let files = generated().unwrap();
        for page in [
            "docs/man/bootstrap-agent.1",
            "docs/man/bootstrap-agent-run.1",
            "docs/man/bootstrap-agent-dns-seed.1",
            "docs/man/bootstrap-agent-capabilities-filter.1",
        ] {
            assert!(
                files.contains_key(page),
                "{page} missing: {:?}",
                files.keys()
            );
        }
        for completion in [
            "docs/completions/bootstrap-agent.bash",
            "docs/completions/_bootstrap-agent",
            "docs/completions/bootstrap-agent.fish",
        ] {
            assert!(files.contains_key(completion), "{completion} missing");
        }
        // No page for clap's own `help` subcommand.
        assert!(!files.keys().any(|f| f.contains("-help.")));
        // The --help text is the source: the run page says what `run --help` says.
        let run = String::from_utf8(files["docs/man/bootstrap-agent-run.1"].clone()).unwrap();
        assert!(run.contains("gate\\-timeout"), "{run}");
    }

    #[test]
    fn check_fails_until_written_then_passes_and_names_stale_files() {
        let root = scratch("gen-docs");
        let err = gen_docs(&root, Mode::Check).unwrap_err().to_string();
        assert!(
            err.contains("differs from the code: docs/man/bootstrap-agent.1"),
            "{err}"
        );

        gen_docs(&root, Mode::Write).unwrap();
        gen_docs(&root, Mode::Check).unwrap();

        // A page of a command that no longer exists, and a page edited by hand.
        std::fs::write(root.join("docs/man/bootstrap-agent-gone.1"), "old").unwrap();
        std::fs::write(root.join("docs/completions/bootstrap-agent.bash"), "edited").unwrap();
        let err = gen_docs(&root, Mode::Check).unwrap_err().to_string();
        assert!(
            err.contains("no longer generated: docs/man/bootstrap-agent-gone.1"),
            "{err}"
        );
        assert!(
            err.contains("differs from the code: docs/completions/bootstrap-agent.bash"),
            "{err}"
        );

        gen_docs(&root, Mode::Write).unwrap();
        assert!(!root.join("docs/man/bootstrap-agent-gone.1").exists());
        gen_docs(&root, Mode::Check).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}
