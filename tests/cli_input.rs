//! The real binary against the fixtures: exit codes, what it prints, and that bad input or a
//! held lock stops it before anything is written or any cloud endpoint is contacted.
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/fixtures.rs"]
mod fixtures;
#[path = "common/inputs.rs"]
mod inputs;

use fixtures::fixture;
use inputs::{BIN, CANARIES, CLUSTER_CONFIG, CREDS, KUBECONFIG, aws_nowhere};
use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The fixtures `plan --offline` can plan (AWS subnets found at run time cannot be).
const FIXTURES: [&str; 15] = [
    "aws",
    "aws-manual-creds",
    "aws-internal",
    "aws-dualstack",
    "aws-user-dns",
    "azure",
    "azure-dualstack",
    "azure-default-network",
    "azure-mixed-api-external",
    "azure-mixed-api-internal",
    "gcp",
    "gcp-dualstack",
    "gcp-default-network",
    "gcp-shared-vpc",
    "none",
];

/// A temp copy of a fixture with `from` replaced by `to` (exactly once) in `file`.
fn broken(name: &str, file: &str, from: &str, to: &str) -> TempDir {
    fixtures::edited(name, file, from, to)
}

/// The aws fixture with `controlPlane.replicas: 0` (refused).
fn no_control_plane_replicas() -> TempDir {
    broken(
        "aws",
        CLUSTER_CONFIG,
        "      replicas: 3\n    compute:",
        "      replicas: 0\n    compute:",
    )
}

/// The binary with a clean, hermetic environment: no agent settings inherited, AWS endpoints
/// pointing nowhere, no instance metadata.
fn agent(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("BOOTSTRAP_AGENT_STATE_DIR")
        .env_remove("BOOTSTRAP_AGENT_ASSETS")
        .env_remove("BOOTSTRAP_AGENT_BOOTSTRAP_IP")
        .env_remove("BOOTSTRAP_AGENT_STEP_TIMEOUT")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env("BOOTSTRAP_AGENT_LOG", "debug");
    aws_nowhere(&mut cmd);
    cmd
}

