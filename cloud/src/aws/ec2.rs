//! Elastic IPs (one per public subnet, for `aws-load-balancer-eip-allocations`) and ENIs that
//! hold a private IP per private subnet (for the internal NLB's private-ipv4-addresses).

mod holders;

use super::{AwsSettings, RESERVATION_TAG, classify, cluster_tag};
use crate::subnets::{SubnetFacts, SubnetQuery};
use crate::{
    AddressPool, AddressProvider, CloudError, Holder, Placement, Reservation, ReservationKey,
    ReserveRequest, Scope,
};
use async_trait::async_trait;
use aws_sdk_ec2::Client;
use aws_sdk_ec2::types::{DomainType, Filter, ResourceType, Tag, TagSpecification};
use std::collections::BTreeMap;
use std::net::IpAddr;

pub struct Ec2Addresses {
    client: Client,
    infra_id: String,
    /// `publicIpv4Pool`: every EIP comes from this BYO-IP pool, never from Amazon's.
    public_ipv4_pool: Option<String>,
    /// The cluster's subnets once settled (see [`Ec2Addresses::set_cluster_subnets`]): their
    /// VPC scopes who may hold a reserved IP.
    cluster_subnets: Vec<String>,
    /// The VPC(s) of `cluster_subnets`, read once (DescribeSubnets).
    vpcs: std::sync::OnceLock<Vec<String>>,
}

impl Ec2Addresses {
    pub fn new(config: &aws_config::SdkConfig, settings: &AwsSettings) -> Self {
        Self {
            client: Client::new(config),
            infra_id: settings.infra_id.clone(),
            public_ipv4_pool: settings.public_ipv4_pool.clone(),
            cluster_subnets: Vec::new(),
            vpcs: std::sync::OnceLock::new(),
        }
    }

    /// The cluster's subnets (public and private), once the install-config's or EC2's answer
    /// settled them. A private IP is unique only within a VPC (shared accounts reuse
    /// 10.0.0.0/16 in many), so the gate's proof of who holds a reserved IP looks in their VPC
    /// only.
    pub fn set_cluster_subnets(&mut self, ids: Vec<String>) {
        self.cluster_subnets = ids;
    }

    /// Refuses before allocating when the pool has no free address: the installer's provider
    /// (CAPA) would fall back to Amazon's pool then, but an address outside the user's range
    /// breaks what the pool is for (allow-lists of the API's public IPs).
    async fn check_pool(&self, pool: &str) -> Result<(), CloudError> {
        if describe_pool(&self.client, pool).await?.free < 1 {
            return Err(CloudError::fatal(
                "DescribePublicIpv4Pools",
                format!(
                    "public IPv4 pool {pool} (platform.aws.publicIpv4Pool) has no free address; add addresses to it and run again (the agent does not fall back to Amazon's pool)"
                ),
            ));
        }
        Ok(())
    }

    fn owned_filters(&self) -> Vec<Filter> {
        vec![
            Filter::builder()
                .name(format!("tag:{}", cluster_tag(&self.infra_id)))
                .values("owned")
                .build(),
            Filter::builder()
                .name("tag-key")
                .values(RESERVATION_TAG)
                .build(),
        ]
    }

    /// Subnets by id or by the cluster tag, for the install-configs that do not name them with
    /// roles (see [`crate::subnets`]). Reads only.
    pub async fn find_subnets(&self, query: &SubnetQuery) -> Result<Vec<SubnetFacts>, CloudError> {
        super::subnets::find(&self.client, &self.infra_id, query).await
    }

    fn tags(&self, resource: ResourceType, request: &ReserveRequest) -> TagSpecification {
        reservation_tags(&self.infra_id, resource, &request.name, &request.key)
    }
}

/// The tags a reservation is created with (tag on create): `Name`, the owned cluster tag and
/// the reservation key. Preflight's dry runs send the same, because EC2 authorizes
/// `ec2:CreateTags` as well when a create call carries tags.
pub(super) fn reservation_tags(
    infra_id: &str,
    resource: ResourceType,
    name: &str,
    key: &ReservationKey,
) -> TagSpecification {
    TagSpecification::builder()
        .resource_type(resource)
        .tags(tag("Name", name))
        .tags(tag(&cluster_tag(infra_id), "owned"))
        .tags(tag(RESERVATION_TAG, &key.to_string()))
        .build()
}

