#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::fs;

fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/assets")
            .join(name),
        dir.path(),
    );
    dir
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from:?} in {file}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// A temp copy of a fixture with one edit made.
fn edited(name: &str, file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let dir = fixture(name);
    edit(dir.path(), file, from, to);
    dir
}

async fn errors_of(dir: &Path) -> Vec<InputError> {
    let inputs = Inputs {
        assets: Some(dir),
        ..Inputs::default()
    };
    match check_inputs(&inputs).await {
        Ok(()) => Vec::new(),
        Err(e) => e.errors,
    }
}

#[tokio::test]
async fn every_fixture_passes() {
    for name in
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets"))
            .unwrap()
    {
        let name = name.unwrap().file_name().to_string_lossy().into_owned();
        let dir = fixture(&name);
        let errors = errors_of(dir.path()).await;
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[tokio::test]
async fn all_problems_are_reported_in_one_pass() {
    let dir = fixture("aws");
    let ic = crate::assets::CLUSTER_CONFIG;
    edit(
        dir.path(),
        ic,
        "baseDomain: example.com",
        "baseDomain: \"exa mple..com/x\"",
    );
    edit(dir.path(), ic, "name: mycluster", "name: \"My_Cluster!.x\"");
    edit(
        dir.path(),
        ic,
        "subnet-0a1b2c3d4e5f60002",
        "subnet-0a1b2c3d4e5f60001",
    );
    edit(
        dir.path(),
        crate::assets::INFRASTRUCTURE,
        "kind: Infrastructure",
        "kind: Deployment",
    );
    let errors = errors_of(dir.path()).await;
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    for want in [
        "data.install-config: baseDomain",
        "data.install-config: metadata.name",
        "data.install-config: platform.aws.vpc.subnets[1].id",
        "kind",
    ] {
        assert!(fields.contains(&want), "{want} not in {fields:?}");
    }
    let shown = InputErrors { errors }.to_string();
    assert!(shown.contains("problems in the input"), "{shown}");
}

#[tokio::test]
async fn a_creds_secret_that_cannot_be_read_is_an_error_not_a_fallback() {
    let dir = fixture("aws");
    let secret = dir.path().join(crate::assets::CREDS_SECRET);
    fs::remove_file(&secret).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &secret).unwrap();
    let errors = errors_of(dir.path()).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].file, secret);
    assert!(errors[0].problem.contains("dangling"), "{errors:?}");
}

/// Each edit of a fixture's install-config the pass refuses: (case, fixture, from, to, the
/// field named, part of the problem).
#[tokio::test]
async fn refused_install_config_edits_name_their_field() {
    let ipv6_only = "is IPv6 only, which the installer does not support";
    let cases = [
        (
            "IPv6 only on aws",
            "aws",
            "cidr: 10.0.0.0/16",
            "cidr: fd00::/48",
            "data.install-config: networking.machineNetwork",
            ipv6_only,
        ),
        (
            "IPv6 only on gcp",
            "gcp",
            "cidr: 10.0.0.0/16",
            "cidr: fd00::/48",
            "data.install-config: networking.machineNetwork",
            ipv6_only,
        ),
        (
            "an unknown baseline set, without registry flags",
            "aws",
            "baselineCapabilitySet: v4.14",
            "baselineCapabilitySet: v9.99",
            "data.install-config: capabilities.baselineCapabilitySet",
            "unknown capability set \"v9.99\"",
        ),
    ];
    for (case, name, from, to, field, problem) in cases {
        let dir = edited(name, crate::assets::CLUSTER_CONFIG, from, to);
        let errors = errors_of(dir.path()).await;
        assert!(
            errors
                .iter()
                .any(|e| e.field == field && e.problem.contains(problem)),
            "{case}: no {field}: {problem} in {errors:?}"
        );
    }
}

#[tokio::test]
async fn an_empty_kubeconfig_is_refused_before_anything() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    fs::write(&kc, "").unwrap();
    let inputs = Inputs {
        kubeconfig: Some(&kc),
        ..Inputs::default()
    };
    let errors = check_inputs(&inputs).await.unwrap_err().errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].field.contains("BOOTSTRAP_AGENT_KUBECONFIG"),
        "{errors:?}"
    );
}

#[tokio::test]
async fn malformed_options_are_reported_first_with_every_other_problem() {
    let dir = edited(
        "aws",
        crate::assets::CLUSTER_CONFIG,
        "      replicas: 3\n    compute",
        "      replicas: -1\n    compute",
    );
    // As `Cli::parse_checked` collects them.
    let (parsed, malformed) = options::collecting(|| {
        <crate::cli::Cli as clap::Parser>::try_parse_from([
            "bootstrap-agent",
            "reserve",
            "--step-timeout",
            "-5s",
            "--dns",
            "mine",
        ])
    });
    assert!(parsed.is_ok(), "a malformed value does not stop the parse");
    let inputs = Inputs {
        options: &malformed,
        assets: Some(dir.path()),
        ..Inputs::default()
    };
    let errors = check_inputs(&inputs).await.unwrap_err().errors;
    let fields: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.file.display(), e.field))
        .collect();
    assert_eq!(
        fields,
        [
            "--step-timeout (environment variable BOOTSTRAP_AGENT_STEP_TIMEOUT): value \"-5s\" from the command line",
            "--dns (environment variable BOOTSTRAP_AGENT_DNS): value \"mine\" from the command line",
            &format!(
                "{}: data.install-config: controlPlane.replicas",
                dir.path().join(crate::assets::CLUSTER_CONFIG).display()
            ),
        ]
    );
}

/// The pass itself (not only the loader after it) checks each key of a well-formed secret.
#[test]
fn the_pass_checks_the_keys_of_a_creds_secret_whose_sections_are_mappings() {
    let dir = edited(
        "aws",
        crate::assets::CREDS_SECRET,
        "aws_secret_access_key: Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRy13SmFsclhVdG5GRU1J",
        "aws_secret_access_key: \"not base64!\"",
    );
    let mut errors = Vec::new();
    assets::check(dir.path(), &mut errors);
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["data.aws_secret_access_key"], "{errors:?}");
}
