//! `status`: what the journal says, for the person looking at a stuck install.

use crate::cli::Output;
use crate::journal::{self, MutationState};
use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

pub fn show(state_dir: &Path, output: Output) -> Result<()> {
    let Some(state) = journal::read_state(state_dir)? else {
        match output {
            Output::Text => println!("no journal in {}: nothing has run yet", state_dir.display()),
            Output::Json | Output::Yaml => println!("null"),
        }
        return Ok(());
    };
    if output != Output::Text {
        println!("{}", serde_json::to_string_pretty(&state)?);
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cluster {}  generation {}  bootstrap IP {}",
        state.infra_id.as_deref().unwrap_or("-"),
        state.generation,
        state
            .bootstrap_ip
            .map_or("-".to_string(), |ip| ip.to_string())
    );
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
