//! The node side's design under `--openshift-nodes true` ([`super::openshift`]): the
//! hypothesis a real cloud settles (GCE's hairpin) and the designs the simulation evaluates
//! beside the agent's own flags.

use crate::nodes::Hairpin;
use std::time::Duration;

/// What the watcher's `--health-check-url` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatcherHost {
    /// `{{.Infra.Status.APIServerInternalURL}}`: api-int, as MCO renders it.
    ApiInt,
    /// The reserved private VIP as an IP literal (a MachineConfig overriding the static pod).
    /// Modelled as the watcher starting once that VIP first serves: its flag files matter
    /// only from then on (no client dials the VIP before it is in api-int).
    Vip,
}

/// Once the bootstrap addresses left api-int, and the masters' resolvers' caches (one TTL):
/// restart each master's apiserver-watcher (its container stopped, SIGTERM), and with
/// `RestartClean` also remove the flag files of the addresses it is no longer given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatcherRestart {
    Off,
    Restart,
    RestartClean,
}

impl WatcherHost {
    pub fn as_str(self) -> &'static str {
        match self {
            WatcherHost::ApiInt => "api-int",
            WatcherHost::Vip => "vip",
        }
    }
}

impl WatcherRestart {
    pub fn as_str(self) -> &'static str {
        match self {
            WatcherRestart::Off => "off",
            WatcherRestart::Restart => "restart",
            WatcherRestart::RestartClean => "restart-clean",
        }
    }
}

/// The node side's design and the hypothesis a real cloud settles.
#[derive(Clone, Debug)]
pub struct NodeDesign {
    pub hairpin: Hairpin,
    /// The nodes resolve api-int without the bootstrap IP while it also holds the bootstrap
    /// host's second address: the agent's own records on Azure (a no-op there); on GCP, where
    /// the agent seeds both, evaluated on the node clients only (the DNS clients' figures are
    /// the same: both addresses answer on the bootstrap host).
    pub second_address_alone: bool,
    pub watcher_host: WatcherHost,
    pub restart: WatcherRestart,
    /// When a restart happens after the bootstrap addresses left api-int (`run` sets the
    /// DNS TTL).
    pub restart_after: Duration,
}

impl Default for NodeDesign {
    fn default() -> Self {
        NodeDesign {
            hairpin: Hairpin::Returns,
            second_address_alone: false,
            watcher_host: WatcherHost::ApiInt,
            restart: WatcherRestart::Off,
            restart_after: Duration::from_secs(30),
        }
    }
}
