//! The runner: observe -> plan -> journal -> apply, one stage at a time. Every stage starts by
//! observing the cloud, so a re-run after success plans nothing (zero mutating calls) and a
//! resume after a crash does only what is missing. Each mutation is journaled before and after.

use crate::assets::ClusterSpec;
use crate::journal::{Journal, JournalState, RecordValues};
use crate::plan::{Change, Observed, ObservedRecord, Plan, Stage, Value, records_of_interest};
use crate::providers::Providers;
use anyhow::{Result, anyhow, bail};
use backon::{BackoffBuilder, ExponentialBuilder};
use bootstrap_cloud::{CloudError, DnsEdit, Zone, ZoneRef, edit_record_values};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

pub struct Runner<'a> {
    pub spec: &'a ClusterSpec,
    pub journal: &'a mut Journal,
    pub providers: &'a Providers,
    /// Outer deadline per stage; retries of transient errors happen inside it.
    pub stage_timeout: Duration,
}

/// What a stage did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StageReport {
    pub stage: &'static str,
    pub plan: Plan,
    pub mutations: u32,
    /// The cloud after the stage, to show what symbolic values resolved to.
    #[serde(skip)]
    pub after: Observed,
}

/// The cloud as observed, plus the provider zones found on the way.
pub struct Observation {
    pub observed: Observed,
    zones: BTreeMap<ZoneRef, Zone>,
}

/// Reads the cloud (owned reservations, subnet placements, the record sets we care about) and
/// adds what only the journal knows: the IPs already handed over to their load balancers and
/// (progressive DNS) which reserved IPs their load balancers serve. The one place the two meet.
pub async fn observe(
    spec: &ClusterSpec,
    providers: &Providers,
    recorded: &JournalState,
) -> Result<Observation> {
    let p = providers;
    let reservations = p.addresses.observe().await?;
    let found = p
        .addresses
        .find_user_made(&crate::adopt::queries(spec, &recorded.adopted))
        .await?;
    let adopted = crate::adopt::settle(spec, found)?;
    let placements = p.addresses.placements(&subnets(spec)).await?;
    let mut zones = BTreeMap::new();
    let mut records = Vec::new();
    for (zone_ref, key) in records_of_interest(spec) {
        if !zones.contains_key(&zone_ref) {
            let zone = p.dns.find_zone(&zone_ref).await?;
            zones.insert(zone_ref.clone(), zone);
        }
        let current = p.dns.read(&zones[&zone_ref], &key).await?;
        records.push(ObservedRecord {
            zone: zone_ref,
            key,
            current,
        });
    }
    let mut observed = Observed {
        reservations,
        records,
        placements,
        handed_over: recorded.handed_over.clone(),
        adopted,
        serving: recorded.serving.clone(),
    };
    crate::adopt::remember(&mut observed, &recorded.adopted);
    Ok(Observation { observed, zones })
}

fn subnets(spec: &ClusterSpec) -> Vec<String> {
    match &spec.platform {
        crate::assets::Platform::Aws(aws) => {
            let ids: std::collections::BTreeSet<&String> =
                aws.public_subnets().chain(aws.private_subnets()).collect();
            ids.into_iter().cloned().collect()
        }
        _ => Vec::new(),
    }
}

