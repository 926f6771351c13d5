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

impl Step {
    /// The plan's stage this step runs: every step changes something through the runner,
    /// except Gate (it waits and watches) and Done.
    pub fn stage(self) -> Option<Stage> {
        match self {
            Step::Reserve => Some(Stage::Reserve),
            Step::SeedDns => Some(Stage::SeedDns),
            Step::SetCapabilities => Some(Stage::SetCapabilities),
            Step::HandOver => Some(Stage::HandOver),
            Step::ApplyServices => Some(Stage::ApplyServices),
            Step::RemoveBootstrap => Some(Stage::RemoveBootstrap),
            Step::Gate | Step::Done => None,
        }
    }
}

/// The stages `run` still has ahead of it from `step` (what `plan` shows by default), the
/// Kubernetes ones included; without a recorded step, all of `run`.
pub fn remaining_stages(step: Option<Step>) -> Vec<Stage> {
    let from = step.unwrap_or(Step::Reserve);
    Step::ALL
        .iter()
        .filter(|s| **s >= from)
        .filter_map(|s| s.stage())
        .collect()
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

    /// The one legal way forward from where the machine is.
    pub fn step_done(&mut self) -> Result<Step> {
        match self.step {
            Step::Reserve => self.reserved(),
            Step::SeedDns => self.dns_seeded(),
            Step::SetCapabilities => self.capabilities_set(),
            Step::HandOver => self.handed_over(),
            Step::ApplyServices => self.services_applied(),
            Step::Gate => self.gate_passed(),
            Step::RemoveBootstrap => self.bootstrap_removed(),
            Step::Done => bail!("the machine is done: there is no step after Done"),
        }
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
            vec![
                Stage::SetCapabilities,
                Stage::HandOver,
                Stage::ApplyServices,
                Stage::RemoveBootstrap
            ]
        );
        assert_eq!(
            remaining_stages(None),
            remaining_stages(Some(Step::Reserve))
        );
        assert_eq!(
            remaining_stages(Some(Step::Gate)),
            vec![Stage::RemoveBootstrap]
        );
        assert!(remaining_stages(Some(Step::Done)).is_empty());
        assert_eq!(
            serde_json::to_value(Step::SetCapabilities).unwrap(),
            "set-capabilities"
        );
    }

    #[test]
    fn step_done_walks_every_step_in_order_and_stops_at_done() {
        let mut m = Machine::resume(None);
        for pair in Step::ALL.windows(2) {
            assert_eq!(m.step(), pair[0]);
            assert_eq!(m.step_done().unwrap(), pair[1]);
        }
        assert!(m.step_done().is_err());
    }

    #[test]
    fn step_names_are_the_journals_spelling() {
        for step in Step::ALL {
            assert_eq!(serde_json::to_value(step).unwrap(), step.name());
        }
    }
}
