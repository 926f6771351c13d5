use super::*;

fn ann(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ctx() -> Context {
    Context {
        profile: DEFAULT_PROFILE.into(),
        feature_set: "Default".into(),
        known_feature_sets: ["Default", "TechPreviewNoUpgrade"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        gates: ["GateA".to_string()].into(),
        major_version: None,
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
    decide(&Annotations::parse(&ann(pairs)).unwrap(), &ctx())
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
            disabled: vec!["GateB".into()],
            enabled: vec![],
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
            (FEATURE_SET, "TechPreviewNoUpgrade,Default"),
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
fn only_a_malformed_delete_is_an_error() {
    let e = Annotations::parse(&ann(&[(DELETE, "yes")])).unwrap_err();
    assert_eq!((e.annotation.as_str(), e.value.as_str()), (DELETE, "yes"));
    assert_eq!(e.problem, "the only valid value is \"true\"");
}

/// Values the cluster does not accept are decided as library-go decides them.
#[test]
fn values_the_cluster_does_not_accept_are_decided_as_the_cluster_decides_them() {
    // exclude.*: only "true" excludes; anything else is ignored.
    assert_eq!(
        decision(&[
            PROFILE,
            (
                "exclude.release.openshift.io/internal-openshift-hosted",
                "yes"
            )
        ]),
        Decision::Include
    );
    // The cluster's profile must be exactly "true"; another profile's value is not read.
    assert_eq!(
        decision(&[
            (PROFILE.0, "True"),
            ("include.release.openshift.io/other", "nope")
        ]),
        Decision::Exclude(Reason::Profile {
            profile: DEFAULT_PROFILE.into(),
            value: Some("True".into())
        })
    );
    assert_eq!(
        decision(&[PROFILE, ("include.release.openshift.io/other", "nope")]),
        Decision::Include
    );
    // Feature-set entries are not trimmed, and each must be a feature set.
    for bad in ["Bogus", "Default,,", "TechPreviewNoUpgrade, Default"] {
        assert!(
            matches!(
                decision(&[PROFILE, (FEATURE_SET, bad)]),
                Decision::Exclude(Reason::UnknownFeatureSet { .. })
            ),
            "{bad}"
        );
    }
    // Feature-gate entries are trimmed and empty ones skipped; "-" asks for the gate off.
    assert_eq!(decision(&[PROFILE, (FEATURE_GATE, "")]), Decision::Include);
    assert_eq!(
        decision(&[PROFILE, (FEATURE_GATE, " GateA ,, -GateB")]),
        Decision::Include
    );
    assert_eq!(
        decision(&[PROFILE, (FEATURE_GATE, "-GateA,GateC")]),
        Decision::Exclude(Reason::FeatureGates {
            disabled: vec!["GateC".into()],
            enabled: vec!["GateA".into()]
        })
    );
    // A feature set and a feature gate together.
    assert_eq!(
        decision(&[PROFILE, (FEATURE_SET, "Default"), (FEATURE_GATE, "GateA")]),
        Decision::Exclude(Reason::FeatureSetAndGate)
    );
    // An empty capability is no capability; an empty part of a list is unknown.
    assert_eq!(decision(&[PROFILE, (CAPABILITY, "")]), Decision::Include);
    assert_eq!(
        decision(&[PROFILE, (CAPABILITY, "Console++marketplace")]),
        Decision::Exclude(Reason::UnknownCapabilities {
            unknown: vec!["".into()]
        })
    );
}

#[test]
fn no_readable_annotations_exclude_before_anything_else() {
    let mut a = Annotations::parse(&ann(&[PROFILE])).unwrap();
    a.unreadable = Some("none".into());
    assert_eq!(
        decide(&a, &ctx()),
        Decision::Exclude(Reason::NoAnnotations {
            found: "none".into()
        })
    );
}

fn major(value: &str, kind_ok: bool, cluster: Option<u64>) -> Decision {
    let mut a = Annotations::parse(&ann(&[PROFILE, (MAJOR_VERSION, value)])).unwrap();
    a.major_version_kind = kind_ok;
    let ctx = Context {
        major_version: cluster,
        ..ctx()
    };
    decide(&a, &ctx)
}

#[test]
fn major_version_follows_library_go() {
    // Without a release major version the annotation is not read at all.
    assert_eq!(major("x", false, None), Decision::Include);
    assert_eq!(
        major("4", false, Some(4)),
        Decision::Exclude(Reason::MajorVersionKind)
    );
    for ok in ["4", "4,5", " 5 , 4", "-5", "-5,-6", "", ",", "4,-5"] {
        assert_eq!(major(ok, true, Some(4)), Decision::Include, "{ok:?}");
    }
    for (value, why) in [
        ("5", "mismatch"),
        ("5,6", "mismatch"),
        ("-4", "mismatch"),
        ("-4,5", "mismatch"),
        ("4,-4", "invalid"),
        ("four", "invalid"),
        ("+4", "invalid"),
        ("-", "invalid"),
        ("4.0", "invalid"),
    ] {
        let d = major(value, true, Some(4));
        let expected = match why {
            "mismatch" => Decision::Exclude(Reason::MajorVersion {
                cluster: 4,
                required: value.into(),
            }),
            _ => Decision::Exclude(Reason::MajorVersionInvalid {
                value: value.into(),
            }),
        };
        assert_eq!(d, expected, "{value:?}");
    }
    // Checked after the feature gates, before the profile.
    let mut a = Annotations::parse(&ann(&[(MAJOR_VERSION, "5"), (FEATURE_GATE, "Nope")])).unwrap();
    a.major_version_kind = true;
    let c = Context {
        major_version: Some(4),
        ..ctx()
    };
    assert!(matches!(
        decide(&a, &c),
        Decision::Exclude(Reason::FeatureGates { .. })
    ));
    a.feature_gates = None;
    assert!(matches!(
        decide(&a, &c),
        Decision::Exclude(Reason::MajorVersion { .. })
    ));
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
            Decision::Exclude(Reason::FeatureGates { disabled: s(vec!["A", "B"]), enabled: vec![] }),
            "excluded: feature gate(s) not enabled: A,B".into(),
        ),
        (
            Decision::Exclude(Reason::FeatureGates { disabled: s(vec!["A"]), enabled: s(vec!["C"]) }),
            "excluded: feature gate(s) not enabled: A; feature gate(s) enabled that must be off: C".into(),
        ),
        (
            Decision::Exclude(Reason::Profile { profile: "single-node-developer".into(), value: None }),
            "excluded: not in profile (include.release.openshift.io/single-node-developer is not \"true\")".into(),
        ),
        (
            Decision::Exclude(Reason::Profile { profile: "p".into(), value: Some("True".into()) }),
            "excluded: not in profile (include.release.openshift.io/p is \"True\", not \"true\")".into(),
        ),
        (
            Decision::Exclude(Reason::NoAnnotations { found: "none".into() }),
            "excluded: no annotations the cluster can read (none)".into(),
        ),
        (
            Decision::Exclude(Reason::FeatureSetAndGate),
            "excluded: both release.openshift.io/feature-set and release.openshift.io/feature-gate are set (only one may be)".into(),
        ),
        (
            Decision::Exclude(Reason::UnknownFeatureSet { value: "X".into(), known: s(vec!["Default", "OKD"]) }),
            "excluded: release.openshift.io/feature-set names \"X\", which is not a feature set; valid: Default, OKD".into(),
        ),
        (
            Decision::Exclude(Reason::MajorVersionKind),
            "excluded: release.openshift.io/major-version is only allowed on a FeatureGate or a CustomResourceDefinition".into(),
        ),
        (
            Decision::Exclude(Reason::MajorVersionInvalid { value: "x".into() }),
            "excluded: release.openshift.io/major-version=x is not a valid requirement".into(),
        ),
        (
            Decision::Exclude(Reason::MajorVersion { cluster: 4, required: "5".into() }),
            "excluded: major version 4 does not match release.openshift.io/major-version=5".into(),
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
