//! The state machine of `run` (zincati's shape): the steps in order and the one legal way
//! forward from each. Pure, and at the bottom of the house: the journal records a `Step`, the
//! daemon walks the machine, `plan` asks what is left.
//!
//! ```text
//! Reserve -> SeedDns -> SetCapabilities -> HandOver -> ApplyServices -> Gate -> RemoveBootstrap -> Done
//! ```

use crate::plan::Stage;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    Reserve,
    SeedDns,
    SetCapabilities,
    HandOver,
    ApplyServices,
    Gate,
    RemoveBootstrap,
    Done,
}

impl Step {
    pub const ALL: [Step; 8] = [
        Step::Reserve,
        Step::SeedDns,
        Step::SetCapabilities,
        Step::HandOver,
        Step::ApplyServices,
        Step::Gate,
        Step::RemoveBootstrap,
        Step::Done,
    ];

    /// The step as the journal spells it (`seed-dns`).
    pub fn name(self) -> &'static str {
        match self {
            Step::Reserve => "reserve",
            Step::SeedDns => "seed-dns",
            Step::SetCapabilities => "set-capabilities",
            Step::HandOver => "hand-over",
            Step::ApplyServices => "apply-services",
            Step::Gate => "gate",
            Step::RemoveBootstrap => "remove-bootstrap",
            Step::Done => "done",
        }
    }

    /// The `STATUS=` line systemd shows while this step runs.
    pub fn status_line(self) -> &'static str {
        match self {
            Step::Reserve => "stage 1: reserving load-balancer IPs",
            Step::SeedDns => {
                "stage 1: seeding api/api-int DNS with the bootstrap IP and the reserved IPs"
            }
            Step::SetCapabilities => {
                "stage 1: writing the capabilities into ClusterVersion version"
            }
            Step::HandOver => {
                "stage 1: handing the reserved private IPs over to the load balancers"
            }
            Step::ApplyServices => "stage 1: applying the LoadBalancer Services",
            Step::Gate => "stage 2: waiting for the Services (ingress + a ready endpoint)",
            Step::RemoveBootstrap => {
                "stage 3: removing the bootstrap IP from DNS, then draining cached answers"
            }
            Step::Done => "done: the API is served by the cluster's load balancers",
        }
    }
}

/// The cloud stages `run` still has ahead of it from `step` (what `plan` shows by default).
/// Without a recorded step: the stage-1 stages a person runs by hand.
pub fn remaining_stages(step: Option<Step>) -> Vec<Stage> {
    match step {
        None | Some(Step::Reserve) => vec![Stage::Reserve, Stage::SeedDns],
        Some(Step::SeedDns) => vec![Stage::SeedDns, Stage::HandOver],
        Some(Step::SetCapabilities | Step::HandOver) => vec![Stage::HandOver],
        Some(Step::ApplyServices | Step::Gate | Step::RemoveBootstrap) => {
            vec![Stage::RemoveBootstrap]
        }
        Some(Step::Done) => Vec::new(),
    }
}

/// The machine: where it is, and the one legal way forward from each step.
#[derive(Debug)]
pub struct Machine {
    step: Step,
}

impl Machine {
    pub fn resume(recorded: Option<Step>) -> Self {
        Self {
            step: recorded.unwrap_or(Step::Reserve),
        }
    }

    pub fn step(&self) -> Step {
        self.step
    }

    fn advance(&mut self, from: Step, to: Step) -> Result<Step> {
        if self.step != from {
            bail!(
                "illegal transition {from:?} -> {to:?}: the machine is at {:?}",
                self.step
            );
        }
        self.step = to;
        Ok(to)
    }

    pub fn reserved(&mut self) -> Result<Step> {
        self.advance(Step::Reserve, Step::SeedDns)
    }
    pub fn dns_seeded(&mut self) -> Result<Step> {
        self.advance(Step::SeedDns, Step::SetCapabilities)
    }
    pub fn capabilities_set(&mut self) -> Result<Step> {
        self.advance(Step::SetCapabilities, Step::HandOver)
    }
    pub fn handed_over(&mut self) -> Result<Step> {
        self.advance(Step::HandOver, Step::ApplyServices)
    }
    pub fn services_applied(&mut self) -> Result<Step> {
        self.advance(Step::ApplyServices, Step::Gate)
    }
    pub fn gate_passed(&mut self) -> Result<Step> {
        self.advance(Step::Gate, Step::RemoveBootstrap)
    }
    pub fn bootstrap_removed(&mut self) -> Result<Step> {
        self.advance(Step::RemoveBootstrap, Step::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_are_set_between_seed_dns_and_hand_over() {
        let mut m = Machine::resume(Some(Step::SeedDns));
        assert_eq!(m.dns_seeded().unwrap(), Step::SetCapabilities);
        assert!(
            m.handed_over().is_err(),
            "HandOver cannot skip SetCapabilities"
        );
        assert_eq!(m.capabilities_set().unwrap(), Step::HandOver);
        assert!(m.capabilities_set().is_err());
        assert_eq!(m.handed_over().unwrap(), Step::ApplyServices);
    }

    #[test]
    fn every_step_has_a_status_line_and_resuming_at_set_capabilities_plans_the_hand_over() {
        assert!(Step::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(Step::ALL.iter().all(|s| !s.status_line().is_empty()));
        assert_eq!(
            remaining_stages(Some(Step::SetCapabilities)),
            vec![Stage::HandOver]
        );
        assert_eq!(
            serde_json::to_value(Step::SetCapabilities).unwrap(),
            "set-capabilities"
        );
    }

    #[test]
    fn step_names_are_the_journals_spelling() {
        for step in Step::ALL {
            assert_eq!(serde_json::to_value(step).unwrap(), step.name());
        }
    }
}
