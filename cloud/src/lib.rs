//! Cloud-neutral vocabulary of the agent: what a reserved IP is, what a DNS record set is, and
//! the two small traits every cloud implements. The planner and the runner only speak these
//! types; the per-cloud modules translate them to one SDK each (afterburn's shape).
//!
//! Shared by every cloud: `dns` (the one compare-and-swap edit of record values), `poll` (the
//! one bounded wait for a long-running operation), `retry` (jittered backoff), `redact`
//! (secrets out of every log line), `subnets` (classifying AWS subnets). A new cloud is a
//! module here implementing `AddressProvider` + `DnsProvider`, wired in the agent's
//! `providers/`.

pub mod azure_cloud;
mod dns;
mod error;
pub mod patient_dns;
pub mod permissions;
pub mod poll;
pub mod preflight;
pub mod redact;
pub mod retry;
pub mod subnets;
mod types;

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "azure")]
pub mod azure;
#[cfg(feature = "gcp")]
pub mod gcp;

pub use dns::{DnsEdit, RecordWrite, ZoneEdit, edit_record_values, edit_zone, parse_values};
pub use error::{CloudError, ErrorKind};
pub use types::*;

use async_trait::async_trait;
use std::collections::BTreeMap;

/// Reserves static IPs for the load balancers and finds the ones we reserved before.
#[async_trait]
pub trait AddressProvider: Send + Sync {
    /// Every reservation owned by this cluster (found by its ownership tag/label), so that a
    /// re-run or a resume after a crash sees what already exists without trusting local state.
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError>;

    /// Where each placement (subnet) lives, for validation and display. Unknown placements are
    /// an error: reserving into a subnet that does not exist can only fail later and worse.
    async fn placements(&self, ids: &[String]) -> Result<BTreeMap<String, Placement>, CloudError> {
        let _ = ids;
        Ok(BTreeMap::new())
    }

    /// Creates one reservation, tagged as ours, idempotently where the cloud allows it.
    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError>;

    /// Releases one reservation that `observe` returned (so it is ours).
    async fn release(&self, reservation: &Reservation) -> Result<(), CloudError>;

    /// What uses one of our reservations now such that the cloud refuses to release it (a
    /// load balancer's interface, forwarding rule or frontend), in words; None: nothing, or
    /// the reservation is gone. `teardown --all` waits on it before each release: EC2 refuses
    /// to release an associated Elastic IP (`InvalidIPAddress.InUse`), GCE to delete an
    /// address with users (`resourceInUseByAnotherResource`), Azure a public IP a frontend
    /// uses (`PublicIPAddressCannotBeDeleted`). Reads only.
    async fn in_use_by(&self, reservation: &Reservation) -> Result<Option<String>, CloudError> {
        let _ = reservation;
        Ok(None)
    }

    /// Reservations the user made for the cluster (UPI), found by the seed's names or as
    /// `--reservations` names them, each checked against what its purpose needs. Never ours:
    /// anything carrying our ownership tags is left to `observe`. None found: empty.
    async fn find_user_made(
        &self,
        queries: &[UserReservationQuery],
    ) -> Result<Vec<UserMade>, CloudError> {
        let _ = queries;
        Ok(Vec::new())
    }

    /// The pool every public address comes from, with its free addresses, when the user named
    /// one (AWS `publicIpv4Pool`). None: the cloud's own pool, which has no count to show.
    async fn address_pool(&self) -> Result<Option<AddressPool>, CloudError> {
        Ok(None)
    }

    /// Who holds each of `ips` in the cloud (absent from the map: nobody). For clouds whose
    /// load balancers report only a hostname on the Service (AWS), this is how the readiness
    /// gate proves that a load balancer holds the IPs DNS points at. None: this cloud reports
    /// the IPs on the Service itself, which is where the gate looks instead.
    async fn holders(
        &self,
        ips: &[std::net::IpAddr],
    ) -> Option<Result<BTreeMap<std::net::IpAddr, Holder>, CloudError>> {
        let _ = ips;
        None
    }

    /// The cloud's word on the load balancer at `ip`, where the bootstrap host's own
    /// connection to it proves nothing (GCP's internal load balancer: the bootstrap VM is one
    /// of its backends, and GCE hands a backend's connection to its own internal load balancer
    /// back to it): every frontend at `ip` with its backends' health. None: the proof on the
    /// wire tests this load balancer (every other one). Reads only.
    async fn backend_health(
        &self,
        ip: std::net::IpAddr,
    ) -> Option<Result<Vec<FrontendHealth>, CloudError>> {
        let _ = ip;
        None
    }
}

/// Reads and writes DNS record sets with a compare step, so values of other writers survive.
#[async_trait]
pub trait DnsProvider: Send + Sync {
    /// Finds the provider's zone for a domain (public or private).
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError>;

    /// The current record set, or None when it does not exist.
    async fn read(&self, zone: &Zone, key: &RecordKey) -> Result<Option<RecordSet>, CloudError>;

    /// The record sets `keys` (all of `zone`) as they are now, each None when it does not
    /// exist. One request where the cloud lists a zone's record sets in an order that keeps
    /// them together (Route53); otherwise each is read, all at once. A compare-and-swap of
    /// several record sets in one change starts from this read: read one by one under a rate
    /// limit, the first would age while the next waits its turn.
    async fn read_zone(
        &self,
        zone: &Zone,
        keys: &[RecordKey],
    ) -> Result<BTreeMap<RecordKey, Option<RecordSet>>, CloudError> {
        dns::read_each(self, zone, keys).await
    }

    /// Replaces `write.current` (exactly as read; None = absent) by `write.values` (empty =
    /// delete) in one atomic call. Fails with `ErrorKind::Conflict` when the record changed
    /// since it was read.
    async fn write(&self, write: &RecordWrite<'_>) -> Result<(), CloudError>;

    /// Writes every record set of `writes` (all of one zone) as one change where the cloud
    /// has one (a Route53 ChangeBatch, a Cloud DNS Change: all applied or none, one wait for
    /// it to propagate), failing with `ErrorKind::Conflict` when any of them changed since it
    /// was read. Without one (Azure: a record set per request) they are written at once, each
    /// with its own compare-and-swap; a conflict then may leave the others written, which the
    /// re-read of the shared edit sees.
    async fn write_zone(&self, writes: &[RecordWrite<'_>]) -> Result<(), CloudError> {
        let results = futures::future::join_all(writes.iter().map(|w| self.write(w))).await;
        dns::worst(results)
    }
}
