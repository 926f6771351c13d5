//! Dual stack: Azure's private IPv6, and why AWS and GCP plan none.

use super::*;

// ---- (h) dual stack --------------------------------------------------------------------------

fn private_v6() -> ReservationKey {
    ReservationKey::parse("private-ipv6").unwrap()
}

fn record<'a>(
    plan: &'a Plan,
    host: &str,
    rtype: bootstrap_cloud::RecordType,
) -> Option<&'a [Value]> {
    plan.changes.iter().find_map(|c| match c {
        Change::AddRecordValues {
            zone,
            record,
            values,
            ..
        } if zone.private
            && record.rtype == rtype
            && record.name == format!("{host}.mycluster.example.com") =>
        {
            Some(values.as_slice())
        }
        _ => None,
    })
}

/// Azure can hold a private IPv6 for its internal load balancer: it is reserved next to the
/// IPv4 one, and api/api-int get AAAA records with it (plus the bootstrap IPv6, if any).
#[test]
fn azure_dual_stack_reserves_a_private_ipv6_and_seeds_aaaa_for_api_and_api_int() {
    let spec = spec("azure-dualstack");
    let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
    let names: Vec<&str> = reserve_requests(&plan)
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "mycluster-7xk2p-rsvd-public-ipv4",
            "mycluster-7xk2p-rsvd-public-ipv6",
            "mycluster-7xk2p-rsvd-private-ipv4",
            "mycluster-7xk2p-rsvd-private-ipv6",
        ]
    );
    let aaaa = bootstrap_cloud::RecordType::Aaaa;
    for host in ["api", "api-int"] {
        // The bootstrap IP is IPv4 here: the AAAA record holds only the reserved IPv6.
        assert_eq!(
            record(&plan, host, aaaa),
            Some(&[Value::Reserved(private_v6())][..]),
            "{host}"
        );
    }
    assert_noted(&plan, "azure dual stack:", "azure dual stack");

    // A bootstrap host with an IPv6 leads the AAAA records instead of the A records.
    let mut v6_host = spec.clone();
    v6_host.bootstrap_ip = Some(ip("fd00:10:0:1::5"));
    let plan = Plan::calculate(&v6_host, &Observed::default(), &STAGE1, 1);
    for host in ["api", "api-int"] {
        assert_eq!(
            record(&plan, host, aaaa),
            Some(
                &[
                    Value::Ip(ip("fd00:10:0:1::5")),
                    Value::Reserved(private_v6())
                ][..]
            ),
            "{host}"
        );
        let a = record(&plan, host, bootstrap_cloud::RecordType::A).unwrap();
        assert!(
            a.iter().all(|v| matches!(v, Value::Reserved(_))),
            "{host}: {a:?}"
        );
    }

    // Single stack wants no IPv6 at all.
    let plan = Plan::calculate(&self::spec("azure"), &Observed::default(), &STAGE1, 1);
    assert!(!plan.to_text(&Observed::default()).contains("ipv6"));
    assert!(record(&plan, "api", aaaa).is_none());
}

/// AWS and GCP cannot give their internal load balancers a reserved IPv6: nothing IPv6 is
/// planned there, and the plan says why, per cloud.
#[test]
fn aws_and_gcp_dual_stack_plan_no_ipv6_and_say_why() {
    for (name, why) in [
        (
            "aws-dualstack",
            "aws dual stack: EIPs and NLB private addresses are IPv4",
        ),
        (
            "gcp-dualstack",
            "gcp dual stack: the cloud provider's Service load balancers take one IPv4 each",
        ),
    ] {
        let spec = spec(name);
        let plan = Plan::calculate(&spec, &Observed::default(), &STAGE1, 1);
        let note = plan.notes.iter().find(|n| n.starts_with(why));
        assert!(
            note.is_some_and(|n| n.contains("no IPv6 is reserved and no AAAA record is seeded")),
            "{name}: {:?}",
            plan.notes
        );
        for change in &plan.changes {
            match change {
                Change::ReserveAddress { request } => {
                    assert_eq!(request.key.family, IpFamily::Ipv4, "{name}: {change:?}")
                }
                Change::AddRecordValues { record, .. } => assert_eq!(
                    record.rtype,
                    bootstrap_cloud::RecordType::A,
                    "{name}: {change:?}"
                ),
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        // The same cloud single stack says nothing about IPv6.
        let single = name.trim_end_matches("-dualstack");
        let plan = Plan::calculate(&self::spec(single), &Observed::default(), &STAGE1, 1);
        assert!(
            !plan.notes.iter().any(|n| n.contains("dual stack")),
            "{single}: {:?}",
            plan.notes
        );
    }
}

/// After a failed dual-stack install, teardown --all takes back the private IPv6 and its AAAA
/// values like the IPv4 ones, and leaves another writer's IPv6 alone.
#[test]
fn teardown_all_removes_the_private_ipv6_and_only_our_aaaa_values() {
    let spec = spec("azure-dualstack");
    let theirs = ip("fd00:10:0:2::77");
    let observed = observed_with(&spec, all_reservations(&spec), &[theirs]);
    let plan = Plan::calculate(&spec, &observed, &[Step::TeardownAll], 1);
    let ours_v6 = observed.kept()[&private_v6()].ip;
    assert!(
        releases(&plan).iter().any(|r| r.key == private_v6()),
        "{}",
        plan.to_text(&observed)
    );
    for host in ["api", "api-int"] {
        let removed = plan.changes.iter().find_map(|c| match c {
            Change::RemoveRecordValues { record, values, .. }
                if record.rtype == bootstrap_cloud::RecordType::Aaaa
                    && record.name == format!("{host}.mycluster.example.com") =>
            {
                Some(values.clone())
            }
            _ => None,
        });
        assert_eq!(removed, Some(vec![Value::Ip(ours_v6)]), "{host}");
    }
    assert!(!plan.to_text(&observed).contains(&theirs.to_string()));
}
