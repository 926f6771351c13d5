//! `status`: what the journal says, for the person looking at a stuck install.

use crate::journal::{self, MutationState};
use crate::output::Output;
use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

pub fn show(state_dir: &Path, output: Output) -> Result<()> {
    let Some(state) = journal::read_state(state_dir)? else {
        match output {
            Output::Text => println!("no journal in {}: nothing has run yet", state_dir.display()),
            Output::Json | Output::Yaml => crate::output::data(output, &serde_json::Value::Null)?,
        }
        return Ok(());
    };
    let paused = crate::pause::is_paused(state_dir);
    if output != Output::Text {
        /// The journal as it is, plus what only the state dir knows.
        #[derive(serde::Serialize)]
        struct View<'a> {
            #[serde(flatten)]
            state: &'a journal::JournalState,
            paused: bool,
        }
        crate::output::data(
            output,
            &View {
                state: &state,
                paused,
            },
        )?;
        return Ok(());
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
    out.push_str("steps:\n");
    for (name, step) in &state.steps {
        let _ = writeln!(
            out,
            "  {name:<14} {:<8} attempt {}  started {}  {} mutation(s){}",
            format!("{:?}", step.state).to_lowercase(),
            step.attempt,
            step.started_at,
            step.mutations,
            step.last_error
                .as_ref()
                .map(|e| format!("\n      error: {e}"))
                .unwrap_or_default()
        );
    }
    out.push_str("reservations:\n");
    for r in &state.reservations {
        let _ = writeln!(out, "  {:<36} {:<24} {}", r.key.to_string(), r.id, r.ip);
    }
    for r in &state.handed_over {
        let _ = writeln!(
            out,
            "  {:<36} {:<24} {} (handed over to its load balancer)",
            r.key.to_string(),
            r.id,
            r.ip
        );
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
    if !state.services.is_empty() {
        out.push_str("services:\n");
        let gate: Vec<crate::cluster::gate::ServiceGate> = state
            .gate
            .as_ref()
            .and_then(|g| g.get("services"))
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .unwrap_or_default();
        for t in &state.services {
            let reason = gate
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
    if let Some(e) = &state.last_error {
        let _ = writeln!(out, "last error: {e}");
    }
    print!("{out}");
    Ok(())
}
