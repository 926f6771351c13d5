//! The asset loader's tests, by topic; the helpers they share live here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use bootstrap_cloud::subnets::{RouteTableFacts, SubnetFacts};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const INFRA_ID: &str = "mycluster-7xk2p";
const SECRET: &str = "fixture-secret-DO-NOT-LOG";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(name)
}

fn load_fixture(name: &str) -> ClusterSpec {
    load(&fixture(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A temp copy of a fixture.
fn copy_fixture(name: &str) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    dir
}

/// Rewrites `file` of an asset dir with `change`.
fn rewrite(dir: &Path, file: &str, change: impl FnOnce(String) -> String) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, change(text)).unwrap();
}

/// A temp copy of a fixture with `file` rewritten by `change`.
fn rewritten(name: &str, file: &str, change: impl FnOnce(String) -> String) -> TempDir {
    let dir = copy_fixture(name);
    rewrite(dir.path(), file, change);
    dir
}

/// A temp copy of a fixture without `file`.
fn without(name: &str, file: &str) -> TempDir {
    let dir = copy_fixture(name);
    std::fs::remove_file(dir.path().join(file)).unwrap();
    dir
}

/// A temp copy of a fixture with each `(file, from, to)` edit made: `from`, which must occur
/// exactly once, replaced by `to`.
fn broken_in(name: &str, edits: &[(&str, &str, &str)]) -> TempDir {
    let dir = copy_fixture(name);
    for (file, from, to) in edits {
        rewrite(dir.path(), file, |text| {
            assert_eq!(
                text.matches(from).count(),
                1,
                "{from:?} must occur exactly once in {name}/{file}"
            );
            text.replacen(from, to, 1)
        });
    }
    dir
}

/// A temp copy of a fixture with `from` replaced by `to` (exactly once) in `file`.
fn broken(name: &str, file: &str, from: &str, to: &str) -> TempDir {
    broken_in(name, &[(file, from, to)])
}

/// The spec of a fixture with `from` replaced by `to` (exactly once) in `file`; it must load.
fn load_broken(name: &str, file: &str, from: &str, to: &str) -> ClusterSpec {
    let dir = broken(name, file, from, to);
    load(dir.path()).unwrap_or_else(|e| panic!("{name} with {to:?} in {file}: {e}"))
}

/// Loading must fail; returns the error after checking it names `file`.
fn load_err(dir: &Path, file: &str) -> InputError {
    let err = match load(dir) {
        Ok(spec) => panic!("expected an InputError, loaded {spec:?}"),
        Err(e) => e,
    };
    assert!(
        err.file.ends_with(file),
        "error names file {}, expected one ending with {file}: {err}",
        err.file.display()
    );
    err
}

/// One refused edit, a row of a table: `fixture` with `from` replaced by `to` (exactly once)
/// in `file` must fail to load, naming `file` and `field`, with a problem that holds each of
/// `problem_has`, and quoting no secret.
struct Refusal<'a> {
    case: &'a str,
    fixture: &'a str,
    file: &'a str,
    from: &'a str,
    to: &'a str,
    field: &'a str,
    problem_has: &'a [&'a str],
}

/// Checks every row; a failure names the row's case.
fn assert_refusals(rows: &[Refusal]) {
    for row in rows {
        let case = row.case;
        let dir = broken(row.fixture, row.file, row.from, row.to);
        let err = load(dir.path())
            .err()
            .unwrap_or_else(|| panic!("{case}: loaded without an error"));
        assert!(err.file.ends_with(row.file), "{case}: {err}");
        assert_names(case, &err, row.field, row.problem_has);
        assert!(!err.to_string().contains(SECRET), "{case}: {err}");
    }
}

fn assert_problem(err: &InputError, field: &str, problem: &str) {
    assert_names("", err, field, &[problem]);
}

/// `err` names `field`, with a problem that holds each of `problem_has`; `case` heads a
/// failure.
fn assert_names(case: &str, err: &InputError, field: &str, problem_has: &[&str]) {
    assert_eq!(err.field, field, "{case} {err}");
    for part in problem_has {
        assert!(err.problem.contains(part), "{case} {part:?} not in {err}");
    }
}

fn assert_common_fields(spec: &ClusterSpec) {
    assert_eq!(spec.infra_id, INFRA_ID);
    assert_eq!(spec.cluster_name, "mycluster");
    assert_eq!(spec.base_domain, "example.com");
    assert_eq!(spec.cluster_domain(), "mycluster.example.com");
    assert_eq!(
        spec.api_server_internal_uri,
        "https://api-int.mycluster.example.com:6443"
    );
    assert_eq!(spec.control_plane_replicas, 3);
    assert_eq!(
        spec.bootstrap_ip, None,
        "the loader never sets the bootstrap IP"
    );
    let debug = format!("{spec:?}");
    assert!(!debug.contains(SECRET), "secret leaked into Debug: {debug}");
    let json = serde_json::to_string(spec).unwrap();
    assert!(!json.contains(SECRET), "secret leaked into JSON: {json}");
}

