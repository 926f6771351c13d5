//! The bootstrap host's second address (GCP, Azure): reserved in stage 1, in `api-int` from
//! the first write (with the bootstrap IP on GCP, without it on Azure) (never held back), out with it in stage 3 and then
//! released; never on AWS, never when off or adopt-only.

use super::*;
use crate::assets::SecondAddress;

fn with_second(name: &str) -> ClusterSpec {
    let mut spec = spec(name);
    spec.second_bootstrap_address = SecondAddress::Host;
    spec
}

fn second_key() -> ReservationKey {
    ReservationKey {
        scope: Scope::Bootstrap,
        family: IpFamily::Ipv4,
        placement: None,
    }
}

#[test]
fn gcp_and_azure_reserve_it_aws_off_and_adopt_only_do_not() {
    for name in ["gcp", "azure", "azure-dualstack"] {
        let plan = Plan::calculate(
            &with_second(name),
            &Observed::default(),
            &[Step::Reserve],
            1,
        );
        let wanted: Vec<&ReserveRequest> = reserve_requests(&plan)
            .into_iter()
            .filter(|r| r.key == second_key())
            .collect();
        assert_eq!(wanted.len(), 1, "{name}: {plan:?}");
        assert_eq!(
            wanted[0].name, "mycluster-7xk2p-rsvd-bootstrap-ipv4",
            "{name}"
        );
    }
    let none = |spec: &ClusterSpec| {
        Plan::calculate(spec, &Observed::default(), &[Step::Reserve], 1)
            .changes
            .iter()
            .any(|c| matches!(c, Change::ReserveAddress { request } if request.key.scope == Scope::Bootstrap))
    };
    assert!(!none(&with_second("aws")), "aws");
    let mut off = with_second("gcp");
    off.second_bootstrap_address = SecondAddress::Off;
    assert!(!none(&off), "off");
    let mut adopt_only = with_second("gcp");
    adopt_only.adoption.adopt_only = true;
    assert!(!none(&adopt_only), "adopt-only");
    let mut unknown = with_second("azure");
    unknown.bootstrap_ip = None;
    assert!(!none(&unknown), "no bootstrap IP, no second address");
    assert_eq!(crate::plan::second_address_host(&unknown), None);
    assert_eq!(
        crate::plan::second_address_host(&with_second("azure")),
        Some(ip(BOOTSTRAP))
    );
}

/// The Services claim the load balancers' reservations only: `render` and `apply` need no
/// second address (a by-hand install whose addresses are all the user's may not have one yet).
#[test]
fn the_services_need_the_load_balancers_reservations_not_the_second_address() {
    for name in ["gcp", "azure"] {
        let spec = with_second(name);
        let mut observed = reserved_only(&spec);
        observed.reservations.retain(|r| r.key != second_key());
        assert_eq!(
            observed.missing_reservations(&spec),
            ["bootstrap-ipv4"],
            "{name}: wanted"
        );
        assert!(
            observed.missing_claimed_reservations(&spec).is_empty(),
            "{name}"
        );
        crate::context::rendered_for(&spec, &observed, None).unwrap();
        observed
            .reservations
            .retain(|r| r.key.scope != Scope::Private);
        assert_eq!(
            observed.missing_claimed_reservations(&spec),
            ["private-ipv4"],
            "{name}"
        );
    }
}

/// Progressive seeding holds the load balancers' IPs back, never the bootstrap host's: its
/// addresses are in `api-int` from the first write (on Azure its second address alone).
#[test]
fn both_bootstrap_addresses_are_seeded_at_once_while_the_vip_waits() {
    for name in ["gcp", "azure"] {
        let spec = with_second(name);
        let mut observed = reserved_only(&spec);
        observed.serving = Some(BTreeSet::new());
        let second = observed
            .reservations
            .iter()
            .find(|r| r.key == second_key())
            .unwrap()
            .ip;
        let private_vip = observed
            .reservations
            .iter()
            .find(|r| r.key.scope == Scope::Private)
            .unwrap()
            .ip;
        let plan = Plan::calculate(&spec, &observed, &[Step::SeedDns], 1);
        let api_int = plan
            .changes
            .iter()
            .find_map(|c| match c {
                Change::AddRecordValues { record, values, .. }
                    if record.name.starts_with("api-int.") =>
                {
                    Some(values.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{name}: {plan:?}"));
        let resolved: Vec<IpAddr> = api_int.iter().filter_map(|v| observed.resolve(v)).collect();
        // Azure's api-int: the second address alone (the masters' watcher takes every
        // api-int address for a VIP; the bootstrap IP stays out of their redirect).
        let wanted = match name {
            "azure" => vec![second],
            _ => vec![ip(BOOTSTRAP), second],
        };
        assert_eq!(resolved, wanted, "{name}");
        assert!(!resolved.contains(&private_vip), "{name}: the VIP waits");
    }
}

#[test]
fn stage_three_removes_both_addresses_then_releases_the_second() {
    for name in ["gcp", "azure"] {
        let spec = with_second(name);
        let observed = done(&spec);
        let second = observed
            .reservations
            .iter()
            .find(|r| r.key == second_key())
            .unwrap()
            .clone();
        let plan = Plan::calculate(&spec, &observed, &[Step::RemoveBootstrap], 1);
        let removed: BTreeSet<IpAddr> = plan
            .changes
            .iter()
            .flat_map(|c| match c {
                Change::RemoveRecordValues { values, .. } => values.clone(),
                _ => Vec::new(),
            })
            .filter_map(|v| observed.resolve(&v))
            .collect();
        assert_eq!(
            removed,
            BTreeSet::from([ip(BOOTSTRAP), second.ip]),
            "{name}"
        );
        assert_eq!(
            releases(&plan),
            [&second],
            "{name}: only the second address"
        );
        let last_dns = plan
            .changes
            .iter()
            .rposition(|c| matches!(c, Change::RemoveRecordValues { .. }))
            .unwrap();
        let release = plan
            .changes
            .iter()
            .position(|c| matches!(c, Change::ReleaseAddress { .. }))
            .unwrap();
        assert!(last_dns < release, "{name}: out of DNS before it goes");
        // Stage 3 done: the next run wants no second address and reserves none.
        let mut after = spec.clone();
        after.second_bootstrap_address = SecondAddress::Off;
        let mut gone = observed.clone();
        gone.reservations.retain(|r| r.key != second_key());
        let rerun = Plan::calculate(&after, &gone, &[Step::Reserve], 1);
        assert!(reserve_requests(&rerun).is_empty(), "{name}: {rerun:?}");
    }
}

#[test]
fn teardown_removes_and_releases_it_with_the_rest() {
    let spec = with_second("gcp");
    let observed = done(&spec);
    let plan = Plan::calculate(&spec, &observed, &[Step::TeardownAll], 1);
    assert!(
        releases(&plan).iter().any(|r| r.key == second_key()),
        "{plan:?}"
    );
}
