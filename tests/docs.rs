//! The manual cannot rot: every `bootstrap-agent ...` command shown in README.md, CHANGELOG.md
//! or docs/*.md (in a code block or an inline code span) must name commands and flags that the
//! clap definition has, every command the CLI has must be in the synopsis of
//! docs/operating.md, and the blocks marked ```` ```sh runnable ```` (commands that need no cloud
//! and no cluster) are run against the built binary and must succeed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CHANGELOG.md and every docs/*.md, as (path relative to the root, text).
fn pages() -> Vec<(String, String)> {
    let mut paths = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root()).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// A fenced code block: its info string (`sh runnable`) and its lines.
struct Block {
    info: String,
    lines: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match open.take() {
                Some(block) => found.push(block),
                None => {
                    open = Some(Block {
                        info: info.trim().to_string(),
                        lines: Vec::new(),
                    })
                }
            }
        } else if let Some(block) = open.as_mut() {
            block.lines.push(line.to_string());
        }
    }
    found
}

/// The `bootstrap-agent` command lines of a block: a line starting with it, joined with the
/// lines that continue it (after a trailing `\`, or indented, as the synopsis wraps), shell
/// comments cut off.
fn commands_in_block(block: &Block) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    // Whether the last line belongs to a `bootstrap-agent` command, and ended with `\`.
    let mut open = false;
    let mut continues = false;
    for line in &block.lines {
        let code = match line.find(" #") {
            Some(i) => &line[..i],
            None => line.as_str(),
        };
        let starts = code.starts_with("bootstrap-agent ") || code.trim_end() == "bootstrap-agent";
        if starts {
            commands.push(code.trim().trim_end_matches('\\').trim_end().to_string());
            open = true;
        } else if open
            && (continues || line.starts_with(' '))
            && !code.trim().is_empty()
            && !code.trim_start().starts_with('#')
        {
            if let Some(last) = commands.last_mut() {
                last.push(' ');
                last.push_str(code.trim().trim_end_matches('\\').trim_end());
            }
        } else {
            open = false;
        }
        continues = code.trim_end().ends_with('\\');
    }
    commands
}

/// The lines of a page outside its fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = &str> {
    let mut in_block = false;
    text.lines().filter(move |line| {
        let fence = line.trim_start().starts_with("```");
        if fence {
            in_block = !in_block;
        }
        !fence && !in_block
    })
}

/// Inline code spans that start with `bootstrap-agent `.
fn inline_commands(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 && span.starts_with("bootstrap-agent ") {
                found.push(span.to_string());
            }
        }
    }
    found
}

/// Every command shown anywhere, with where it was found.
fn shown_commands() -> Vec<(String, String)> {
    let mut shown = Vec::new();
    for (page, text) in pages() {
        for block in blocks(&text) {
            for command in commands_in_block(&block) {
                shown.push((page.clone(), command));
            }
        }
        for command in inline_commands(&text) {
            shown.push((page.clone(), command));
        }
    }
    shown
}

/// Walks the words of `command` down the subcommands; returns the command reached and the
/// path of names.
fn resolve(command: &str) -> (clap::Command, Vec<String>) {
    let mut cmd = bootstrap_agent::cli::command();
    cmd.build();
    let mut path = vec!["bootstrap-agent".to_string()];
    for word in command.split_whitespace().skip(1) {
        if word.starts_with('-') || word.starts_with('[') || word.starts_with('(') {
            break;
        }
        let Some(sub) = cmd.find_subcommand(word).cloned() else {
            break;
        };
        path.push(word.to_string());
        cmd = sub;
    }
    (cmd, path)
}

/// The long flags a command takes: its own, their aliases, and clap's --help/--version.
fn long_flags(cmd: &clap::Command) -> Vec<String> {
    let mut flags = vec!["help".to_string(), "version".to_string()];
    for arg in cmd.get_arguments() {
        flags.extend(arg.get_long().map(str::to_string));
        flags.extend(
            arg.get_all_aliases()
                .unwrap_or_default()
                .into_iter()
                .map(str::to_string),
        );
    }
    flags
}

/// The `--flag` words of a command line.
fn flags_of(command: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let bytes: Vec<char> = command.chars().collect();
    let mut i = 0;
    while i + 2 < bytes.len() {
        let starts = bytes[i] == '-'
            && bytes[i + 1] == '-'
            && bytes[i + 2].is_ascii_lowercase()
            && (i == 0 || !bytes[i - 1].is_alphanumeric() && bytes[i - 1] != '-');
        if starts {
            let name: String = bytes[i + 2..]
                .iter()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || **c == '-')
                .collect();
            i += 2 + name.len();
            flags.push(name);
        } else {
            i += 1;
        }
    }
    flags
}

