//! The flags of `publish`.

use crate::assets::Exposure;
use crate::cluster;
use crate::context::Common;
use crate::daemon::{DrainWait, KubeArgs};
use crate::options;
use clap::Args;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct PublishArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub kube: KubeArgs,
    /// The API's scope: External (a public load balancer and the public `api` record) or
    /// Internal (the internal load balancer and the private records only).
    #[arg(long, env = "BOOTSTRAP_AGENT_PUBLISH_SCOPE",
          value_parser = options::one_of(Exposure::External))]
    pub scope: Exposure,
    /// Going Internal: delete our external Service once the public record is gone and
    /// drained, instead of waiting for an admin to delete it (the enhancement's
    /// auto-delete-load-balancer annotation).
    #[arg(long, env = "BOOTSTRAP_AGENT_AUTO_DELETE", value_parser = options::switch())]
    pub auto_delete: bool,
    /// Print every change the scope change would make, then stop (observes the cloud).
    #[arg(long)]
    pub dry_run: bool,
    /// Deadline of the gate (External), and of the wait for an admin to delete the external
    /// Service (Internal, without --auto-delete); past it, exit 4 and a re-run resumes.
    #[arg(long, env = "BOOTSTRAP_AGENT_GATE_TIMEOUT", default_value = "30m", allow_hyphen_values = true,
          value_parser = options::checked(options::deadline, Duration::ZERO))]
    pub gate_timeout: Duration,
    /// Going Internal: after the public `api` values left DNS, wait this long before their
    /// load balancer may go, so cached answers expire while it still serves: `ttl` (the TTL
    /// the record carried) or a duration (0s: none).
    #[arg(long, env = "BOOTSTRAP_AGENT_DRAIN_WAIT", default_value = "ttl", allow_hyphen_values = true,
          value_parser = options::checked(DrainWait::parse, DrainWait::RecordTtl))]
    pub drain_wait: DrainWait,
    #[command(flatten)]
    pub wire: cluster::wire::WireArgs,
}
