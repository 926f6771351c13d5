use super::*;
use crate::capabilities::registry::Registry;
use crate::capabilities::selection::{GateInputs, Gates};
use crate::plan::{DoomedService, LiveService};

/// `plan` on a fresh asset dir: all of `run`, the cluster's changes included.
fn plan_of_run(fixture: &str) -> String {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(fixture);
    let mut spec = crate::assets::load(&assets).unwrap();
    spec.bootstrap_ip = Some("10.0.0.5".parse().unwrap());
    let registry = Registry::load(None).unwrap();
    let gates = Gates::resolve(&GateInputs::default()).unwrap();
    let selection = crate::capabilities::selection_for_spec(
        &registry,
        &gates,
        &assets,
        spec.capabilities.as_ref(),
    )
    .unwrap();
    // `run`'s default seeding is progressive: nothing serves yet, so the records start
    // with the bootstrap IP alone (as `plan` shows it, see `DnsSeeding::plan_as_run`).
    let observed = Observed {
        serving: Some(Default::default()),
        ..Default::default()
    };
    let (wants, _) = kube_wants(&spec, &observed, Some(&selection), None).unwrap();
    let steps = crate::machine::remaining_steps(None);
    Plan::calculate_with(&spec, &observed, &wants, &steps, 1).to_text(&observed)
}

#[test]
fn golden_plan_of_all_of_run_lists_the_kubernetes_changes() {
    for fixture in ["aws", "gcp", "azure"] {
        let actual = plan_of_run(fixture);
        assert!(
            actual.contains("  ~ capabilities ClusterVersion version: baseline"),
            "{actual}"
        );
        assert!(actual.contains("  + service "), "{actual}");
        crate::golden::assert_golden(&format!("tests/golden/plan/run/{fixture}.txt"), &actual);
    }
}

/// The plan of `teardown --all` for `fixture`, its reservations as made, the cluster's
/// Services as `live` says (None: not asked).
fn plan_of_teardown(fixture: &str, live: Option<Vec<LiveService>>) -> Plan {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(fixture);
    let spec = crate::assets::load(&assets).unwrap();
    let observed = Observed {
        reservations: stand_ins(&spec, &Observed::default()),
        ..Default::default()
    };
    let (mut wants, _) = kube_wants(&spec, &observed, None, None).unwrap();
    wants.ours_live = live;
    Plan::calculate_with(&spec, &observed, &wants, &[Step::TeardownAll], 1)
}

#[test]
fn golden_plan_of_teardown_all_deletes_our_services_before_any_release() {
    for fixture in ["aws", "gcp", "azure"] {
        let plan = plan_of_teardown(fixture, None);
        let kinds: Vec<bool> = plan
            .changes
            .iter()
            .map(|c| matches!(c, Change::DeleteService { .. }))
            .collect();
        let services = kinds.iter().filter(|k| **k).count();
        assert!(services >= 2, "{fixture}: {plan:?}");
        assert!(
            kinds[..services].iter().all(|k| *k),
            "{fixture}: the Services go first: {plan:?}"
        );
        assert!(
            plan.changes
                .iter()
                .any(|c| matches!(c, Change::ReleaseAddress { .. })),
            "{fixture}: {plan:?}"
        );
        let text = plan.to_text(&Observed::default());
        crate::golden::assert_golden(&format!("tests/golden/plan/teardown/{fixture}.txt"), &text);
    }
}

#[test]
fn teardown_deletes_only_the_services_the_cluster_holds_with_our_labels() {
    let ours = LiveService {
        namespace: "openshift-kube-apiserver".into(),
        name: "internal-lb".into(),
        uid: "uid-1".into(),
        deleting: false,
        addresses: Default::default(),
    };
    let plan = plan_of_teardown("gcp", Some(vec![ours.clone()]));
    let deleted: Vec<(String, Option<String>)> = plan
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::DeleteService { service } => Some((
                format!("{}/{}", service.namespace, service.name),
                service.uid.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        deleted,
        [(
            "openshift-kube-apiserver/internal-lb".to_string(),
            Some("uid-1".to_string())
        )],
        "the others are absent or not ours; the deletion is bound to the uid seen"
    );
    // The deletion is the cluster's to make; the releases and record edits the cloud's.
    for change in &plan.changes {
        assert_eq!(
            change.is_kubernetes(),
            matches!(change, Change::DeleteService { .. }),
            "{change:?}"
        );
    }
    let none = plan_of_teardown("gcp", Some(Vec::new()));
    assert!(
        !none.changes.iter().any(|c| c.is_kubernetes()),
        "nothing of ours in the cluster: nothing deleted there"
    );
    let deleting = LiveService {
        deleting: true,
        ..ours
    };
    let again = plan_of_teardown("gcp", Some(vec![deleting]));
    let waited: Vec<&DoomedService> = again
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::DeleteService { service } => Some(service),
            _ => None,
        })
        .collect();
    assert_eq!(waited.len(), 1, "{again:?}");
    assert!(
        waited[0].deleting && waited[0].uid.as_deref() == Some("uid-1"),
        "deleted already, held by its controller's finalizer: waited out, not deleted again"
    );
    assert_eq!(again.changes.len(), plan.changes.len());
    let text = again.to_text(&Observed::default());
    assert!(text.contains("being deleted already"), "{text}");
}

#[test]
fn a_service_claims_its_reservation_symbolically_until_it_exists() {
    let text = plan_of_run("gcp");
    assert!(text.contains("claims <"), "{text}");
    assert!(!text.contains("192.0.2."), "stand-ins never show: {text}");
}
