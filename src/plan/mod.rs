//! PURE planning: (ClusterSpec, Observed) -> Plan. No I/O here, so every decision the agent
//! makes can be printed before it is carried out and golden-tested (external-dns's idea).

mod batch;
mod cloud;
mod desired;
mod kube;
mod notes;
mod observed;
mod pool;
pub(crate) mod text;

pub use batch::batched;
pub use cloud::{bootstrap_ip_conflict, records_of_interest};
pub use desired::{
    DEFAULT_TTL, WantedRecord, WantedReservation, reservation_name, second_address_host,
};
pub use kube::{Capabilities, DoomedService, KubeWants, LiveService, WantedService, replacements};
pub use observed::{Observed, ObservedRecord, reads_records};
pub use pool::PoolNeed;

use cloud::{
    cloud_dns, hand_over, remove_bootstrap, reserve, seed_dns, teardown_all, unpublish,
    unwanted_adopted, user_dns, withdraw,
};
use notes::{adoption_notes, notes};

use crate::assets::ClusterSpec;
use bootstrap_cloud::{RecordKey, Reservation, ReservationKey, ReserveRequest, ZoneRef};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

/// A record value: a literal IP, or "the IP of reservation K", resolved when K exists.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Ip(IpAddr),
    Reserved(ReservationKey),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Ip(ip) => write!(f, "{ip}"),
            Value::Reserved(key) => write!(f, "<{key}>"),
        }
    }
}

/// One change, as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    ReserveAddress {
        request: ReserveRequest,
    },
    ReleaseAddress {
        reservation: Reservation,
        reason: String,
    },
    /// Free the placeholder holding the IP so the load balancer can claim it; the IP stays ours.
    HandOverAddress {
        reservation: Reservation,
    },
    AddRecordValues {
        zone: ZoneRef,
        record: RecordKey,
        values: Vec<Value>,
        ttl: u32,
    },
    RemoveRecordValues {
        zone: ZoneRef,
        record: RecordKey,
        values: Vec<Value>,
    },
    /// The record changes of one zone that one phase makes, as one write (a Route53
    /// ChangeBatch, a Cloud DNS Change): `records` are its `AddRecordValues` and
    /// `RemoveRecordValues`. The planner plans per record set; [`batched`] groups them for
    /// the runner, which journals each batch as one mutation.
    EditZone {
        zone: ZoneRef,
        records: Vec<Change>,
    },
    /// Write the capability selection into ClusterVersion `version` (before anything the
    /// selection filters is applied).
    SetCapabilities {
        capabilities: Capabilities,
    },
    /// Server-side apply one LoadBalancer Service (or delete it, as its template asks).
    ApplyService {
        service: WantedService,
    },
    /// `teardown --all`: delete one of our Services, so its load balancer lets go of the
    /// reserved addresses.
    DeleteService {
        service: DoomedService,
    },
    /// Delete one of our Services whose load balancer would keep other addresses than it
    /// claims now, wait until the controller removed that load balancer (the Service gone,
    /// no load-balancer interface holding a claimed IP), then apply it anew.
    ReplaceService {
        service: WantedService,
        /// The live Service's uid (the deletion is conditional on it); None: gone already.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<String>,
        /// The live Service is being deleted already (a resume): waited out, not deleted again.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        deleting: bool,
        /// The address annotations whose values differ.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed: Vec<String>,
    },
}

impl Change {
    /// A change of the cluster (Kubernetes API), not of the cloud.
    pub fn is_kubernetes(&self) -> bool {
        matches!(
            self,
            Change::SetCapabilities { .. }
                | Change::ApplyService { .. }
                | Change::DeleteService { .. }
                | Change::ReplaceService { .. }
        )
    }
}

