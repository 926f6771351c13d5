//! UPI: the user's own reservations are used, never reserved again, never released.

use super::*;

// ---- UPI: the user's own reservations ----------------------------------------------------------

/// The cloud with every reservation the user's (none ours), and the records seeded.
fn all_adopted(spec: &ClusterSpec) -> Observed {
    let mut observed = observed_with(spec, all_reservations(spec), &[]);
    observed.adopted = std::mem::take(&mut observed.reservations);
    observed
}

#[test]
fn the_users_reservations_are_used_and_never_reserved_again() {
    for name in ["aws", "gcp", "azure"] {
        let spec = spec(name);
        let mut observed = all_adopted(&spec);
        observed.records.clear();
        let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
        assert!(
            reserve_requests(&plan).is_empty(),
            "{name}: {:?}",
            plan.changes
        );
        assert_eq!(plan.adopted.len(), desired::reservations(&spec).len());
        // DNS gets the user's IPs, as it would get ours.
        let added: BTreeSet<IpAddr> = plan
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::AddRecordValues { values, .. } => Some(values),
                _ => None,
            })
            .flatten()
            .filter_map(|v| observed.resolve(v))
            .collect();
        for r in &observed.adopted {
            assert!(added.contains(&r.ip), "{name}: {} joins DNS", r.ip);
        }
        assert!(plan.to_text(&observed).contains("adopted (yours)"));
    }
}

#[test]
fn mixed_adopts_what_exists_and_reserves_the_rest_unless_adopt_only() {
    let mut spec = spec("gcp");
    let mut observed = Observed::default();
    let public = all_reservations(&spec)
        .into_iter()
        .find(|r| r.key.scope == Scope::Public)
        .unwrap();
    observed.adopted.push(public);
    let plan = Plan::calculate(&spec, &observed, &[Step::Reserve], 1);
    let reserved: Vec<String> = reserve_requests(&plan)
        .iter()
        .map(|r| r.key.to_string())
        .collect();
    assert_eq!(reserved, ["private-ipv4"]);
    spec.adoption.adopt_only = true;
    let plan = Plan::calculate(&spec, &observed, &[Step::Reserve], 1);
    assert!(
        plan.is_empty(),
        "--adopt-only reserves nothing: {:?}",
        plan.changes
    );
}

#[test]
fn teardown_all_takes_the_users_ips_out_of_dns_but_never_releases_them() {
    for name in ["aws", "gcp", "azure"] {
        let spec = spec(name);
        let observed = all_adopted(&spec);
        let plan = Plan::calculate(&spec, &observed, &[Step::TeardownAll], 1);
        assert!(releases(&plan).is_empty(), "{name}: {:?}", plan.changes);
        assert!(
            plan.changes
                .iter()
                .any(|c| matches!(c, Change::RemoveRecordValues { .. })),
            "{name}: our values leave DNS"
        );
        assert_noted(&plan, "leaves the", name);
        // The hand-over never deletes an ENI of the user's either.
        let plan = Plan::calculate(&spec, &observed, &[Step::HandOver], 1);
        assert!(plan.is_empty(), "{name}: {:?}", plan.changes);
    }
}
