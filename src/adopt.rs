//! UPI: reservations the user made are adopted, never owned. This module says what to look
//! for (the seed's names, or `--reservations FILE`), turns what the cloud found into adopted
//! reservations or an input error (exit 2) naming the resource and what is wrong, and keeps
//! the journal's record of them (an AWS ENI the user deletes at the hand-over is gone from the
//! cloud, but its IP is still the load balancer's).

use crate::assets::{Adoption, ClusterSpec, Platform};
use crate::error::InputError;
use crate::plan::Observed;
use anyhow::Result;
use bootstrap_cloud::{
    Reservation, ReservationKey, Scope, UserLookup, UserMade, UserReservationQuery,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

/// One entry of `--reservations FILE`: exactly one of the three.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: Option<String>,
    id: Option<String>,
    ip: Option<String>,
}

/// Reads `--reservations FILE` (YAML: purpose -> `{name|id|ip: ...}`), checking each entry's
/// shape and what the spec's platform can take. Whether a purpose is one the cluster needs is
/// checked once the cloud settled the spec (AWS subnets), in [`settle`].
pub fn load(file: Option<&Path>, adopt_only: bool, spec: &ClusterSpec) -> Result<Adoption> {
    let mut adoption = Adoption {
        adopt_only,
        ..Default::default()
    };
    let Some(file) = file else {
        return Ok(adoption);
    };
    let text = std::fs::read_to_string(file).map_err(|e| {
        InputError::new(file, "--reservations", format!("cannot read the file: {e}"))
    })?;
    let entries: BTreeMap<String, Entry> = serde_saphyr::from_str(&text).map_err(|e| {
        InputError::new(
            file,
            "(document)",
            format!("expected a map of purpose (e.g. public-ipv4, private-ipv4@subnet-0abc) to {{name|id|ip: ...}}: {e}"),
        )
    })?;
    for (purpose, entry) in entries {
        let bad = |problem: String| InputError::new(file, purpose.clone(), problem);
        let key = ReservationKey::parse(&purpose)
            .filter(|k| k.scope.load_balanced())
            .ok_or_else(|| {
                bad("expected <public|private>-<ipv4|ipv6>[@<subnet>], e.g. private-ipv4 or public-ipv4@subnet-0abc".into())
            })?;
        let lookup = match (entry.name, entry.id, entry.ip) {
            (Some(n), None, None) if !n.is_empty() => UserLookup::Name(n),
            (None, Some(i), None) if !i.is_empty() => UserLookup::Id(i),
            (None, None, Some(ip)) => UserLookup::Ip(
                ip.parse::<IpAddr>()
                    .map_err(|_| bad(format!("ip: expected an IP address, found {ip:?}")))?,
            ),
            _ => return Err(bad("expected exactly one of name, id or ip".into()).into()),
        };
        let azure_private =
            matches!(spec.platform, Platform::Azure(_)) && key.scope == Scope::Private;
        match (&lookup, azure_private) {
            (UserLookup::Ip(_), false) => {
                return Err(bad(
                    "ip: only an Azure private reservation is named by its IP (Azure has no private-IP resource); name the resource (name or id)".into(),
                )
                .into());
            }
            (UserLookup::Name(_) | UserLookup::Id(_), true) => {
                return Err(bad(
                    "Azure has no private-IP resource: give the private IP itself (ip: ...), free in the compute subnet".into(),
                )
                .into());
            }
            _ => {}
        }
        adoption.named.push((key, lookup));
    }
    adoption.file = Some(file.to_path_buf());
    Ok(adoption)
}

/// What to look for: each wanted reservation by the seed's name, or as `--reservations`
/// names it. An Azure private IP has no resource to find by name: only a named IP is looked
/// at (the agent's own pick is the resource-group tag `observe` reads). The bootstrap host's
/// second address is not looked for: it is the agent's to give.
/// `recorded`: what the journal says was adopted before.
pub fn queries(spec: &ClusterSpec, recorded: &[Reservation]) -> Vec<UserReservationQuery> {
    let azure = matches!(spec.platform, Platform::Azure(_));
    crate::plan::wanted_reservations(spec)
        .into_iter()
        // The bootstrap host's second address is the agent's to give, never the user's.
        .filter(|w| w.key.scope.load_balanced())
        .filter_map(|w| {
            let lookup = match spec.adoption.named_for(&w.key) {
                Some(l) => l.clone(),
                None if azure && w.key.scope == Scope::Private => return None,
                None => UserLookup::Name(w.name),
            };
            Some(UserReservationQuery {
                adopted_before: recorded.iter().find(|r| r.key == w.key).map(|r| r.ip),
                key: w.key,
                lookup,
            })
        })
        .collect()
}