/// Which part of the flow a plan covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Reserve the static IPs (stage 1).
    Reserve,
    /// Seed round-robin DNS with the bootstrap IP and the reserved IPs (stage 1).
    SeedDns,
    /// Write the capabilities into ClusterVersion (Kubernetes; stage 1).
    SetCapabilities,
    /// AWS: delete the ENIs holding the private IPs right before the Services claim them.
    HandOver,
    /// Apply the LoadBalancer Services that claim the reserved IPs (Kubernetes; stage 1).
    ApplyServices,
    /// Remove only the bootstrap IP from the private records (stage 3).
    RemoveBootstrap,
    /// Failed install: delete our Services (with a kubeconfig), remove all our DNS values,
    /// then release every owned reservation once the cloud lets go of it.
    TeardownAll,
    /// `publish --scope`: remove from DNS the values of ours the publishing no longer wants
    /// (the public `api` when the API goes private), before anything that serves them goes.
    Withdraw,
    /// `publish --scope`: delete our Services the publishing no longer wants (the external
    /// load balancer), then release our reservations it no longer wants once the cloud lets
    /// go of them; the user's stay.
    Unpublish,
}

impl Step {
    pub const ALL: [Step; 9] = [
        Step::Reserve,
        Step::SeedDns,
        Step::SetCapabilities,
        Step::HandOver,
        Step::ApplyServices,
        Step::RemoveBootstrap,
        Step::TeardownAll,
        Step::Withdraw,
        Step::Unpublish,
    ];

    /// The stage changes the cluster (Kubernetes API), not the cloud.
    pub fn is_kubernetes(self) -> bool {
        matches!(self, Step::SetCapabilities | Step::ApplyServices)
    }

