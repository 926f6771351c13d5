//! Every rule about the bootstrap host's IP, in one place. The IP is settled once per command
//! (`settle`), checked against what the command is about to do (`check`), and adjusted per
//! stage for the planner (`for_stage`); the runner records it once seeded (`record_seeded`).
//!
//! 1. Which IP: `--bootstrap-ip`, else the one the journal recorded as seeded, else the source
//!    address this host would use (detected).
//! 2. Writing DNS (seed, remove) needs one, except on platform none (DNS is the user's).
//! 3. While one IP is seeded, seeding a different one is refused: the first would be orphaned.
//! 4. Once stage 3 removed it, seeding never puts it back.
//! 5. The IP of one of our reservations cannot be the bootstrap host's (a cloud does not hand
//!    out an address in use): DNS is not touched then.

use crate::assets::{ClusterSpec, Platform};
use crate::error::InputError;
use crate::journal::JournalState;
use crate::plan::{Observed, Step};
use anyhow::{Result, bail};
use std::net::{IpAddr, UdpSocket};

const FIELD: &str = "bootstrap IP";
const FLAG: &str = "--bootstrap-ip";

/// Rule 1: the flag, else the journal's, else detected.
pub fn settle(flag: Option<IpAddr>, recorded: Option<&JournalState>) -> Option<IpAddr> {
    flag.or_else(|| recorded.and_then(|s| s.bootstrap_ip))
        .or_else(detect_host_ip)
}

/// The source address the kernel would use for an outside destination. A UDP `connect` sends
/// no packet; it only asks the routing table.
fn detect_host_ip() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// Rules 2 and 3 for a command about to run `stages`, before anything is written.
pub fn check(spec: &ClusterSpec, stages: &[Step], recorded: &JournalState) -> Result<()> {
    let seeds = stages.contains(&Step::SeedDns);
    if (seeds || stages.contains(&Step::RemoveBootstrap))
        && !matches!(spec.platform, Platform::None)
    {
        require(spec)?;
    }
    if seeds {
        refuse_other_than_seeded(spec, recorded)?;
    }
    Ok(())
}

fn require(spec: &ClusterSpec) -> Result<()> {
    if spec.bootstrap_ip.is_none() {
        bail!(InputError::new(
            FLAG,
            FIELD,
            "unknown: pass --bootstrap-ip (it could not be detected from this host)"
        ));
    }
    Ok(())
}

fn refuse_other_than_seeded(spec: &ClusterSpec, recorded: &JournalState) -> Result<()> {
    match (recorded.bootstrap_ip, spec.bootstrap_ip) {
        (Some(seeded), Some(now)) if seeded != now && !recorded.bootstrap_removed => {
            bail!(InputError::new(
                FLAG,
                FIELD,
                format!(
                    "{now} differs from {seeded}, which is seeded in DNS (journal); run `dns teardown --bootstrap-ip {seeded}` first"
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Rules 4 and 5: the spec the planner gets for `stage`, given the journal and the cloud.
pub fn for_stage(
    spec: &ClusterSpec,
    stage: Step,
    recorded: &JournalState,
    observed: &Observed,
) -> Result<ClusterSpec> {
    let mut spec = spec.clone();
    if stage == Step::SeedDns && recorded.bootstrap_removed {
        spec.bootstrap_ip = None;
    }
    if matches!(stage, Step::SeedDns | Step::RemoveBootstrap)
        && let Some(conflict) = crate::plan::bootstrap_ip_conflict(&spec, observed)
    {
        bail!(InputError::new(FLAG, FIELD, conflict));
    }
    Ok(spec)
}

/// Rule 1's journal half: a seeded IP is remembered, so later commands find it (and rule 3
/// protects it) until stage 3 removed it. So is the bootstrap host's second address seeded
/// with it (the journal's reservations): once stage 3 released it, only this says which
/// address must have left the records.
pub fn record_seeded(state: &mut JournalState, spec: &ClusterSpec) {
    if !state.bootstrap_removed {
        state.bootstrap_ip = spec.bootstrap_ip;
        state.bootstrap_second_address = state
            .reservations
            .iter()
            .find(|r| r.key.scope == bootstrap_cloud::Scope::Bootstrap)
            .map(|r| r.ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::aws_with_bootstrap_ip as spec;

    #[test]
    fn the_flag_wins_over_the_journal() {
        let recorded = JournalState {
            bootstrap_ip: Some("10.0.0.9".parse().unwrap()),
            ..Default::default()
        };
        let flag: IpAddr = "10.0.0.7".parse().unwrap();
        assert_eq!(settle(Some(flag), Some(&recorded)), Some(flag));
        assert_eq!(settle(None, Some(&recorded)), recorded.bootstrap_ip);
    }

    #[test]
    fn seeding_needs_an_ip_and_refuses_another_than_the_seeded_one_until_removed() {
        let mut recorded = JournalState::default();
        let err = check(&spec(None), &[Step::SeedDns], &recorded).unwrap_err();
        assert!(err.downcast_ref::<InputError>().is_some(), "{err:#}");
        check(&spec(None), &[Step::Reserve], &recorded).unwrap();
        recorded.bootstrap_ip = Some("10.0.0.9".parse().unwrap());
        let err = check(&spec(Some("10.0.0.7")), &[Step::SeedDns], &recorded).unwrap_err();
        assert!(format!("{err:#}").contains("seeded in DNS"), "{err:#}");
        check(&spec(Some("10.0.0.7")), &[Step::RemoveBootstrap], &recorded).unwrap();
        recorded.bootstrap_removed = true;
        check(&spec(Some("10.0.0.7")), &[Step::SeedDns], &recorded).unwrap();
    }

    #[test]
    fn once_removed_seeding_plans_without_it_and_records_nothing() {
        let mut recorded = JournalState {
            bootstrap_removed: true,
            ..Default::default()
        };
        let observed = Observed::default();
        let seed = for_stage(&spec(Some("10.0.0.7")), Step::SeedDns, &recorded, &observed);
        assert_eq!(seed.unwrap().bootstrap_ip, None);
        let remove = for_stage(
            &spec(Some("10.0.0.7")),
            Step::RemoveBootstrap,
            &recorded,
            &observed,
        );
        assert!(remove.unwrap().bootstrap_ip.is_some());
        record_seeded(&mut recorded, &spec(Some("10.0.0.7")));
        assert_eq!(recorded.bootstrap_ip, None);
    }
}