/// (name, value, source as `plan` prints it) of each network value.
fn sources(spec: &ClusterSpec) -> Vec<(String, String, String)> {
    spec.network_values()
        .into_iter()
        .map(|v| (v.name, v.value, v.source.to_string()))
        .collect()
}

fn fixture_capabilities() -> Option<CapabilitiesSpec> {
    Some(CapabilitiesSpec {
        baseline: Some("v4.14".into()),
        additional: vec!["marketplace".into(), "Console".into()],
    })
}

fn aws_spec(spec: &ClusterSpec) -> &AwsSpec {
    match &spec.platform {
        Platform::Aws(aws) => aws,
        other => panic!("expected aws, got {other:?}"),
    }
}

fn azure_spec(spec: &ClusterSpec) -> &AzureSpec {
    match &spec.platform {
        Platform::Azure(azure) => azure,
        other => panic!("expected azure, got {other:?}"),
    }
}

fn gcp_spec(spec: &ClusterSpec) -> &GcpSpec {
    match &spec.platform {
        Platform::Gcp(gcp) => gcp,
        other => panic!("expected gcp, got {other:?}"),
    }
}

/// The network values must be exactly `table`, one `name | value | source` a line (the source
/// as `plan` prints it), and the platform's own fields for them must hold the same values;
/// `case` heads a failure.
fn assert_network(case: &str, spec: &ClusterSpec, table: &str) {
    let expected: Vec<(String, String, String)> = table
        .lines()
        .map(|line| {
            let cells: Vec<String> = line.split('|').map(|c| c.trim().to_string()).collect();
            let [name, value, source] = <[String; 3]>::try_from(cells)
                .unwrap_or_else(|c| panic!("{case}: expected name | value | source, got {c:?}"));
            (name, value, source)
        })
        .collect();
    assert_eq!(sources(spec), expected, "{case}");
    let fields: Vec<&str> = match &spec.platform {
        Platform::Azure(azure) => vec![
            &azure.resource_group,
            &azure.network_resource_group,
            &azure.virtual_network,
            &azure.control_plane_subnet,
            &azure.compute_subnet,
        ],
        Platform::Gcp(gcp) => vec![&gcp.network, &gcp.control_plane_subnet, &gcp.compute_subnet],
        other => panic!("{case}: no network fields to compare on {other:?}"),
    };
    let values: Vec<&str> = expected
        .iter()
        .map(|(_, value, _)| value.as_str())
        .collect();
    assert_eq!(fields, values, "{case}");
}

fn public(aws: &AwsSpec) -> Vec<&str> {
    aws.public_subnets().map(String::as_str).collect()
}

fn private(aws: &AwsSpec) -> Vec<&str> {
    aws.private_subnets().map(String::as_str).collect()
}

fn assert_aws_keys_from_secret(spec: &ClusterSpec) {
    match &spec.credentials {
        Credentials::AwsKeys {
            access_key_id,
            secret_access_key,
        } => {
            assert_eq!(access_key_id, "AKIAFIXTUREEXAMPLE00");
            assert_eq!(secret_access_key, "fixture-secret-DO-NOT-LOG-wJalrXUtnFEMI");
        }
        other => panic!("expected the keys of the creds secret, got {other:?}"),
    }
    assert_eq!(
        format!("{:?}", spec.credentials),
        "Credentials::AwsKeys(<redacted>)"
    );
}

const PRIVATE_SUBNETS: [&str; 3] = [
    "subnet-0a1b2c3d4e5f60001",
    "subnet-0a1b2c3d4e5f60002",
    "subnet-0a1b2c3d4e5f60003",
];
const PUBLIC_SUBNETS: [&str; 3] = [
    "subnet-0a1b2c3d4e5f60011",
    "subnet-0a1b2c3d4e5f60012",
    "subnet-0a1b2c3d4e5f60013",
];

/// What EC2 reports for a subnet: its tags and the route table that applies to it (id, whether
/// it is the VPC's main table, the internet gateway its 0.0.0.0/0 route goes to).
pub(crate) fn subnet_facts(
    id: &str,
    vpc: &str,
    zone: &str,
    tags: &[(&str, &str)],
    route: Option<(&str, bool, Option<&str>)>,
) -> SubnetFacts {
    SubnetFacts {
        id: id.into(),
        vpc: vpc.into(),
        zone: zone.into(),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        route_table: route.map(|(id, main, igw)| RouteTableFacts {
            id: id.into(),
            main,
            internet_gateway: igw.map(str::to_string),
        }),
    }
}

fn lookup(spec: &ClusterSpec) -> &SubnetLookup {
    spec.pending_subnets()
        .unwrap_or_else(|| panic!("expected subnets to look up, got {:?}", spec.platform))
}

fn listed(spec: &ClusterSpec) -> Vec<(&str, &str)> {
    match &lookup(spec).how {
        LookupKind::Listed(listed) => listed
            .iter()
            .map(|s| (s.id.as_str(), s.field.as_str()))
            .collect(),
        LookupKind::ClusterTag => panic!("expected a listed lookup"),
    }
}

mod aws_subnets;
mod azure_clouds;
mod azure_gcp_networks;
mod bad_creds;
mod bad_input;
mod bad_network;
mod dns_and_publish;
mod load;
mod zones;
