//! `status`: what the journal says, for the person looking at a stuck install.

use crate::journal::{self, MutationState};
use crate::output::Output;
use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

/// The version of `status --output json`.
pub const STATUS_SCHEMA: u32 = 1;

/// `started -> finished (duration)` of a step, or `started -> running`.
/// `  retries: throttled 2, conflict 1` (nothing when the step retried nothing).
fn retries(by_cause: &std::collections::BTreeMap<String, u32>) -> String {
    if by_cause.is_empty() {
        return String::new();
    }
    let counts: Vec<String> = by_cause.iter().map(|(c, n)| format!("{c} {n}")).collect();
    format!("  retries: {}", counts.join(", "))
}

/// `  <key> <id> <ip><note>`, the columns aligned.
fn reservation_line(out: &mut String, r: &bootstrap_cloud::Reservation, note: &str) {
    let _ = writeln!(
        out,
        "  {:<36} {:<24} {}{note}",
        r.key.to_string(),
        r.id,
        r.ip
    );
}

fn timeline(started: &str, finished: Option<&str>) -> String {
    let Some(end) = finished else {
        return format!("{started} -> running");
    };
    let took = humantime::parse_rfc3339(started)
        .ok()
        .zip(humantime::parse_rfc3339(end).ok())
        .and_then(|(s, e)| e.duration_since(s).ok())
        .map_or("?".to_string(), |d| {
            humantime::format_duration(d).to_string()
        });
    format!("{started} -> {end} ({took})")
}

pub fn show(state_dir: &Path, output: Output) -> Result<()> {
    show_from(state_dir, None, output)
}

/// `show`, with `fallback` shown when the state dir has no journal (day 2 from an admin's
/// machine: the journal started from what `run` left in the cluster).
pub fn show_from(
    state_dir: &Path,
    fallback: Option<&journal::JournalState>,
    output: Output,
) -> Result<()> {
    crate::output::write_stdout(&render(state_dir, fallback, output)?.0)
}

/// `status --watch`: prints the status again whenever it changes (on a terminal, redrawn in
/// place), until `run` is done. Reads the journal without the lock, as `status` does; the
/// journal is replaced atomically, so every read sees a whole one.
pub async fn watch(
    state_dir: &Path,
    fallback: Option<&journal::JournalState>,
    output: Output,
    every: std::time::Duration,
) -> Result<()> {
    use std::io::IsTerminal;
    let redraw = output == Output::Text && std::io::stdout().is_terminal();
    let mut last = String::new();
    loop {
        let (text, done) = render(state_dir, fallback, output)?;
        if text != last {
            let shown = if redraw {
                // Home, clear: the new picture replaces the old one.
                format!("\x1b[H\x1b[2J{text}")
            } else {
                text.clone()
            };
            crate::output::write_stdout(&shown)?;
            last = text;
        }
        if done {
            return Ok(());
        }
        tokio::time::sleep(every).await;
    }
}

