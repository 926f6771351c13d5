//! The one source of truth for the cloud permissions the agent needs: per cloud, a table of
//! the actions each of its calls needs, for which command, under which condition of the
//! plan, and how preflight proves it. `bootstrap-agent permissions` prints these tables in
//! the cloud's own policy format, preflight asks exactly these (its permission lines are
//! named from them), and `docs/permissions.md` is generated from them.
//!
//! Built without any cloud feature: the tables are plain data, the printers live in the
//! agent (`src/permissions/`).

use crate::{RecordType, Scope};
use std::collections::{BTreeMap, BTreeSet};

/// The commands that call a cloud (or the cluster) with their own set of permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Command {
    /// `run` (and its preflight, and `reserve`, `dns seed`, `dns teardown`).
    Run,
    /// `teardown --all`.
    TeardownAll,
    /// `publish-lb-ips` (reserves; cluster-hosted DNS).
    PublishLbIps,
    /// `capabilities apply` (the cluster only).
    CapabilitiesApply,
    /// Day-2 `publish --scope External|Internal`: reserves and releases the public IPs,
    /// writes the public `api` record, applies or deletes the external Service.
    Publish,
}

impl Command {
    pub const ALL: [Command; 5] = [
        Command::Run,
        Command::TeardownAll,
        Command::PublishLbIps,
        Command::CapabilitiesApply,
        Command::Publish,
    ];

    /// The command as typed.
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::TeardownAll => "teardown-all",
            Command::PublishLbIps => "publish-lb-ips",
            Command::CapabilitiesApply => "capabilities-apply",
            Command::Publish => "publish",
        }
    }

    /// PURE: the command from its name (`run`, `teardown-all`, `publish-lb-ips`,
    /// `capabilities-apply`, `publish`).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

const RUN: &[Command] = &[Command::Run];
const RESERVING: &[Command] = &[Command::Run, Command::PublishLbIps];
/// Reserving public IPs: `publish --scope External` too.
const RESERVING_PUBLIC: &[Command] = &[Command::Run, Command::PublishLbIps, Command::Publish];
const OBSERVING: &[Command] = &[
    Command::Run,
    Command::TeardownAll,
    Command::PublishLbIps,
    Command::Publish,
];
const DNS: &[Command] = &[Command::Run, Command::TeardownAll, Command::Publish];
/// Releasing public IPs: `teardown --all`, and `publish --scope Internal`.
const TEARDOWN: &[Command] = &[Command::TeardownAll, Command::Publish];
const HAND_OVER: &[Command] = &[Command::Run, Command::TeardownAll];
/// The bootstrap host's second address: on in `run`, off in `run`'s stage 3 or `teardown --all`.
const SECOND_ADDRESS: &[Command] = &[Command::Run, Command::TeardownAll];
/// `teardown --all` alone (what only it releases: the private reservations).
const TEARDOWN_ALL: &[Command] = &[Command::TeardownAll];
/// `run`, and `publish --scope External` (which writes the public record set anew).
const RUN_AND_PUBLISH: &[Command] = &[Command::Run, Command::Publish];

mod aws;
mod azure;
mod gcp;
pub use aws::*;
pub use azure::*;
pub use gcp::*;

#[cfg(test)]
mod tests;