/// Runs to completion, killing the child (and failing) if it takes longer than a minute.
fn run(cmd: &mut Command) -> Output {
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{cmd:?} did not finish within 60s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn ran(cmd: &mut Command) -> Ran {
    let out = run(cmd);
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

impl Ran {
    /// The first credential of the fixtures or the kubeconfig it printed, if any.
    fn credential(&self) -> Option<&'static str> {
        CANARIES
            .into_iter()
            .find(|c| self.stdout.contains(c) || self.stderr.contains(c))
    }
}

/// Each of `texts` is in `printed`, the stdout or stderr of `out`.
fn assert_each_in(printed: &str, texts: &[&str], out: &Ran) {
    for text in texts {
        assert!(printed.contains(text), "{text}\n{out:?}");
    }
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn dir_entries(dir: &Path) -> Vec<String> {
    match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{}: {e}", dir.display()),
    }
}

/// `command --assets <assets> --state-dir <state>`, then `extra`.
fn on_assets<'a>(
    command: &[&'a str],
    assets: &'a Path,
    state: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = command.to_vec();
    args.extend(["--assets", p(assets), "--state-dir", p(state)]);
    args.extend_from_slice(extra);
    args
}

/// `plan --offline` of the fixture `name` into a fresh state dir; it must succeed.
fn planned(name: &str, extra: &[&str]) -> Ran {
    let tmp = tempfile::tempdir().unwrap();
    let out = plan_offline(&fixture(name), tmp.path(), extra);
    assert_eq!(out.code, Some(0), "{name} {extra:?}: {out:?}");
    out
}

fn plan_offline(assets: &Path, state: &Path, extra: &[&str]) -> Ran {
    let flags = [&["--bootstrap-ip", "10.0.0.5"], extra].concat();
    ran(&mut agent(&on_assets(
        &["plan", "--offline"],
        assets,
        state,
        &flags,
    )))
}

// ---- plan --offline -------------------------------------------------------------------------

#[test]
fn plan_offline_aws_prints_all_of_run_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let out = plan_offline(&fixture("aws"), &state, &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    // 8 cloud changes (progressive DNS, `run`'s default: the private records start with the
    // bootstrap IP alone, the public record waits for its first serving IP), the capabilities,
    // and the two Services (MCS is a listener of the internal NLB on AWS).
    assert!(out.stdout.contains("11 change(s):"), "{out:?}");
    assert!(
        out.stdout.contains("note: dns seeding: progressive"),
        "{out:?}"
    );
    let changes = out
        .stdout
        .lines()
        .filter(|l| ["  + ", "  - ", "  ~ "].iter().any(|p| l.starts_with(p)))
        .count();
    assert_eq!(changes, 11, "{out:?}");
    let all_at_once = plan_offline(&fixture("aws"), &state, &["--dns-seeding", "all-at-once"]);
    assert!(
        all_at_once.stdout.contains("12 change(s):"),
        "{all_at_once:?}"
    );
    assert!(
        all_at_once
            .stdout
            .contains("note: dns seeding: all at once"),
        "{all_at_once:?}"
    );
    assert_eq!(
        out.stdout.matches("  ~ capabilities ").count(),
        1,
        "{out:?}"
    );
    assert_eq!(out.stdout.matches("  + service ").count(), 2, "{out:?}");
    let cloud_only = plan_offline(&fixture("aws"), &state, &["--stage", "reserve,seed-dns"]);
    assert!(cloud_only.stdout.contains("9 change(s):"), "{cloud_only:?}");
    assert!(
        out.stdout.contains("network:\n  public subnet subnet-0a1b2c3d4e5f60011: install-config platform.aws.vpc.subnets[3].id; by role ControlPlaneExternalLB"),
        "{out:?}"
    );
    assert_eq!(
        out.stdout.matches("  + reserve ").count(),
        6,
        "3 EIPs + 3 private IPs: {out:?}"
    );
    assert_eq!(out.stdout.matches("  + dns ").count(), 2, "{out:?}");
    assert_eq!(
        out.stdout.matches("  + dns private zone").count(),
        2,
        "api and api-int with the bootstrap IP alone: {out:?}"
    );
    assert!(out.stdout.contains("A ttl 30 add 10.0.0.5\n"), "{out:?}");
    assert_eq!(
        all_at_once.stdout.matches("  + dns ").count(),
        3,
        "{all_at_once:?}"
    );
    assert!(!state.exists(), "plan must not create the state dir");
}

#[test]
fn plan_offline_json_parses_with_all_of_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = plan_offline(&fixture("aws"), tmp.path(), &["--output", "json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let changes = plan["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 11, "{out:?}");
    let kind = |k: &str| changes.iter().filter(|c| c["change"] == k).count();
    assert_eq!(kind("reserve_address"), 6);
    assert_eq!(
        kind("add_record_values"),
        2,
        "progressive: the bootstrap IP alone"
    );
    assert_eq!(kind("set_capabilities"), 1);
    assert_eq!(kind("apply_service"), 2);
    // Only what the later stages of `run` will do with what the earlier ones create, and how
    // the reserved IPs will join DNS.
    let notes = plan["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(
        notes[2]
            .as_str()
            .unwrap()
            .starts_with("dns seeding: progressive"),
        "{notes:?}"
    );
    assert!(
        notes[0].as_str().unwrap().starts_with("hand-over: "),
        "{notes:?}"
    );
    assert!(
        notes[1].as_str().unwrap().starts_with("remove-bootstrap: "),
        "{notes:?}"
    );
    assert!(
        dir_entries(tmp.path()).is_empty(),
        "plan wrote to the state dir"
    );
}

#[test]
fn plan_offline_prints_where_installer_default_names_come_from() {
    let out = planned("gcp-default-network", &[]);
    assert!(
        out.stdout.contains(
            "network:\n  network mycluster-7xk2p-network: default name (<infra-id>-network)\n"
        ),
        "{out:?}"
    );
    let out = planned("azure-default-network", &["--output", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        plan["network"][2],
        serde_json::json!({
            "name": "virtual network",
            "value": "mycluster-7xk2p-vnet",
            "source": {"kind": "default_name", "rule": "<infra-id>-vnet"}
        }),
        "{out:?}"
    );
}

#[test]
fn plan_offline_refuses_aws_subnets_that_are_found_at_run_time() {
    for (name, problem) in [
        (
            "aws-installer-vpc",
            "data.install-config: platform.aws.vpc.subnets: absent (installer-made VPC): the subnets are discovered at run time by tag kubernetes.io/cluster/mycluster-7xk2p",
        ),
        (
            "aws-flat-subnets",
            "data.install-config: platform.aws.vpc.subnets: lists subnets without roles; each is classified at run time (role tag, else route table)",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        let out = plan_offline(&fixture(name), &state, &[]);
        assert_eq!(out.code, Some(2), "{name}: {out:?}");
        assert!(
            out.stderr.contains(&format!(
                "{}: {problem}",
                p(&fixture(name).join(CLUSTER_CONFIG))
            )),
            "{name}: {out:?}"
        );
        assert!(
            out.stderr.contains("run `plan` without --offline"),
            "{out:?}"
        );
        assert!(out.stdout.is_empty(), "no partial plan: {out:?}");
        assert!(
            !state.exists(),
            "{name}: plan must not create the state dir"
        );
    }
}

#[test]
fn plan_offline_never_prints_the_secret() {
    let tmp = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        for output in ["text", "json"] {
            let mut cmd = agent(&on_assets(
                &["plan", "--offline"],
                &fixture(name),
                tmp.path(),
                &["--bootstrap-ip", "10.0.0.5", "--output", output],
            ));
            cmd.env("BOOTSTRAP_AGENT_LOG", "trace");
            let out = ran(&mut cmd);
            assert_eq!(out.code, Some(0), "{name} {output}: {out:?}");
            assert_eq!(out.credential(), None, "{name} {output}: {out:?}");
        }
    }
}

// ---- bad input: exit 2, file and field named ------------------------------------------------

#[test]
fn missing_asset_dir_exits_2_and_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-assets");
    let out = plan_offline(&missing, tmp.path(), &[]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("{}: (dir): asset dir does not exist", p(&missing))),
        "{out:?}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}

/// One defect in one file of the aws fixture: `plan --offline` exits 2 naming the file and the
/// field, prints no plan and never the secret.
#[test]
fn a_bad_asset_file_exits_2_and_names_file_and_field() {
    for (what, file, from, to, said) in [
        (
            "broken YAML",
            CLUSTER_CONFIG,
            "kind: ConfigMap",
            "kind: [ConfigMap",
            "(document): invalid YAML",
        ),
        (
            "a bad install-config field",
            CLUSTER_CONFIG,
            "    publish: External",
            "    publish: Sometimes",
            "data.install-config: publish: expected External, Internal or Mixed",
        ),
        (
            "a creds key that is not base64",
            CREDS,
            "aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=",
            "aws_access_key_id: not*base64",
            "data.aws_access_key_id: expected base64",
        ),
    ] {
        let assets = broken("aws", file, from, to);
        let tmp = tempfile::tempdir().unwrap();
        let out = plan_offline(assets.path(), tmp.path(), &[]);
        assert_eq!(out.code, Some(2), "{what}: {out:?}");
        let file = assets.path().join(file);
        assert!(
            out.stderr.contains(&format!("{}: {said}", p(&file))),
            "{what}: {out:?}"
        );
        assert!(out.stdout.is_empty(), "{what}: {out:?}");
        assert_eq!(out.credential(), None, "{what}: {out:?}");
    }
}

/// User-managed DNS: `plan` (text and JSON) lists the records to create and plans no record
/// change.
#[test]
fn plan_offline_with_user_provisioned_dns_prints_the_records_to_create() {
    let out = planned("aws-user-dns", &[]);
    assert!(
        out.stdout.contains("user-managed DNS (install-config platform.aws.userProvisionedDNS: Enabled): the agent writes no DNS record and looks up no zone; create these records in your DNS:\n  private zone mycluster.example.com: api.mycluster.example.com A ttl 30 = 10.0.0.5, <private-ipv4@subnet-0a1b2c3d4e5f60001>"),
        "{out:?}"
    );
    assert_eq!(out.stdout.matches("  + reserve ").count(), 6, "{out:?}");
    assert!(!out.stdout.contains("+ dns "), "{out:?}");
    let out = planned("aws-user-dns", &["--output", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(plan["user_dns"]["records"].as_array().unwrap().len(), 3);
    assert_eq!(plan["user_dns"]["bootstrap_ip"], "10.0.0.5");
    assert!(
        plan["changes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| !c["change"].as_str().unwrap().ends_with("_record_values")),
        "no DNS change: {out:?}"
    );
}

/// Mixed plans on Azure (it used to exit 2), and is refused, as by the installer, elsewhere.
#[test]
fn publish_mixed_plans_on_azure_and_exits_2_on_aws_naming_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, public) in [
        ("azure-mixed-api-external", true),
        ("azure-mixed-api-internal", false),
    ] {
        // All at once, so that the public record is planned now (progressive waits for its
        // first serving IP).
        let out = plan_offline(
            &fixture(name),
            tmp.path(),
            &["--dns-seeding", "all-at-once"],
        );
        assert_eq!(out.code, Some(0), "{name}: {out:?}");
        assert_eq!(
            out.stdout
                .contains("+ dns public zone example.com: api.mycluster.example.com A"),
            public,
            "{name}: {out:?}"
        );
    }
    let assets = broken(
        "aws",
        CLUSTER_CONFIG,
        "    publish: External\n",
        "    publish: Mixed\n    operatorPublishingStrategy:\n      apiserver: External\n      ingress: Internal\n",
    );
    let state = tmp.path().join("state");
    let out = plan_offline(assets.path(), &state, &[]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "{}: data.install-config: publish: Mixed is supported only on platform azure, not aws",
            p(&assets.path().join(CLUSTER_CONFIG))
        )),
        "{out:?}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(!state.exists(), "bad input writes nothing");
}

#[test]
fn bad_bootstrap_ip_value_exits_2_and_names_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let out = ran(&mut agent(&on_assets(
        &["plan", "--offline"],
        &fixture("aws"),
        tmp.path(),
        &["--bootstrap-ip", "10.0.0.300"],
    )));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("--bootstrap-ip"), "{out:?}");
    assert!(out.stderr.contains("10.0.0.300"), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn malformed_option_values_and_asset_problems_are_reported_together() {
    let assets = no_control_plane_replicas();
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let out = ran(agent(&on_assets(
        &["reserve"],
        assets.path(),
        &state,
        &[
            "--bootstrap-ip",
            "x",
            // A negative duration is the value of --step-timeout, not a flag of its own.
            "--step-timeout",
            "-5s",
            "--output",
            "yml",
        ],
    ))
    .env("BOOTSTRAP_AGENT_DNS_TTL", "0"));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_each_in(
        &out.stderr,
        &[
            "5 problems in the input (nothing was done)",
            "cluster-config.yaml: data.install-config: controlPlane.replicas: expected a positive integer",
            "--bootstrap-ip (environment variable BOOTSTRAP_AGENT_BOOTSTRAP_IP): value \"x\" from the command line: expected an IPv4 or IPv6 address",
            "--step-timeout (environment variable BOOTSTRAP_AGENT_STEP_TIMEOUT): value \"-5s\" from the command line: a negative duration; expected a duration like 30m or 90s",
            "--dns-ttl (environment variable BOOTSTRAP_AGENT_DNS_TTL): value \"0\" from BOOTSTRAP_AGENT_DNS_TTL: expected",
            "--output (no environment variable): value \"yml\" from the command line: expected one of text, json, yaml",
        ],
        &out,
    );
    assert!(!state.exists(), "nothing written");
}

#[test]
fn help_lists_the_possible_values_and_variables_of_checked_options() {
    let out = ran(&mut agent(&["run", "--help"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_each_in(
        &out.stdout,
        &[
            "all-at-once",
            "[possible values: on, off]",
            "[env: BOOTSTRAP_AGENT_DNS_SEEDING=",
            "[env: BOOTSTRAP_AGENT_GATE_TIMEOUT=",
        ],
        &out,
    );
}

#[test]
fn reserve_with_invalid_input_writes_nothing_to_the_state_dir() {
    let assets = no_control_plane_replicas();
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    fs::create_dir(&state).unwrap();
    let out = ran(&mut agent(&on_assets(
        &["reserve"],
        assets.path(),
        &state,
        &["--bootstrap-ip", "10.0.0.5"],
    )));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("cluster-config.yaml: data.install-config: controlPlane.replicas"),
        "{out:?}"
    );
    assert!(!state.join("journal.json").exists());
    assert_eq!(dir_entries(&state), Vec::<String>::new(), "nothing written");
}

#[test]
fn reserve_with_missing_assets_does_not_create_the_state_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let missing = tmp.path().join("no-such-assets");
    let out = ran(&mut agent(&on_assets(&["reserve"], &missing, &state, &[])));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(!state.exists(), "state dir created before input was valid");
}

// ---- status ---------------------------------------------------------------------------------

#[test]
fn status_of_an_empty_state_dir_says_nothing_has_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = ran(&mut agent(&["status", "--state-dir", p(tmp.path())]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("nothing has run yet"), "{out:?}");
    let out = ran(&mut agent(&[
        "status",
        "--state-dir",
        p(tmp.path()),
        "--output",
        "json",
    ]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "null", "{out:?}");
    assert!(
        dir_entries(tmp.path()).is_empty(),
        "status wrote to the state dir"
    );
}

// ---- the lock -------------------------------------------------------------------------------

/// A listener standing in for the cloud: the agent is pointed at it, and it counts whether
/// anything connected.
struct FakeCloud {
    listener: TcpListener,
    url: String,
}

impl FakeCloud {
    fn new() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        Self { listener, url }
    }

    fn point(&self, cmd: &mut Command) {
        cmd.env("AWS_ENDPOINT_URL_EC2", &self.url)
            .env("AWS_ENDPOINT_URL_ROUTE_53", &self.url)
            .env("AWS_ENDPOINT_URL_STS", &self.url);
    }

    /// Whether any connection is waiting (the kernel completes handshakes without accept).
    fn contacted(&self) -> bool {
        match self.listener.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        }
    }
}

fn reserve_cmd(state: &Path) -> Command {
    agent(&on_assets(
        &["reserve"],
        &fixture("aws"),
        state,
        &["--bootstrap-ip", "10.0.0.5", "--step-timeout", "3s"],
    ))
}

#[test]
fn second_agent_is_refused_with_exit_3_before_any_cloud_call() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    fs::create_dir(&state).unwrap();
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state.join("lock"))
        .unwrap();
    lock.lock().unwrap();

    let cloud = FakeCloud::new();
    let mut cmd = reserve_cmd(&state);
    cloud.point(&mut cmd);
    let out = ran(&mut cmd);
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("locked"), "{out:?}");
    assert!(out.stderr.contains(p(&state)), "{out:?}");
    assert!(
        !cloud.contacted(),
        "the cloud was called before the lock was taken"
    );
    assert!(!state.join("journal.json").exists());
    drop(lock);
}

