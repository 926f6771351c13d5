//! bootstrap-agent: breaks the chicken-and-egg of cluster-owned API load balancers. It reserves
//! static IPs, seeds round-robin DNS with the bootstrap host and those IPs, applies the
//! LoadBalancer Services that claim them, waits until load balancers hold them, and removes the
//! bootstrap host again. See the README for the stages and the resume story.
//!
//! # The house, top floor first (no module imports one above it; no import circles)
//!
//! ```text
//! main -> exit (exit codes from the error chain)
//!      -> cli (arguments + thin handlers per command)
//!           -> daemon (`run`: walks the machine, one arm per Step)
//!           -> preflight (the checklist before `run` changes anything; reads and dry runs)
//!                -> validate (every input of a command, all problems at once, before anything)
//!                -> runner (one cloud stage: observe -> plan -> journal -> apply)
//!                -> capabilities (ClusterVersion spec, manifest inclusion, deletes; + their CLI)
//!                -> status (what the journal says)
//!                -> journal (persisted steps and mutations; atomic writes, lock)
//!                -> machine (Step, Machine: the order of `run`)
//!                -> cluster (kube client, server-side apply, the readiness gate)
//!                -> adopt (UPI: the user's reservations to look for, the verdict on them)
//!                -> plan (PURE: spec + observed -> changes), render (templates -> Services
//!                   and the IPs each claims), providers (one match picks the cloud)
//!                -> assets (installer asset dir -> one validated ClusterSpec)
//!                -> error, output; crate bootstrap-cloud (neutral types, one provider per cloud)
//! ```
//!
//! Where to add things: a cloud is a module in `cloud/src/<cloud>/` implementing
//! `AddressProvider` + `DnsProvider`, wired in `providers/`; a cloud change is a `plan::Change`
//! planned in `plan/` and applied in `runner`; a step of `run` is a `machine::Step` with its arm
//! in `daemon::run`; a readiness rule is in `cluster::gate::evaluate` (pure, unit-tested).

pub mod adopt;
pub mod assets;
pub mod bootstrap_ip;
pub mod capabilities;
pub mod cli;
pub mod cluster;
pub mod context;
pub mod daemon;
pub mod error;
pub mod exit;
pub mod gather;
pub mod journal;
pub mod machine;
pub mod output;
pub mod pause;
pub mod plan;
pub mod preflight;
pub mod providers;
pub mod render;
pub mod runner;
pub mod status;
pub mod validate;
