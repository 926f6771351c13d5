use super::*;

fn ann(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn fs() -> Vec<String> {
    ["Default", "TechPreviewNoUpgrade"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn ctx() -> Context {
    Context {
        profile: DEFAULT_PROFILE.into(),
        feature_set: "Default".into(),
        gates: ["GateA".to_string()].into(),
        exclude: vec!["internal-openshift-hosted".into()],
        enabled: ["Console", "marketplace"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        known: ["Console", "marketplace", "Insights"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    }
}

const PROFILE: (&str, &str) = (
    "include.release.openshift.io/self-managed-high-availability",
    "true",
);

fn decision(pairs: &[(&str, &str)]) -> Decision {
    decide(&Annotations::parse(&ann(pairs), &fs()).unwrap(), &ctx())
}

#[test]
fn checks_run_in_the_cvo_order() {
    // Excluded identifier wins over everything after it.
    let d = decision(&[
        (
            "exclude.release.openshift.io/internal-openshift-hosted",
            "true",
        ),
        (FEATURE_SET, "TechPreviewNoUpgrade"),
        (CAPABILITY, "Nope"),
    ]);
    assert_eq!(
        d,
        Decision::Exclude(Reason::ExcludedFor {
            identifier: "internal-openshift-hosted".into()
        })
    );
    let d = decision(&[(FEATURE_SET, "TechPreviewNoUpgrade"), (CAPABILITY, "Nope")]);
    assert!(
        matches!(d, Decision::Exclude(Reason::FeatureSet { .. })),
        "{d}"
    );
    let d = decision(&[(FEATURE_GATE, "GateA,GateB"), (CAPABILITY, "Nope")]);
    assert_eq!(
        d,
        Decision::Exclude(Reason::FeatureGates {
            disabled: vec!["GateB".into()]
        })
    );
    let d = decision(&[(CAPABILITY, "Nope")]);
    assert!(
        matches!(d, Decision::Exclude(Reason::Profile { .. })),
        "{d}"
    );
    let d = decision(&[PROFILE, (CAPABILITY, "Nope")]);
    assert_eq!(
        d,
        Decision::Exclude(Reason::UnknownCapabilities {
            unknown: vec!["Nope".into()]
        })
    );
}

#[test]
fn all_capabilities_must_be_enabled() {
    assert_eq!(
        decision(&[PROFILE, (CAPABILITY, "Console+marketplace")]),
        Decision::Include
    );
    assert_eq!(
        decision(&[PROFILE, (CAPABILITY, "Console+Insights")]),
        Decision::Exclude(Reason::DisabledCapabilities {
            disabled: vec!["Insights".into()]
        })
    );
}

#[test]
fn other_exclude_identifiers_and_feature_sets_listing_ours_are_included() {
    assert_eq!(
        decision(&[
            PROFILE,
            ("exclude.release.openshift.io/other", "true"),
            (FEATURE_SET, "TechPreviewNoUpgrade, Default"),
            (FEATURE_GATE, "GateA"),
        ]),
        Decision::Include
    );
}

#[test]
fn delete_true_on_an_included_object_is_a_delete() {
    assert_eq!(decision(&[PROFILE, (DELETE, "true")]), Decision::Delete);
    assert!(matches!(
        decision(&[(DELETE, "true")]),
        Decision::Exclude(Reason::Profile { .. })
    ));
}

#[test]
fn malformed_values_are_errors_naming_the_annotation() {
    for (k, v) in [
        (DELETE, "yes"),
        (PROFILE.0, "True"),
        ("exclude.release.openshift.io/x", "false"),
        (FEATURE_SET, "Bogus"),
        (FEATURE_SET, "Default,,"),
        (FEATURE_GATE, ""),
        (CAPABILITY, "Console++marketplace"),
        (CAPABILITY, ""),
    ] {
        let e = Annotations::parse(&ann(&[(k, v)]), &fs()).unwrap_err();
        assert_eq!(e.annotation, k);
        assert_eq!(e.value, v);
    }
    let e = Annotations::parse(&ann(&[(FEATURE_SET, "Bogus")]), &fs()).unwrap_err();
    assert!(e.problem.contains("Default, TechPreviewNoUpgrade"), "{e}");
}

/// `--explain` and the JSON `explanation` show these words: they are the reasons a person
/// reads, so each one is pinned.
#[test]
fn every_decision_and_reason_reads_as_documented() {
    let s = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
    let cases = [
        (Decision::Include, "included".to_string()),
        (
            Decision::Delete,
            "delete (release.openshift.io/delete=true: not created at install, deleted on an update)".into(),
        ),
        (
            Decision::Exclude(Reason::ExcludedFor { identifier: "internal-openshift-hosted".into() }),
            "excluded: exclude.release.openshift.io/internal-openshift-hosted=true".into(),
        ),
        (
            Decision::Exclude(Reason::FeatureSet { cluster: "Default".into(), allowed: s(vec!["TechPreviewNoUpgrade", "DevPreviewNoUpgrade"]) }),
            "excluded: feature set Default is not in release.openshift.io/feature-set=TechPreviewNoUpgrade,DevPreviewNoUpgrade".into(),
        ),
        (
            Decision::Exclude(Reason::FeatureGates { disabled: s(vec!["A", "B"]) }),
            "excluded: feature gate(s) not enabled: A,B".into(),
        ),
        (
            Decision::Exclude(Reason::Profile { profile: "single-node-developer".into() }),
            "excluded: not in profile (include.release.openshift.io/single-node-developer is not \"true\")".into(),
        ),
        (
            Decision::Exclude(Reason::UnknownCapabilities { unknown: s(vec!["X", "Y"]) }),
            "excluded: unknown capability: X+Y".into(),
        ),
        (
            Decision::Exclude(Reason::DisabledCapabilities { disabled: s(vec!["Console"]) }),
            "excluded: capability not enabled: Console".into(),
        ),
    ];
    for (decision, text) in cases {
        assert_eq!(decision.to_string(), text);
    }
}