fn problems_of(command: &str) -> Vec<String> {
    let (cmd, path) = resolve(command);
    let mut problems = Vec::new();
    let help_only = flags_of(command)
        .iter()
        .any(|f| f == "help" || f == "version");
    if cmd.has_subcommands() && !help_only {
        problems.push(format!(
            "`{}` needs a subcommand, one of: {}",
            path.join(" "),
            cmd.get_subcommands()
                .map(|s| s.get_name())
                .filter(|name| *name != "help")
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let known = long_flags(&cmd);
    for flag in flags_of(command) {
        if !known.contains(&flag) {
            problems.push(format!("`{}` has no --{flag}", path.join(" ")));
        }
    }
    problems
}

#[test]
fn every_command_shown_in_the_docs_exists_with_its_flags() {
    let shown = shown_commands();
    // The synopsis, the runbook and the examples: if this drops, the extraction broke.
    assert!(
        shown.len() >= 40,
        "only {} commands found: {shown:?}",
        shown.len()
    );
    let mut problems = Vec::new();
    for (page, command) in &shown {
        for problem in problems_of(command) {
            problems.push(format!("{page}: {command}\n    {problem}"));
        }
    }
    assert!(
        problems.is_empty(),
        "commands in the docs that the CLI does not have:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_refuses_a_flag_or_command_the_cli_does_not_have() {
    assert_eq!(
        problems_of("bootstrap-agent plan --offline --assets DIR"),
        Vec::<String>::new()
    );
    assert_eq!(
        problems_of("bootstrap-agent plan --stage reserve"),
        Vec::<String>::new()
    );
    assert_eq!(
        problems_of("bootstrap-agent plan --offline --dry-run"),
        vec!["`bootstrap-agent plan` has no --dry-run".to_string()]
    );
    assert_eq!(
        problems_of("bootstrap-agent dns --assets DIR"),
        vec![
            "`bootstrap-agent dns` needs a subcommand, one of: seed, teardown, verify, records"
                .to_string(),
            "`bootstrap-agent dns` has no --assets".to_string()
        ]
    );
    // A word that is no subcommand leaves the flags to the command before it.
    assert_eq!(
        problems_of("bootstrap-agent reserv --assets DIR"),
        vec![
            "`bootstrap-agent` needs a subcommand, one of: run, publish, preflight, capabilities, render, apply, wait, plan, reserve, publish-lb-ips, dns, teardown, status, pause, resume, permissions, manifests, gather"
                .to_string(),
            "`bootstrap-agent` has no --assets".to_string()
        ]
    );
    // The synopsis' wrapped lines and shell continuations are part of their command.
    let block = Block {
        info: "sh".to_string(),
        lines: vec![
            "bootstrap-agent run --assets DIR \\".to_string(),
            "  --gate-timeout 30m   # a comment naming --nothing".to_string(),
            "bootstrap-agent status".to_string(),
            "                         [--watch]".to_string(),
        ],
    };
    assert_eq!(
        commands_in_block(&block),
        vec![
            "bootstrap-agent run --assets DIR --gate-timeout 30m".to_string(),
            "bootstrap-agent status [--watch]".to_string()
        ]
    );
}

#[test]
fn every_command_of_the_cli_is_in_the_synopsis_of_operating_md() {
    let text = std::fs::read_to_string(root().join("docs/operating.md")).unwrap();
    let synopsis: Vec<String> = blocks(&text)
        .iter()
        .find(|b| {
            b.lines
                .iter()
                .any(|l| l.starts_with("bootstrap-agent run "))
        })
        .map(commands_in_block)
        .expect("docs/operating.md has the CLI synopsis");
    let shown: Vec<Vec<String>> = synopsis.iter().map(|c| resolve(c).1).collect();
    let mut missing = Vec::new();
    fn leaves(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let subs: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .collect();
        if subs.is_empty() {
            out.push(path);
            return;
        }
        for sub in subs {
            let mut next = path.clone();
            next.push(sub.get_name().to_string());
            leaves(sub, next, out);
        }
    }
    let mut all = Vec::new();
    let mut cmd = bootstrap_agent::cli::command();
    cmd.build();
    leaves(&cmd, vec!["bootstrap-agent".to_string()], &mut all);
    assert!(all.len() > 20, "{all:?}");
    for path in all {
        if !shown.contains(&path) {
            missing.push(path.join(" "));
        }
    }
    assert!(
        missing.is_empty(),
        "commands of the CLI missing from the synopsis in docs/operating.md: {missing:?}"
    );
}

/// Splits a runnable line into words; refuses what would need a shell.
fn words(line: &str) -> Vec<String> {
    assert!(
        !line.contains(['|', '>', '<', '\'', '"', '$', ';', '&', '*', '`']),
        "a runnable line is run without a shell: {line}"
    );
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn the_runnable_examples_in_the_docs_run() {
    let state = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for (page, text) in pages() {
        for block in blocks(&text)
            .into_iter()
            .filter(|b| b.info == "sh runnable")
        {
            let commands = commands_in_block(&block);
            assert_eq!(
                commands.len(),
                block
                    .lines
                    .iter()
                    .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                    .count(),
                "{page}: every line of a runnable block is one bootstrap-agent command: {:?}",
                block.lines
            );
            for command in commands {
                let args = words(&command);
                let mut run = Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"));
                run.args(&args[1..]).current_dir(root());
                // The agent's own settings of this machine must not change the example;
                // a journal of a real install must not be read.
                for (name, _) in std::env::vars_os() {
                    if name.to_string_lossy().starts_with("BOOTSTRAP_AGENT_") {
                        run.env_remove(name);
                    }
                }
                run.env("BOOTSTRAP_AGENT_STATE_DIR", state.path());
                let out = run.output().unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.success() && !stdout.trim().is_empty(),
                    "{page}: `{command}` exited {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
                    out.status.code()
                );
                ran += 1;
            }
        }
    }
    assert!(ran >= 5, "only {ran} runnable examples ran");
    // Only read: the examples leave no journal behind.
    assert_eq!(std::fs::read_dir(state.path()).unwrap().count(), 0);
}

#[test]
#[should_panic(expected = "run without a shell")]
fn a_runnable_line_that_needs_a_shell_is_refused() {
    words("bootstrap-agent plan --offline --output json | jq .changes");
}

/// The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
/// hyphens, a repeated heading numbered (`performance-1`).
fn anchors(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in prose(text) {
        let Some(heading) = line.strip_prefix('#').map(|h| h.trim_start_matches('#')) else {
            continue;
        };
        if !heading.starts_with(' ') {
            continue;
        }
        let anchor: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let seen = found
            .iter()
            .filter(|a| {
                **a == anchor
                    || a.starts_with(&format!("{anchor}-"))
                        && a[anchor.len() + 1..].parse::<u32>().is_ok()
            })
            .count();
        found.push(if seen == 0 {
            anchor
        } else {
            format!("{anchor}-{seen}")
        });
    }
    found
}

/// The targets of the page's Markdown links `[text](target)`, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        let dir = root().join(&page).parent().unwrap().to_path_buf();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            checked += 1;
            let (file, anchor) = link.split_once('#').unwrap_or((link.as_str(), ""));
            let target = if file.is_empty() {
                root().join(&page)
            } else {
                dir.join(file)
            };
            if !target.exists() {
                broken.push(format!("{page}: {link}: no such file"));
                continue;
            }
            if !anchor.is_empty() {
                let target_text = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    broken.push(format!("{page}: {link}: no such heading"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_as_github_makes_them() {
    let page = "# Title\n## `run`: the state machine\n```\n# not a heading\n```\n## Performance\n### Performance\n## Azure clouds (`cloudName`, `armEndpoint`)\n";
    assert_eq!(
        anchors(page),
        vec![
            "title",
            "run-the-state-machine",
            "performance",
            "performance-1",
            "azure-clouds-cloudname-armendpoint"
        ]
    );
    assert_eq!(
        links("see [a](b.md#c) and [d](#e)\n```\n[x](y)\n```\n"),
        vec!["b.md#c", "#e"]
    );
}

/// The README's test command, as the block after "Run all tests" shows it, is what CI's test
/// stage runs, word for word: CI proves the command a reader types.
#[test]
fn ci_runs_the_readmes_test_command_unchanged() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (_, after) = readme
        .split_once("Run all tests")
        .expect("README.md has no \"Run all tests\" paragraph");
    let block = blocks(after).into_iter().next().expect("no block after it");
    assert_eq!(block.info, "sh");
    assert_eq!(block.lines.len(), 1, "{:?}", block.lines);
    let command = block.lines[0].trim();
    assert_eq!(command, "cargo xtask test");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let stage: Vec<&str> = ci
        .lines()
        .filter(|l| l.trim_start().starts_with("stage test "))
        .collect();
    assert_eq!(stage, [format!("stage test {command}")], "{stage:?}");
}

/// A merge's conflict markers committed in a page (docs/operating.md held one for a session).
fn conflict_markers(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            ["<<<<<<< ", "=======", ">>>>>>> "].iter().any(|marker| {
                line.starts_with(marker) && (marker.ends_with(' ') || *line == *marker)
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn no_page_holds_a_merge_conflict() {
    assert_eq!(
        conflict_markers("a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\n"),
        vec![2, 4, 6]
    );
    assert!(conflict_markers("| a | b |\n======= title\n").is_empty());
    let found: Vec<String> = pages()
        .iter()
        .flat_map(|(path, text)| {
            conflict_markers(text)
                .into_iter()
                .map(move |line| format!("{path}:{line}"))
        })
        .collect();
    assert!(found.is_empty(), "conflict markers at {found:?}");
}