/// A BYO-IP pool's addresses as EC2 counts them. A pool EC2 does not know is its error
/// (`InvalidPublicIpv4PoolID.NotFound`); one missing from the answer counts as empty.
pub(super) async fn describe_pool(client: &Client, pool: &str) -> Result<AddressPool, CloudError> {
    let out = client
        .describe_public_ipv4_pools()
        .pool_ids(pool)
        .send()
        .await
        .map_err(|e| classify("DescribePublicIpv4Pools", e))?;
    let count = |n: Option<i32>| u32::try_from(n.unwrap_or(0)).unwrap_or(0);
    let (total, free) = out
        .public_ipv4_pools()
        .iter()
        .filter(|p| p.pool_id() == Some(pool))
        .fold((0, 0), |(total, free), p| {
            (
                total + count(p.total_address_count()),
                free + count(p.total_available_address_count()),
            )
        });
    Ok(AddressPool {
        id: pool.to_string(),
        total,
        free,
    })
}

fn tag(key: &str, value: &str) -> Tag {
    Tag::builder().key(key).value(value).build()
}

fn find_tag<'a>(tags: &'a [Tag], key: &str) -> Option<&'a str> {
    tags.iter()
        .find(|t| t.key() == Some(key))
        .and_then(|t| t.value())
}

/// Builds a Reservation from what EC2 returned; resources without a readable key or IP are
/// skipped with a warning (they are tagged ours but not in a shape we wrote).
fn reservation(id: Option<&str>, ip: Option<&str>, tags: &[Tag]) -> Option<Reservation> {
    let name = find_tag(tags, "Name").unwrap_or_default().to_string();
    Reservation::from_owned(id?.to_string(), name, find_tag(tags, RESERVATION_TAG), ip)
}