/// The adopted reservations, or the input error naming each resource that exists but does
/// not fit, each `--reservations` entry that names a purpose the cluster does not have, and
/// each one that was not found. One the journal adopted before (`recorded`) and the cloud no
/// longer shows is not missing: the user deleted their ENI at the hand-over, as the plan told
/// them, and [`remember`] keeps it.
pub fn settle(
    spec: &ClusterSpec,
    found: Vec<UserMade>,
    recorded: &[Reservation],
) -> Result<Vec<Reservation>> {
    let file = spec
        .adoption
        .file
        .clone()
        .unwrap_or_else(|| "reservations of yours".into());
    let wanted: Vec<ReservationKey> = crate::plan::wanted_reservations(spec)
        .into_iter()
        .map(|w| w.key)
        .collect();
    let mut problems: Vec<String> = Vec::new();
    for (key, _) in &spec.adoption.named {
        if !wanted.contains(key) {
            problems.push(format!(
                "{key}: the cluster has no such reservation; it needs {}",
                wanted
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let mut adopted = Vec::new();
    for made in found {
        match made {
            UserMade::Fits(r) => adopted.push(r),
            UserMade::Misfit { resource, problem } => {
                problems.push(format!("{resource} {problem}"))
            }
        }
    }
    for (key, lookup) in &spec.adoption.named {
        if wanted.contains(key)
            && !adopted.iter().any(|r| &r.key == key)
            && !recorded.iter().any(|r| &r.key == key)
            && problems.is_empty()
        {
            problems.push(format!("{key}: {lookup} was not found"));
        }
    }
    if problems.is_empty() {
        adopted.sort();
        return Ok(adopted);
    }
    Err(InputError::new(
        file,
        "adopt",
        format!("cannot adopt what you reserved: {}", problems.join("; ")),
    )
    .into())
}

/// Looks for the user's reservations and refuses those that do not fit, before anything is
/// written (the journal included): a bad adopted resource is bad input, exit 2.
pub async fn precheck(
    spec: &ClusterSpec,
    providers: &crate::providers::Providers,
    recorded: &[Reservation],
) -> Result<()> {
    let found = providers
        .addresses
        .find_user_made(&queries(spec, recorded))
        .await?;
    settle(spec, found, recorded)?;
    Ok(())
}

/// `--adopt-only`: every wanted reservation must exist already, the user's (or the agent's
/// from before); none is reserved. Exit 2 naming what is missing.
pub fn require_complete(spec: &ClusterSpec, observed: &Observed) -> Result<()> {
    if !spec.adoption.adopt_only {
        return Ok(());
    }
    let kept = observed.kept();
    let missing: Vec<String> = queries(spec, &[])
        .into_iter()
        .filter(|q| !kept.contains_key(&q.key))
        .map(|q| format!("{} ({})", q.key, q.lookup))
        .chain(
            crate::plan::wanted_reservations(spec)
                .into_iter()
                .filter(|w| !kept.contains_key(&w.key))
                .filter(|w| {
                    matches!(spec.platform, Platform::Azure(_))
                        && w.key.scope == Scope::Private
                        && spec.adoption.named_for(&w.key).is_none()
                })
                .map(|w| format!("{} (name its IP in --reservations)", w.key)),
        )
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(InputError::new(
        "--adopt-only",
        "reservations",
        format!(
            "the agent reserves nothing, but none of yours was found for: {}; create them by the seed's names or drop --adopt-only",
            missing.join(", ")
        ),
    )
    .into())
}

/// The journal's adopted reservations the cloud no longer shows (an AWS ENI the user deleted
/// so its load balancer can claim the IP) stay adopted: the journal is the only record of
/// their IP, as for the agent's own handed-over ENIs.
pub fn remember(observed: &mut Observed, recorded: &[Reservation]) {
    for r in recorded {
        let known = observed.adopted.iter().any(|a| a.key == r.key)
            || observed.reservations.iter().any(|o| o.key == r.key);
        if !known {
            observed.adopted.push(r.clone());
        }
    }
    observed.adopted.sort();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::fixtures::spec;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    /// What `queries` looks for, as text.
    fn lookups(s: &ClusterSpec) -> Vec<String> {
        queries(s, &[])
            .iter()
            .map(|q| q.lookup.to_string())
            .collect()
    }

    #[test]
    fn the_seeds_names_are_looked_for_unless_the_file_names_others() {
        let mut s = spec("gcp");
        assert_eq!(
            lookups(&s),
            [
                "name mycluster-7xk2p-rsvd-public-ipv4",
                "name mycluster-7xk2p-rsvd-private-ipv4"
            ]
        );
        let f = file("private-ipv4: {name: my-vip}\n");
        s.adoption = load(Some(f.path()), false, &s).unwrap();
        assert_eq!(
            lookups(&s),
            ["name mycluster-7xk2p-rsvd-public-ipv4", "name my-vip"]
        );
    }

    #[test]
    fn the_bootstrap_hosts_second_address_is_never_looked_for_nor_named() {
        for cloud in ["gcp", "azure"] {
            let mut s = spec(cloud);
            s.bootstrap_ip = Some("10.0.1.10".parse().unwrap());
            s.second_bootstrap_address = crate::assets::SecondAddress::Host;
            assert!(
                crate::plan::wanted_reservations(&s)
                    .iter()
                    .any(|w| w.key.scope == Scope::Bootstrap),
                "{cloud}: wanted"
            );
            assert!(
                queries(&s, &[])
                    .iter()
                    .all(|q| q.key.scope != Scope::Bootstrap),
                "{cloud}: not the user's"
            );
            let f = file("bootstrap-ipv4: {name: mycluster-7xk2p-rsvd-bootstrap-ipv4}\n");
            let err = load(Some(f.path()), false, &s).unwrap_err().to_string();
            assert!(
                err.contains("bootstrap-ipv4: expected <public|private>"),
                "{cloud}: {err}"
            );
        }
    }

    #[test]
    fn azure_private_is_looked_for_only_when_its_ip_is_named() {
        let mut s = spec("azure");
        assert!(
            queries(&s, &[])
                .iter()
                .all(|q| q.key.scope == Scope::Public)
        );
        let f = file("private-ipv4: {ip: 10.0.3.250}\n");
        s.adoption = load(Some(f.path()), false, &s).unwrap();
        assert!(
            queries(&s, &[])
                .iter()
                .any(|q| q.lookup == UserLookup::Ip("10.0.3.250".parse().unwrap()))
        );
    }

    #[test]
    fn a_bad_reservations_file_names_the_file_the_entry_and_the_expectation() {
        let s = spec("gcp");
        for (text, expected) in [
            ("private: {name: x}\n", "private: expected <public|private>"),
            (
                "private-ipv4: {name: x, id: y}\n",
                "exactly one of name, id or ip",
            ),
            (
                "private-ipv4: {ip: 10.0.0.1}\n",
                "only an Azure private reservation",
            ),
            ("private-ipv4: {nam: x}\n", "(document)"),
            ("- a\n", "(document)"),
        ] {
            let f = file(text);
            let err = load(Some(f.path()), false, &s).unwrap_err().to_string();
            assert!(err.contains(&f.path().display().to_string()), "{err}");
            assert!(err.contains(expected), "{text}: {err}");
        }
        let azure = spec("azure");
        let f = file("private-ipv4: {name: x}\n");
        let err = load(Some(f.path()), false, &azure).unwrap_err().to_string();
        assert!(err.contains("give the private IP itself"), "{err}");
    }

    #[test]
    fn misfits_unknown_purposes_and_missing_named_ones_are_input_errors() {
        let mut s = spec("gcp");
        let err = settle(
            &s,
            vec![UserMade::Misfit {
                resource: "address x".into(),
                problem: "is INTERNAL".into(),
            }],
            &[],
        )
        .unwrap_err();
        assert_eq!(crate::exit::code(&err), crate::exit::INVALID_INPUT);
        assert!(err.to_string().contains("address x is INTERNAL"), "{err}");
        let f = file("public-ipv6: {name: v6}\nprivate-ipv4: {name: my-vip}\n");
        s.adoption = load(Some(f.path()), false, &s).unwrap();
        let err = settle(&s, Vec::new(), &[]).unwrap_err().to_string();
        assert!(
            err.contains("public-ipv6: the cluster has no such reservation"),
            "{err}"
        );
        s.adoption.named.retain(|(k, _)| k.scope == Scope::Private);
        let err = settle(&s, Vec::new(), &[]).unwrap_err().to_string();
        assert!(
            err.contains("private-ipv4: name my-vip was not found"),
            "{err}"
        );
        // Adopted before and gone since (the user's hand-over): not missing.
        let before = Reservation {
            id: "my-vip".into(),
            ip: "10.0.0.9".parse().unwrap(),
            name: "my-vip".into(),
            key: ReservationKey::parse("private-ipv4").unwrap(),
        };
        assert_eq!(
            settle(&s, Vec::new(), std::slice::from_ref(&before)).unwrap(),
            Vec::new()
        );
        // Found now: adopted; another purpose's reservation found is not this one.
        let found = |key: &str| {
            vec![UserMade::Fits(Reservation {
                key: ReservationKey::parse(key).unwrap(),
                ..before.clone()
            })]
        };
        assert_eq!(settle(&s, found("private-ipv4"), &[]).unwrap().len(), 1);
        let err = settle(&s, found("public-ipv4"), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("name my-vip was not found"), "{err}");
    }

    #[test]
    fn adopt_only_requires_every_reservation_to_exist() {
        let mut s = spec("gcp");
        s.adoption.adopt_only = true;
        let mut observed = Observed::default();
        let err = require_complete(&s, &observed).unwrap_err();
        assert_eq!(crate::exit::code(&err), crate::exit::INVALID_INPUT);
        assert!(
            err.to_string()
                .contains("public-ipv4 (name mycluster-7xk2p-rsvd-public-ipv4)"),
            "{err}"
        );
        for (key, ip) in [
            ("public-ipv4", "203.0.113.5"),
            ("private-ipv4", "10.0.128.5"),
        ] {
            observed.adopted.push(Reservation {
                key: ReservationKey::parse(key).unwrap(),
                id: key.into(),
                name: key.into(),
                ip: ip.parse().unwrap(),
            });
        }
        require_complete(&s, &observed).unwrap();
    }
}
