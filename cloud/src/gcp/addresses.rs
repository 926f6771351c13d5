//! Regional static addresses: one EXTERNAL (the public API) and one INTERNAL with purpose
//! `SHARED_LOADBALANCER_VIP` in the compute subnetwork (API-INT and MCS share it). GCE can
//! reserve an internal IP by itself, so there is no placeholder and no hand-over on GCP.
//!
//! Inserts carry a `requestId` derived from the planner's token, and every mutation waits for
//! its regional Operation (polled with GET, so polling is not counted as a mutation).

use super::{GcpSettings, RESERVATION_LABEL, classify, cluster_label, label_text, request_id};
use crate::{AddressProvider, CloudError, ErrorKind, Reservation, ReservationKey, ReserveRequest};
use crate::{IpFamily, Scope};
use async_trait::async_trait;
use google_cloud_compute_v1::client::Addresses;
use google_cloud_compute_v1::model::{Address, Operation, address};
use google_cloud_gax::error::Error as GaxError;
use google_cloud_gax::options::RequestOptionsBuilder;
use google_cloud_gax::paginator::ItemPaginator;
use std::net::IpAddr;

pub struct GceAddresses {
    client: Addresses,
    project: String,
    region: String,
    subnetwork: String,
    cluster_label: String,
    /// The bootstrap host that gets a second address (None: `--bootstrap-second-address off`).
    bootstrap: Option<super::bootstrap_host::GceBootstrapHost>,
    /// The internal load balancer's backend health (see [`super::backend_health`]).
    health: super::backend_health::GceBackendHealth,
}

impl GceAddresses {
    pub async fn new(settings: &GcpSettings) -> Result<Self, CloudError> {
        let client = build_client!(
            Addresses,
            settings,
            settings.compute_endpoint.as_deref(),
            "compute"
        );
        Ok(Self {
            client,
            project: settings.project.clone(),
            region: settings.region.clone(),
            subnetwork: settings.subnetwork_url(),
            cluster_label: cluster_label(&settings.infra_id),
            bootstrap: match settings.second_address_host {
                Some(ip) => Some(super::bootstrap_host::GceBootstrapHost::new(settings, ip).await?),
                None => None,
            },
            health: super::backend_health::GceBackendHealth::new(settings).await?,
        })
    }

    /// Compute's list filter: both ownership labels must be present.
    fn owned_filter(&self) -> String {
        format!(
            "(labels.{} = \"owned\") (labels.{RESERVATION_LABEL}:*)",
            self.cluster_label
        )
    }

    fn is_ours(&self, a: &Address) -> bool {
        a.labels.get(&self.cluster_label).map(String::as_str) == Some("owned")
            && a.labels.contains_key(RESERVATION_LABEL)
    }

    /// The end of a regional operation as sent: the send's error, or, once the operation is
    /// DONE (polled, bounded: `poll::OPERATION_BUDGET`), its error turned into ours.
    async fn until_done(
        &self,
        what: &str,
        sent: Result<Operation, GaxError>,
    ) -> Result<(), CloudError> {
        let op = sent.map_err(|e| classify(what, e))?;
        super::until_done(what, op, |name| async move {
            self.client
                .get_operation()
                .set_project(&self.project)
                .set_region(&self.region)
                .set_operation(name)
                .send()
                .await
                .map_err(|e| classify("regionOperations.get", e))
        })
        .await
    }

    async fn get(&self, name: &str) -> Result<Address, CloudError> {
        self.client
            .get()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_address(name)
            .send()
            .await
            .map_err(|e| classify("addresses.get", e))
    }
}

pub(super) fn operation_error(what: &str, op: &Operation) -> CloudError {
    let errors = op
        .error
        .as_ref()
        .map(|e| e.errors.as_slice())
        .unwrap_or(&[]);
    let codes: Vec<&str> = errors.iter().filter_map(|e| e.code.as_deref()).collect();
    let message = errors
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                e.code.as_deref().unwrap_or("ERROR"),
                e.message.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let kind = if codes.contains(&"RESOURCE_ALREADY_EXISTS") || codes.contains(&"IP_IN_USE") {
        ErrorKind::Conflict
    } else if codes.iter().any(|c| c.contains("NOT_FOUND")) {
        ErrorKind::NotFound
    } else if codes
        .iter()
        .any(|c| c.contains("RATE_LIMIT") || c.contains("QUOTA_EXCEEDED_TRANSIENT"))
    {
        ErrorKind::Transient
    } else {
        ErrorKind::Fatal
    };
    CloudError::new(kind, what, message)
}

/// A Reservation from what GCE returned; an owned address without a readable purpose or IP
/// (still RESERVING, or not in a shape we wrote) is skipped with a warning.
fn reservation(a: &Address) -> Option<Reservation> {
    let name = a.name.clone()?;
    let key = a.labels.get(RESERVATION_LABEL).map(String::as_str);
    Reservation::from_owned(name.clone(), name, key, a.address.as_deref())
}

