use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;

/// What holds an IP in the cloud: a network interface and what the cloud says it is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The interface id (AWS: eni-...).
    pub id: String,
    /// The cloud's description of it (AWS load balancers: `ELB net/<name>/<id>`).
    pub description: String,
}

impl Holder {
    /// An AWS Elastic Load Balancing interface (NLB/ALB/CLB nodes are described `ELB ...`).
    pub fn is_load_balancer(&self) -> bool {
        self.description.starts_with("ELB ")
    }

    /// An interface of the very NLB whose DNS name is `hostname`: ELB names an NLB
    /// `<name>-<id>.elb.<region>.amazonaws.com` and describes each of its interfaces
    /// `ELB net/<name>/<id>` (the tail of its ARN `loadbalancer/net/<name>/<id>`). Any other
    /// `ELB ` interface is another load balancer's, which does not serve this Service.
    pub fn is_interface_of(&self, hostname: &str) -> bool {
        nlb_interface_description(hostname).is_some_and(|d| d == self.description)
    }
}

/// PURE: the description ELB gives the interfaces of the NLB whose DNS name is `hostname`
/// (`<name>-<id>.elb.<region>.amazonaws.com`, or `internal-<name>-<id>...`: the prefix some
/// internal load balancers carry, and which no load balancer name may start with); None for a
/// name not of that shape. Sources: the ELB guide's "DNS name" of a Network Load Balancer
/// (`name-id.elb.region.amazonaws.com`) and the requester-managed interfaces it creates,
/// described `ELB net/<name>/<id>` (public tooling finds an NLB's interfaces that way, e.g.
/// a DescribeNetworkInterfaces `description` filter `ELB net/<name>/*`; the sim's controller,
/// tests/sim/src/kube/lb/aws.rs, names them so).
pub fn nlb_interface_description(hostname: &str) -> Option<String> {
    let (label, rest) = hostname.split_once('.')?;
    if !rest.starts_with("elb.") {
        return None;
    }
    let label = label.strip_prefix("internal-").unwrap_or(label);
    let (name, id) = label.rsplit_once('-')?;
    let hex = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit());
    if name.is_empty() || !hex(id) {
        return None;
    }
    Some(format!("ELB net/{name}/{id}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IpFamily {
    Ipv4,
    Ipv6,
}

impl IpFamily {
    pub fn of(ip: &IpAddr) -> Self {
        match ip {
            IpAddr::V4(_) => IpFamily::Ipv4,
            IpAddr::V6(_) => IpFamily::Ipv6,
        }
    }

    pub fn record_type(self) -> RecordType {
        match self {
            IpFamily::Ipv4 => RecordType::A,
            IpFamily::Ipv6 => RecordType::Aaaa,
        }
    }
}

impl fmt::Display for IpFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IpFamily::Ipv4 => "ipv4",
            IpFamily::Ipv6 => "ipv6",
        })
    }
}

/// Whether an address faces the internet (API) or the cluster network (API-INT, MCS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Public,
    Private,
    /// The bootstrap host's second private address (a GCP alias IP, an Azure secondary IP
    /// configuration), in `api-int` next to the bootstrap IP until stage 3 so that OpenShift's
    /// apiserver-watcher on the masters never takes the bootstrap IP for the API VIP. No load
    /// balancer claims it.
    Bootstrap,
}

impl Scope {
    /// Whether a load balancer claims addresses of this scope (the bootstrap host's do not).
    pub fn load_balanced(self) -> bool {
        !matches!(self, Scope::Bootstrap)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Public => "public",
            Scope::Private => "private",
            Scope::Bootstrap => "bootstrap",
        })
    }
}

/// Names one wanted reservation independent of any cloud id: the planner, the journal and the
/// ownership tag all use it, so a reservation found by tag maps back to what it was for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReservationKey {
    pub scope: Scope,
    pub family: IpFamily,
    /// The subnet the address lives in, where the cloud needs one per subnet (AWS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
}

