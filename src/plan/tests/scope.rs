//! `publish --scope`: the published records withdrawn first, then what is no longer wanted
//! released (ours only); going public again plans what `run` would.

use super::*;

/// The spec of a cluster `run` published External, now going `Internal` (the prior scope
/// kept, as `publish` sets it).
fn going_internal(name: &str) -> (ClusterSpec, ClusterSpec) {
    let external = spec(name);
    let mut internal = external.clone();
    internal.prior_publish = Some(external.publish);
    internal.publish = external.publish.with_api(crate::assets::Exposure::Internal);
    internal.bootstrap_ip = None;
    (external, internal)
}

fn removed(plan: &Plan, observed: &Observed) -> Vec<(bool, IpAddr)> {
    plan.changes
        .iter()
        .filter_map(|c| match c {
            Change::RemoveRecordValues { zone, values, .. } => Some((zone.private, values)),
            _ => None,
        })
        .flat_map(|(private, values)| {
            values
                .iter()
                .filter_map(|v| observed.resolve(v))
                .map(move |ip| (private, ip))
        })
        .collect()
}

#[test]
fn going_internal_withdraws_exactly_our_public_values_and_observes_the_public_record() {
    for name in ["aws", "gcp", "azure"] {
        let (external, internal) = going_internal(name);
        let mut observed = observed_with(&external, all_reservations(&external), &[]);
        for r in &mut observed.records {
            if let Some(set) = r.current.as_mut()
                && !r.zone.private
            {
                set.values.insert(ip(OTHER_WRITER));
            }
        }
        let public: BTreeSet<IpAddr> = observed
            .reservations
            .iter()
            .filter(|r| r.key.scope == Scope::Public)
            .map(|r| r.ip)
            .collect();
        assert!(
            records_of_interest(&internal)
                .iter()
                .any(|(zone, _)| !zone.private),
            "{name}: the public record is still read"
        );
        let plan = Plan::calculate(&internal, &observed, &[Step::Withdraw], 1);
        let gone = removed(&plan, &observed);
        let gone_ips: BTreeSet<IpAddr> = gone.iter().map(|(_, ip)| *ip).collect();
        assert_eq!(gone_ips, public, "{name}: {:?}", plan.changes);
        assert!(
            gone.iter().all(|(private, _)| !private),
            "{name}: the private records stay"
        );
        // Going External instead withdraws nothing.
        let plan = Plan::calculate(&external, &observed, &[Step::Withdraw], 1);
        assert!(plan.is_empty(), "{name}: {:?}", plan.changes);
    }
}

#[test]
fn unpublish_releases_our_public_ips_and_leaves_the_users_saying_so() {
    for name in ["aws", "gcp", "azure"] {
        let (external, internal) = going_internal(name);
        let observed = observed_with(&external, all_reservations(&external), &[]);
        let plan = Plan::calculate(&internal, &observed, &[Step::Unpublish], 1);
        let released: Vec<Scope> = releases(&plan).iter().map(|r| r.key.scope).collect();
        assert!(!released.is_empty(), "{name}");
        assert!(
            released.iter().all(|s| *s == Scope::Public),
            "{name}: only public: {released:?}"
        );
        // The user's public IP: used, never released; the plan says so.
        let mut adopted = observed.clone();
        let (users, ours): (Vec<_>, Vec<_>) = adopted
            .reservations
            .drain(..)
            .partition(|r| r.key.scope == Scope::Public);
        adopted.reservations = ours;
        adopted.adopted = users;
        let plan = Plan::calculate(&internal, &adopted, &[Step::Withdraw, Step::Unpublish], 1);
        assert!(releases(&plan).is_empty(), "{name}: {:?}", plan.changes);
        assert!(
            !removed(&plan, &adopted).is_empty(),
            "{name}: its value leaves the public record"
        );
        assert_noted(
            &plan,
            "is yours (adopted): the agent leaves it untouched",
            name,
        );
    }
}

/// A value of ours in a record that does not want it is withdrawn even when another record
/// (the private `api`, of the same name in the other zone) wants it: what a record keeps is
/// what that record wants, in its own zone.
#[test]
fn a_value_of_ours_is_withdrawn_from_a_record_that_does_not_want_it_though_another_does() {
    for name in ["aws", "gcp", "azure"] {
        let (external, internal) = going_internal(name);
        let mut observed = observed_with(&external, all_reservations(&external), &[]);
        let private_ip = observed
            .reservations
            .iter()
            .find(|r| r.key.scope == Scope::Private)
            .map(|r| r.ip)
            .expect("a private reservation");
        for r in &mut observed.records {
            if let Some(set) = r.current.as_mut()
                && !r.zone.private
            {
                set.values.insert(private_ip);
            }
        }
        let plan = Plan::calculate(&internal, &observed, &[Step::Withdraw], 1);
        let gone = removed(&plan, &observed);
        assert!(
            gone.contains(&(false, private_ip)),
            "{name}: the private IP leaves the public record: {:?}",
            plan.changes
        );
        assert!(
            gone.iter().all(|(private, _)| !private),
            "{name}: the private records keep it"
        );
    }
}
