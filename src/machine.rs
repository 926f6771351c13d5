//! The state machine of `run` (zincati's shape): its states (each named after the step it runs) in order and the one legal way
//! forward from each. Pure, and at the bottom of the house: the journal records a `State`, the
//! daemon walks the machine, `plan` asks what is left.
//!
//! ```text
//! Reserve -> SeedDns -> SetCapabilities -> HandOver -> ApplyServices -> Gate -> RemoveBootstrap -> Done
//! ```

use crate::plan::Step;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Reserve,
    SeedDns,
    SetCapabilities,
    HandOver,
    ApplyServices,
    Gate,
    RemoveBootstrap,
    Done,
}

impl State {
    pub const ALL: [State; 8] = [
        State::Reserve,
        State::SeedDns,
        State::SetCapabilities,
        State::HandOver,
        State::ApplyServices,
        State::Gate,
        State::RemoveBootstrap,
        State::Done,
    ];

    /// The step as the journal spells it (`seed-dns`).
    pub fn name(self) -> &'static str {
        match self {
            State::Reserve => "reserve",
            State::SeedDns => "seed-dns",
            State::SetCapabilities => "set-capabilities",
            State::HandOver => "hand-over",
            State::ApplyServices => "apply-services",
            State::Gate => "gate",
            State::RemoveBootstrap => "remove-bootstrap",
            State::Done => "done",
        }
    }

    /// The `STATUS=` line systemd shows while this step runs.
    pub fn status_line(self) -> &'static str {
        match self {
            State::Reserve => "stage 1: reserving load-balancer IPs",
            State::SeedDns => {
                "stage 1: seeding api/api-int DNS with the bootstrap IP and the reserved IPs"
            }
            State::SetCapabilities => {
                "stage 1: writing the capabilities into ClusterVersion version"
            }
            State::HandOver => {
                "stage 1: handing the reserved private IPs over to the load balancers"
            }
            State::ApplyServices => "stage 1: applying the LoadBalancer Services",
            State::Gate => "stage 2: waiting for the Services (ingress + a ready endpoint)",
            State::RemoveBootstrap => {
                "stage 3: removing the bootstrap IP from DNS, then draining cached answers"
            }
            State::Done => "done: the API is served by the cluster's load balancers",
        }
    }
}

impl State {
    /// The state after this one, in `ALL`'s order (Done has none).
    pub fn next(self) -> Option<State> {
        let at = State::ALL.iter().position(|s| *s == self)?;
        State::ALL.get(at + 1).copied()
    }

    /// The plan step this state runs: every state changes something through the runner,
    /// except Gate (it waits and watches) and Done.
    pub fn step(self) -> Option<Step> {
        match self {
            State::Reserve => Some(Step::Reserve),
            State::SeedDns => Some(Step::SeedDns),
            State::SetCapabilities => Some(Step::SetCapabilities),
            State::HandOver => Some(Step::HandOver),
            State::ApplyServices => Some(Step::ApplyServices),
            State::RemoveBootstrap => Some(Step::RemoveBootstrap),
            State::Gate | State::Done => None,
        }
    }
}

/// The steps `run` still has ahead of it from `state` (what `plan` shows by default), the
/// Kubernetes ones included; without a recorded step, all of `run`.
pub fn remaining_steps(step: Option<State>) -> Vec<Step> {
    let from = step.unwrap_or(State::Reserve);
    State::ALL
        .iter()
        .filter(|s| **s >= from)
        .filter_map(|s| s.step())
        .collect()
}

/// The machine: where it is, and the one legal way forward from each step.
#[derive(Debug)]
pub struct Machine {
    step: State,
}

impl Machine {
    pub fn resume(recorded: Option<State>) -> Self {
        Self {
            step: recorded.unwrap_or(State::Reserve),
        }
    }

    pub fn state(&self) -> State {
        self.step
    }

    fn advance(&mut self, from: State, to: State) -> Result<State> {
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
    pub fn step_done(&mut self) -> Result<State> {
        self.finished(self.step)
    }

    /// `step` is done: the machine moves on to the state after it, legal only when the
    /// machine is at `step`.
    pub fn finished(&mut self, step: State) -> Result<State> {
        let Some(next) = step.next() else {
            bail!("the machine is done: there is no step after Done");
        };
        self.advance(step, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_are_set_between_seed_dns_and_hand_over() {
        let mut m = Machine::resume(Some(State::SeedDns));
        assert_eq!(m.finished(State::SeedDns).unwrap(), State::SetCapabilities);
        assert!(
            m.finished(State::HandOver).is_err(),
            "HandOver cannot skip SetCapabilities"
        );
        assert_eq!(m.finished(State::SetCapabilities).unwrap(), State::HandOver);
        assert!(m.finished(State::SetCapabilities).is_err());
        assert_eq!(m.finished(State::HandOver).unwrap(), State::ApplyServices);
    }

    #[test]
    fn every_step_has_a_status_line_and_resuming_at_set_capabilities_plans_the_hand_over() {
        assert!(State::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(State::ALL.iter().all(|s| !s.status_line().is_empty()));
        assert_eq!(
            remaining_steps(Some(State::SetCapabilities)),
            vec![
                Step::SetCapabilities,
                Step::HandOver,
                Step::ApplyServices,
                Step::RemoveBootstrap
            ]
        );
        assert_eq!(remaining_steps(None), remaining_steps(Some(State::Reserve)));
        assert_eq!(
            remaining_steps(Some(State::Gate)),
            vec![Step::RemoveBootstrap]
        );
        assert!(remaining_steps(Some(State::Done)).is_empty());
        assert_eq!(
            serde_json::to_value(State::SetCapabilities).unwrap(),
            "set-capabilities"
        );
    }

    #[test]
    fn step_done_walks_every_step_in_order_and_stops_at_done() {
        let mut m = Machine::resume(None);
        for pair in State::ALL.windows(2) {
            assert_eq!(m.state(), pair[0]);
            assert_eq!(m.step_done().unwrap(), pair[1]);
        }
        assert!(m.step_done().is_err());
    }

    #[test]
    fn step_names_are_the_journals_spelling() {
        for step in State::ALL {
            assert_eq!(serde_json::to_value(step).unwrap(), step.name());
        }
    }
}
