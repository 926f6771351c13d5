//! The cloud's steps: reserve, seed DNS, hand over, remove the bootstrap IP, tear down.
//!
//! `teardown --all` with the cluster at hand first deletes our Services (their load
//! balancers hold the reserved addresses, and no cloud releases an address in use), then
//! removes our DNS values, then releases each reservation once the cloud lets go of it
//! ([`wait_until_let_go`]).

use super::observe::{Observation, observe_for};
use super::{Runner, StepReport};
use crate::journal::RecordValues;
use crate::plan::{Change, DoomedService, KubeWants, Observed, Plan, Step, Value};
use crate::providers::Providers;
use anyhow::{Context, Result, bail};
use bootstrap_cloud::poll::Poll;
use bootstrap_cloud::{
    CloudError, DnsEdit, RecordKey, Reservation, Zone, ZoneEdit, ZoneRef, edit_zone,
};
use std::collections::BTreeMap;
use std::net::IpAddr;

impl Runner<'_> {
    pub(super) async fn execute_cloud(&mut self, step: Step) -> Result<StepReport> {
        // Every record and AWS reservation depends on the subnets: planning without them
        // would plan nothing, and call it done.
        if self.spec.pending_subnets().is_some() {
            bail!("the AWS subnets were not settled before planning (providers::for_spec does it)");
        }
        let Observation {
            mut observed,
            zones,
        } = observe_for(self.spec, self.providers, &self.journal.state, step).await?;
        if step == Step::Reserve {
            crate::adopt::require_complete(self.spec, &observed)?;
        }
        if step == Step::SeedDns {
            second_address_up(self.spec, &observed)?;
        }
        let spec = crate::bootstrap_ip::for_stage(self.spec, step, &self.journal.state, &observed)?;
        let kube = match (step, self.kube) {
            (Step::TeardownAll, Some(kube)) => {
                super::kube::teardown_wants(kube, self.spec, &observed).await?
            }
            (Step::Unpublish, Some(kube)) => {
                super::kube::unpublish_wants(kube, self.spec, &observed).await?
            }
            (Step::Unpublish, None) => super::kube::unwanted_services(self.spec, &observed, None)?,
            _ => KubeWants::default(),
        };
        let plan = Plan::calculate_with(
            &spec,
            &observed,
            &kube,
            &[step],
            self.journal.state.generation,
        );
        self.journal.state.reservations = observed.reservations.clone();
        self.journal.state.adopted = observed.adopted.clone();
        if step == Step::TeardownAll && !plan.is_empty() {
            // New generation before the first release: a crash mid-teardown must not leave
            // the old idempotency tokens in use (EC2/GCP could replay released resources).
            self.journal.state.generation += 1;
            self.journal.state.run_step = None;
        }
        if step == Step::Unpublish
            && plan
                .changes
                .iter()
                .any(|c| matches!(c, Change::ReleaseAddress { .. }))
        {
            // Likewise: reserving the public IPs again later (`publish --scope External`)
            // must not replay the tokens of the ones released now.
            self.journal.state.generation += 1;
        }
        self.journal.save()?;
        tracing::info!(step = step.name(), changes = plan.changes.len(), "planned");
        let mut mutations = 0;
        // Each zone's record changes go in one write, the zones' writes at once.
        let batched = crate::plan::batched(&plan.changes);
        let mut rest = batched.as_slice();
        while let Some(change) = rest.first() {
            let zones_at_once = rest
                .iter()
                .take_while(|c| matches!(c, Change::EditZone { .. }))
                .count();
            if zones_at_once > 0 {
                let (phase, after) = rest.split_at(zones_at_once);
                self.apply_zones(step, self.providers, &zones, &observed, phase)
                    .await?;
                mutations += u32::try_from(phase.len()).unwrap_or(u32::MAX);
                rest = after;
            } else {
                rest = &rest[1..];
                match change {
                    Change::DeleteService { service } => {
                        mutations += u32::from(self.delete_service(step, service).await?);
                        continue;
                    }
                    // The cloud refuses to release what a load balancer still uses.
                    Change::ReleaseAddress { reservation, .. }
                        if matches!(step, Step::TeardownAll | Step::Unpublish) =>
                    {
                        wait_until_let_go(step, self.providers, reservation).await?;
                    }
                    _ => {}
                }
                self.apply(step, self.providers, &mut observed, change)
                    .await?;
                mutations += 1;
            }
        }
        match step {
            Step::SeedDns if !self.journal.state.bootstrap_removed => {
                crate::bootstrap_ip::record_seeded(&mut self.journal.state, &spec);
                if let Some(user) = &plan.user_dns {
                    self.journal.state.user_dns = RecordValues::of_user_dns(user, &observed);
                }
            }
            Step::RemoveBootstrap => self.journal.state.bootstrap_removed = true,
            // Everything of ours is gone: the next install starts afresh.
            Step::TeardownAll => self.journal.state.forget_install(step.name()),
            _ => {}
        }
        self.journal.state.reservations = observed.reservations.clone();
        self.journal.save()?;
        Ok(StepReport {
            step: step.name(),
            plan,
            mutations,
            after: observed,
        })
    }

    async fn apply(
        &mut self,
        step: Step,
        providers: &Providers,
        observed: &mut Observed,
        change: &Change,
    ) -> Result<()> {
        let seq = self.journal.intent(step.name(), change)?;
        let result = match change {
            Change::ReserveAddress { request } => {
                providers.addresses.reserve(request).await.map(|r| {
                    tracing::info!(key = %r.key, id = %r.id, ip = %r.ip, "reserved");
                    observed.reservations.push(r.clone());
                    serde_json::json!({ "id": r.id, "ip": r.ip })
                })
            }
            Change::ReleaseAddress { reservation, .. } => {
                providers.addresses.release(reservation).await.map(|()| {
                    tracing::info!(key = %reservation.key, id = %reservation.id, "released");
                    observed.reservations.retain(|r| r.id != reservation.id);
                    serde_json::json!({ "released": reservation.id })
                })
            }
            Change::HandOverAddress { reservation } => {
                // Remember the IP before the placeholder goes: afterwards only the journal knows it.
                if !self
                    .journal
                    .state
                    .handed_over
                    .iter()
                    .any(|r| r.key == reservation.key)
                {
                    self.journal.state.handed_over.push(reservation.clone());
                    self.journal.save()?;
                }
                providers.addresses.release(reservation).await.map(|()| {
                    tracing::info!(key = %reservation.key, id = %reservation.id, ip = %reservation.ip, "handed over");
                    observed.reservations.retain(|r| r.id != reservation.id);
                    serde_json::json!({ "released": reservation.id, "ip": reservation.ip })
                })
            }
            Change::AddRecordValues { .. }
            | Change::RemoveRecordValues { .. }
            | Change::EditZone { .. } => Err(CloudError::fatal(
                "plan",
                "a record change outside a zone's batch (plan::batched makes them)",
            )),
            Change::SetCapabilities { .. }
            | Change::ApplyService { .. }
            | Change::DeleteService { .. }
            | Change::ReplaceService { .. } => Err(CloudError::fatal(
                "plan",
                "a change of the cluster was planned in a cloud step",
            )),
        };
        match result {
            Ok(value) => self.journal.outcome(seq, Ok(value)),
            Err(e) => {
                self.journal.outcome(seq, Err(e.to_string()))?;
                Err(e.into())
            }
        }
    }

    /// Deletes one of our Services, journaled before and after; whether it deleted.
    async fn delete_service(&mut self, step: Step, service: &DoomedService) -> Result<bool> {
        let kube = self
            .kube
            .context("deleting a Service needs the cluster (--kubeconfig)")?;
        let seq = self.journal.intent(
            step.name(),
            &Change::DeleteService {
                service: service.clone(),
            },
        )?;
        match super::services::delete_service(kube, service).await {
            Ok((deleted, value)) => {
                self.journal.outcome(seq, Ok(value))?;
                Ok(deleted)
            }
            Err(e) => {
                self.journal
                    .outcome(seq, Err(crate::error::render_chain(&e)))?;
                Err(e)
            }
        }
    }

    /// One phase's zone batches: each journaled (intent) first, then written at once, one
    /// write per zone, then each outcome journaled. A zone that failed fails the step (the
    /// step's retry re-observes: the zones that were written find nothing left to do). A value
    /// that names no address yet (`dns seed` before `reserve`) fails it before any zone is
    /// written: no record holds half of what it should.
    async fn apply_zones(
        &mut self,
        step: Step,
        providers: &Providers,
        zones: &BTreeMap<ZoneRef, Zone>,
        observed: &Observed,
        batches: &[Change],
    ) -> Result<()> {
        let mut resolved = Vec::new();
        for batch in batches {
            let Change::EditZone { zone, records } = batch else {
                bail!("a change that is not a zone's batch among them");
            };
            resolved.push((batch, zone, zone_edit(observed, records)?));
        }
        let mut jobs = Vec::new();
        for (batch, zone, edits) in resolved {
            let seq = self.journal.intent(step.name(), batch)?;
            jobs.push((seq, zone, edits));
        }
        let dns = providers.dns.as_ref();
        let writes = jobs.iter().map(|(_, zone_ref, edits)| async move {
            let zone = zones
                .get(*zone_ref)
                .ok_or_else(|| CloudError::fatal("dns", format!("{zone_ref} was not observed")))?;
            // The step's observation is the first attempt's read.
            let known: BTreeMap<_, _> = observed
                .records
                .iter()
                .filter(|r| &r.zone == *zone_ref && edits.contains_key(&r.key))
                .map(|r| (r.key.clone(), r.current.clone()))
                .collect();
            edit_zone(dns, zone, edits, &known).await
        });
        let results = futures::future::join_all(writes).await;
        let mut failed: Option<CloudError> = None;
        for ((seq, zone_ref, edits), result) in jobs.iter().zip(results) {
            match result {
                Ok(written) => {
                    tracing::info!(zone = %zone_ref, records = edits.len(), written = written.len(), "zone's record sets edited");
                    for (record, edit) in edits {
                        self.remember(zone_ref, record, edit);
                    }
                    let written: BTreeMap<String, _> = written
                        .into_iter()
                        .map(|(key, values)| (key.to_string(), values))
                        .collect();
                    self.journal
                        .outcome(*seq, Ok(serde_json::json!({ "values": written })))?;
                }
                Err(e) => {
                    self.journal.outcome(*seq, Err(e.to_string()))?;
                    // The one to report: one retrying would not help, before a transient one.
                    if failed
                        .as_ref()
                        .is_none_or(|f| f.is_transient() && !e.is_transient())
                    {
                        failed = Some(e);
                    }
                }
            }
        }
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Remembers our values in one record set for `status`.
    fn remember(&mut self, zone_ref: &ZoneRef, record: &RecordKey, edit: &DnsEdit) {
        let (zone_name, record_name) = (zone_ref.to_string(), record.to_string());
        let entry = self
            .journal
            .state
            .records
            .iter()
            .position(|r| r.zone == zone_name && r.record == record_name);
        let mut ours: Vec<IpAddr> = entry
            .map(|i| self.journal.state.records[i].values.clone())
            .unwrap_or_default();
        ours.extend(edit.add.iter().copied());
        ours.retain(|ip| !edit.remove.contains(ip));
        ours.sort();
        ours.dedup();
        let values = RecordValues {
            zone: zone_name,
            record: record_name,
            values: ours,
        };
        match entry {
            Some(i) => self.journal.state.records[i] = values,
            None => self.journal.state.records.push(values),
        }
    }
}