impl Runner<'_> {
    /// Runs one stage under its deadline, journaling the step, retrying transient failures
    /// (each retry re-observes, so it is safe).
    pub async fn run(&mut self, stage: Stage) -> Result<StageReport> {
        self.journal.begin_step(stage.name())?;
        let deadline = self.stage_timeout;
        let outcome = tokio::time::timeout(deadline, self.run_with_retries(stage))
            .await
            .unwrap_or_else(|_| {
                Err(anyhow!(
                    "stage {} did not finish within {}",
                    stage.name(),
                    humantime::format_duration(deadline)
                ))
            });
        let recorded = outcome
            .as_ref()
            .map(|_| ())
            .map_err(crate::error::render_chain);
        self.journal.finish_step(stage.name(), recorded)?;
        outcome
    }

    async fn run_with_retries(&mut self, stage: Stage) -> Result<StageReport> {
        let mut delays = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(500))
            .with_max_delay(Duration::from_secs(30))
            .with_jitter()
            .with_max_times(5)
            .build();
        // The first pass that changed something; its plan is what the stage did.
        let mut done: Option<StageReport> = None;
        let mut changing_passes = 0;
        loop {
            match self.execute(stage).await {
                Ok(report) if stage == Stage::Reserve && report.mutations > 0 => {
                    // Verify, whichever command reserved: a lost AllocateAddress answer retried
                    // (the call has no idempotency token) may have left a duplicate; the next
                    // look plans its release, and nothing else. It is retried like any pass,
                    // so a transient error while verifying never leaves a duplicate behind.
                    match &mut done {
                        Some(first) => {
                            first.mutations += report.mutations;
                            changing_passes += 1;
                            if changing_passes > MAX_VERIFY_PASSES {
                                bail!(
                                    "stage {} still finds changes to make after {} passes; \
                                     the cloud does not show what was reserved (see `status`)",
                                    stage.name(),
                                    changing_passes + 1
                                );
                            }
                        }
                        None => done = Some(report),
                    }
                }
                Ok(report) => {
                    return Ok(match done {
                        Some(first) => StageReport {
                            mutations: first.mutations + report.mutations,
                            after: report.after,
                            ..first
                        },
                        None => report,
                    });
                }
                Err(e) if is_transient(&e) => {
                    let Some(delay) = delays.next() else {
                        return Err(e);
                    };
                    // A service that said how long to wait (Retry-After) is waited for at least
                    // that long.
                    let delay = retry_after(&e).map_or(delay, |wait| delay.max(wait));
                    self.journal.record_retry(stage.name(), retry_cause(&e))?;
                    tracing::warn!(stage = stage.name(), error = %crate::error::render_chain(&e), ?delay, "transient failure, retrying");
                    tokio::time::sleep(delay).await;
                }
                other => return other,
            }
        }
    }

    async fn execute(&mut self, stage: Stage) -> Result<StageReport> {
        // Every record and AWS reservation depends on the subnets: planning without them
        // would plan nothing, and call it done.
        if self.spec.pending_subnets().is_some() {
            bail!("the AWS subnets were not settled before planning (providers::for_spec does it)");
        }
        let Observation {
            mut observed,
            zones,
        } = observe(self.spec, self.providers, &self.journal.state).await?;
        if stage == Stage::Reserve {
            crate::adopt::require_complete(self.spec, &observed)?;
        }
        let spec =
            crate::bootstrap_ip::for_stage(self.spec, stage, &self.journal.state, &observed)?;
        let plan = Plan::calculate(&spec, &observed, &[stage], self.journal.state.generation);
        self.journal.state.reservations = observed.reservations.clone();
        self.journal.state.adopted = observed.adopted.clone();
        if stage == Stage::TeardownAll && !plan.is_empty() {
            // New generation before the first release: a crash mid-teardown must not leave
            // the old idempotency tokens in use (EC2/GCP could replay released resources).
            self.journal.state.generation += 1;
            self.journal.state.run_step = None;
        }
        self.journal.save()?;
        tracing::info!(
            stage = stage.name(),
            changes = plan.changes.len(),
            "planned"
        );
        let mut mutations = 0;
        for change in &plan.changes {
            self.apply(stage, self.providers, &zones, &mut observed, change)
                .await?;
            mutations += 1;
        }
        match stage {
            Stage::SeedDns if !self.journal.state.bootstrap_removed => {
                crate::bootstrap_ip::record_seeded(&mut self.journal.state, &spec);
                if let Some(user) = &plan.user_dns {
                    self.journal.state.user_dns = RecordValues::of_user_dns(user, &observed);
                }
            }
            Stage::RemoveBootstrap => self.journal.state.bootstrap_removed = true,
            Stage::TeardownAll => {
                // Everything of ours is gone: the next install starts afresh.
                self.journal.state.records.clear();
                self.journal.state.user_dns.clear();
                self.journal.state.handed_over.clear();
                self.journal.state.bootstrap_removed = false;
            }
            _ => {}
        }
        self.journal.state.reservations = observed.reservations.clone();
        self.journal.save()?;
        Ok(StageReport {
            stage: stage.name(),
            plan,
            mutations,
            after: observed,
        })
    }

    async fn apply(
        &mut self,
        stage: Stage,
        providers: &Providers,
        zones: &BTreeMap<ZoneRef, Zone>,
        observed: &mut Observed,
        change: &Change,
    ) -> Result<()> {
        let seq = self.journal.intent(stage.name(), change)?;
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
            Change::AddRecordValues {
                zone,
                record,
                values,
                ttl,
            } => {
                let add = resolve(observed, values)?;
                let edit = DnsEdit {
                    add: add.iter().copied().collect(),
                    remove: Default::default(),
                    ttl: *ttl,
                };
                self.edit(providers, zones, zone, record, &edit).await
            }
            Change::RemoveRecordValues {
                zone,
                record,
                values,
            } => {
                let remove = resolve(observed, values)?;
                let edit = DnsEdit {
                    add: Default::default(),
                    remove: remove.iter().copied().collect(),
                    ttl: 0,
                };
                self.edit(providers, zones, zone, record, &edit).await
            }
        };
        match result {
            Ok(value) => self.journal.outcome(seq, Ok(value)),
            Err(e) => {
                self.journal.outcome(seq, Err(e.to_string()))?;
                Err(e.into())
            }
        }
    }

    async fn edit(
        &mut self,
        providers: &Providers,
        zones: &BTreeMap<ZoneRef, Zone>,
        zone_ref: &ZoneRef,
        record: &bootstrap_cloud::RecordKey,
        edit: &DnsEdit,
    ) -> Result<serde_json::Value, CloudError> {
        let zone = zones
            .get(zone_ref)
            .ok_or_else(|| CloudError::fatal("dns", format!("{zone_ref} was not observed")))?;
        let written = edit_record_values(providers.dns.as_ref(), zone, record, edit).await?;
        tracing::info!(record = %record, zone = %zone_ref, written = ?written, "record set edited");
        // Remember our values in this record set for `status`.
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
        Ok(serde_json::json!({ "values": written }))
    }
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