impl ReservationKey {
    /// The `<scope>-<family>` part of resource names (`<infra-id>-rsvd-public-ipv4`).
    pub fn purpose(&self) -> String {
        format!("{}-{}", self.scope, self.family)
    }

    /// Parses the text form written by `Display` (used in ownership tags).
    pub fn parse(text: &str) -> Option<Self> {
        let (purpose, placement) = match text.split_once('@') {
            Some((p, s)) if !s.is_empty() => (p, Some(s.to_string())),
            Some(_) => return None,
            None => (text, None),
        };
        let (scope, family) = purpose.split_once('-')?;
        let scope = match scope {
            "public" => Scope::Public,
            "private" => Scope::Private,
            "bootstrap" => Scope::Bootstrap,
            _ => return None,
        };
        let family = match family {
            "ipv4" => IpFamily::Ipv4,
            "ipv6" => IpFamily::Ipv6,
            _ => return None,
        };
        Some(Self {
            scope,
            family,
            placement,
        })
    }
}

impl fmt::Display for ReservationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.purpose())?;
        if let Some(p) = &self.placement {
            write!(f, "@{p}")?;
        }
        Ok(())
    }
}

/// A request to reserve one address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReserveRequest {
    pub key: ReservationKey,
    /// The resource name (`<infra-id>-rsvd-<purpose>[-<subnet>]`).
    pub name: String,
    /// Idempotency token for clouds that take one (EC2 ClientToken, GCP requestId).
    pub token: String,
}

/// A reservation that exists in the cloud and is owned by this cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Reservation {
    pub key: ReservationKey,
    /// Cloud id: EIP allocation id, ENI id, or the resource name/id.
    pub id: String,
    pub name: String,
    pub ip: IpAddr,
}

impl Reservation {
    /// A resource tagged (labelled) ours, as the cloud lists it: `key` is the value of its
    /// reservation tag, `ip` its address as text. One not in a shape we wrote (no readable key
    /// or address) is skipped with a warning: None.
    pub fn from_owned(
        id: String,
        name: String,
        key: Option<&str>,
        ip: Option<&str>,
    ) -> Option<Self> {
        let key = key.and_then(ReservationKey::parse);
        let ip = ip.and_then(|s| s.parse::<IpAddr>().ok());
        match (key, ip) {
            (Some(key), Some(ip)) => Some(Self { key, id, name, ip }),
            _ => {
                tracing::warn!(%id, "owned resource without a readable reservation tag or IP; ignored");
                None
            }
        }
    }
}

/// How a reservation the user made is found: by the seed's name
/// (`<infra-id>-rsvd-<purpose>[-<subnet>]`, AWS: the `Name` tag), or as `--reservations` names
/// it (a name, a cloud id, or on Azure, which has no private-IP resource, the private IP).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserLookup {
    Name(String),
    Id(String),
    Ip(IpAddr),
}

impl fmt::Display for UserLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserLookup::Name(n) => write!(f, "name {n}"),
            UserLookup::Id(id) => write!(f, "id {id}"),
            UserLookup::Ip(ip) => write!(f, "ip {ip}"),
        }
    }
}

/// One purpose the user may have reserved for the cluster, and how to find it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserReservationQuery {
    pub key: ReservationKey,
    pub lookup: UserLookup,
    /// The IP adopted for this purpose before (journal). Checks that only hold until a load
    /// balancer takes the address (unassociated, free in the subnet) are skipped for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted_before: Option<IpAddr>,
}

/// What a provider found for a query: a reservation the user made that fits its purpose, or
/// one that exists by that name but cannot serve it (the agent then stops: exit 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserMade {
    Fits(Reservation),
    Misfit {
        /// The resource as the cloud names it (id or name).
        resource: String,
        /// What is wrong with it, and what was expected.
        problem: String,
    },
}

/// Where a subnet lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub zone: String,
    pub network: String,
}