    /// How journals written before the names were unified spelled two steps: a resumed
    /// install may carry them, so they are still read (and `--step` still takes them).
    pub const LEGACY_NAMES: [(&'static str, Step); 2] = [
        ("dns-seed", Step::SeedDns),
        ("dns-teardown", Step::RemoveBootstrap),
    ];

    /// The step by its kebab-case name (`seed-dns`), as `--step`, the journal and the state
    /// machine spell it; a legacy name ([`Step::LEGACY_NAMES`]) is read too.
    pub fn parse(name: &str) -> Option<Step> {
        if let Some((_, step)) = Self::LEGACY_NAMES.iter().find(|(old, _)| *old == name) {
            return Some(*step);
        }
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }

    pub fn name(self) -> &'static str {
        match self {
            Step::Reserve => "reserve",
            Step::SeedDns => "seed-dns",
            Step::SetCapabilities => "set-capabilities",
            Step::HandOver => "hand-over",
            Step::ApplyServices => "apply-services",
            Step::RemoveBootstrap => "remove-bootstrap",
            Step::TeardownAll => "teardown-all",
            Step::Withdraw => "withdraw",
            Step::Unpublish => "unpublish",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Plan {
    pub changes: Vec<Change>,
    /// Facts a person should know when reading the plan (e.g. what a platform does not do).
    pub notes: Vec<String>,
    /// The network values the plan works with, and where each came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<crate::assets::NetworkValue>,
    /// User-managed DNS: the agent writes no record; these are the ones the user creates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_dns: Option<UserDns>,
    /// Reservations the user made, used as they are: `adopted (yours)`, never released.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<Reservation>,
    /// AWS `publicIpv4Pool`: the addresses planned from the pool against its free ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_ipv4_pool: Option<PoolNeed>,
}

/// The records a user who manages DNS must create: the same records, with the same values,
/// that the agent would seed into cloud DNS (one code path for every user-managed mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserDns {
    /// The input that made DNS the user's.
    pub because: String,
    /// Every value each record must hold while the bootstrap host serves: the bootstrap IP
    /// and the reserved IPs (as IPs once reserved; until then the reservation they will be).
    pub records: Vec<UserRecord>,
    /// The value to take out of `api` / `api-int` once the gate passed (stage 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_ip: Option<IpAddr>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRecord {
    pub zone: ZoneRef,
    pub record: RecordKey,
    pub values: Vec<Value>,
    pub ttl: u32,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Plans the given cloud stages in order against one observation.
    pub fn calculate(
        spec: &ClusterSpec,
        observed: &Observed,
        stages: &[Step],
        generation: u32,
    ) -> Plan {
        Self::calculate_with(spec, observed, &KubeWants::default(), stages, generation)
    }

    /// Plans the given stages in order against one observation, the Kubernetes ones from
    /// what `kube` wants.
    pub fn calculate_with(
        spec: &ClusterSpec,
        observed: &Observed,
        kube: &KubeWants,
        stages: &[Step],
        generation: u32,
    ) -> Plan {
        let mut plan = Plan {
            changes: Vec::new(),
            notes: notes(spec),
            network: spec.network_values(),
            user_dns: user_dns(spec, observed),
            adopted: observed.adopted.clone(),
            public_ipv4_pool: None,
        };
        plan.notes.extend(adoption_notes(spec, observed));
        if stages.contains(&Step::TeardownAll) && !observed.adopted.is_empty() {
            plan.notes.push(format!(
                "teardown --all leaves the {} reservation(s) you made in place (only the values the agent wrote leave DNS); delete them yourself when you no longer need them",
                observed.adopted.len()
            ));
        }
        for stage in stages {
            plan.changes.extend(match stage {
                Step::Reserve => reserve(spec, observed, generation),
                Step::SeedDns => seed_dns(spec, observed),
                Step::SetCapabilities => kube::set_capabilities(kube),
                Step::HandOver => hand_over(spec, observed),
                Step::ApplyServices => kube::apply_services(kube),
                Step::RemoveBootstrap => remove_bootstrap(spec, observed),
                Step::TeardownAll => {
                    let mut changes = kube::delete_services(kube);
                    changes.extend(teardown_all(spec, observed));
                    changes
                }
                Step::Withdraw => withdraw(spec, observed),
                Step::Unpublish => {
                    let mut changes = kube::delete_services(kube);
                    changes.extend(unpublish(spec, observed));
                    changes
                }
            });
        }
        if stages.contains(&Step::Unpublish) {
            for r in unwanted_adopted(spec, observed) {
                plan.notes.push(format!(
                    "unpublish: {} {} ({}) is yours (adopted): the agent leaves it untouched; delete it yourself when you no longer need it",
                    r.key, r.ip, r.name
                ));
            }
        }
        plan.public_ipv4_pool = PoolNeed::of(observed, &plan.changes);
        // Later stages are planned against the same observation: say what they will find
        // once the earlier ones ran (`run` plans each stage again when it gets there).
        if stages.contains(&Step::Reserve)
            && stages.contains(&Step::HandOver)
            && matches!(spec.platform, crate::assets::Platform::Aws(_))
        {
            plan.notes.push("hand-over: the private IPs reserved above are handed over to their load balancers right before the Services are applied".into());
        }
        if let Some(ip) = spec.bootstrap_ip
            && stages.contains(&Step::SeedDns)
            && stages.contains(&Step::RemoveBootstrap)
            && cloud_dns(spec)
        {
            plan.notes.push(format!("remove-bootstrap: once the gate passed, {ip} is removed from the private records seeded above"));
        }
        if stages.contains(&Step::TeardownAll)
            && kube.ours_live.is_none()
            && kube.services.iter().any(|s| !s.delete)
        {
            plan.notes.push("teardown-all: each Service above is deleted only if the cluster holds it with the agent's labels; each address is released once the cloud lets go of it (its load balancer deleted)".into());
        }
        if stages.contains(&Step::SetCapabilities) && kube.capabilities.is_none() {
            plan.notes.push(
                "set-capabilities: not planned by this command (it has no capability registry)"
                    .into(),
            );
        }
        plan
    }
}

pub use cloud::records_to_hold;
pub use desired::records as wanted_records;
pub use desired::reservations as wanted_reservations;
pub use text::record_line;

#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod tests;
