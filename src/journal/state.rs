//! What the journal holds: the state `run` and the stage commands persist between runs.

use super::FORMAT_VERSION;
use crate::plan::Change;
use bootstrap_cloud::Reservation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::IpAddr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepState {
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    pub state: StepState,
    pub attempt: u32,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Mutating calls this step made in its last attempt.
    #[serde(default)]
    pub mutations: u32,
    /// Transient failures the step retried in its last attempt, by cause (`throttled`,
    /// `server-or-network`, `conflict`). Retries inside one cloud call (the SDKs' own) are
    /// not counted here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retries: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MutationState {
    /// Written before the call. Still here on the next start = the process died mid-call.
    Intent,
    Done,
    Failed,
    /// Found as an intent from a dead process; the next run re-observed the cloud instead.
    Interrupted,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mutation {
    pub seq: u64,
    pub step: String,
    pub change: Change,
    pub state: MutationState,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Values we wrote into a record set, as of our last write.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordValues {
    pub zone: String,
    pub record: String,
    pub values: Vec<IpAddr>,
}

impl RecordValues {
    /// The records of user-managed DNS with the IPs that exist in `observed`.
    pub fn of_user_dns(dns: &crate::plan::UserDns, observed: &crate::plan::Observed) -> Vec<Self> {
        Self::of_records(&dns.records, observed)
    }

    /// Record sets with the IPs that exist in `observed` (a value not reserved yet is left out).
    pub fn of_records(
        records: &[crate::plan::UserRecord],
        observed: &crate::plan::Observed,
    ) -> Vec<Self> {
        records
            .iter()
            .map(|r| RecordValues {
                zone: r.zone.to_string(),
                record: r.record.to_string(),
                values: r
                    .values
                    .iter()
                    .filter_map(|v| observed.resolve(v))
                    .collect(),
            })
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalState {
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infra_id: Option<String>,
    /// Bumped by `teardown --all` so idempotency tokens of released resources are not reused.
    pub generation: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_ip: Option<IpAddr>,
    /// Step 3 removed the bootstrap IP from DNS; `dns seed` will not add it back.
    #[serde(default)]
    pub bootstrap_removed: bool,
    /// The bootstrap host's second address (GCP, Azure) as seeded with the bootstrap IP: it
    /// leaves DNS with it in stage 3, and once released the reservations no longer know it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_second_address: Option<IpAddr>,
    #[serde(default)]
    pub steps: BTreeMap<String, StepRecord>,
    #[serde(default)]
    pub reservations: Vec<Reservation>,
    /// Reservations whose placeholder was released so the load balancer can claim the IP.
    /// Observation cannot find them any more; this is the only record of their IPs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handed_over: Vec<Reservation>,
    /// Reservations the user made that the agent uses (UPI): never released. Kept here too,
    /// so a resume or `teardown --all` knows them even once the cloud no longer shows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<Reservation>,
    #[serde(default)]
    pub records: Vec<RecordValues>,
    /// User-managed DNS: the records the user must create, as of the last `dns seed` (the
    /// agent wrote none of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_dns: Vec<RecordValues>,
    /// Where `run` is in its state machine (see machine::State).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_step: Option<crate::machine::State>,
    /// The Services `run` applied, which the gate waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<crate::render::ServiceClaim>,
    /// `namespace/name` of each Service being replaced (deleted, its load balancer waited
    /// out, applied anew): set before the deletion, cleared once applied, so a resume finishes
    /// a replacement whose Service is already gone.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub replacing: std::collections::BTreeSet<String>,
    /// The readiness gate's last report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<crate::cluster::gate::GateReport>,
    /// Progressive DNS (`run`'s default): the reserved IPs whose load balancer serves them, the
    /// only ones DNS may hold. None: all at once (the stage commands, `--dns-seeding
    /// all-at-once`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<std::collections::BTreeSet<IpAddr>>,
    /// When the drain after removing the bootstrap IP ends (RFC 3339): set once, so a restart
    /// during the drain waits only for what is left of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_until: Option<String>,
    /// What the proof on the wire says now (`run`, before the bootstrap IP may leave DNS):
    /// why the bootstrap IP stays, that every kept IP passed, or that the proof is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire_proof: Option<String>,
    /// `publish --scope`: the change of the API's scope under way, or the last one made. Its
    /// `to` is the scope every command plans for from then on (not the install-config's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_change: Option<ScopeChange>,
    #[serde(default)]
    pub mutations: Vec<Mutation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// A change of the API's publishing scope (`publish --scope`), after the ingress
/// mutable-publishing-scope enhancement: its state is the condition `Progressing`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ScopeChange {
    pub from: crate::assets::Exposure,
    pub to: crate::assets::Exposure,
    /// Where the change is (`withdraw`, `drain`, `awaiting-deletion`, `unpublish`, `reserve`,
    /// `apply-services`, `gate`, `done`).
    pub phase: String,
    /// Going private: when the drain after the public record's removal ends (RFC 3339), set
    /// once, so a restart waits only for the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_until: Option<String>,
    /// The condition as `status` and the ConfigMap kube-system/bootstrap-agent show it.
    pub condition: Condition,
}

/// A status condition, as Kubernetes spells one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub last_transition_time: String,
}

impl JournalState {
    /// After `teardown --all` released everything ours: the next install on this state dir
    /// starts afresh. Forgotten: what DNS and the hand-over recorded, the Services, the gate,
    /// the IPs that served (left, they would keep the next install's new IPs out of `dns
    /// seed`), where `run` was, and the mutations before this teardown (the journal stays
    /// bounded over installs). Kept: the cluster, the generation (bumped before the first
    /// release), the user's adopted reservations, the step records, this teardown's mutations.
    pub fn forget_install(&mut self, teardown_step: &str) {
        self.records.clear();
        self.user_dns.clear();
        self.handed_over.clear();
        self.bootstrap_removed = false;
        self.bootstrap_second_address = None;
        self.serving = None;
        self.services.clear();
        self.replacing.clear();
        self.gate = None;
        self.drain_until = None;
        self.wire_proof = None;
        self.run_step = None;
        let teardown_from = self
            .mutations
            .iter()
            .rposition(|m| m.step != teardown_step)
            .map_or(0, |last_other| last_other + 1);
        self.mutations.drain(..teardown_from);
    }

    /// Reads step records kept under a legacy step name (`dns-seed`, `dns-teardown`) under
    /// today's name; a record under today's name wins over a legacy one.
    pub(crate) fn rename_legacy_steps(&mut self) {
        let canonical = |name: &str| {
            crate::plan::Step::parse(name)
                .map_or_else(|| name.to_string(), |s| s.name().to_string())
        };
        let (current, legacy): (BTreeMap<_, _>, BTreeMap<_, _>) = std::mem::take(&mut self.steps)
            .into_iter()
            .partition(|(name, _)| canonical(name) == *name);
        self.steps = current;
        for (name, record) in legacy {
            self.steps.entry(canonical(&name)).or_insert(record);
        }
        for mutation in &mut self.mutations {
            mutation.step = canonical(&mutation.step);
        }
    }
}

impl Default for JournalState {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            infra_id: None,
            generation: 1,
            bootstrap_ip: None,
            bootstrap_removed: false,
            bootstrap_second_address: None,
            steps: BTreeMap::new(),
            reservations: Vec::new(),
            handed_over: Vec::new(),
            adopted: Vec::new(),
            records: Vec::new(),
            user_dns: Vec::new(),
            run_step: None,
            services: Vec::new(),
            replacing: Default::default(),
            gate: None,
            serving: None,
            drain_until: None,
            wire_proof: None,
            scope_change: None,
            mutations: Vec::new(),
            last_error: None,
        }
    }
}
