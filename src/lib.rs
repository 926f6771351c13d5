//! bootstrap-agent: breaks the chicken-and-egg of cluster-owned API load balancers. It reserves
//! static IPs, seeds round-robin DNS with the bootstrap host and those IPs, applies the
//! LoadBalancer Services that claim them, waits until load balancers hold them, and removes the
//! bootstrap host again. See the README for the stages and the resume story.
//!
//! # The house, top floor first (no module imports one above it; no import circles)
//!
//! ```text
//! main -> exit (exit codes from the error chain)
//!      -> cli (argument types + one thin handler per command)
//!           -> daemon (`run` and `wait`: walks the machine; the gate step, the drain, signals)
//!           -> gather, status, pause (support bundle, what the journal says, hold/continue),
//!              manifests (PURE documents for the installer's `openshift/`: the LB controller via OLM)
//!           -> preflight (the checklist before `run` changes anything; reads and dry runs)
//!           -> dns_answers (the records api / api-int must hold now, what a zone or the
//!              resolver answers, the verdict, and the wait for the user's DNS)
//!           -> validate (every input of a command, all problems at once, before anything)
//!           -> context (one per command: spec, bootstrap IP, lock, journal, providers)
//!                -> runner (one stage: observe -> plan -> journal -> apply, under the step
//!                   deadline with retries; `cloud` and `kube` changes the same way)
//!                -> capabilities (ClusterVersion spec, manifest inclusion, deletes; + their CLI)
//!                -> bootstrap_ip (every rule about the bootstrap IP)
//!                -> journal (persisted steps and mutations; atomic writes, lock)
//!                -> machine (State, Machine: the order of `run`; each state's plan Step)
//!                -> cluster (kube client, server-side apply, the readiness gate)
//!                -> adopt (UPI: the user's reservations to look for, the verdict on them)
//!                -> plan (PURE: spec + observed (+ what the cluster should hold) -> changes),
//!                   render (templates -> Services and the IPs each claims), providers (one
//!                   match picks the cloud; `Providers::none()` for platform none / offline)
//!                -> assets (installer asset dir -> one validated ClusterSpec)
//!                -> options (option values' rules; clap parsers that record a bad value for
//!                   the one validation pass), error, output, notify (systemd's STATUS= line,
//!                   for whatever waits); crate bootstrap-cloud (neutral types, one provider
//!                   per cloud)
//! ```
//!
//! One word per idea: a **step** (`plan::Step`) is a unit of work that a plan covers, the
//! runner runs, the journal records (`steps`, keyed by `Step::name`) and `--step`/`--step-timeout`
//! name; a machine **state** (`machine::State`) is where `run` is: every state but Gate (it
//! waits) and Done runs its step (`State::step`), spelled alike; `teardown --all` is a step of
//! no state. "Stage 1/2/3" in the README are the three phases of the install, not a type.
//!
//! Where to add things: a cloud is a module in `cloud/src/<cloud>/` implementing
//! `AddressProvider` + `DnsProvider`, wired in `providers/`; a change (of the cloud or the
//! cluster) is a `plan::Change` planned in `plan/` and applied in `runner/cloud.rs` or
//! `runner/kube.rs`; a step of `run` is a `plan::Step` and a `machine::State` mapped to it; a command is a
//! variant in `cli` whose handler opens a `context::Context`; a readiness rule is in
//! `cluster::gate::evaluate` (pure, unit-tested).

pub mod adopt;
pub mod assets;
pub mod bootstrap_ip;
pub mod capabilities;
pub mod cli;
pub mod cluster;
pub mod cluster_hosted;
pub mod context;
pub mod daemon;
pub mod day2;
pub mod dns_answers;
pub mod error;
pub mod exit;
#[cfg(test)]
mod fixtures;
pub mod gather;
#[cfg(test)]
mod golden;
pub mod host_address;
pub mod journal;
pub mod machine;
pub mod manifests;
pub mod notify;
pub mod options;
pub mod output;
pub mod pause;
pub mod permissions;
pub mod plan;
pub mod preflight;
pub mod progress;
pub mod providers;
pub mod publish;
pub mod render;
pub mod runner;
pub mod status;
pub mod validate;