#[async_trait]
impl AddressProvider for Ec2Addresses {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        let eips = self
            .client
            .describe_addresses()
            .set_filters(Some(self.owned_filters()))
            .send()
            .await
            .map_err(|e| classify("DescribeAddresses", e))?;
        let mut found: Vec<Reservation> = eips
            .addresses()
            .iter()
            .filter_map(|a| reservation(a.allocation_id(), a.public_ip(), a.tags()))
            .collect();
        let mut pages = self
            .client
            .describe_network_interfaces()
            .set_filters(Some(self.owned_filters()))
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify("DescribeNetworkInterfaces", e))?;
            found.extend(page.network_interfaces().iter().filter_map(|n| {
                reservation(
                    n.network_interface_id(),
                    n.private_ip_address(),
                    n.tag_set(),
                )
            }));
        }
        found.sort();
        Ok(found)
    }

    async fn placements(&self, ids: &[String]) -> Result<BTreeMap<String, Placement>, CloudError> {
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let out = self
            .client
            .describe_subnets()
            .set_subnet_ids(Some(ids.to_vec()))
            .send()
            .await
            .map_err(|e| classify("DescribeSubnets", e))?;
        let found: BTreeMap<String, Placement> = out
            .subnets()
            .iter()
            .filter_map(|s| {
                Some((
                    s.subnet_id()?.to_string(),
                    Placement {
                        zone: s.availability_zone().unwrap_or_default().to_string(),
                        network: s.vpc_id().unwrap_or_default().to_string(),
                    },
                ))
            })
            .collect();
        let missing: Vec<&str> = ids
            .iter()
            .filter(|id| !found.contains_key(*id))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(CloudError::new(
                crate::ErrorKind::NotFound,
                "DescribeSubnets",
                format!("subnets not found: {}", missing.join(", ")),
            ));
        }
        Ok(found)
    }

    async fn address_pool(&self) -> Result<Option<AddressPool>, CloudError> {
        match &self.public_ipv4_pool {
            Some(pool) => Ok(Some(describe_pool(&self.client, pool).await?)),
            None => Ok(None),
        }
    }

    async fn reserve(&self, request: &ReserveRequest) -> Result<Reservation, CloudError> {
        match request.key.scope {
            // The masters on AWS run no apiserver-watcher: one bootstrap address is enough.
            Scope::Bootstrap => Err(CloudError::fatal(
                "CreateNetworkInterface",
                "AWS gives the bootstrap host no second address",
            )),
            // AllocateAddress has no idempotency token: the runner observes by tag first, and
            // the tags are set in the same call, so a crash cannot leave an untagged EIP.
            // The SDK never retries it: after a lost answer it would allocate a second EIP.
            // A failed call is transient to the runner instead, which observes by tag again
            // before anything else (and its verifying pass releases a duplicate regardless).
            Scope::Public => {
                if let Some(pool) = &self.public_ipv4_pool {
                    self.check_pool(pool).await?;
                }
                let out = self
                    .client
                    .allocate_address()
                    .domain(DomainType::Vpc)
                    .set_public_ipv4_pool(self.public_ipv4_pool.clone())
                    .tag_specifications(self.tags(ResourceType::ElasticIp, request))
                    .customize()
                    .config_override(
                        aws_sdk_ec2::config::Config::builder()
                            .retry_config(aws_sdk_ec2::config::retry::RetryConfig::disabled()),
                    )
                    .send()
                    .await
                    .map_err(|e| classify("AllocateAddress", e))?;
                let id = out.allocation_id().unwrap_or_default().to_string();
                let ip = parse_ip("AllocateAddress", out.public_ip())?;
                Ok(Reservation {
                    key: request.key.clone(),
                    id,
                    name: request.name.clone(),
                    ip,
                })
            }
            Scope::Private => {
                let subnet = request.key.placement.clone().ok_or_else(|| {
                    CloudError::fatal(
                        "CreateNetworkInterface",
                        "private reservation without subnet",
                    )
                })?;
                let out = self
                    .client
                    .create_network_interface()
                    .subnet_id(subnet)
                    .description(format!(
                        "{}: holds the API load balancer's private IP until the Service claims it",
                        request.name
                    ))
                    .client_token(&request.token)
                    .tag_specifications(self.tags(ResourceType::NetworkInterface, request))
                    .send()
                    .await
                    .map_err(|e| classify("CreateNetworkInterface", e))?;
                let eni = out.network_interface().ok_or_else(|| {
                    CloudError::fatal("CreateNetworkInterface", "response without interface")
                })?;
                Ok(Reservation {
                    key: request.key.clone(),
                    id: eni.network_interface_id().unwrap_or_default().to_string(),
                    name: request.name.clone(),
                    ip: parse_ip("CreateNetworkInterface", eni.private_ip_address())?,
                })
            }
        }
    }

    async fn release(&self, reservation: &Reservation) -> Result<(), CloudError> {
        let result = match reservation.key.scope {
            Scope::Bootstrap => Ok(()),
            Scope::Public => self
                .client
                .release_address()
                .allocation_id(&reservation.id)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| classify("ReleaseAddress", e)),
            Scope::Private => self
                .client
                .delete_network_interface()
                .network_interface_id(&reservation.id)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| classify("DeleteNetworkInterface", e)),
        };
        match result {
            // Already gone (a crash after the call, before the journal): done.
            Err(e) if e.kind == crate::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// An Elastic IP that is associated (an NLB's interface holds it): ReleaseAddress refuses
    /// it with `InvalidIPAddress.InUse` (EC2 API reference, ReleaseAddress), and the
    /// association of a load balancer's interface is ELB's to undo, when the NLB goes. The
    /// placeholder interfaces of the private IPs are ours and attached to nothing.
    async fn in_use_by(&self, reservation: &Reservation) -> Result<Option<String>, CloudError> {
        if reservation.key.scope != Scope::Public {
            return Ok(None);
        }
        let out = match self
            .client
            .describe_addresses()
            .allocation_ids(&reservation.id)
            .send()
            .await
            .map_err(|e| classify("DescribeAddresses", e))
        {
            Ok(out) => out,
            Err(e) if e.kind == crate::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(out.addresses().first().and_then(|a| {
            let association = a.association_id()?;
            let holder = a
                .network_interface_id()
                .or(a.instance_id())
                .unwrap_or("another resource");
            Some(format!("associated with {holder} ({association})"))
        }))
    }

    /// The user's own EIPs and ENIs, by `Name` tag or id (see `adopt`). Reads only.
    async fn find_user_made(
        &self,
        queries: &[crate::UserReservationQuery],
    ) -> Result<Vec<crate::UserMade>, CloudError> {
        super::adopt::find(&self.client, &self.infra_id, queries).await
    }

    /// Elastic IPs: DescribeAddresses by public IP gives the associated interface. Private
    /// IPs: DescribeNetworkInterfaces by `addresses.private-ip-address` in the cluster's VPC
    /// (`vpc-id`): the same private IP in another VPC is another network's. Two reads in all,
    /// plus one for the interfaces behind associated EIPs (also only in that VPC), plus the
    /// VPC itself the first time.
    async fn holders(
        &self,
        ips: &[IpAddr],
    ) -> Option<Result<BTreeMap<IpAddr, Holder>, CloudError>> {
        Some(self.find_holders(ips).await)
    }
}

fn parse_ip(operation: &str, ip: Option<&str>) -> Result<IpAddr, CloudError> {
    ip.and_then(|s| s.parse().ok())
        .ok_or_else(|| CloudError::fatal(operation, "response without a valid IP address"))
}