/// A DNS zone as the planner knows it: by domain and visibility, and by id or tags when the
/// installer's DNS manifest (or the install-config) names it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ZoneRef {
    /// Domain without trailing dot.
    pub domain: String,
    pub private: bool,
    /// Provider id: used as is, no lookup. GCP: `projects/<p>/managedZones/<z>` or a bare zone
    /// name (in the settings' project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// AWS: among the zones of this domain and visibility, the one carrying all these tags
    /// (the same private zone name can exist once per VPC).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
}

impl ZoneRef {
    /// The zone with provider id `id`.
    pub fn with_id(&self, id: impl Into<String>) -> Zone {
        Zone {
            reference: self.clone(),
            id: id.into(),
        }
    }

    /// The zone as the user named it by id, when they did: used as is, no look-up.
    pub fn named(&self) -> Option<Zone> {
        self.id.as_ref().map(|id| self.with_id(id))
    }
}

impl fmt::Display for ZoneRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vis = if self.private { "private" } else { "public" };
        write!(f, "{vis} zone {}", self.domain)
    }
}

/// A zone found in the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub reference: ZoneRef,
    pub id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RecordType {
    A,
    #[serde(rename = "AAAA")]
    Aaaa,
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordType::A => "A",
            RecordType::Aaaa => "AAAA",
        })
    }
}

/// One record set: fully qualified name (no trailing dot) and type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RecordKey {
    pub name: String,
    #[serde(rename = "type")]
    pub rtype: RecordType,
}

impl fmt::Display for RecordKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.rtype)
    }
}

/// A record set as read from the provider, exactly as needed to replace it atomically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordSet {
    pub ttl: u32,
    pub values: BTreeSet<IpAddr>,
    /// Opaque concurrency token (Azure ETag); None where the provider compares values instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The pool the public addresses are allocated from (AWS `publicIpv4Pool`, a BYO-IP pool), as
/// the cloud counts its addresses (DescribePublicIpv4Pools `TotalAddressCount`,
/// `TotalAvailableAddressCount`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressPool {
    pub id: String,
    pub total: u32,
    pub free: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservation_key_text_form_round_trips() {
        for text in ["public-ipv4@subnet-0abc", "private-ipv6", "private-ipv4@s"] {
            let key = ReservationKey::parse(text).unwrap();
            assert_eq!(key.to_string(), text);
        }
    }

    #[test]
    fn reservation_key_rejects_garbage() {
        for text in ["", "public", "public-ipv5", "inner-ipv4", "public-ipv4@"] {
            assert!(ReservationKey::parse(text).is_none(), "{text}");
        }
    }

    #[test]
    fn an_owned_resource_is_a_reservation_only_with_a_readable_key_and_address() {
        let owned = |key, ip| Reservation::from_owned("id-1".into(), "n-1".into(), key, ip);
        assert_eq!(
            owned(Some("public-ipv4"), Some("203.0.113.5")),
            Some(Reservation {
                key: ReservationKey::parse("public-ipv4").unwrap(),
                id: "id-1".into(),
                name: "n-1".into(),
                ip: "203.0.113.5".parse().unwrap(),
            })
        );
        for (key, ip) in [
            (None, Some("203.0.113.5")),
            (Some("public"), Some("203.0.113.5")),
            (Some("public-ipv4"), None),
            (Some("public-ipv4"), Some("203.0.113")),
        ] {
            assert_eq!(owned(key, ip), None, "{key:?} {ip:?}");
        }
    }
}

/// One frontend of a load balancer (a GCP forwarding rule) and what the cloud's health check
/// last saw of its backends ([`crate::AddressProvider::backend_health`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontendHealth {
    /// The frontend's name (GCP: the forwarding rule).
    pub frontend: String,
    /// Its ports, as the cloud shows them.
    pub ports: Vec<String>,
    /// Backends passing the health check, the bootstrap host never among them.
    pub healthy: Vec<String>,
    /// The backends asked that fail it (or are the bootstrap host).
    pub unhealthy: Vec<String>,
}