#[async_trait]
impl AddressProvider for GceAddresses {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        let mut items = self
            .client
            .list()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_filter(self.owned_filter())
            .by_item();
        let mut found = Vec::new();
        while let Some(item) = items.next().await {
            let a = item.map_err(|e| classify("addresses.list", e))?;
            // The filter is the server's; ownership is checked here again, in one place.
            if self.is_ours(&a) {
                found.extend(reservation(&a));
            }
        }
        if let Some(host) = &self.bootstrap {
            let key = ReservationKey {
                scope: Scope::Bootstrap,
                family: IpFamily::Ipv4,
                placement: None,
            };
            found.extend(host.observe(key).await?);
        }
        found.sort();
        Ok(found)
    }

    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        if request.key.scope == Scope::Bootstrap {
            return match &self.bootstrap {
                Some(host) => host.reserve(request).await,
                None => Err(CloudError::fatal(
                    "instances.updateNetworkInterface",
                    "the bootstrap host's second address is off",
                )),
            };
        }
        if request.key.placement.is_some() || request.key.family != IpFamily::Ipv4 {
            return Err(CloudError::fatal(
                "addresses.insert",
                format!(
                    "GCP reserves one regional IPv4 address per scope, not {}",
                    request.key
                ),
            ));
        }
        let mut body = Address::new()
            .set_name(&request.name)
            .set_description(format!(
                "bootstrap-agent: the API load balancer's {} address, claimed by a LoadBalancer Service",
                request.key.scope
            ))
            .set_ip_version(address::IpVersion::Ipv4)
            .set_labels([
                (self.cluster_label.clone(), "owned".to_string()),
                (
                    RESERVATION_LABEL.to_string(),
                    label_text(&request.key.to_string()),
                ),
            ]);
        body = match request.key.scope {
            // PREMIUM said outright: without it GCE takes the project's default tier, and the
            // cloud provider refuses a Service address whose tier is not the Service's
            // (Premium, as the Services carry no `cloud.google.com/network-tier`).
            Scope::Public => body
                .set_address_type(address::AddressType::External)
                .set_network_tier(address::NetworkTier::Premium),
            Scope::Private => body
                .set_address_type(address::AddressType::Internal)
                .set_purpose(address::Purpose::SharedLoadbalancerVip)
                .set_subnetwork(&self.subnetwork),
            Scope::Bootstrap => {
                return Err(CloudError::fatal(
                    "addresses.insert",
                    "the bootstrap host's second address is an alias IP, not an address resource",
                ));
            }
        };
        let sent = self
            .client
            .insert()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_request_id(request_id(&request.token))
            .set_body(body)
            .with_idempotency(super::IDEMPOTENT)
            .send()
            .await;
        match self.until_done("addresses.insert", sent).await {
            Ok(()) => {}
            // The name exists: ours from a lost earlier attempt is fine, anything else is not.
            Err(e) if e.kind == ErrorKind::Conflict => {
                let existing = self.get(&request.name).await?;
                if !self.is_ours(&existing) {
                    return Err(CloudError::fatal(
                        "addresses.insert",
                        format!(
                            "address {} exists and is not labelled as ours: {}",
                            request.name, e.message
                        ),
                    ));
                }
            }
            Err(e) => return Err(e),
        }
        let created = self.get(&request.name).await?;
        reservation(&created).ok_or_else(|| {
            CloudError::fatal(
                "addresses.get",
                format!("address {} has no IP or reservation label", request.name),
            )
        })
    }

    /// The user's addresses by name in the cluster's region (GCE addresses are named, so an
    /// `id` in `--reservations` is taken as the name too). Reads only.
    async fn find_user_made(
        &self,
        queries: &[crate::UserReservationQuery],
    ) -> Result<Vec<crate::UserMade>, CloudError> {
        let mut found = Vec::new();
        for query in queries {
            let name = match &query.lookup {
                crate::UserLookup::Name(n) | crate::UserLookup::Id(n) => n,
                crate::UserLookup::Ip(ip) => {
                    found.push(crate::UserMade::Misfit {
                        resource: ip.to_string(),
                        problem: format!(
                            "GCP reserves an internal IP as an address resource: name the address for {} instead of an IP",
                            query.key
                        ),
                    });
                    continue;
                }
            };
            let address = match self.get(name).await {
                Ok(a) => a,
                Err(e) if e.kind == ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if !self.is_ours(&address) {
                found.push(super::adopt::check(
                    &address,
                    query,
                    &self.region,
                    &self.subnetwork,
                ));
            }
        }
        Ok(found)
    }

    /// An address a forwarding rule uses lists it in `users` (status `IN_USE`), and
    /// addresses.delete refuses it with `resourceInUseByAnotherResource`; the service
    /// controller deletes the rule when the Service goes.
    async fn in_use_by(&self, reservation: &Reservation) -> Result<Option<String>, CloudError> {
        // An alias is released by taking it off the VM: nothing else holds it.
        if reservation.key.scope == Scope::Bootstrap {
            return Ok(None);
        }
        let address = match self.get(&reservation.id).await {
            Ok(a) => a,
            Err(e) if e.kind == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok((!address.users.is_empty()).then(|| format!("used by {}", address.users.join(", "))))
    }

    async fn backend_health(
        &self,
        ip: IpAddr,
    ) -> Option<Result<Vec<crate::FrontendHealth>, CloudError>> {
        self.health.health(ip).await.transpose()
    }

    async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        if reservation.key.scope == Scope::Bootstrap {
            return match &self.bootstrap {
                Some(host) => host.release(reservation).await,
                None => Ok(()),
            };
        }
        // No requestId: a delete is idempotent by itself (404 = already gone), and a reused id
        // could return the operation of an earlier address with the same name.
        let sent = self
            .client
            .delete()
            .set_project(&self.project)
            .set_region(&self.region)
            .set_address(&reservation.id)
            .with_idempotency(super::IDEMPOTENT)
            .send()
            .await;
        match self.until_done("addresses.delete", sent).await {
            // Already gone (a crash after the call, before the journal): done.
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}
