//! What `run` leaves in the cluster for day 2, key `record.json` of ConfigMap
//! kube-system/bootstrap-agent (its own field manager, beside `run`'s signal and the scope
//! keys): which reservations are ours and which the user's (adopted), our record values, the
//! Services and the API's scope. No secret: ids, names and IPs the cloud shows anyway.
//!
//! `run` writes it at `complete`, `publish` again when a change is done. A day-2 command on an
//! admin's machine starts its journal from it ([`RunRecord::journal`]), and observation then
//! confirms it against the cloud's tags: what the cloud no longer shows is dropped, what it
//! shows with our tags is ours whatever the record says.

use crate::assets::Exposure;
use crate::error::InputError;
use crate::journal::{Condition, JournalState, RecordValues, ScopeChange};
use anyhow::{Context as _, Result};
use bootstrap_cloud::Reservation;
use serde::{Deserialize, Serialize};

/// The key of the record in ConfigMap kube-system/bootstrap-agent.
pub const KEY: &str = "record.json";
/// The field manager of [`KEY`]: neither `run`'s signal nor the scope keys' apply removes it.
pub const FIELD_MANAGER: &str = "bootstrap-agent-record";
const VERSION: u32 = 1;
const CONFIG_MAP: &str = "ConfigMap kube-system/bootstrap-agent";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub version: u32,
    pub infra_id: String,
    /// The API's scope now (the install-config's, or the last `publish --scope`).
    pub api_scope: Exposure,
    /// The journal's generation (idempotency tokens of released resources are not reused).
    pub generation: u32,
    /// Reservations the agent made and holds (its tags on them).
    pub reservations: Vec<Reservation>,
    /// Ours, released to their load balancer (AWS ENIs): the cloud no longer shows them as ours.
    #[serde(default)]
    pub handed_over: Vec<Reservation>,
    /// The user's (UPI): used, never released.
    #[serde(default)]
    pub adopted: Vec<Reservation>,
    /// Our values per zone and record.
    pub records: Vec<RecordValues>,
    /// The Services `run` applied.
    #[serde(default)]
    pub services: Vec<crate::render::ServiceClaim>,
}

impl RunRecord {
    /// The record of what `state` (a journal whose `run` is done) holds.
    pub fn of(state: &JournalState, infra_id: &str, api_scope: Exposure) -> Self {
        Self {
            version: VERSION,
            infra_id: infra_id.to_string(),
            api_scope,
            generation: state.generation,
            reservations: state.reservations.clone(),
            handed_over: state.handed_over.clone(),
            adopted: state.adopted.clone(),
            records: state.records.clone(),
            services: state.services.clone(),
        }
    }

    /// The journal a day-2 command starts from: `run` done, the bootstrap host gone, the scope
    /// as recorded (a scope other than the install-config's `installed` is a change done).
    pub fn journal(&self, installed: Exposure) -> JournalState {
        let scope_change = (self.api_scope != installed).then(|| ScopeChange {
            from: installed,
            to: self.api_scope,
            phase: "done".into(),
            drain_until: None,
            condition: Condition {
                type_: "Progressing".into(),
                status: "False".into(),
                reason: "AsExpected".into(),
                message: format!("The API is published {}", self.api_scope),
                last_transition_time: crate::journal::now(),
            },
        });
        JournalState {
            infra_id: Some(self.infra_id.clone()),
            generation: self.generation,
            bootstrap_removed: true,
            reservations: self.reservations.clone(),
            handed_over: self.handed_over.clone(),
            adopted: self.adopted.clone(),
            records: self.records.clone(),
            services: self.services.clone(),
            run_step: Some(crate::machine::State::Done),
            scope_change,
            ..JournalState::default()
        }
    }

    /// PURE: the record parsed from the ConfigMap's data, checked against the cluster's infra id.
    pub fn parse(
        data: Option<&std::collections::BTreeMap<String, String>>,
        infra_id: &str,
    ) -> Result<Self, InputError> {
        let not_ours = |problem: String| InputError::new(CONFIG_MAP, KEY, problem);
        let Some(text) = data.and_then(|d| d.get(KEY)) else {
            return Err(not_ours(format!(
                "missing: bootstrap-agent did not complete an install of this cluster (its `run` writes {KEY} at complete); with the bootstrap host's asset dir and journal, pass --assets and --state-dir"
            )));
        };
        let record: Self = serde_json::from_str(text)
            .map_err(|e| not_ours(format!("not a record this agent can read: {e}")))?;
        if record.version != VERSION {
            return Err(not_ours(format!(
                "version {}; this agent reads version {VERSION}",
                record.version
            )));
        }
        if record.infra_id != infra_id {
            return Err(not_ours(format!(
                "names cluster {}, but Infrastructure cluster says {infra_id}; expected the same",
                record.infra_id
            )));
        }
        Ok(record)
    }
}

/// Reads the record from ConfigMap kube-system/bootstrap-agent. Absent: the cluster was not
/// installed by bootstrap-agent (or before it left a record), an input error.
pub async fn read(client: &kube::Client, infra_id: &str) -> Result<RunRecord> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-system");
    let cm = api
        .get_opt("bootstrap-agent")
        .await
        .map_err(|e| super::refused(e, CONFIG_MAP))?;
    let Some(cm) = cm else {
        return Err(InputError::new(
            CONFIG_MAP,
            "(object)",
            "not found: this cluster was not installed by bootstrap-agent (its `run` makes this ConfigMap)",
        )
        .into());
    };
    Ok(RunRecord::parse(cm.data.as_ref(), infra_id)?)
}

/// Writes `record` (skipped when the ConfigMap already holds it).
pub async fn write(client: &kube::Client, record: &RunRecord) -> Result<()> {
    let text = serde_json::to_string_pretty(record).context("cannot encode the record")?;
    let data = std::collections::BTreeMap::from([(KEY.to_string(), text)]);
    crate::cluster::apply_signal_keys(client, FIELD_MANAGER, data, &[KEY])
        .await
        .with_context(|| format!("cannot write {KEY} to {CONFIG_MAP}"))
}

/// Drops from `state` the reservations of ours the cloud does not show (`observed`, found by
/// our tags): released since the record was written. What the cloud shows with our tags is
/// found by observation anyway. Returns what was dropped, `key id ip` each.
pub fn confirm(state: &mut JournalState, observed: &[Reservation]) -> Vec<String> {
    let mut dropped = Vec::new();
    state.reservations.retain(|r| {
        let shown = observed.iter().any(|o| o.id == r.id);
        if !shown {
            dropped.push(format!("{} {} {}", r.key, r.id, r.ip));
        }
        shown
    });
    dropped
}

#[cfg(test)]
mod tests;