/// Waits until nothing the cloud refuses a release for uses `reservation` (its load balancer
/// is gone), looking again after a growing delay (`poll`), saying on STATUS= what it waits
/// for. Past the operation budget: a transient error, so the step's retries look again, all
/// under the step deadline.
async fn wait_until_let_go(
    step: Step,
    providers: &Providers,
    reservation: &Reservation,
) -> Result<(), CloudError> {
    let operation = format!("wait for the cloud to let go of {}", reservation.ip);
    let mut poll = Poll::change(&operation, std::time::Duration::from_millis(250));
    while let Some(user) = providers.addresses.in_use_by(reservation).await? {
        let line = format!(
            "{}: waiting for the cloud to let go of {} {} ({}): {user}",
            step.name(),
            reservation.key,
            reservation.ip,
            reservation.id
        );
        crate::notify::status(&line);
        tracing::info!("{line}");
        poll.wait(None).await.map_err(|e| {
            CloudError::new(
                e.kind,
                &operation,
                format!(
                    "{} ({}) is still {user}; its load balancer must go first (`teardown --all --kubeconfig` deletes our Services)",
                    reservation.ip, reservation.id
                ),
            )
        })?;
    }
    Ok(())
}

/// The edits of one zone's batch, its values resolved; a record changed twice in it (added
/// to and removed from) gets both in one edit.
fn zone_edit(observed: &Observed, records: &[Change]) -> Result<ZoneEdit, CloudError> {
    let mut edits = ZoneEdit::new();
    for change in records {
        match change {
            Change::AddRecordValues {
                record,
                values,
                ttl,
                ..
            } => {
                let edit = edits.entry(record.clone()).or_default();
                edit.add.extend(resolve(observed, values)?);
                edit.ttl = *ttl;
            }
            Change::RemoveRecordValues { record, values, .. } => {
                let edit = edits.entry(record.clone()).or_default();
                edit.remove.extend(resolve(observed, values)?);
            }
            other => {
                return Err(CloudError::fatal(
                    "plan",
                    format!("not a record change in a zone's batch: {other:?}"),
                ));
            }
        }
    }
    Ok(edits)
}

fn resolve(observed: &Observed, values: &[Value]) -> Result<Vec<IpAddr>, CloudError> {
    values
        .iter()
        .map(|v| {
            observed.resolve(v).ok_or_else(|| {
                CloudError::fatal(
                    "dns",
                    format!("{v} does not exist yet; run `bootstrap-agent reserve` first"),
                )
            })
        })
        .collect()
}

/// Before DNS points at it, the bootstrap host's second address must be this host's
/// (`--bootstrap-second-address host`; with `cloud` the host's own agent brings it up).
fn second_address_up(spec: &crate::assets::ClusterSpec, observed: &Observed) -> Result<()> {
    let (crate::assets::SecondAddress::Host, Some(bootstrap)) =
        (spec.second_bootstrap_address, spec.bootstrap_ip)
    else {
        return Ok(());
    };
    for second in observed
        .reservations
        .iter()
        .filter(|r| r.key.scope == bootstrap_cloud::Scope::Bootstrap)
    {
        crate::host_address::ensure_local(second.ip, bootstrap)
            .with_context(|| format!("the bootstrap host's second address {}", second.ip))?;
    }
    Ok(())
}
