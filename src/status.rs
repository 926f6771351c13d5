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
    if output != Output::Text {
        crate::output::data(output, &state)?;
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
                    format!("remove {ip} from api and api-int once the gate passed")
                }
            );
        }
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
