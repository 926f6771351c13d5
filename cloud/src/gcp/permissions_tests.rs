//! What the permissions line asks per project, and its verdict on the answers.

use super::*;
use crate::preflight::Verdict;

fn scopes(list: &[Scope]) -> BTreeSet<Scope> {
    list.iter().copied().collect()
}

#[test]
fn each_project_is_asked_what_its_calls_need() {
    let both = wanted(
        "svc",
        "host",
        &scopes(&[Scope::Public, Scope::Private]),
        &["svc", "dns"],
    );
    assert!(both["svc"].contains("compute.addresses.create"));
    assert!(both["svc"].contains("compute.addresses.createInternal"));
    assert!(both["svc"].contains("dns.changes.create"));
    assert!(!both["svc"].contains(SUBNETWORK_USE));
    assert_eq!(both["host"], BTreeSet::from([SUBNETWORK_USE]));
    assert_eq!(
        both["dns"],
        BTreeSet::from([
            "dns.changes.create",
            "dns.changes.get",
            "dns.resourceRecordSets.create",
            "dns.resourceRecordSets.list",
            "dns.resourceRecordSets.update",
        ])
    );
    // Private only, one project, the user's DNS: no external address, no DNS permission.
    let private = wanted("p", "p", &scopes(&[Scope::Private]), &[]);
    assert_eq!(private.len(), 1);
    assert!(private["p"].contains(SUBNETWORK_USE));
    assert!(!private["p"].contains("compute.addresses.create"));
    assert!(private["p"].iter().all(|p| !p.starts_with("dns.")));
    assert!(wanted("p", "p", &BTreeSet::new(), &[]).is_empty());
}

#[test]
fn a_missing_permission_fails_naming_it_and_its_project() {
    let asked = wanted("svc", "host", &scopes(&[Scope::Private]), &[]);
    let mut answers = BTreeMap::new();
    answers.insert(
        "svc".to_string(),
        Ok(asked["svc"].iter().map(|p| p.to_string()).collect()),
    );
    answers.insert("host".to_string(), Ok(BTreeSet::new()));
    // Only the subnetwork's permission missing: a subnetwork-level grant may give it.
    let check = verdict(&asked, &answers);
    assert_eq!(check.verdict, Verdict::Warn, "{check:?}");
    assert!(
        check
            .reason
            .contains("project host lacks compute.subnetworks.use at project level")
    );
    assert!(check.fix.unwrap().contains("on project host"));
    // An address permission missing too: only a project grant gives it.
    let mut lacking = asked["svc"].clone();
    lacking.remove("compute.addresses.createInternal");
    answers.insert(
        "svc".to_string(),
        Ok(lacking.iter().map(|p| p.to_string()).collect()),
    );
    let check = verdict(&asked, &answers);
    assert_eq!(check.verdict, Verdict::Fail, "{check:?}");
    assert!(
        check
            .reason
            .contains("project svc lacks compute.addresses.createInternal"),
        "{check:?}"
    );
    assert!(
        check.reason.contains("compute.subnetworks.use"),
        "{check:?}"
    );
    answers.insert(
        "svc".to_string(),
        Ok(asked["svc"].iter().map(|p| p.to_string()).collect()),
    );
    answers.insert(
        "host".to_string(),
        Ok(BTreeSet::from([SUBNETWORK_USE.to_string()])),
    );
    assert_eq!(verdict(&asked, &answers).verdict, Verdict::Pass);
    answers.insert(
        "host".to_string(),
        Err(CloudError::fatal(
            OPERATION,
            "HTTP 403 PERMISSION_DENIED: no",
        )),
    );
    assert_eq!(verdict(&asked, &answers).verdict, Verdict::Warn);
}

#[test]
fn only_the_subnetwork_and_dns_permissions_can_come_from_the_resource() {
    assert!(grantable_on_the_resource(SUBNETWORK_USE));
    for grant in crate::permissions::GCP {
        let on_resource = matches!(
            grant.when,
            crate::permissions::GcpWhen::Zones
                | crate::permissions::GcpWhen::ZoneLookedUp
                | crate::permissions::GcpWhen::InternalSubnetwork
                | crate::permissions::GcpWhen::BootstrapSubnetwork
        );
        assert_eq!(
            grantable_on_the_resource(grant.permission),
            on_resource,
            "{grant:?}"
        );
    }
}

#[test]
fn the_answer_leaves_permissions_out_when_none_is_held() {
    assert!(granted(&serde_json::json!({})).unwrap().is_empty());
    assert_eq!(
        granted(&serde_json::json!({"permissions": ["a.b.c"]})).unwrap(),
        BTreeSet::from(["a.b.c".to_string()])
    );
    assert!(granted(&serde_json::json!({"permissions": "a"})).is_err());
    let e = error(
        429,
        &serde_json::json!({"error": {"status": "RESOURCE_EXHAUSTED", "message": "slow"}}),
    );
    assert!(e.is_transient());
    assert!(e.message.contains("RESOURCE_EXHAUSTED: slow"));
}
