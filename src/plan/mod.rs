//! PURE planning: (ClusterSpec, Observed) -> Plan. No I/O here, so every decision the agent
//! makes can be printed before it is carried out and golden-tested (external-dns's idea).

mod desired;
mod text;

pub use desired::{DEFAULT_TTL, WantedRecord, WantedReservation, reservation_name};

use crate::assets::ClusterSpec;
use bootstrap_cloud::{
    Placement, RecordKey, RecordSet, Reservation, ReservationKey, ReserveRequest, ZoneRef,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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

/// What the runner found in the cloud before planning.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Observed {
    /// Reservations carrying our ownership tag.
    pub reservations: Vec<Reservation>,
    /// Current record sets (None = absent) for the records we care about.
    pub records: Vec<ObservedRecord>,
    /// Subnet -> zone/network, where the cloud reports it.
    pub placements: BTreeMap<String, Placement>,
    /// Reservations released to their load balancer (AWS ENIs freed right before the Service
    /// claims their IP). The cloud no longer shows them as ours; the journal remembers them.
    #[serde(default)]
    pub handed_over: Vec<Reservation>,
    /// Reservations the user made (UPI), found by the seed's names or `--reservations`: used
    /// like ours, never released, changed or tagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<Reservation>,
    /// Progressive DNS: only these reserved IPs may join the records (their load balancer
    /// serves them). None: all at once, as the seed does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<BTreeSet<IpAddr>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObservedRecord {
    pub zone: ZoneRef,
    pub key: RecordKey,
    pub current: Option<RecordSet>,
}

impl Observed {
    fn record(&self, zone: &ZoneRef, key: &RecordKey) -> Option<&RecordSet> {
        self.records
            .iter()
            .find(|r| &r.zone == zone && &r.key == key)
            .and_then(|r| r.current.as_ref())
    }

    /// The IP of a reservation, if it exists. With duplicates, the one the planner keeps.
    pub fn resolve(&self, value: &Value) -> Option<IpAddr> {
        match value {
            Value::Ip(ip) => Some(*ip),
            Value::Reserved(key) => self.kept().get(key).map(|r| r.ip),
        }
    }

    /// One reservation per key: what the cloud holds of ours, else the user's, else what was
    /// handed over.
    pub fn kept(&self) -> BTreeMap<ReservationKey, Reservation> {
        let mut kept: BTreeMap<ReservationKey, Reservation> = self
            .handed_over
            .iter()
            .chain(&self.adopted)
            .map(|r| (r.key.clone(), r.clone()))
            .collect();
        for (key, r) in kept_reservations(&self.reservations, &self.in_dns()) {
            kept.insert(key, r.clone());
        }
        kept
    }

    fn in_dns(&self) -> BTreeSet<IpAddr> {
        self.records
            .iter()
            .filter_map(|r| r.current.as_ref())
            .flat_map(|c| c.values.iter().copied())
            .collect()
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
}

/// Which part of the flow a plan covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Reserve the static IPs (stage 1).
    Reserve,
    /// Seed round-robin DNS with the bootstrap IP and the reserved IPs (stage 1).
    SeedDns,
    /// AWS: delete the ENIs holding the private IPs right before the Services claim them.
    HandOver,
    /// Remove only the bootstrap IP from the private records (stage 3).
    RemoveBootstrap,
    /// Failed install: remove all our DNS values, then release every owned reservation.
    TeardownAll,
}

impl Stage {
    pub const ALL: [Stage; 5] = [
        Stage::Reserve,
        Stage::SeedDns,
        Stage::HandOver,
        Stage::RemoveBootstrap,
        Stage::TeardownAll,
    ];

    /// The stage by its kebab-case name (`seed-dns`), as `--stage` and the journal spell it.
    pub fn parse(name: &str) -> Option<Stage> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }

    pub fn name(self) -> &'static str {
        match self {
            Stage::Reserve => "reserve",
            Stage::SeedDns => "dns-seed",
            Stage::HandOver => "hand-over",
            Stage::RemoveBootstrap => "dns-teardown",
            Stage::TeardownAll => "teardown-all",
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

    /// Plans the given stages in order against one observation.
    pub fn calculate(
        spec: &ClusterSpec,
        observed: &Observed,
        stages: &[Stage],
        generation: u32,
    ) -> Plan {
        let mut plan = Plan {
            changes: Vec::new(),
            notes: notes(spec),
            network: spec.network_values(),
            user_dns: user_dns(spec, observed),
            adopted: observed.adopted.clone(),
        };
        plan.notes.extend(adoption_notes(spec, observed));
        if stages.contains(&Stage::TeardownAll) && !observed.adopted.is_empty() {
            plan.notes.push(format!(
                "teardown --all leaves the {} reservation(s) you made in place (only the values the agent wrote leave DNS); delete them yourself when you no longer need them",
                observed.adopted.len()
            ));
        }
        for stage in stages {
            plan.changes.extend(match stage {
                Stage::Reserve => reserve(spec, observed, generation),
                Stage::SeedDns => seed_dns(spec, observed),
                Stage::HandOver => hand_over(spec, observed),
                Stage::RemoveBootstrap => remove_bootstrap(spec, observed),
                Stage::TeardownAll => teardown_all(spec, observed),
            });
        }
        plan
    }
}

