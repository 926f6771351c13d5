//! What `run` tells the installer: the phases it waits on (the done-file and the ConfigMap).
//! systemd's status line is `notify`'s.

use crate::cluster::{self, gate};
use crate::journal::Journal;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The signals the installer waits on, in order. `gate-passed`: every Service is Ready, the
/// bootstrap IP is still in DNS. `complete`: the bootstrap IP left DNS and the drain is over;
/// only now may the bootstrap host go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    GatePassed,
    Complete,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::GatePassed => "gate-passed",
            Phase::Complete => "complete",
        }
    }
}

/// Records the gate's report in the journal, then signals `gate-passed`.
pub async fn record_gate(
    kube: &kube::Client,
    journal: &mut Journal,
    report: &gate::GateReport,
    done_file: Option<&Path>,
) -> Result<()> {
    journal.state.gate = Some(report.clone());
    journal.save()?;
    signal(kube, journal, Phase::GatePassed, done_file).await
}

/// Writes `phase` to the done-file (atomically) and the ConfigMap, from what the journal holds.
pub async fn signal(
    kube: &kube::Client,
    journal: &Journal,
    phase: Phase,
    done_file: Option<&Path>,
) -> Result<()> {
    let doc = serde_json::json!({
        "phase": phase,
        "bootstrapIpRemoved": journal.state.bootstrap_removed,
        "gate": journal.state.gate,
        "at": crate::journal::now(),
    });
    if let Some(path) = done_file {
        let (dir, name) = crate::journal::dir_and_name(path, "--done-file")?;
        crate::journal::write_atomically(
            dir,
            name,
            serde_json::to_string_pretty(&doc)?.as_bytes(),
        )?;
    }
    cluster::publish_signal(kube, phase.as_str(), &doc).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_named_for_the_installer() {
        assert_eq!(
            serde_json::to_value(Phase::GatePassed).unwrap(),
            "gate-passed"
        );
        assert_eq!(serde_json::to_value(Phase::Complete).unwrap(), "complete");
        assert_eq!(Phase::Complete.as_str(), "complete");
        assert_eq!(Phase::GatePassed.as_str(), "gate-passed");
    }
}
