//! Which Service is replaced rather than applied: the AWS Load Balancer Controller never
//! changes the addresses of an existing NLB.

#![allow(clippy::unwrap_used)]

use super::*;

const EIPS: &str = "service.beta.kubernetes.io/aws-load-balancer-eip-allocations";
const SUBNETS: &str = "service.beta.kubernetes.io/aws-load-balancer-subnets";

fn addresses(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn wanted(name: &str, fixed: &[(&str, &str)]) -> WantedService {
    WantedService {
        namespace: "openshift-kube-apiserver".into(),
        name: name.into(),
        template: format!("services/aws/{name}.yaml"),
        delete: false,
        claims: Vec::new(),
        addresses: addresses(fixed),
    }
}

fn live(name: &str, fixed: &[(&str, &str)], deleting: bool) -> LiveService {
    LiveService {
        namespace: "openshift-kube-apiserver".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        addresses: addresses(fixed),
        deleting,
    }
}

fn wants(service: WantedService, live: Option<Vec<LiveService>>, replacing: &[&str]) -> KubeWants {
    KubeWants {
        services: vec![service],
        live_addresses: live,
        replacing: replacing.iter().map(|s| s.to_string()).collect(),
        ..KubeWants::default()
    }
}

/// `external-lb` wanted with `wanted_addresses`, the cluster holding it with `live_addresses`
/// (`deleting`: being deleted already), no replacement under way.
fn external_lb(
    wanted_addresses: &[(&str, &str)],
    live_addresses: &[(&str, &str)],
    deleting: bool,
) -> KubeWants {
    let held = live("external-lb", live_addresses, deleting);
    wants(
        wanted("external-lb", wanted_addresses),
        Some(vec![held]),
        &[],
    )
}

/// The one change planned: Some((uid, changed)) for a replacement, None for an apply.
fn planned(w: &KubeWants) -> Option<(Option<String>, Vec<String>)> {
    let changes = apply_services(w);
    assert_eq!(changes.len(), 1, "{changes:?}");
    match &changes[0] {
        Change::ReplaceService {
            service,
            uid,
            changed,
            ..
        } => {
            assert_eq!(service, &w.services[0]);
            Some((uid.clone(), changed.clone()))
        }
        Change::ApplyService { service } => {
            assert_eq!(service, &w.services[0]);
            None
        }
        other => panic!("{other:?}"),
    }
}

/// Whether the one replacement planned finds its Service being deleted already.
fn waits_out_a_deletion(w: &KubeWants) -> bool {
    match &apply_services(w)[..] {
        [Change::ReplaceService { deleting, .. }] => *deleting,
        other => panic!("{other:?}"),
    }
}

const NEW: &[(&str, &str)] = &[
    (SUBNETS, "subnet-a,subnet-b"),
    (EIPS, "eipalloc-1,eipalloc-9"),
];
const OLD: &[(&str, &str)] = &[
    (SUBNETS, "subnet-a,subnet-b"),
    (EIPS, "eipalloc-1,eipalloc-2"),
];

#[test]
fn other_addresses_than_the_live_services_replace_it_naming_what_changed() {
    let w = external_lb(NEW, OLD, false);
    assert_eq!(
        planned(&w),
        Some((Some("uid-external-lb".into()), vec![EIPS.to_string()]))
    );
    assert!(!waits_out_a_deletion(&w), "a live Service is deleted");
    // An annotation the live Service has and the wanted one lacks is a change too.
    let w = external_lb(&NEW[..1], NEW, false);
    assert_eq!(planned(&w).unwrap().1, vec![EIPS.to_string()]);
}

#[test]
fn the_same_addresses_are_an_apply_even_after_an_interrupted_replacement() {
    let w = external_lb(NEW, NEW, false);
    assert_eq!(planned(&w), None);
    // Applied anew before the crash: nothing left to replace.
    let w = KubeWants {
        replacing: BTreeSet::from(["openshift-kube-apiserver/external-lb".to_string()]),
        ..external_lb(NEW, NEW, false)
    };
    assert_eq!(planned(&w), None);
}

#[test]
fn a_service_being_deleted_is_waited_out_before_it_is_applied() {
    let w = external_lb(NEW, NEW, true);
    assert_eq!(
        planned(&w),
        Some((Some("uid-external-lb".into()), Vec::new()))
    );
    assert!(waits_out_a_deletion(&w), "not deleted a second time");
    let plan = crate::plan::Plan {
        changes: apply_services(&w),
        ..Default::default()
    };
    let text = plan.to_text(&crate::plan::Observed::default());
    assert!(
        text.contains("being deleted already, its load balancer waited out, applied anew"),
        "{text}"
    );
}

#[test]
fn a_replacement_interrupted_after_the_deletion_resumes_without_a_live_service() {
    let w = wants(
        wanted("external-lb", NEW),
        Some(Vec::new()),
        &["openshift-kube-apiserver/external-lb"],
    );
    assert_eq!(planned(&w), Some((None, Vec::new())));
    assert!(!waits_out_a_deletion(&w));
    // Another Service's interrupted replacement is not this one's.
    let w = wants(
        wanted("external-lb", NEW),
        Some(Vec::new()),
        &["openshift-kube-apiserver/internal-lb"],
    );
    assert_eq!(planned(&w), None);
}

#[test]
fn without_the_cluster_or_fixed_addresses_or_when_deleted_it_is_an_apply() {
    // `plan` without --kubeconfig: the cluster was not asked.
    let w = wants(
        wanted("external-lb", NEW),
        None,
        &["openshift-kube-apiserver/external-lb"],
    );
    assert_eq!(planned(&w), None);
    // Another cloud's Service (no annotation fixed at creation).
    let w = external_lb(&[], OLD, false);
    assert_eq!(planned(&w), None);
    // A template that deletes its Service.
    let mut doomed = wanted("external-lb", NEW);
    doomed.delete = true;
    let w = wants(doomed, Some(vec![live("external-lb", OLD, false)]), &[]);
    assert_eq!(planned(&w), None);
    // Another Service's live addresses are not this one's.
    let w = wants(
        wanted("external-lb", NEW),
        Some(vec![live("internal-lb", OLD, false)]),
        &[],
    );
    assert_eq!(planned(&w), None);
    let other_ns = LiveService {
        namespace: "default".into(),
        ..live("external-lb", OLD, false)
    };
    let w = wants(wanted("external-lb", NEW), Some(vec![other_ns]), &[]);
    assert_eq!(planned(&w), None);
}

#[test]
fn replacements_lists_only_the_replaced() {
    let mut w = external_lb(NEW, OLD, false);
    w.services.push(wanted("internal-lb", &[]));
    let only = replacements(&w);
    assert_eq!(only.len(), 1);
    assert!(
        matches!(&only[0], Change::ReplaceService { service, .. } if service.name == "external-lb")
    );
    assert_eq!(apply_services(&w).len(), 2);
}