/// What a person must know about the user's reservations the plan uses.
fn adoption_notes(spec: &ClusterSpec, observed: &Observed) -> Vec<String> {
    let mut notes = Vec::new();
    if spec.adoption.adopt_only {
        notes.push(
            "--adopt-only: the agent reserves nothing; it uses the reservations you made".into(),
        );
    }
    let enis: Vec<String> = observed
        .adopted
        .iter()
        .filter(|r| {
            matches!(spec.platform, crate::assets::Platform::Aws(_))
                && r.key.scope == bootstrap_cloud::Scope::Private
        })
        .map(|r| format!("{} ({})", r.id, r.ip))
        .collect();
    if !enis.is_empty() {
        notes.push(format!(
            "aws: your ENIs {} hold the internal load balancer's IPs; delete them right before the Services are applied (the agent never deletes what is yours, and the AWS Load Balancer Controller cannot claim an IP an ENI holds)",
            enis.join(", ")
        ));
    }
    notes
}

/// What the user must create when DNS is theirs; None when the agent writes it.
fn user_dns(spec: &ClusterSpec, observed: &Observed) -> Option<UserDns> {
    let because = spec.user_managed_dns()?;
    let records = desired::records(spec)
        .into_iter()
        .map(|w| UserRecord {
            zone: w.zone,
            record: w.key,
            values: w
                .values
                .into_iter()
                .map(|v| match observed.resolve(&v) {
                    Some(ip) => Value::Ip(ip),
                    None => v,
                })
                .collect(),
            ttl: spec.record_ttl,
        })
        .collect();
    Some(UserDns {
        because: because.to_string(),
        records,
        bootstrap_ip: spec.bootstrap_ip,
    })
}

/// Whether the agent writes (and so reads) cloud DNS at all. The one check of the
/// user-managed mode: with it false, no zone is looked up and no record planned.
fn cloud_dns(spec: &ClusterSpec) -> bool {
    spec.user_managed_dns().is_none()
}

/// Where each zone named by id or tags came from (a zone found by domain and visibility says
/// nothing). The public zone only matters when the API is public.
fn zone_notes(spec: &ClusterSpec) -> Vec<String> {
    let zones = &spec.zones;
    let mut notes = Vec::new();
    let mut note = |zone: &ZoneRef, source: &Option<String>| {
        let Some(source) = source else { return };
        let which = match (&zone.id, zone.tags.is_empty()) {
            (Some(id), _) => id.clone(),
            (None, false) => {
                let tags: Vec<String> = zone.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("the one tagged {}", tags.join(", "))
            }
            (None, true) => return,
        };
        notes.push(format!("dns: {zone} is {which} ({source})"));
    };
    note(&zones.private, &zones.private_source);
    if spec.publish.public_api() {
        note(&zones.public, &zones.public_source);
    }
    if let Some(role) = &zones.private_zone_role {
        notes.push(format!(
            "aws: the private zone is another account's: its records are written through sts:AssumeRole of {role}; the public zone with the cluster's own credentials"
        ));
    }
    notes
}

