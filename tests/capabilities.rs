//! `bootstrap-agent capabilities ...`: the real binary on fixtures and generated payloads
//! (exit codes, messages, `--explain`, byte-for-byte `--out`), against the local API server
//! (ClusterVersion spec/status, other writers' fields, zero mutations on a re-run, deletes),
//! and property tests of the annotation and document parsers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/fixtures.rs"]
mod fixtures;
mod payload;

use bootstrap_sim::kube::{KubeSim, KubeSimOptions};
use fixtures::{copy_dir, fixture};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_bootstrap-agent");
const PROFILE: &str = "include.release.openshift.io/self-managed-high-availability: \"true\"";

/// A copy of the aws fixture with `from` replaced by `to` in the install-config.
fn assets_with(from: &str, to: &str) -> TempDir {
    fixtures::edited("aws", "manifests/cluster-config.yaml", from, to)
}

fn agent(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("BOOTSTRAP_AGENT_ASSETS")
        .env_remove("BOOTSTRAP_AGENT_CAPABILITY_REGISTRY")
        .env_remove("BOOTSTRAP_AGENT_STATE_DIR")
        .env_remove("BOOTSTRAP_AGENT_KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = agent(args);
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Exit code and stderr.
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let out = agent(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `capabilities <command> <dir_flag> <dir>`, then `flags`.
fn capabilities<'a>(
    command: &'a str,
    dir_flag: &'a str,
    dir: &'a Path,
    flags: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["capabilities", command, dir_flag, path(dir)];
    args.extend_from_slice(flags);
    args
}

fn validate<'a>(assets: &'a Path, flags: &[&'a str]) -> Vec<&'a str> {
    capabilities("validate", "--assets", assets, flags)
}

fn filter<'a>(manifests: &'a Path, flags: &[&'a str]) -> Vec<&'a str> {
    capabilities("filter", "--manifests", manifests, flags)
}

fn upgrade<'a>(from: &'a Path, to: &'a Path, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = capabilities("upgrade", "--from", from, &["--to", path(to)]);
    args.extend_from_slice(flags);
    args
}

fn apply_args<'a>(assets: &'a Path, kubeconfig: &'a Path, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = capabilities(
        "apply",
        "--assets",
        assets,
        &["--kubeconfig", path(kubeconfig)],
    );
    args.extend_from_slice(flags);
    args
}

/// `capabilities filter --explain` from the `None` baseline with `flags`: its stdout.
fn explain(manifests: &Path, flags: &[&str]) -> String {
    let mut args = filter(manifests, &["--baseline", "None", "--explain"]);
    args.extend_from_slice(flags);
    ok(&args)
}

/// The `--explain` line of the object `demo/<name>`.
fn explain_line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.contains(&format!("ConfigMap demo/{name}\t")))
        .unwrap_or_else(|| panic!("{name}: {out}"))
}

fn obj(kind: &str, name: &str, annotations: &[&str]) -> String {
    let mut a = String::new();
    for line in annotations {
        a.push_str(&format!("    {line}\n"));
    }
    format!(
        "apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: demo\n  annotations:\n{a}data:\n  k: v  # comment kept\n"
    )
}