/// Control for the test above: without the lock held, the same command does reach the fake
/// cloud, so "not contacted" there means something.
#[test]
fn unlocked_reserve_reaches_the_configured_endpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let cloud = FakeCloud::new();
    let mut cmd = reserve_cmd(&state);
    cloud.point(&mut cmd);
    let out = ran(&mut cmd);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(cloud.contacted(), "{out:?}");
    assert_eq!(out.credential(), None, "{out:?}");
    // The lock was released when the process exited.
    let lock = File::open(state.join("lock")).unwrap();
    lock.try_lock().unwrap();
}

/// `run` on the aws fixture with the state dir `dir/state` and `kubeconfig` written to
/// `dir/kubeconfig`, then `extra`.
fn run_aws(dir: &Path, kubeconfig: &str, extra: &[&str]) -> Ran {
    let path = dir.join("kubeconfig");
    fs::write(&path, kubeconfig).unwrap();
    let assets = fixture("aws");
    let flags = [
        &["--bootstrap-ip", "10.0.0.5", "--kubeconfig", p(&path)],
        extra,
    ]
    .concat();
    ran(&mut agent(&on_assets(
        &["run"],
        &assets,
        &dir.join("state"),
        &flags,
    )))
}

#[test]
fn run_with_broken_templates_exits_2_before_anything_is_written() {
    let dir = TempDir::new().unwrap();
    let templates = dir.path().join("templates/services/aws");
    fs::create_dir_all(&templates).unwrap();
    fs::write(templates.join("external-lb.yaml"), "{{ no_such_variable }}").unwrap();
    let state = dir.path().join("state");
    let out = run_aws(
        dir.path(),
        KUBECONFIG,
        &["--templates", p(&dir.path().join("templates"))],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("services/aws/external-lb.yaml"),
        "{out:?}"
    );
    assert!(
        !state.join("journal.json").exists(),
        "nothing written before input is valid"
    );
}