fn notes(spec: &ClusterSpec) -> Vec<String> {
    use crate::assets::Platform;
    let mut notes = Vec::new();
    match &spec.platform {
        Platform::None => notes.push(
            "platform none: load balancers and DNS are user-provisioned; nothing to reserve or write".into(),
        ),
        Platform::Aws(_) if spec.ip_families.len() > 1 => notes.push(
            "aws dual stack: EIPs and NLB private addresses are IPv4; no IPv6 is reserved and no AAAA record is seeded".into(),
        ),
        Platform::Gcp(gcp) => {
            notes.push(format!(
                "gcp: the internal address comes from the compute subnetwork {}, where the cloud provider creates internal forwarding rules",
                gcp.compute_subnetwork_url()
            ));
            if let Some(host) = &gcp.network_project {
                notes.push(format!(
                    "gcp shared VPC: the subnetworks are the host project {host}'s; both addresses are reserved in the service project {}",
                    gcp.project
                ));
            }
        }
        _ => {}
    }
    // Per cloud, what dual stack gets (README "Reservations per cloud" has the sources).
    if spec.ip_families.contains(&bootstrap_cloud::IpFamily::Ipv6) {
        match &spec.platform {
            Platform::Gcp(_) => notes.push(
                "gcp dual stack: the cloud provider's Service load balancers take one IPv4 each (spec.loadBalancerIP); no IPv6 is reserved and no AAAA record is seeded".into(),
            ),
            Platform::Azure(_) => notes.push(
                "azure dual stack: the private IPv6 is derived from the infra id within the compute subnet's IPv6 prefix, without an availability check (Azure documents none for IPv6)".into(),
            ),
            _ => {}
        }
    }
    if let crate::assets::Publish::Mixed { apiserver, ingress } = spec.publish {
        notes.push(if spec.publish.public_api() {
            format!(
                "publish Mixed (apiserver {apiserver:?}, ingress {ingress:?}): the API is public, so its public IP is reserved and api is written into the base domain's public zone {}, whatever the DNS manifest's publicZone (it follows ingress)",
                spec.base_domain
            )
        } else {
            format!(
                "publish Mixed (apiserver {apiserver:?}, ingress {ingress:?}): the API is internal: no public IP and no public api record (a publicZone in the DNS manifest is there for ingress)"
            )
        });
    }
    if cloud_dns(spec) {
        notes.extend(zone_notes(spec));
    }
    if let Platform::Aws(aws) = &spec.platform
        && let Some(pool) = &aws.public_ipv4_pool
    {
        notes.push(format!(
            "aws: every EIP is allocated from public IPv4 pool {pool} (platform.aws.publicIpv4Pool); each allocation first checks the pool has a free address (DescribePublicIpv4Pools) and stops if not, without falling back to Amazon's pool"
        ));
    }
    if let Platform::Aws(aws) = &spec.platform {
        match &aws.subnets {
            crate::assets::AwsSubnets::Known { ignored, .. } => {
                notes.extend(ignored.iter().map(|id| format!(
                    "aws subnet {id} is tagged for the cluster but has neither role tag (kubernetes.io/role/elb, kubernetes.io/role/internal-elb): not used"
                )));
            }
            // The runner and `plan` settle the subnets first; this shows if one did not.
            crate::assets::AwsSubnets::Pending(_) => notes.push(
                "aws subnets not discovered yet: no subnet reservation and no DNS record is planned".into(),
            ),
        }
    }
    if spec.bootstrap_ip.is_none() && !matches!(spec.platform, Platform::None) {
        notes.push("bootstrap IP unknown (pass --bootstrap-ip): the private records will hold only the reserved IPs".into());
    }
    notes
}

/// Among owned reservations, the one to keep per key: the one already in DNS, else the lowest
/// id. More than one per key only happens after a lost idempotency token (e.g. an EIP
/// allocated twice by a retry); the extras are released.
fn kept_reservations<'a>(
    observed: &'a [Reservation],
    in_dns: &BTreeSet<IpAddr>,
) -> BTreeMap<ReservationKey, &'a Reservation> {
    let mut kept: BTreeMap<ReservationKey, &Reservation> = BTreeMap::new();
    for r in observed {
        match kept.get(&r.key) {
            Some(k) if in_dns.contains(&k.ip) && !in_dns.contains(&r.ip) => {}
            Some(k) if in_dns.contains(&r.ip) == in_dns.contains(&k.ip) && k.id <= r.id => {}
            _ => {
                kept.insert(r.key.clone(), r);
            }
        }
    }
    kept
}

fn reserve(spec: &ClusterSpec, observed: &Observed, generation: u32) -> Vec<Change> {
    let wanted = desired::reservations(spec);
    let kept = kept_reservations(&observed.reservations, &observed.in_dns());
    // Handed over, or the user's: never reserved again.
    let handed_over: BTreeSet<&ReservationKey> = observed
        .handed_over
        .iter()
        .chain(&observed.adopted)
        .map(|r| &r.key)
        .collect();
    let mut changes: Vec<Change> = wanted
        .iter()
        .filter(|_| !spec.adoption.adopt_only)
        .filter(|w| !kept.contains_key(&w.key) && !handed_over.contains(&w.key))
        .map(|w| Change::ReserveAddress {
            request: desired::request(spec, w, generation),
        })
        .collect();
    for r in &observed.reservations {
        if kept.get(&r.key).is_some_and(|k| k.id != r.id) {
            changes.push(Change::ReleaseAddress {
                reservation: r.clone(),
                reason: format!("duplicate of {}", kept[&r.key].id),
            });
        }
    }
    changes
}