fn manifests(files: &[(&str, String)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

// ---- validate -------------------------------------------------------------------------

#[test]
fn validate_prints_the_enabled_and_known_sets() {
    let out = ok(&validate(&fixture("aws"), &[]));
    assert!(out.contains("baseline: v4.14"), "{out}");
    assert!(out.contains("additional: marketplace, Console"), "{out}");
    assert!(
        out.contains("enabled (12): Build, CSISnapshot, Console"),
        "{out}"
    );
    assert!(out.contains("known (17):"), "{out}");
    let none = ok(&validate(&fixture("none"), &[]));
    assert!(
        none.contains("baseline: vCurrent") && none.contains("enabled (17)"),
        "{none}"
    );
}

#[test]
fn unknown_baseline_set_exits_2_naming_the_value_and_the_valid_sets() {
    let dir = assets_with(
        "baselineCapabilitySet: v4.14",
        "baselineCapabilitySet: v4.99",
    );
    let (code, err) = fails(&validate(dir.path(), &[]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cluster-config.yaml"), "{err}");
    assert!(err.contains("capabilities.baselineCapabilitySet"), "{err}");
    assert!(err.contains("\"v4.99\""), "{err}");
    assert!(
        err.contains("None, v4.11, v4.12, v4.13, v4.14, v4.15, v4.16, v4.17, v4.18, vCurrent"),
        "{err}"
    );
}

#[test]
fn unknown_additional_capability_exits_2_naming_its_index() {
    let dir = assets_with("      - Console\n", "      - console\n");
    let (code, err) = fails(&validate(dir.path(), &[]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("additionalEnabledCapabilities[1]"), "{err}");
    assert!(
        err.contains("\"console\"") && err.contains("Console, DeploymentConfig"),
        "{err}"
    );
}

#[test]
fn run_refuses_invalid_capabilities_before_touching_anything() {
    let dir = assets_with("      - Console\n", "      - Consol\n");
    let state = tempfile::tempdir().unwrap();
    let (code, err) = fails(&[
        "run",
        "--assets",
        path(dir.path()),
        "--state-dir",
        path(state.path()),
        "--bootstrap-ip",
        "10.0.1.10",
        "--kubeconfig",
        "/nonexistent",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("\"Consol\""), "{err}");
    assert!(!state.path().join("journal.json").exists());
}

#[test]
fn a_registry_file_replaces_the_embedded_one() {
    let dir = tempfile::tempdir().unwrap();
    let reg = dir.path().join("capabilities.yaml");
    fs::write(
        &reg,
        "defaultBaseline: Mini\ncapabilities: [{name: Console}, {name: Foo}]\nsets: {Mini: [Console], Full: [Console, Foo]}\n",
    )
    .unwrap();
    let out = ok(&validate(&fixture("none"), &["--registry", path(&reg)]));
    assert!(
        out.contains("baseline: Mini") && out.contains("enabled (1): Console"),
        "{out}"
    );
    assert!(out.contains("known (2): Console, Foo"), "{out}");
    let (code, err) = fails(&validate(&fixture("aws"), &["--registry", path(&reg)]));
    assert_eq!(code, Some(2));
    assert!(err.contains("valid: Full, Mini"), "{err}");
    fs::write(&reg, "sets: [").unwrap();
    let (code, err) = fails(&validate(&fixture("none"), &["--registry", path(&reg)]));
    assert_eq!(code, Some(2));
    assert!(err.contains("capabilities.yaml"), "{err}");
}

// ---- filter ---------------------------------------------------------------------------

fn sample_payload() -> TempDir {
    manifests(&[
        (
            "0000_50_console_00_multi.yaml",
            format!(
                "# leading comment\n---\n{}---\n{}---\n{}",
                obj(
                    "ConfigMap",
                    "console",
                    &[PROFILE, "capability.openshift.io/name: Console"]
                ),
                obj(
                    "ConfigMap",
                    "insights",
                    &[PROFILE, "capability.openshift.io/name: Console+Insights"]
                ),
                obj("ConfigMap", "core", &[PROFILE]),
            ),
        ),
        (
            "0000_50_misc_01.yaml",
            [
                obj(
                    "ConfigMap",
                    "hosted",
                    &[
                        PROFILE,
                        "exclude.release.openshift.io/internal-openshift-hosted: \"true\"",
                    ],
                ),
                obj(
                    "ConfigMap",
                    "techpreview",
                    &[
                        PROFILE,
                        "release.openshift.io/feature-set: TechPreviewNoUpgrade",
                    ],
                ),
                obj(
                    "ConfigMap",
                    "gated",
                    &[PROFILE, "release.openshift.io/feature-gate: ClusterAPI"],
                ),
                obj(
                    "ConfigMap",
                    "snc-only",
                    &["include.release.openshift.io/single-node-developer: \"true\""],
                ),
                obj(
                    "ConfigMap",
                    "future",
                    &[PROFILE, "capability.openshift.io/name: FutureCap"],
                ),
                obj(
                    "ConfigMap",
                    "removed",
                    &[PROFILE, "release.openshift.io/delete: \"true\""],
                ),
            ]
            .join("---\n"),
        ),
        (
            "0000_90_all_excluded.yaml",
            obj(
                "ConfigMap",
                "x",
                &[PROFILE, "capability.openshift.io/name: Build"],
            ),
        ),
    ])
}

#[test]
fn explain_gives_one_line_per_object_with_its_reason() {
    let m = sample_payload();
    let out = explain(
        m.path(),
        &[
            "--additional",
            "Console",
            "--exclude",
            "internal-openshift-hosted",
        ],
    );
    let line = |name: &str| explain_line(&out, name);
    assert!(line("console").ends_with("\tincluded"), "{out}");
    assert!(
        line("console").starts_with("0000_50_console_00_multi.yaml#1\t"),
        "{out}"
    );
    assert!(
        line("insights").ends_with("capability not enabled: Insights"),
        "{out}"
    );
    assert!(line("core").ends_with("\tincluded"));
    assert!(line("hosted").contains("exclude.release.openshift.io/internal-openshift-hosted=true"));
    assert!(line("techpreview").contains("feature set Default is not in"));
    assert!(line("gated").contains("feature gate(s) not enabled: ClusterAPI"));
    assert!(line("snc-only").contains("not in profile"));
    assert!(line("future").contains("unknown capability: FutureCap"));
    assert!(line("removed").contains("delete"));
    assert!(line("x").contains("capability not enabled: Build"));
    assert_eq!(out.lines().filter(|l| l.contains('\t')).count(), 10);
    assert!(out.contains("10 object(s) in 3 file(s): 2 included, 1 to delete (not created at install), 7 excluded"), "{out}");
}

#[test]
fn feature_set_and_gates_and_profile_flags_change_the_decision() {
    let m = sample_payload();
    let out = explain(
        m.path(),
        &[
            "--feature-set",
            "TechPreviewNoUpgrade",
            "--profile",
            "single-node-developer",
        ],
    );
    assert!(
        explain_line(&out, "snc-only").ends_with("included"),
        "{out}"
    );
    assert!(
        explain_line(&out, "techpreview").contains("not in profile"),
        "{out}"
    );
    let out = explain(m.path(), &["--feature-gates", "ClusterAPI"]);
    assert!(explain_line(&out, "gated").ends_with("included"), "{out}");
}

#[test]
fn out_writes_only_included_objects_byte_for_byte() {
    let m = sample_payload();
    let out = tempfile::tempdir().unwrap();
    ok(&filter(
        m.path(),
        &["--assets", path(&fixture("aws")), "--out", path(out.path())],
    ));
    // v4.14 + Console: console, insights and core included; Build too.
    let multi = fs::read_to_string(out.path().join("0000_50_console_00_multi.yaml")).unwrap();
    let original = fs::read_to_string(m.path().join("0000_50_console_00_multi.yaml")).unwrap();
    assert_eq!(multi, original, "every object kept: the file is unchanged");
    let misc = fs::read_to_string(out.path().join("0000_50_misc_01.yaml")).unwrap();
    // hosted is not excluded without --exclude; gated, techpreview, snc-only, future, removed are out.
    assert_eq!(
        misc,
        obj(
            "ConfigMap",
            "hosted",
            &[
                PROFILE,
                "exclude.release.openshift.io/internal-openshift-hosted: \"true\""
            ]
        )
    );
    assert!(
        out.path().join("0000_90_all_excluded.yaml").exists(),
        "Build is in v4.14"
    );
    let none = tempfile::tempdir().unwrap();
    ok(&filter(
        m.path(),
        &["--baseline", "None", "--out", path(none.path())],
    ));
    assert!(!none.path().join("0000_90_all_excluded.yaml").exists());
}

/// Shaped like the csi-snapshot-controller operator's service account, which names its
/// capability twice. sigs.k8s.io/yaml is not strict: the cluster reads it, the last wins.
#[test]
fn a_manifest_naming_its_capability_twice_is_decided_with_the_last_value() {
    let sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: csi-snapshot-controller-operator\n  namespace: openshift-cluster-storage-operator\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n    capability.openshift.io/name: CSISnapshot\n    capability.openshift.io/name: Insights\n";
    let m = manifests(&[(
        "0000_50_csi-snapshot-controller-operator_03_sa.yaml",
        sa.to_string(),
    )]);
    let out = ok(&filter(
        m.path(),
        &[
            "--baseline",
            "None",
            "--additional",
            "Insights",
            "--explain",
        ],
    ));
    assert!(
        out.contains("ServiceAccount openshift-cluster-storage-operator/csi-snapshot-controller-operator\tincluded"),
        "{out}"
    );
    let out = ok(&filter(
        m.path(),
        &[
            "--baseline",
            "None",
            "--additional",
            "CSISnapshot",
            "--explain",
        ],
    ));
    assert!(
        out.contains("excluded: capability not enabled: Insights"),
        "{out}"
    );
}

#[test]
fn unreadable_documents_are_named_the_others_decided_and_the_exit_code_is_6() {
    let m = manifests(&[
        (
            "0000_10_a_00.yaml",
            format!(
                "{}---\nkind: [\n---\n{}---\n{}",
                obj("ConfigMap", "first", &[PROFILE]),
                obj(
                    "ConfigMap",
                    "bad-delete",
                    &[PROFILE, "release.openshift.io/delete: \"yes\""]
                ),
                obj("ConfigMap", "last", &[PROFILE]),
            ),
        ),
        (
            "0000_20_b_00.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n".into(),
        ),
        (
            "0000_30_c_00.yaml",
            obj("ConfigMap", "other-file", &[PROFILE]),
        ),
    ]);
    let out_dir = tempfile::tempdir().unwrap();
    let o = agent(&filter(
        m.path(),
        &["--explain", "--out", path(out_dir.path())],
    ));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(6), "{stdout}{stderr}");
    for name in ["first", "last", "other-file"] {
        assert!(
            explain_line(&stdout, name).ends_with("included"),
            "{stdout}"
        );
    }
    assert!(stdout.contains("3 object(s) in 3 file(s): 3 included, 0 to delete (not created at install), 0 excluded; 3 document(s) unreadable"), "{stdout}");
    for needle in [
        "0000_10_a_00.yaml: document 1: (document)",
        "0000_10_a_00.yaml: document 2: metadata.annotations.release.openshift.io/delete",
        "0000_20_b_00.yaml: document 0: metadata.name",
        "3 manifest document(s) could not be read",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    assert!(out_dir.path().join("0000_30_c_00.yaml").exists());
    let o = agent(&filter(m.path(), &["--output", "json"]));
    assert_eq!(o.status.code(), Some(6));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["unreadable"].as_array().unwrap().len(), 3);
    assert_eq!(v["unreadable"][2]["field"], "document 0: metadata.name");
}

/// `upgrade` reads both payloads as `filter` does; with an unreadable document it still
/// reports, exits 6, and with --kubeconfig deletes nothing (it stops before connecting).
#[test]
fn upgrade_reads_as_filter_reads_and_deletes_nothing_on_a_partly_read_payload() {
    let old = manifests(&[("0000_10_a.yaml", obj("ConfigMap", "a", &[PROFILE]))]);
    let new = manifests(&[(
        "0000_10_a.yaml",
        format!(
            "{}---\nkind: [\n---\n{}",
            obj(
                "ConfigMap",
                "a",
                &[PROFILE, "capability.openshift.io/name: Build"]
            ),
            obj(
                "ConfigMap",
                "gone",
                &[PROFILE, "release.openshift.io/delete: \"true\""]
            )
        ),
    )]);
    let o = agent(&upgrade(old.path(), new.path(), &["--baseline", "None"]));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(6), "{stdout}{stderr}");
    assert!(stdout.contains("implicitly enabled: Build"), "{stdout}");
    assert!(stdout.contains("would delete"), "{stdout}");
    assert!(
        stderr.contains("0000_10_a.yaml: document 1: (document)"),
        "{stderr}"
    );
    // A kubeconfig for a loopback port nothing listens on: reaching it would fail with 1.
    let state = tempfile::tempdir().unwrap();
    let kubeconfig = state.path().join("kubeconfig");
    fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    let o = agent(&upgrade(
        old.path(),
        new.path(),
        &[
            "--baseline",
            "None",
            "--kubeconfig",
            path(&kubeconfig),
            "--state-dir",
            path(state.path()),
        ],
    ));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(6), "{stdout}{stderr}");
    assert!(
        stdout.is_empty(),
        "nothing decided, nothing deleted: {stdout}"
    );
    assert!(!state.path().join("deleted-objects.json").exists());
}

#[test]
fn values_the_cluster_does_not_accept_exclude_the_object_with_the_reason() {
    let m = manifests(&[(
        "0000_10_a_00.yaml",
        [
            obj(
                "ConfigMap",
                "fs-bogus",
                &[PROFILE, "release.openshift.io/feature-set: Bogus"],
            ),
            obj(
                "ConfigMap",
                "profile-true-cased",
                &["include.release.openshift.io/self-managed-high-availability: \"True\""],
            ),
            obj("ConfigMap", "number", &[PROFILE, "example.com/replicas: 3"]),
            obj(
                "ConfigMap",
                "empty-cap",
                &[PROFILE, "capability.openshift.io/name: \"\""],
            ),
        ]
        .join("---\n"),
    )]);
    // The number makes the annotations unreadable to the cluster: decided (excluded) and
    // said on stderr as a bad input, exit 6.
    let output = agent(&filter(m.path(), &["--baseline", "None", "--explain"]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("metadata.annotations")
            && stderr.contains("the value of example.com/replicas is a number"),
        "{stderr}"
    );
    let out = String::from_utf8(output.stdout).unwrap();
    assert!(
        explain_line(&out, "fs-bogus").ends_with(
            "excluded: release.openshift.io/feature-set names \"Bogus\", which is not a feature set; valid: CustomNoUpgrade, Default, DevPreviewNoUpgrade, OKD, TechPreviewNoUpgrade"
        ),
        "{out}"
    );
    assert!(
        explain_line(&out, "profile-true-cased").contains("is \"True\", not \"true\""),
        "{out}"
    );
    assert!(
        explain_line(&out, "number").ends_with(
            "excluded: no annotations the cluster can read (the value of example.com/replicas is a number, not a string (quote it))"
        ),
        "{out}"
    );
    assert!(
        explain_line(&out, "empty-cap").ends_with("included"),
        "{out}"
    );
}

/// The gated capabilities follow CVO's mapping, with the gates of the embedded table.
#[test]
fn gated_capabilities_follow_the_gates_of_the_feature_set() {
    let m = manifests(&[(
        "0000_30_capi.yaml",
        [
            obj(
                "ConfigMap",
                "capi",
                &[PROFILE, "capability.openshift.io/name: ClusterAPI"],
            ),
            obj(
                "ConfigMap",
                "compat",
                &[
                    PROFILE,
                    "capability.openshift.io/name: CompatibilityRequirements",
                ],
            ),
            obj(
                "ConfigMap",
                "insights-gated",
                &[PROFILE, "release.openshift.io/feature-gate: InsightsConfig"],
            ),
        ]
        .join("---\n"),
    )]);
    let decided = |flags: &[&str]| {
        let mut args = filter(m.path(), &["--explain"]);
        args.extend_from_slice(flags);
        let out = ok(&args);
        ["capi", "compat", "insights-gated"].map(|n| explain_line(&out, n).ends_with("included"))
    };
    assert_eq!(decided(&[]), [false, false, true]);
    assert_eq!(
        decided(&["--feature-set", "TechPreviewNoUpgrade"]),
        [true, true, true]
    );
    let custom = ["--feature-set", "CustomNoUpgrade", "--feature-gates"];
    let with = |g: &'static str| [custom[0], custom[1], custom[2], g];
    assert_eq!(
        decided(&with("CRDCompatibilityRequirementOperator")),
        [false, true, false]
    );
    assert_eq!(
        decided(&with("ClusterAPIMachineManagement")),
        [true, true, false]
    );
    let (code, err) = fails(&filter(m.path(), &["--feature-set", "CustomNoUpgrade"]));
    assert_eq!(code, Some(2));
    assert!(err.contains("spec.customNoUpgrade"), "{err}");
}

/// A FeatureGate as the installer renders it: its feature set and gates decide.
#[test]
fn a_feature_gate_file_gives_the_feature_set_and_the_gates() {
    let m = manifests(&[(
        "0000_30_x.yaml",
        [
            obj(
                "ConfigMap",
                "tp",
                &[
                    PROFILE,
                    "release.openshift.io/feature-set: TechPreviewNoUpgrade",
                ],
            ),
            obj(
                "ConfigMap",
                "gated",
                &[PROFILE, "release.openshift.io/feature-gate: OnlyInTheFile"],
            ),
        ]
        .join("---\n"),
    )]);
    let dir = tempfile::tempdir().unwrap();
    let fg = dir.path().join("99_feature-gate.yaml");
    fs::write(
        &fg,
        "apiVersion: config.openshift.io/v1\nkind: FeatureGate\nmetadata: {name: cluster}\nspec: {featureSet: TechPreviewNoUpgrade}\nstatus:\n  featureGates:\n  - version: \"\"\n    enabled: [{name: OnlyInTheFile}]\n    disabled: []\n",
    )
    .unwrap();
    let out = explain(m.path(), &["--feature-gates-file", path(&fg)]);
    assert!(explain_line(&out, "tp").ends_with("included"), "{out}");
    assert!(explain_line(&out, "gated").ends_with("included"), "{out}");
    let (code, err) = fails(&filter(
        m.path(),
        &[
            "--feature-gates-file",
            path(&fg),
            "--feature-set",
            "Default",
        ],
    ));
    assert_eq!(code, Some(2));
    assert!(
        err.contains("99_feature-gate.yaml says \"TechPreviewNoUpgrade\""),
        "{err}"
    );
}

#[test]
fn major_version_comes_from_the_flag_or_the_release_metadata() {
    let crd = |name: &str, majors: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\n  annotations:\n    {PROFILE}\n    release.openshift.io/major-version: \"{majors}\"\n"
        )
    };
    let m = manifests(&[(
        "0000_30_crds.yaml",
        [
            crd("four.example.com", "4"),
            crd("not-four.example.com", "-4,5"),
        ]
        .join("---\n"),
    )]);
    let names = |out: &str| -> Vec<bool> {
        ["four.example.com", "not-four.example.com"]
            .iter()
            .map(|n| {
                out.lines()
                    .find(|l| {
                        l.contains(&format!(
                            "CustomResourceDefinition.apiextensions.k8s.io {n}\t"
                        ))
                    })
                    .unwrap_or_else(|| panic!("{n}: {out}"))
                    .ends_with("included")
            })
            .collect()
    };
    // Unchecked without a major version.
    assert_eq!(names(&explain(m.path(), &[])), [true, true]);
    assert_eq!(
        names(&explain(m.path(), &["--major-version", "4"])),
        [true, false]
    );
    fs::write(m.path().join("release-metadata"), r#"{"version": "5.0.1"}"#).unwrap();
    assert_eq!(names(&explain(m.path(), &[])), [false, true]);
    fs::write(m.path().join("release-metadata"), r#"{"version": "five"}"#).unwrap();
    let (code, err) = fails(&filter(m.path(), &[]));
    assert_eq!(code, Some(2));
    assert!(
        err.contains("release-metadata") && err.contains("\"five\""),
        "{err}"
    );
}

#[test]
fn unknown_flag_values_exit_2() {
    let m = sample_payload();
    for (flag, value, named) in [
        ("--baseline", "v5", Some("\"v5\"")),
        ("--additional", "Nope", None),
        ("--feature-set", "Nope", Some("--feature-set")),
    ] {
        let (code, err) = fails(&filter(m.path(), &[flag, value]));
        assert_eq!(code, Some(2), "{flag} {value}: {err}");
        if let Some(named) = named {
            assert!(err.contains(named), "{flag} {value}: {err}");
        }
    }
}

#[test]
fn a_generated_payload_of_1000_objects_filters_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    payload::write(dir.path(), 1000, 7).unwrap();
    let out = ok(&filter(
        dir.path(),
        &[
            "--baseline",
            "v4.14",
            "--exclude",
            "internal-openshift-hosted",
            "--output",
            "json",
        ],
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["objects"].as_array().unwrap().len(), 1000);
    let (i, d, e) = (
        v["included"].as_u64().unwrap(),
        v["delete"].as_u64().unwrap(),
        v["excluded"].as_u64().unwrap(),
    );
    assert_eq!(i + d + e, 1000);
    assert!(i > 400 && e > 100, "a realistic mix: {i} {d} {e}");
    // Everything vCurrent includes survives a second filter unchanged.
    let all = tempfile::tempdir().unwrap();
    ok(&filter(dir.path(), &["--out", path(all.path())]));
    let again = tempfile::tempdir().unwrap();
    let out2 = ok(&filter(
        all.path(),
        &["--out", path(again.path()), "--output", "json"],
    ));
    let v2: Value = serde_json::from_str(&out2).unwrap();
    assert_eq!(v2["excluded"], 0);
    assert_eq!(v2["delete"], 0);
    for entry in fs::read_dir(all.path()).unwrap() {
        let entry = entry.unwrap();
        assert_eq!(
            fs::read(entry.path()).unwrap(),
            fs::read(again.path().join(entry.file_name())).unwrap()
        );
    }
}

// ---- upgrade --------------------------------------------------------------------------

#[test]
fn upgrade_keeps_capabilities_of_manifests_applied_before() {
    let old = manifests(&[("0000_50_a_00.yaml", obj("ConfigMap", "moved", &[PROFILE]))]);
    let new = manifests(&[(
        "0000_50_a_00.yaml",
        [
            obj(
                "ConfigMap",
                "moved",
                &[PROFILE, "capability.openshift.io/name: Insights"],
            ),
            obj(
                "ConfigMap",
                "new-in-build",
                &[PROFILE, "capability.openshift.io/name: Build"],
            ),
        ]
        .join("---\n"),
    )]);
    let flags = ["--baseline", "None", "--additional", "Console"];
    let out = ok(&upgrade(old.path(), new.path(), &flags));
    assert!(out.contains("enabled (2): Console, Insights"), "{out}");
    assert!(out.contains("implicitly enabled: Insights"), "{out}");
    assert!(out.contains("ImplicitlyEnabledCapabilities=True (CapabilitiesImplicitlyEnabled): The following capabilities could not be disabled: Insights"), "{out}");
    assert!(out.contains("1 included, 0 to delete, 1 excluded"), "{out}");
    let same = ok(&upgrade(new.path(), new.path(), &flags));
    assert!(
        same.contains("ImplicitlyEnabledCapabilities=False (AsExpected)"),
        "{same}"
    );
}

// ---- against the local API server -----------------------------------------------------

async fn sim() -> KubeSim {
    KubeSim::start(KubeSimOptions::default()).await.unwrap()
}

fn mutations(k: &KubeSim) -> Vec<(String, String)> {
    k.request_log()
        .into_iter()
        .filter(|(m, _)| m != "GET")
        .collect()
}

fn cv(k: &KubeSim) -> Value {
    k.get(
        "config.openshift.io",
        "v1",
        "clusterversions",
        None,
        "version",
    )
    .expect("ClusterVersion version")
}

/// Requests that wrote ClusterVersion status (the CVO's alone).
fn status_writes(k: &KubeSim) -> Vec<(String, String)> {
    mutations(k)
        .into_iter()
        .filter(|(_, p)| p.contains("clusterversions") && p.contains("/status"))
        .collect()
}

/// The status the real cluster-version operator writes first: every required field.
fn cvo_status(enabled: &[&str]) -> Value {
    json!({
        "availableUpdates": null,
        "desired": {"version": "4.18.0", "image": "quay.io/openshift-release-dev/ocp-release@sha256:0"},
        "observedGeneration": 1,
        "versionHash": "abc",
        "capabilities": {"enabledCapabilities": enabled, "knownCapabilities": enabled},
        "conditions": [{"type": "Available", "status": "True", "reason": "AsExpected",
                        "message": "Done", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    })
}

/// Creates `version` as the CVO does: with `spec`, and with `status` once the CVO has run.
fn create_cluster_version(k: &KubeSim, spec: Value, status: Option<Value>) {
    let mut version = json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": spec,
    });
    if let Some(status) = status {
        version["status"] = status;
    }
    k.create(version).unwrap();
}

async fn apply(k: &KubeSim, assets: &Path) -> String {
    let kc = k.kubeconfig_path().to_path_buf();
    let assets = assets.to_path_buf();
    tokio::task::spawn_blocking(move || ok(&apply_args(&assets, &kc, &[])))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_creates_cluster_version_from_cvo_overrides_and_never_writes_status() {
    let k = sim().await;
    let out = apply(&k, &fixture("aws")).await;
    assert!(
        out.contains("ClusterVersion version: created from manifests/cvo-overrides.yaml"),
        "{out}"
    );
    let v = cv(&k);
    assert_eq!(
        v["spec"]["capabilities"],
        json!({"baselineCapabilitySet": "v4.14", "additionalEnabledCapabilities": ["marketplace", "Console"]})
    );
    // The installer's whole spec came along.
    assert_eq!(
        v["spec"]["clusterID"],
        "6cc926cb-f553-56d0-b741-51b0fa28aba8"
    );
    assert_eq!(v["spec"]["channel"], "stable-4.18");
    assert!(v.get("status").is_none(), "the agent wrote status: {v}");
    assert!(out.contains("will report"), "{out}");
    assert!(
        out.contains("ImplicitlyEnabledCapabilities=False (AsExpected)"),
        "{out}"
    );
    let managers: Vec<&str> = v["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"bootstrap-agent"), "{managers:?}");
    assert!(status_writes(&k).is_empty(), "{:?}", status_writes(&k));
    assert_eq!(
        k.user_agents(),
        [concat!("bootstrap-agent/", env!("CARGO_PKG_VERSION"))],
        "every request names the agent"
    );

    k.clear_request_log();
    let out = apply(&k, &fixture("aws")).await;
    assert!(
        out.contains("unchanged") && out.contains("0 mutating call(s)"),
        "{out}"
    );
    assert!(mutations(&k).is_empty(), "{:?}", mutations(&k));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_strict_server_refuses_a_status_write_without_the_cvo_fields() {
    // What the old agent did: it must fail on a real server, and so it fails here.
    let k = sim().await;
    apply(&k, &fixture("aws")).await;
    let client = kube_client(&k).await;
    let api: kube::Api<kube::api::DynamicObject> =
        kube::Api::all_with(client, &cluster_version_resource());
    let err = api
        .patch_status(
            "version",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(
                json!({"status": {"capabilities": {"enabledCapabilities": ["Console"]}}}),
            ),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected an API error, got {err:?}")
    };
    assert_eq!(status.code, 422, "{status:?}");
    for field in [
        "status.availableUpdates",
        "status.desired",
        "status.observedGeneration",
        "status.versionHash",
    ] {
        assert!(status.message.contains(field), "{}", status.message);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_cvo_status_in_place_apply_patches_spec_only_and_other_fields_survive() {
    let k = sim().await;
    create_cluster_version(
        &k,
        json!({"channel": "stable-4.18", "clusterID": "0f1e2d3c-0000-4000-8000-000000000001",
               "capabilities": {"baselineCapabilitySet": "None"}}),
        Some(cvo_status(&["Console"])),
    );
    k.clear_request_log();
    let out = apply(&k, &fixture("aws")).await;
    assert!(out.contains("spec.capabilities applied"), "{out}");
    let v = cv(&k);
    assert_eq!(v["spec"]["channel"], "stable-4.18");
    assert_eq!(
        v["spec"]["clusterID"], "0f1e2d3c-0000-4000-8000-000000000001",
        "an existing cluster ID is never replaced by cvo-overrides.yaml"
    );
    assert_eq!(v["spec"]["capabilities"]["baselineCapabilitySet"], "v4.14");
    assert_eq!(v["status"], cvo_status(&["Console"]), "status untouched");
    assert!(status_writes(&k).is_empty(), "{:?}", status_writes(&k));
}

#[tokio::test(flavor = "multi_thread")]
async fn day_two_never_takes_away_a_capability_an_admin_added() {
    let k = sim().await;
    create_cluster_version(
        &k,
        json!({"clusterID": "0f1e2d3c-0000-4000-8000-000000000001",
               "capabilities": {"baselineCapabilitySet": "vCurrent",
                                "additionalEnabledCapabilities": ["OperatorLifecycleManager", "Console"]}}),
        Some(cvo_status(&[
            "Ingress",
            "CloudCredential",
            "Console",
            "OperatorLifecycleManager",
        ])),
    );
    let out = apply(&k, &fixture("aws")).await;
    assert!(out.contains("kept (listed in the live spec; capabilities cannot be uninstalled): OperatorLifecycleManager"), "{out}");
    // Installed by the old baseline, not listed: the CVO keeps them enabled implicitly.
    assert!(out.contains("ImplicitlyEnabledCapabilities=True (CapabilitiesImplicitlyEnabled): The following capabilities could not be disabled: CloudCredential, Ingress"), "{out}");
    let v = cv(&k);
    assert_eq!(
        v["spec"]["capabilities"]["additionalEnabledCapabilities"],
        json!(["marketplace", "Console", "OperatorLifecycleManager"])
    );
    assert!(status_writes(&k).is_empty());
    k.clear_request_log();
    apply(&k, &fixture("aws")).await;
    assert!(mutations(&k).is_empty(), "{:?}", mutations(&k));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_cvo_overrides_apply_waits_for_the_object_and_then_writes_the_spec() {
    let assets = tempfile::tempdir().unwrap();
    copy_dir(&fixture("aws"), assets.path());
    fs::remove_file(assets.path().join("manifests/cvo-overrides.yaml")).unwrap();
    let k = sim().await;
    let kc = k.kubeconfig_path().to_path_buf();
    let dir = assets.path().to_path_buf();
    let waiting =
        tokio::task::spawn_blocking(move || ok(&apply_args(&dir, &kc, &["--wait", "60s"])));
    // The CVO's bootstrap pod creates `version`; the agent is watching for it.
    wait_for_request(&k, "watch=true").await;
    create_cluster_version(
        &k,
        json!({"clusterID": "0f1e2d3c-0000-4000-8000-000000000001"}),
        None,
    );
    let out = waiting.await.unwrap();
    assert!(out.contains("spec.capabilities applied"), "{out}");
    assert_eq!(
        cv(&k)["spec"]["capabilities"]["baselineCapabilitySet"],
        "v4.14"
    );

    let empty = sim().await;
    let (code, err) = fails(&apply_args(
        assets.path(),
        empty.kubeconfig_path(),
        &["--wait", "1s"],
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("did not appear within 1s"), "{err}");
}

async fn wait_for_request(k: &KubeSim, needle: &str) {
    for _ in 0..500 {
        if k.request_log().iter().any(|(_, p)| p.contains(needle)) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("no request containing {needle}: {:?}", k.request_log());
}

/// A client of the local API server, built as the agent builds its own.
async fn kube_client(k: &KubeSim) -> kube::Client {
    bootstrap_agent::cluster::client(k.kubeconfig_path())
        .await
        .unwrap()
}

fn cluster_version_resource() -> kube::api::ApiResource {
    kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("config.openshift.io", "v1", "ClusterVersion"),
        "clusterversions",
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn update_deletes_in_the_cvo_run_level_order_and_warns_when_an_object_reappears() {
    let k = sim().await;
    let cm = |name: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "demo"}, "data": {"k": "v"}})
    };
    k.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}))
        .unwrap();
    k.create(cm("early")).unwrap();
    k.create(cm("late")).unwrap();
    let delete = "release.openshift.io/delete: \"true\"";
    let old = manifests(&[("0000_10_a_00.yaml", obj("ConfigMap", "early", &[PROFILE]))]);
    let new = manifests(&[
        (
            "0000_10_a_00.yaml",
            obj("ConfigMap", "early", &[PROFILE, delete]),
        ),
        (
            "0000_50_b_00.yaml",
            obj("ConfigMap", "late", &[PROFILE, delete]),
        ),
        (
            "0000_60_c_00.yaml",
            obj("ConfigMap", "never-existed", &[PROFILE, delete]),
        ),
    ]);
    let state = tempfile::tempdir().unwrap();
    let run = |k: &KubeSim| {
        let args: Vec<String> = upgrade(
            old.path(),
            new.path(),
            &[
                "--kubeconfig",
                path(k.kubeconfig_path()),
                "--state-dir",
                path(state.path()),
            ],
        )
        .iter()
        .map(|s| s.to_string())
        .collect();
        async move {
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                ok(&args)
            })
            .await
            .unwrap()
        }
    };
    k.clear_request_log();
    let out = run(&k).await;
    let deletes: Vec<&str> = out.lines().filter(|l| l.starts_with("delete ")).collect();
    assert_eq!(deletes.len(), 3, "{out}");
    // In run-level order, each with its outcome.
    let expected = [
        ("demo/early", "Verified"),
        ("demo/late", "Verified"),
        ("never-existed", "AlreadyAbsent"),
    ];
    for (line, (object, outcome)) in deletes.iter().zip(expected) {
        assert!(line.contains(object) && line.ends_with(outcome), "{out}");
    }
    assert!(out.contains("deletes: 3 requested, 3 verified"), "{out}");
    let order: Vec<String> = mutations(&k)
        .into_iter()
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    assert_eq!(order.len(), 2, "{order:?}");
    assert!(
        order[0].starts_with("DELETE") && order[0].contains("/early"),
        "{order:?}"
    );
    assert!(order[1].contains("/late"), "{order:?}");
    assert!(
        k.get("", "v1", "configmaps", Some("demo"), "late")
            .is_none()
    );

    k.create(cm("late")).unwrap();
    let out = run(&k).await;
    assert!(
        out.lines()
            .any(|l| l.contains("demo/late") && l.contains("reappeared")),
        "{out}"
    );
    assert!(
        k.get("", "v1", "configmaps", Some("demo"), "late")
            .is_none()
    );
}

// ---- properties -----------------------------------------------------------------------

mod props {
    use bootstrap_agent::capabilities::inclusion::{Annotations, Context, decide};
    use bootstrap_agent::capabilities::manifests::{ManifestFile, from_files};
    use bootstrap_agent::capabilities::reader::split_documents;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("release.openshift.io/delete".to_string()),
            Just("release.openshift.io/feature-set".to_string()),
            Just("release.openshift.io/feature-gate".to_string()),
            Just("capability.openshift.io/name".to_string()),
            "include\\.release\\.openshift\\.io/[a-z-]{0,12}",
            "exclude\\.release\\.openshift\\.io/[a-z-]{0,12}",
            ".{0,20}",
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![Just("true".to_string()), "[A-Za-z+, ]{0,24}", ".{0,24}",]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn annotation_parsing_and_decisions_never_panic(
            pairs in proptest::collection::btree_map(key(), value(), 0..8)
        ) {
            let pairs: BTreeMap<String, String> = pairs;
            if let Ok(a) = Annotations::parse(&pairs) {
                let ctx = Context {
                    profile: "self-managed-high-availability".into(),
                    feature_set: "Default".into(),
                    known_feature_sets: vec!["Default".into(), "TechPreviewNoUpgrade".into()],
                    gates: Default::default(),
                    major_version: Some(4),
                    exclude: vec!["internal-openshift-hosted".into()],
                    enabled: ["Console".to_string()].into(),
                    known: ["Console".to_string(), "Insights".to_string()].into(),
                };
                let _ = decide(&a, &ctx).to_string();
                if let Some(caps) = &a.capabilities {
                    prop_assert!(caps.iter().all(|c| !c.contains('+')));
                }
            }
        }

        #[test]
        fn document_ranges_are_in_bounds_ordered_and_never_panic(text in "(---\n|\\.\\.\\.\n|--- x\n|[a-z: \"#\n-]{0,12}){0,20}") {
            let mut last = 0;
            for r in split_documents(&text) {
                prop_assert!(r.start <= r.end && r.end <= text.len() && r.start >= last);
                prop_assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
                last = r.end;
            }
        }

        #[test]
        fn parsing_arbitrary_files_never_panics(text in "\\PC{0,200}") {
            let _ = from_files(Path::new("m"), vec![ManifestFile { name: "f.yaml".into(), text }]);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_cvo_overrides_file_is_bad_input_and_nothing_is_written() {
    let assets = tempfile::tempdir().unwrap();
    copy_dir(&fixture("aws"), assets.path());
    let k = sim().await;
    for (text, field) in [
        (
            "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nspec:\n  clusterID: 42\n",
            "spec.clusterID",
        ),
        (
            "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nspec:\n  channel: stable-4.18\n",
            "spec.clusterID",
        ),
        (
            "apiVersion: v1\nkind: Secret\nspec:\n  clusterID: x\n",
            "kind",
        ),
    ] {
        fs::write(assets.path().join("manifests/cvo-overrides.yaml"), text).unwrap();
        let (code, err) = fails(&apply_args(assets.path(), k.kubeconfig_path(), &[]));
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(&format!("cvo-overrides.yaml: {field}")),
            "{err}"
        );
    }
    assert!(mutations(&k).is_empty(), "{:?}", mutations(&k));
}