/// The status as printed, and whether `run` is done.
fn render(
    state_dir: &Path,
    fallback: Option<&journal::JournalState>,
    output: Output,
) -> Result<(String, bool)> {
    let Some(state) = journal::read_state(state_dir)?.or_else(|| fallback.cloned()) else {
        let text = match output {
            Output::Text => format!(
                "no journal in {}: nothing has run yet\n",
                state_dir.display()
            ),
            Output::Json | Output::Yaml => {
                crate::output::data_text(output, &serde_json::Value::Null)?
            }
        };
        return Ok((text, false));
    };
    let done = state.run_step == Some(crate::machine::State::Done);
    let paused = crate::pause::is_paused(state_dir);
    if output != Output::Text {
        /// The journal as it is, plus what only the state dir knows.
        #[derive(serde::Serialize)]
        struct View<'a> {
            /// Bumped when a field changes meaning or goes away (docs/operating.md "Status": the schema table).
            status_schema: u32,
            #[serde(flatten)]
            state: &'a journal::JournalState,
            paused: bool,
        }
        let text = crate::output::data_text(
            output,
            &View {
                status_schema: STATUS_SCHEMA,
                state: &state,
                paused,
            },
        )?;
        return Ok((text, done));
    }
    let mut out = String::new();
    if paused {
        let at = state.run_step.map_or("its first step", |s| s.name());
        let _ = writeln!(
            out,
            "PAUSED before {at}: `bootstrap-agent resume --state-dir {}` continues",
            state_dir.display()
        );
    }
    let _ = writeln!(
        out,
        "cluster {}  generation {}  bootstrap IP {}",
        state.infra_id.as_deref().unwrap_or("-"),
        state.generation,
        state
            .bootstrap_ip
            .map_or("-".to_string(), |ip| ip.to_string())
    );
    if let Some(step) = state.run_step {
        let _ = writeln!(out, "run: at {step:?} ({})", step.status_line());
    }
    if let Some(change) = &state.scope_change {
        let c = &change.condition;
        let _ = writeln!(
            out,
            "publish: {} -> {} at {}\n  condition {}={} reason {}: {}",
            change.from, change.to, change.phase, c.type_, c.status, c.reason, c.message
        );
    }
    out.push_str("steps (in the order they last started):\n");
    let mut steps: Vec<_> = state.steps.iter().collect();
    steps.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
    for (name, step) in steps {
        let _ = writeln!(
            out,
            "  {name:<14} {:<8} attempt {}  {}  {} mutation(s){}{}",
            format!("{:?}", step.state).to_lowercase(),
            step.attempt,
            timeline(&step.started_at, step.finished_at.as_deref()),
            step.mutations,
            retries(&step.retries),
            step.last_error
                .as_ref()
                .map(|e| format!("\n      error: {e}"))
                .unwrap_or_default()
        );
    }
    out.push_str("reservations:\n");
    for r in &state.reservations {
        reservation_line(&mut out, r, "");
    }
    for r in &state.adopted {
        reservation_line(&mut out, r, &format!(" adopted (yours): {}", r.name));
    }
    for r in &state.handed_over {
        reservation_line(&mut out, r, " (handed over to its load balancer)");
    }
    out.push_str("records (our values):\n");
    for r in &state.records {
        let values: Vec<String> = r.values.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "  {}: {} = {}",
            r.zone,
            r.record,
            if values.is_empty() {
                "(none)".into()
            } else {
                values.join(", ")
            }
        );
    }
    if !state.user_dns.is_empty() {
        out.push_str("records to create in your DNS (user-managed DNS; the agent wrote none):\n");
        for r in &state.user_dns {
            let values: Vec<String> = r.values.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "  {}: {} = {}", r.zone, r.record, values.join(", "));
        }
        if let Some(ip) = state.bootstrap_ip {
            let _ = writeln!(
                out,
                "  {}",
                if state.bootstrap_removed {
                    format!("the gate passed: {ip} must be out of api and api-int now")
                } else {
                    format!(
                        "remove {ip} from {} once the gate passed",
                        crate::plan::text::holding(
                            state
                                .user_dns
                                .iter()
                                .map(|r| (r.record.as_str(), r.values.contains(&ip)))
                        )
                    )
                }
            );
        }
    }
    if !state.services.is_empty() {
        out.push_str("services:\n");
        let gate = state.gate.as_ref().map(|g| g.services.as_slice());
        for t in &state.services {
            let reason = gate
                .unwrap_or_default()
                .iter()
                .find(|g| g.namespace == t.namespace && g.name == t.name)
                .map_or("applied", |g| g.reason.as_str());
            let _ = writeln!(out, "  {}/{}: {reason}", t.namespace, t.name);
        }
    }
    let interrupted: Vec<_> = state
        .mutations
        .iter()
        .filter(|m| m.state == MutationState::Interrupted)
        .collect();
    if !interrupted.is_empty() {
        let _ = writeln!(
            out,
            "interrupted mutations (re-observed on resume): {}",
            interrupted.len()
        );
    }
    match &state.serving {
        Some(ips) => {
            let ips: Vec<String> = ips.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                out,
                "dns seeding: progressive; joined (their load balancer serves them): {}",
                if ips.is_empty() {
                    "none yet".to_string()
                } else {
                    ips.join(", ")
                }
            );
        }
        None if state.run_step.is_some() => {
            let _ = writeln!(out, "dns seeding: all at once");
        }
        None => {}
    }
    if let Some(wire) = &state.wire_proof {
        let _ = writeln!(out, "wire proof: {wire}");
    }
    if let Some(until) = &state.drain_until {
        let _ = writeln!(
            out,
            "drain: the bootstrap IP left DNS; `complete` is signalled after {until}"
        );
    }
    if let Some(e) = &state.last_error {
        let _ = writeln!(out, "last error: {e}");
    }
    Ok((out, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_step_shows_its_duration_a_running_one_says_so() {
        assert_eq!(
            timeline("2026-11-23T13:00:00Z", Some("2026-11-23T13:01:30Z")),
            "2026-11-23T13:00:00Z -> 2026-11-23T13:01:30Z (1m 30s)"
        );
        assert_eq!(
            timeline("2026-11-23T13:00:00Z", None),
            "2026-11-23T13:00:00Z -> running"
        );
        assert!(timeline("garbage", Some("2026-11-23T13:00:00Z")).ends_with("(?)"));
    }

    #[test]
    fn retries_are_shown_by_cause_and_not_at_all_without() {
        assert_eq!(retries(&Default::default()), "");
        let counts = std::collections::BTreeMap::from([
            ("throttled".to_string(), 2),
            ("conflict".to_string(), 1),
        ]);
        assert_eq!(retries(&counts), "  retries: conflict 1, throttled 2");
    }
}
