//! Reservations the user made (UPI): elastic IPs and ENIs whose `Name` tag is the seed's
//! `<infra-id>-rsvd-public-ipv4[-<subnet>]` / `<infra-id>-rsvd-private-ipv4[-<subnet>]`, or that
//! `--reservations` names by id or Name. They are checked against the purpose they serve and
//! only ever read: never tagged, released or changed.
//!
//! EC2 names nothing but by tags, so the name is a `Name` tag, and an elastic IP belongs to no
//! subnet: `-<subnet>` says which public subnet's load balancer takes it. Without the suffix,
//! EIPs fill the public subnets in order (subnet id, then allocation id) and an ENI serves the
//! private subnet it lies in.

use super::{RESERVATION_TAG, classify, cluster_tag};
use crate::{
    CloudError, Reservation, ReservationKey, Scope, UserLookup, UserMade, UserReservationQuery,
};
use aws_sdk_ec2::Client;
use aws_sdk_ec2::types::{Address, DomainType, Filter, NetworkInterface, Tag};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// One EC2 resource that may be the user's reservation, in the shape the checks need.
#[derive(Debug, Clone)]
struct Found {
    id: String,
    name: String,
    ip: Option<IpAddr>,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Eip {
        vpc: bool,
        /// What it is associated with (interface or instance), if anything.
        associated: Option<String>,
    },
    Eni {
        subnet: String,
        attached_to: Option<String>,
    },
}

impl Found {
    fn describe(&self) -> String {
        match self.kind {
            Kind::Eip { .. } => format!("elastic IP {} ({})", self.id, self.name),
            Kind::Eni { .. } => format!("network interface {} ({})", self.id, self.name),
        }
    }
}

fn find_tag<'a>(tags: &'a [Tag], key: &str) -> Option<&'a str> {
    tags.iter()
        .find(|t| t.key() == Some(key))
        .and_then(|t| t.value())
}

fn is_ours(tags: &[Tag], infra_id: &str) -> bool {
    find_tag(tags, &cluster_tag(infra_id)) == Some("owned")
        && find_tag(tags, RESERVATION_TAG).is_some()
}

fn eip(a: &Address) -> Found {
    Found {
        id: a.allocation_id().unwrap_or_default().to_string(),
        name: find_tag(a.tags(), "Name").unwrap_or_default().to_string(),
        ip: a.public_ip().and_then(|s| s.parse().ok()),
        kind: Kind::Eip {
            vpc: a.domain() == Some(&DomainType::Vpc),
            associated: a
                .network_interface_id()
                .or(a.instance_id())
                .filter(|id| !id.is_empty() && a.association_id().is_some())
                .map(str::to_string),
        },
    }
}

fn eni(n: &NetworkInterface) -> Found {
    Found {
        id: n.network_interface_id().unwrap_or_default().to_string(),
        name: find_tag(n.tag_set(), "Name")
            .unwrap_or_default()
            .to_string(),
        ip: n.private_ip_address().and_then(|s| s.parse().ok()),
        kind: Kind::Eni {
            subnet: n.subnet_id().unwrap_or_default().to_string(),
            attached_to: n
                .attachment()
                .and_then(|a| a.instance_id())
                .map(str::to_string),
        },
    }
}