#[test]
fn a_malformed_kubeconfig_is_exit_2_and_its_token_is_never_printed() {
    let dir = TempDir::new().unwrap();
    let unclosed = KUBECONFIG.replace(
        "{token: kube-token-DO-NOT-LOG}",
        "{token: \"kube-token-DO-NOT-LOG",
    );
    let out = run_aws(dir.path(), &unclosed, &[]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("--kubeconfig"), "{out:?}");
    assert_eq!(out.credential(), None, "{out:?}");
}

#[test]
fn a_malformed_creds_secret_never_quotes_the_secret() {
    let assets = broken(
        "aws",
        CREDS,
        "type: Opaque\n",
        "type: Opaque\nstringData:\n  aws_secret_access_key: \"fixture-secret-DO-NOT-LOG-unclosed\n",
    );
    let dir = TempDir::new().unwrap();
    let out = ran(&mut agent(&on_assets(
        &["plan", "--offline"],
        assets.path(),
        dir.path(),
        &[],
    )));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("99_cloud-creds-secret.yaml"), "{out:?}");
    assert_eq!(out.credential(), None, "{out:?}");
}

/// A corrupt journal is not transient: exit 5 (the unit does not restart on it), the message
/// names the file and how to inspect it, and the file is left exactly as it was.
#[test]
fn a_corrupt_journal_exits_5_names_the_file_and_is_left_untouched() {
    let cases: [(&str, &[u8]); 6] = [
        (
            "truncated",
            br#"{"version": 1, "generation": 1, "steps": {"#,
        ),
        ("binary", &[0xff, 0x00, 0xfe, 0x7b]),
        ("empty", b""),
        ("wrong types", br#"{"version": "one", "generation": 1}"#),
        (
            "unknown step",
            br#"{"version": 1, "generation": 1, "run_step": "levitate"}"#,
        ),
        ("unsupported format", br#"{"version": 99, "generation": 1}"#),
    ];
    for (what, bytes) in cases {
        let state = tempfile::tempdir().unwrap();
        let journal = state.path().join("journal.json");
        fs::write(&journal, bytes).unwrap();
        let assets = fixture("aws");
        for args in [
            vec!["status", "--state-dir", p(state.path())],
            on_assets(&["plan", "--offline"], &assets, state.path(), &[]),
            on_assets(
                &["reserve"],
                &assets,
                state.path(),
                &["--bootstrap-ip", "10.0.1.10"],
            ),
        ] {
            let out = agent(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(5), "{what}: {args:?}: {stderr}");
            assert!(
                stderr.contains(&journal.display().to_string()),
                "{what}: {stderr}"
            );
            assert!(stderr.contains("python3 -m json.tool"), "{what}: {stderr}");
            assert_eq!(
                fs::read(&journal).unwrap(),
                bytes,
                "{what}: {args:?} touched the journal"
            );
        }
    }
    // A directory where the journal should be: unreadable, never "no journal".
    let state = tempfile::tempdir().unwrap();
    fs::create_dir(state.path().join("journal.json")).unwrap();
    let out = agent(&["status", "--state-dir", &state.path().display().to_string()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