/// How many verifying passes of `reserve` may still change something (release a duplicate
/// of a lost answer, redo what a fault undid) before the stage gives up rather than loop.
const MAX_VERIFY_PASSES: u32 = 3;

fn retry_after(err: &anyhow::Error) -> Option<Duration> {
    err.chain()
        .filter_map(|c| c.downcast_ref::<CloudError>())
        .find_map(|c| c.retry_after)
}

/// Why a transient failure happened, for the retry counts `status` shows: the service asked
/// us to slow down (a Retry-After, or its throttling code), a DNS compare-and-swap was lost,
/// or anything else transient (a 5xx, a dropped connection, a timeout).
fn retry_cause(err: &anyhow::Error) -> &'static str {
    let Some(cloud) = err.chain().find_map(|c| c.downcast_ref::<CloudError>()) else {
        return "server-or-network";
    };
    let message = cloud.message.to_ascii_lowercase();
    let throttled = [
        "throttl",
        "requestlimitexceeded",
        "ratelimitexceeded",
        "rate exceeded",
        "toomanyrequests",
        "resource_exhausted",
        "429",
    ];
    if cloud.kind == bootstrap_cloud::ErrorKind::Conflict {
        "conflict"
    } else if cloud.retry_after.is_some() || throttled.iter().any(|t| message.contains(t)) {
        "throttled"
    } else {
        "server-or-network"
    }
}

