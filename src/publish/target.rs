//! The change a `publish` asks for, read against what the journal recorded: from which scope to
//! which, the spec the steps plan for, and the command that reverts it.

use crate::assets::{ClusterSpec, Exposure};
use crate::journal::JournalState;
use crate::plan::Step;
use anyhow::{Result, bail};

/// The change `scope` makes from what the journal recorded: (from, to). A change to the same
/// scope that is under way resumes with its `from`; anything else starts from where the
/// cluster is now (the last change's target, else the install-config's), so asking for the
/// previous scope mid-change reverts it.
pub fn change_of(
    spec: &ClusterSpec,
    recorded: &JournalState,
    scope: Exposure,
) -> (Exposure, Exposure) {
    match &recorded.scope_change {
        Some(c) if c.to == scope && c.phase != DONE => (c.from, c.to),
        // The context gave the spec the last change's target (`context::load`).
        _ => (spec.publish.api(), scope),
    }
}

/// The spec planned for: the target scope, the prior one observed too, no bootstrap host.
pub(super) fn target_spec(spec: &ClusterSpec, from: Exposure, to: Exposure) -> ClusterSpec {
    let mut spec = spec.clone();
    let base = spec.prior_publish.unwrap_or(spec.publish);
    spec.prior_publish = Some(base.with_api(from));
    spec.publish = base.with_api(to);
    // A cluster `run` completed: the bootstrap host has left DNS for good.
    spec.bootstrap_ip = None;
    spec
}

/// The phase of a change that is over (journal, ConfigMap).
pub(super) const DONE: &str = "done";

/// The steps of a change to `to`, in order (the gate and the drain sit between them).
pub(super) fn stages(to: Exposure) -> &'static [Step] {
    match to {
        Exposure::External => &[Step::Reserve, Step::ApplyServices, Step::SeedDns],
        Exposure::Internal => &[Step::Withdraw, Step::Unpublish, Step::SeedDns],
    }
}

/// The command that reverts a change to `to` (the enhancement's "Alternatively, you can revert").
pub fn revert_command(from: Exposure) -> String {
    format!("bootstrap-agent publish --scope {from}")
}

/// `publish` changes the scope of a cluster that `run` completed, and nothing else.
pub(super) fn require_run_done(state: &JournalState) -> Result<()> {
    if state.run_step != Some(crate::machine::State::Done) {
        bail!(crate::error::InputError::new(
            std::path::Path::new("--state-dir"),
            "run_step",
            format!(
                "is {}; expected done: `publish` changes the scope of a cluster `run` completed (finish `run` first)",
                state.run_step.map_or("not started", |s| s.name())
            ),
        ));
    }
    Ok(())
}