/// Reads every candidate (two calls by `Name`, one per kind of id) and matches them to the
/// queries.
pub(super) async fn find(
    client: &Client,
    infra_id: &str,
    queries: &[UserReservationQuery],
) -> Result<Vec<UserMade>, CloudError> {
    let bases = [
        format!("{infra_id}-rsvd-public-ipv4"),
        format!("{infra_id}-rsvd-private-ipv4"),
    ];
    let mut names: BTreeSet<String> = queries
        .iter()
        .filter_map(|q| match &q.lookup {
            UserLookup::Name(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    if queries.iter().any(|q| by_seed_name(infra_id, q)) {
        names.extend(bases.iter().cloned());
    }
    let ids: Vec<&str> = queries
        .iter()
        .filter_map(|q| match &q.lookup {
            UserLookup::Id(id) => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let mut found: Vec<Found> = Vec::new();
    if !names.is_empty() {
        let by_name = || {
            Filter::builder()
                .name("tag:Name")
                .set_values(Some(names.iter().cloned().collect()))
                .build()
        };
        let out = client
            .describe_addresses()
            .filters(by_name())
            .send()
            .await
            .map_err(|e| classify("DescribeAddresses", e))?;
        found.extend(
            out.addresses()
                .iter()
                .filter(|a| !is_ours(a.tags(), infra_id))
                .map(eip),
        );
        let mut pages = client
            .describe_network_interfaces()
            .filters(by_name())
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify("DescribeNetworkInterfaces", e))?;
            found.extend(
                page.network_interfaces()
                    .iter()
                    .filter(|n| !is_ours(n.tag_set(), infra_id))
                    .map(eni),
            );
        }
    }
    // By id, one call each: an unknown id is not there (the caller names what it did not
    // find), rather than failing the whole read.
    for id in ids {
        let got = if id.starts_with("eipalloc-") {
            client
                .describe_addresses()
                .allocation_ids(id)
                .send()
                .await
                .map(|o| o.addresses().iter().map(eip).collect::<Vec<_>>())
                .map_err(|e| classify("DescribeAddresses", e))
        } else {
            client
                .describe_network_interfaces()
                .network_interface_ids(id)
                .send()
                .await
                .map(|o| o.network_interfaces().iter().map(eni).collect::<Vec<_>>())
                .map_err(|e| classify("DescribeNetworkInterfaces", e))
        };
        match got {
            Ok(list) => found.extend(list.into_iter().filter(|f| f.id == id)),
            Err(e) if e.kind == crate::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(match_queries(infra_id, queries, &found))
}

/// The query looks the seed's way: `Name` = `<infra-id>-rsvd-<purpose>-<subnet>`.
fn by_seed_name(infra_id: &str, q: &UserReservationQuery) -> bool {
    let seed = match &q.key.placement {
        Some(p) => format!("{infra_id}-rsvd-{}-{p}", q.key.purpose()),
        None => format!("{infra_id}-rsvd-{}", q.key.purpose()),
    };
    q.lookup == UserLookup::Name(seed)
}

/// Pure: which resource serves which query, and what does not fit.
fn match_queries(
    infra_id: &str,
    queries: &[UserReservationQuery],
    found: &[Found],
) -> Vec<UserMade> {
    let public_base = format!("{infra_id}-rsvd-public-ipv4");
    let private_base = format!("{infra_id}-rsvd-private-ipv4");
    let subnets_of = |scope: Scope| -> Vec<String> {
        queries
            .iter()
            .filter(|q| q.key.scope == scope)
            .filter_map(|q| q.key.placement.clone())
            .collect()
    };
    let mut out: Vec<UserMade> = Vec::new();
    let mut fits: BTreeMap<ReservationKey, Found> = BTreeMap::new();
    let mut misfit = |f: &Found, problem: String| {
        out.push(UserMade::Misfit {
            resource: f.describe(),
            problem,
        });
    };
    let mut public_pool: Vec<&Found> = Vec::new();
    for f in found {
        let query = queries.iter().find(|q| match &q.lookup {
            UserLookup::Name(n) => *n == f.name,
            UserLookup::Id(id) => *id == f.id,
            UserLookup::Ip(_) => false,
        });
        let key = match (query, &f.kind) {
            (Some(q), _) => q.key.clone(),
            (None, Kind::Eip { .. }) if f.name == public_base => {
                public_pool.push(f);
                continue;
            }
            (None, Kind::Eni { subnet, .. }) if f.name == private_base => {
                let placed = queries.iter().find(|q| {
                    q.key.scope == Scope::Private
                        && q.key.placement.as_ref() == Some(subnet)
                        && by_seed_name(infra_id, q)
                });
                match placed {
                    Some(q) => q.key.clone(),
                    None => {
                        let problem = if subnets_of(Scope::Public).contains(subnet) {
                            format!(
                                "is in public subnet {subnet} (role ControlPlaneExternalLB); a private reservation must be in a private subnet (role ControlPlaneInternalLB) of the cluster: {}",
                                subnets_of(Scope::Private).join(", ")
                            )
                        } else {
                            format!(
                                "is in subnet {subnet}, which is not a private subnet (role ControlPlaneInternalLB) of the cluster: expected one of {}",
                                subnets_of(Scope::Private).join(", ")
                            )
                        };
                        misfit(f, problem);
                        continue;
                    }
                }
            }
            (None, _) => {
                misfit(
                    f,
                    match f.kind {
                        Kind::Eip { .. } => format!(
                            "an elastic IP cannot hold a private IP; name an ENI {private_base}[-<subnet>] instead"
                        ),
                        Kind::Eni { .. } => format!(
                            "a network interface cannot be the public reservation; name an elastic IP {public_base}[-<subnet>] instead"
                        ),
                    },
                );
                continue;
            }
        };
        let adopted_before = query.and_then(|q| q.adopted_before);
        match fit_problem(&key, f, adopted_before) {
            Some(problem) => misfit(f, problem),
            None => match fits.get(&key) {
                Some(first) => misfit(
                    f,
                    format!(
                        "{} is the user's {key} already; there must be one per purpose",
                        first.id
                    ),
                ),
                None => {
                    fits.insert(key, f.clone());
                }
            },
        }
    }
    // EIPs named without a subnet fill the public subnets that have none, in order; one that
    // served a subnet before (journal) stays there.
    public_pool.sort_by(|a, b| a.id.cmp(&b.id));
    let mut open: Vec<&UserReservationQuery> = queries
        .iter()
        .filter(|q| q.key.scope == Scope::Public && by_seed_name(infra_id, q))
        .filter(|q| !fits.contains_key(&q.key))
        .collect();
    open.sort_by(|a, b| a.key.cmp(&b.key));
    let mut rest: Vec<&Found> = Vec::new();
    for f in public_pool {
        match open
            .iter()
            .position(|q| q.adopted_before.is_some() && q.adopted_before == f.ip)
        {
            Some(i) => {
                let q = open.remove(i);
                if let Some(problem) = fit_problem(&q.key, f, q.adopted_before) {
                    misfit(f, problem);
                } else {
                    fits.insert(q.key.clone(), f.clone());
                }
            }
            None => rest.push(f),
        }
    }
    for f in rest {
        if open.is_empty() {
            misfit(
                f,
                format!(
                    "more elastic IPs are named {public_base} than the cluster has public subnets without one ({})",
                    subnets_of(Scope::Public).join(", ")
                ),
            );
            continue;
        }
        let q = open.remove(0);
        match fit_problem(&q.key, f, q.adopted_before) {
            Some(problem) => misfit(f, problem),
            None => {
                fits.insert(q.key.clone(), f.clone());
            }
        }
    }
    out.extend(fits.into_iter().filter_map(|(key, f)| {
        Some(UserMade::Fits(Reservation {
            key,
            name: if f.name.is_empty() {
                f.id.clone()
            } else {
                f.name.clone()
            },
            ip: f.ip?,
            id: f.id,
        }))
    }));
    out
}

/// What keeps `f` from serving `key`, if anything.
fn fit_problem(key: &ReservationKey, f: &Found, adopted_before: Option<IpAddr>) -> Option<String> {
    if f.ip.is_none() {
        return Some("has no IP address".into());
    }
    match (&f.kind, key.scope) {
        (Kind::Eip { vpc, associated }, Scope::Public) => {
            if !vpc {
                return Some("is an EC2-Classic address; the load balancer needs a VPC elastic IP (--domain vpc)".into());
            }
            match associated {
                Some(to) if adopted_before != f.ip => Some(format!(
                    "is associated with {to}; the load balancer needs it unassociated"
                )),
                _ => None,
            }
        }
        (
            Kind::Eni {
                subnet,
                attached_to,
            },
            Scope::Private,
        ) => {
            if key.placement.as_ref() != Some(subnet) {
                return Some(format!(
                    "is in subnet {subnet}, but it is to serve {key}: it must be in subnet {}",
                    key.placement.as_deref().unwrap_or("-")
                ));
            }
            attached_to.as_ref().map(|i| {
                format!(
                    "is attached to instance {i}; only an unattached interface can hold the load balancer's IP"
                )
            })
        }
        (Kind::Eip { .. }, Scope::Private) => Some(format!(
            "is an elastic IP, but {key} is a private IP held by a network interface in its subnet"
        )),
        (Kind::Eni { .. }, Scope::Public) => Some(format!(
            "is a network interface, but {key} is an elastic IP"
        )),
        (_, Scope::Bootstrap) => Some(format!(
            "cannot serve {key}: on AWS the bootstrap host has one address"
        )),
    }
}

#[cfg(test)]
#[path = "adopt_tests.rs"]
mod tests;