fn is_transient(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<CloudError>()
            .is_some_and(CloudError::is_transient)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use async_trait::async_trait;
    use bootstrap_cloud::{
        AddressProvider, DnsProvider, ErrorKind, Placement, RecordKey, RecordSet, Reservation,
        ReserveRequest,
    };
    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};

    /// An address provider whose first public reservation comes back twice (a lost answer the
    /// SDK retried), and whose `observe` fails transiently on the given call (1-based).
    #[derive(Default)]
    struct Flaky {
        held: Mutex<Vec<Reservation>>,
        observe_calls: Mutex<u32>,
        fail_observe_at: u32,
        next_id: Mutex<u32>,
        released: Mutex<Vec<String>>,
    }

    impl Flaky {
        fn create(&self, request: &ReserveRequest) -> Reservation {
            let mut id = self.next_id.lock().unwrap();
            *id += 1;
            let r = Reservation {
                key: request.key.clone(),
                id: format!("r-{:03}", *id),
                name: request.name.clone(),
                ip: IpAddr::from([10, 0, 9, u8::try_from(*id).unwrap()]),
            };
            self.held.lock().unwrap().push(r.clone());
            r
        }
    }

    /// The provider the runner owns; the test keeps another handle to look inside.
    struct Shared(Arc<Flaky>);

    #[async_trait]
    impl AddressProvider for Shared {
        async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
            let this = &self.0;
            let mut calls = this.observe_calls.lock().unwrap();
            *calls += 1;
            if *calls == this.fail_observe_at {
                return Err(CloudError::new(
                    ErrorKind::Transient,
                    "DescribeAddresses",
                    "InternalError: injected",
                ));
            }
            let mut held = this.held.lock().unwrap().clone();
            held.sort();
            Ok(held)
        }

        async fn placements(
            &self,
            ids: &[String],
        ) -> Result<BTreeMap<String, Placement>, CloudError> {
            Ok(ids
                .iter()
                .map(|id| {
                    let placement = Placement {
                        zone: "us-east-1a".into(),
                        network: "vpc-1".into(),
                    };
                    (id.clone(), placement)
                })
                .collect())
        }

        async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
            let this = &self.0;
            let first_public = request.key.scope == bootstrap_cloud::Scope::Public
                && *this.next_id.lock().unwrap() == 0;
            if first_public {
                this.create(request); // the lost answer's allocation
            }
            Ok(this.create(request))
        }

        async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
            self.0
                .held
                .lock()
                .unwrap()
                .retain(|r| r.id != reservation.id);
            self.0.released.lock().unwrap().push(reservation.id.clone());
            Ok(())
        }
    }

    /// DNS where every record set is absent.
    struct NoRecords;

    #[async_trait]
    impl DnsProvider for NoRecords {
        async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
            Ok(Zone {
                reference: zone.clone(),
                id: "Z1".into(),
            })
        }
        async fn read(&self, _: &Zone, _: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
            Ok(None)
        }
        async fn write(
            &self,
            _: &Zone,
            _: &RecordKey,
            _: Option<&RecordSet>,
            _: &BTreeSet<IpAddr>,
            _: u32,
        ) -> Result<(), CloudError> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_transient_error_while_verifying_a_reserve_is_retried_and_the_duplicate_released() {
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/aws");
        let spec = crate::assets::load(&fixture).unwrap();
        let flaky = Arc::new(Flaky {
            // 1: the first pass; 2: the verifying pass, which fails.
            fail_observe_at: 2,
            ..Default::default()
        });
        let providers = Providers {
            addresses: Box::new(Shared(flaky.clone())),
            dns: Box::new(NoRecords),
            preflight: None,
        };
        let state = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(state.path()).unwrap();
        let mut runner = Runner {
            spec: &spec,
            journal: &mut journal,
            providers: &providers,
            stage_timeout: Duration::from_secs(60),
        };
        let report = runner.run(Stage::Reserve).await.unwrap();

        let held = flaky.held.lock().unwrap().clone();
        let keys: BTreeSet<String> = held.iter().map(|r| r.key.to_string()).collect();
        assert_eq!(held.len(), 6, "3 EIPs + 3 ENIs, no duplicate: {held:?}");
        assert_eq!(keys.len(), 6);
        assert_eq!(
            flaky.released.lock().unwrap().len(),
            1,
            "the duplicate was released after the failed verification was retried"
        );
        assert_eq!(report.mutations, 7, "6 reservations and 1 release");
        assert!(*flaky.observe_calls.lock().unwrap() >= 4);
        let step = &journal.state.steps["reserve"];
        assert_eq!(
            step.retries,
            BTreeMap::from([("server-or-network".to_string(), 1)]),
            "the retry is counted by cause in the journal, for `status`"
        );
    }

    #[test]
    fn retry_causes_are_told_apart() {
        let cause = |kind, message: &str, after: Option<Duration>| {
            retry_cause(&anyhow::Error::new(
                CloudError::new(kind, "Op", message).with_retry_after(after),
            ))
        };
        assert_eq!(
            cause(
                ErrorKind::Transient,
                "RequestLimitExceeded: slow down",
                None
            ),
            "throttled"
        );
        assert_eq!(cause(ErrorKind::Transient, "HTTP 429", None), "throttled");
        assert_eq!(
            cause(ErrorKind::Transient, "busy", Some(Duration::from_secs(1))),
            "throttled"
        );
        assert_eq!(
            cause(ErrorKind::Transient, "InternalError: 500", None),
            "server-or-network"
        );
        assert_eq!(
            cause(ErrorKind::Conflict, "PriorRequestNotComplete", None),
            "conflict"
        );
        assert_eq!(
            retry_cause(&anyhow::anyhow!("timed out")),
            "server-or-network"
        );
    }
}