/// Seeds the records: the bootstrap IP and the reserved IPs. Progressive DNS (`serving` known)
/// holds back a reserved IP until its load balancer serves it; the same stage, run again as
/// IPs start to serve, adds each then (one compare-and-swap per record).
fn seed_dns(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    if !cloud_dns(spec) {
        return Vec::new();
    }
    let may_join = |v: &Value| match (v, &observed.serving) {
        (Value::Reserved(_), Some(serving)) => {
            observed.resolve(v).is_some_and(|ip| serving.contains(&ip))
        }
        _ => true,
    };
    desired::records(spec)
        .into_iter()
        .filter_map(|w| {
            let current = observed.record(&w.zone, &w.key);
            let missing: Vec<Value> = w
                .values
                .into_iter()
                .filter(|v| may_join(v))
                .filter(|v| match (observed.resolve(v), current) {
                    (Some(ip), Some(set)) => !set.values.contains(&ip),
                    _ => true,
                })
                .collect();
            (!missing.is_empty()).then_some(Change::AddRecordValues {
                zone: w.zone,
                record: w.key,
                values: missing,
                ttl: spec.record_ttl,
            })
        })
        .collect()
}

/// Only AWS holds private IPs in placeholders (ENIs) that must be freed for the NLB.
fn hand_over(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    if !matches!(spec.platform, crate::assets::Platform::Aws(_)) {
        return Vec::new();
    }
    observed
        .reservations
        .iter()
        .filter(|r| r.key.scope == bootstrap_cloud::Scope::Private)
        .map(|r| Change::HandOverAddress {
            reservation: r.clone(),
        })
        .collect()
}

fn remove_values(spec: &ClusterSpec, observed: &Observed, ours: &BTreeSet<IpAddr>) -> Vec<Change> {
    if !cloud_dns(spec) {
        return Vec::new();
    }
    observed
        .records
        .iter()
        .filter_map(|r| {
            let current = r.current.as_ref()?;
            let values: Vec<Value> = current
                .values
                .intersection(ours)
                .copied()
                .map(Value::Ip)
                .collect();
            (!values.is_empty()).then(|| Change::RemoveRecordValues {
                zone: r.zone.clone(),
                record: r.key.clone(),
                values,
            })
        })
        .collect()
}

fn remove_bootstrap(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    let ours: BTreeSet<IpAddr> = spec.bootstrap_ip.into_iter().collect();
    remove_values(spec, observed, &ours)
}

fn teardown_all(spec: &ClusterSpec, observed: &Observed) -> Vec<Change> {
    let ours: BTreeSet<IpAddr> = spec
        .bootstrap_ip
        .into_iter()
        .chain(observed.reservations.iter().map(|r| r.ip))
        .chain(observed.handed_over.iter().map(|r| r.ip))
        // The user's addresses stay, but the values we wrote for them leave DNS.
        .chain(observed.adopted.iter().map(|r| r.ip))
        .collect();
    let mut changes = remove_values(spec, observed, &ours);
    changes.extend(
        observed
            .reservations
            .iter()
            .map(|r| Change::ReleaseAddress {
                reservation: r.clone(),
                reason: "teardown --all".into(),
            }),
    );
    changes
}

/// A reservation holding the bootstrap IP means one of the two is wrong: a cloud does not
/// hand out an address in use, so the bootstrap IP given is probably mistyped. DNS must not be
/// touched then: removing the bootstrap IP later would remove the load balancer's IP too.
pub fn bootstrap_ip_conflict(spec: &ClusterSpec, observed: &Observed) -> Option<String> {
    let ip = spec.bootstrap_ip?;
    observed.kept().values().find(|r| r.ip == ip).map(|r| {
        format!(
            "{ip} is the IP of our reservation {} ({}); the bootstrap host cannot have it",
            r.key, r.id
        )
    })
}

/// The records observation must read (none when DNS is the user's: no zone is looked up).
pub fn records_of_interest(spec: &ClusterSpec) -> Vec<(ZoneRef, RecordKey)> {
    if !cloud_dns(spec) {
        return Vec::new();
    }
    desired::records(spec)
        .into_iter()
        .map(|w| (w.zone, w.key))
        .collect()
}

pub use desired::records as wanted_records;
pub use desired::reservations as wanted_reservations;

#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod tests;
