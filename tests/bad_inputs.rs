//! The bad-input corpus: several hundred inputs, each a valid example (an asset fixture, a
//! kubeconfig, a manifest dir, options, a journal) with ONE defect. Every one must be refused
//! by the real binary with exit 2 (5 for a corrupt journal), naming the file (or the flag and
//! its environment variable) and the field, with nothing written in the state dir and no
//! credential in the output, even at log level `trace`. The cases run in parallel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/fixtures.rs"]
mod fixtures;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_bootstrap-agent");
const CLUSTER_CONFIG: &str = "manifests/cluster-config.yaml";
const INFRA: &str = "manifests/cluster-infrastructure-02-config.yml";
const CREDS: &str = "openshift/99_cloud-creds-secret.yaml";
/// In every fixture's creds secret (the AWS key id, and the secret parts), and the kubeconfig
/// token: none may ever be printed.
const CANARIES: [&str; 3] = [
    "fixture-secret-DO-NOT-LOG",
    "AKIAFIXTUREEXAMPLE00",
    "kube-token-DO-NOT-LOG",
];
const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\nusers:\n- name: u\n  user: {token: kube-token-DO-NOT-LOG}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
const NOWHERE: &str = "http://127.0.0.1:9";

/// Where a case lives while it runs.
struct Ctx {
    root: PathBuf,
}

impl Ctx {
    fn assets(&self) -> PathBuf {
        self.root.join("assets")
    }
    fn state(&self) -> PathBuf {
        self.root.join("state")
    }
    fn kubeconfig(&self) -> PathBuf {
        self.root.join("kubeconfig")
    }
    fn s(p: &Path) -> String {
        p.display().to_string()
    }
    /// `reserve` on the assets: it would lock, journal and call EC2 if the input passed.
    fn reserve(&self) -> Vec<String> {
        args(&[
            "reserve",
            "--assets",
            &Self::s(&self.assets()),
            "--state-dir",
            &Self::s(&self.state()),
            "--bootstrap-ip",
            "10.0.1.10",
        ])
    }
    /// `run`, with a valid kubeconfig unless the case replaced it.
    fn run(&self, extra: &[&str]) -> Vec<String> {
        if !self.kubeconfig().exists() && fs::symlink_metadata(self.kubeconfig()).is_err() {
            fs::write(self.kubeconfig(), KUBECONFIG).unwrap();
        }
        let mut a = args(&[
            "run",
            "--assets",
            &Self::s(&self.assets()),
            "--state-dir",
            &Self::s(&self.state()),
            "--bootstrap-ip",
            "10.0.1.10",
            "--kubeconfig",
            &Self::s(&self.kubeconfig()),
        ]);
        a.extend(args(extra));
        a
    }
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

type Setup = Box<dyn Fn(&Ctx) -> (Vec<String>, Vec<(String, String)>) + Send + Sync>;

struct Case {
    name: String,
    setup: Setup,
    /// Exit code expected.
    code: i32,
    /// Every one of these must appear in stderr (file or flag, field or variable).
    must_name: Vec<String>,
    /// None of these may appear in stderr (a vague or misleading message).
    must_not_say: Vec<String>,
}

impl Case {
    fn never_saying(mut self, words: &[&str]) -> Case {
        self.must_not_say = words.iter().map(|s| s.to_string()).collect();
        self
    }
}

fn copy_fixture(ctx: &Ctx, fixture: &str) {
    fixtures::copy_dir(&fixtures::fixture(fixture), &ctx.assets());
}

fn edit(path: &Path, from: &str, to: &str, all: bool) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} in {}", path.display());
    let new = if all {
        text.replace(from, to)
    } else {
        text.replacen(from, to, 1)
    };
    fs::write(path, new).unwrap();
}

fn fixture_text(fixture: &str, file: &str) -> Option<String> {
    fs::read_to_string(fixtures::fixture(fixture).join(file)).ok()
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// One edit of one fixture file, run as `reserve`; the message must name `file` and `field`.
fn edit_case(fixture: &str, file: &'static str, from: &str, to: &str, field: &str) -> Case {
    let (f, from_s, to_s) = (fixture.to_string(), from.to_string(), to.to_string());
    Case {
        name: format!("{fixture}: {file}: {field}: {to:?}"),
        setup: Box::new(move |ctx| {
            copy_fixture(ctx, &f);
            edit(&ctx.assets().join(file), &from_s, &to_s, false);
            (ctx.reserve(), Vec::new())
        }),
        code: 2,
        must_name: vec![file.to_string(), field.to_string()],
        must_not_say: Vec::new(),
    }
}

/// An edit for every fixture whose file holds `from` exactly once.
fn every_fixture(cases: &mut Vec<Case>, file: &'static str, from: &str, to: &str, field: &str) {
    for fixture in all_fixtures() {
        if fixture_text(&fixture, file).is_some_and(|t| t.matches(from).count() == 1) {
            cases.push(edit_case(&fixture, file, from, to, field));
        }
    }
}

fn all_fixtures() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(fixtures::fixture(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A case built by hand: `setup` prepares ctx and returns the arguments and extra env.
fn case(
    name: &str,
    code: i32,
    must_name: &[&str],
    setup: impl Fn(&Ctx) -> (Vec<String>, Vec<(String, String)>) + Send + Sync + 'static,
) -> Case {
    Case {
        name: name.to_string(),
        setup: Box::new(setup),
        code,
        must_name: must_name.iter().map(|s| s.to_string()).collect(),
        must_not_say: Vec::new(),
    }
}

fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    // ---- generated: one defect in every fixture ----------------------------------------
    every_fixture(
        &mut cases,
        CLUSTER_CONFIG,
        "kind: ConfigMap",
        "kind: Secret",
        "kind",
    );
    every_fixture(
        &mut cases,
        CLUSTER_CONFIG,
        "apiVersion: v1\nkind: ConfigMap",
        "apiVersion: v2\nkind: ConfigMap",
        "apiVersion",
    );
    every_fixture(
        &mut cases,
        INFRA,
        "kind: Infrastructure",
        "kind: Deployment",
        "kind",
    );
    every_fixture(
        &mut cases,
        INFRA,
        "apiVersion: config.openshift.io/v1",
        "apiVersion: apps/v1",
        "apiVersion",
    );
    every_fixture(
        &mut cases,
        CLUSTER_CONFIG,
        "      name: mycluster\n",
        "      name: \"My_Cluster!.x\"\n",
        "metadata.name",
    );
    every_fixture(
        &mut cases,
        CLUSTER_CONFIG,
        "baseDomain: example.com",
        "baseDomain: \"exa mple..com/x\"",
        "baseDomain",
    );
    every_fixture(
        &mut cases,
        INFRA,
        "apiServerInternalURI: https://api-int.mycluster.example.com:6443",
        "apiServerInternalURI: not a url",
        "status.apiServerInternalURI",
    );
    every_fixture(
        &mut cases,
        INFRA,
        "apiServerInternalURI: https://api-int.mycluster.example.com:6443",
        "apiServerInternalURI: https://api-int.other.example.com:6443",
        "status.apiServerInternalURI",
    );
    every_fixture(
        &mut cases,
        INFRA,
        "infrastructureName: mycluster-7xk2p",
        "infrastructureName: Bad_Infra!",
        "status.infrastructureName",
    );
    every_fixture(
        &mut cases,
        CLUSTER_CONFIG,
        "      - cidr: 10.0.0.0/16\n",
        "      - cidr: 10.0.0.0/16\n      - cidr: 10.0.0.0/16\n",
        "networking.machineNetwork[1].cidr",
    );
    every_fixture(
        &mut cases,
        CLUSTER_CONFIG,
        "  install-config: |",
        "  install-config: [42]\n  was: |",
        "data.install-config",
    );
    for fixture in all_fixtures() {
        let f = fixture.clone();
        cases.push(case(
            &format!("{fixture}: oversized cluster-config"),
            2,
            &[CLUSTER_CONFIG, "MiB"],
            move |ctx| {
                copy_fixture(ctx, &f);
                // Sparse: refused by its size before a byte is read.
                fs::OpenOptions::new()
                    .write(true)
                    .open(ctx.assets().join(CLUSTER_CONFIG))
                    .unwrap()
                    .set_len(64 << 20)
                    .unwrap();
                (ctx.reserve(), Vec::new())
            },
        ));
        let f = fixture.clone();
        cases.push(case(
            &format!("{fixture}: cluster-config a symlink loop"),
            2,
            &[CLUSTER_CONFIG, "(file)"],
            move |ctx| {
                copy_fixture(ctx, &f);
                let p = ctx.assets().join(CLUSTER_CONFIG);
                fs::remove_file(&p).unwrap();
                std::os::unix::fs::symlink(&p, &p).unwrap();
                (ctx.reserve(), Vec::new())
            },
        ));
        if fixture_text(&fixture, CREDS).is_none() {
            continue;
        }
        for (what, make) in creds_breakers() {
            let f = fixture.clone();
            cases.push(case(
                &format!("{fixture}: creds secret {what}"),
                2,
                &[CREDS, "(file)"],
                move |ctx| {
                    copy_fixture(ctx, &f);
                    make(&ctx.assets().join(CREDS));
                    (ctx.reserve(), Vec::new())
                },
            ));
        }
        every_fixture_one(
            &mut cases,
            &fixture,
            CREDS,
            "kind: Secret",
            "kind: ConfigMap",
            "kind",
        );
    }
    specific(&mut cases);
    cases
}

fn every_fixture_one(
    cases: &mut Vec<Case>,
    fixture: &str,
    file: &'static str,
    from: &str,
    to: &str,
    field: &str,
) {
    if fixture_text(fixture, file).is_some_and(|t| t.matches(from).count() == 1) {
        cases.push(edit_case(fixture, file, from, to, field));
    }
}

type Breaker = fn(&Path);

/// A creds secret that exists but cannot be read: never "absent", never the ambient identity.
fn creds_breakers() -> Vec<(&'static str, Breaker)> {
    vec![
        ("dangling symlink", |p| {
            fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink(p.with_extension("gone"), p).unwrap();
        }),
        ("symlink loop", |p| {
            fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink(p, p).unwrap();
        }),
        ("a directory", |p| {
            fs::remove_file(p).unwrap();
            fs::create_dir(p).unwrap();
        }),
    ]
}

fn specific(cases: &mut Vec<Case>) {
    const IC: &str = CLUSTER_CONFIG;
    let ic = IC;
    let ics: &[(&str, &str, &str, &str)] = &[
        // AWS
        (
            "aws",
            "subnet-0a1b2c3d4e5f60002",
            "subnet-0a1b2c3d4e5f60001",
            "platform.aws.vpc.subnets[1].id",
        ),
        (
            "aws",
            "id: subnet-0a1b2c3d4e5f60001",
            "id: subnet-",
            "platform.aws.vpc.subnets[0].id",
        ),
        (
            "aws",
            "id: subnet-0a1b2c3d4e5f60001",
            "id: \"subnet-ZZ!! ;rm\"",
            "platform.aws.vpc.subnets[0].id",
        ),
        (
            "aws",
            "id: subnet-0a1b2c3d4e5f60001",
            "id: subnet-0A1B2C3D4E5F60001",
            "platform.aws.vpc.subnets[0].id",
        ),
        (
            "aws",
            "id: subnet-0a1b2c3d4e5f60001",
            "id: 12345",
            "platform.aws.vpc.subnets[0].id",
        ),
        (
            "aws",
            "        region: us-east-1\n",
            "        region: us-east-1\n        hostedZone: \"not a zone id!/..\"\n",
            "platform.aws.hostedZone",
        ),
        (
            "aws",
            "        region: us-east-1\n",
            "        region: us-east-1\n        hostedZone: /hostedzone/Z123\n",
            "platform.aws.hostedZone",
        ),
        (
            "aws",
            "        region: us-east-1\n",
            "        region: \"us east 1\"\n",
            "platform.aws.region",
        ),
        (
            "aws",
            "cidr: 10.0.0.0/16",
            "cidr: fd00::/48",
            "networking.machineNetwork",
        ),
        (
            "aws",
            "cidr: 10.0.0.0/16",
            "cidr: 10.0.0.0/33",
            "networking.machineNetwork[0].cidr",
        ),
        (
            "aws",
            "cidr: 10.0.0.0/16",
            "cidr: banana",
            "networking.machineNetwork[0].cidr",
        ),
        (
            "aws",
            "baselineCapabilitySet: v4.14",
            "baselineCapabilitySet: v9.99",
            "capabilities.baselineCapabilitySet",
        ),
        (
            "aws",
            "baselineCapabilitySet: v4.14",
            "baselineCapabilitySet: [v4.14]",
            "capabilities.baselineCapabilitySet",
        ),
        ("aws", "publish: External", "publish: Sideways", "publish"),
        ("aws", "publish: External", "publish: Mixed", "publish"),
        (
            "aws",
            "      replicas: 3\n    compute",
            "      replicas: -1\n    compute",
            "controlPlane.replicas",
        ),
        (
            "aws",
            "            - type: ControlPlaneInternalLB\n            - type: BootstrapNode\n          - id: subnet-0a1b2c3d4e5f60002",
            "            - type: Bogus\n            - type: BootstrapNode\n          - id: subnet-0a1b2c3d4e5f60002",
            "roles[1].type",
        ),
        (
            "aws",
            "    platform:\n      aws:",
            "    platform:\n      openstack: {}\n      aws:",
            "platform",
        ),
        (
            "aws-flat-subnets",
            "- subnet-0a1b2c3d4e5f60012",
            "- subnet-0a1b2c3d4e5f60011",
            "platform.aws.subnets",
        ),
        (
            "aws-flat-subnets",
            "- subnet-0a1b2c3d4e5f60012",
            "- subnet-xyz",
            "platform.aws.subnets[4]",
        ),
        (
            "aws-dualstack",
            "cidr: 10.0.0.0/16",
            "cidr: fd01::/48",
            "networking.machineNetwork",
        ),
        // Azure
        (
            "azure",
            "region: eastus",
            "region: \"East US\"",
            "platform.azure.region",
        ),
        (
            "azure",
            "baseDomainResourceGroupName: dns-rg",
            "baseDomainResourceGroupName: \"dns rg/..\"",
            "platform.azure.baseDomainResourceGroupName",
        ),
        (
            "azure",
            "networkResourceGroupName: network-rg",
            "networkResourceGroupName: network-rg.",
            "platform.azure.networkResourceGroupName",
        ),
        (
            "azure",
            "virtualNetwork: mycluster-vnet",
            "virtualNetwork: v",
            "platform.azure.virtualNetwork",
        ),
        (
            "azure",
            "computeSubnet: mycluster-worker-subnet",
            "computeSubnet: \"worker subnet\"",
            "platform.azure.computeSubnet",
        ),
        (
            "azure",
            "controlPlaneSubnet: mycluster-master-subnet",
            "controlPlaneSubnet: -master",
            "platform.azure.controlPlaneSubnet",
        ),
        (
            "azure",
            "cidr: 10.0.0.0/16",
            "cidr: fd00::/48",
            "networking.machineNetwork",
        ),
        (
            "azure",
            "resourceGroupName: mycluster-7xk2p-rg",
            "resourceGroupName: \"rg/../x\"",
            "platform.azure.resourceGroupName",
        ),
        // GCP
        (
            "gcp",
            "projectID: example-project",
            "projectID: Example_Project",
            "platform.gcp.projectID",
        ),
        (
            "gcp",
            "projectID: example-project",
            "projectID: short",
            "platform.gcp.projectID",
        ),
        (
            "gcp",
            "region: us-central1",
            "region: \"us central\"",
            "platform.gcp.region",
        ),
        (
            "gcp",
            "cidr: 10.0.0.0/16",
            "cidr: fd00::/48",
            "networking.machineNetwork",
        ),
        (
            "gcp-shared-vpc",
            "networkProjectID: example-host-project",
            "networkProjectID: \"host project!\"",
            "platform.gcp.networkProjectID",
        ),
        (
            "gcp-shared-vpc",
            "network: shared-vpc",
            "network: Shared_VPC",
            "platform.gcp.network",
        ),
        (
            "gcp-shared-vpc",
            "computeSubnet: ocp-compute",
            "computeSubnet: ocp-compute-",
            "platform.gcp.computeSubnet",
        ),
        (
            "gcp-shared-vpc",
            "controlPlaneSubnet: ocp-control-plane",
            "controlPlaneSubnet: 1ocp",
            "platform.gcp.controlPlaneSubnet",
        ),
        // none
        (
            "none",
            "baseDomain: example.com",
            "baseDomain: -example.com",
            "baseDomain",
        ),
    ];
    for (fixture, from, to, field) in ics {
        cases.push(edit_case(fixture, ic, from, to, field));
    }
    cases.push(case(
        "aws: publish External without a ControlPlaneExternalLB subnet",
        2,
        &[ic, "platform.aws.vpc.subnets", "ControlPlaneExternalLB"],
        |ctx| {
            copy_fixture(ctx, "aws");
            edit(
                &ctx.assets().join(IC),
                "            - type: ControlPlaneExternalLB\n",
                "",
                true,
            );
            (ctx.reserve(), Vec::new())
        },
    ));

    // The creds secret's fields (values are never quoted).
    let aws_key = "QUtJQUZJWFRVUkVFWEFNUExFMDA=";
    let creds: Vec<(&str, String, String, &str)> = vec![
        (
            "aws",
            format!("aws_access_key_id: {aws_key}"),
            "aws_access_key_id: \"\"".into(),
            "data.aws_access_key_id",
        ),
        (
            "aws",
            format!("aws_access_key_id: {aws_key}"),
            format!("aws_access_key_id: {}", b64("short")),
            "data.aws_access_key_id",
        ),
        (
            "aws",
            format!("aws_access_key_id: {aws_key}"),
            "aws_access_key_id: '%%%'".into(),
            "data.aws_access_key_id",
        ),
        (
            "aws",
            format!("aws_access_key_id: {aws_key}"),
            "aws_access_key_id: [1]".into(),
            "data.aws_access_key_id",
        ),
        (
            "aws",
            "type: Opaque\n".into(),
            "type: Opaque\nstringData:\n  aws_secret_access_key: 12345\n".into(),
            "stringData.aws_secret_access_key",
        ),
        (
            "aws",
            "  aws_secret_access_key:".into(),
            "  other_key:".into(),
            "data.aws_secret_access_key",
        ),
        (
            "aws",
            "  aws_secret_access_key: ".into(),
            "  aws_secret_access_key: \"   \" #".into(),
            "data.aws_secret_access_key",
        ),
        (
            "azure",
            "azure_tenant_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAz".into(),
            "azure_tenant_id: \"\"".into(),
            "data.azure_tenant_id",
        ),
        (
            "azure",
            "azure_tenant_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAz".into(),
            format!("azure_tenant_id: {}", b64("not-a-guid")),
            "data.azure_tenant_id",
        ),
        (
            "azure",
            "azure_subscription_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAx".into(),
            format!("azure_subscription_id: {}", b64("")),
            "data.azure_subscription_id",
        ),
        (
            "azure",
            "azure_client_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAy".into(),
            format!("azure_client_id: {}", b64("0000-0000")),
            "data.azure_client_id",
        ),
        (
            "azure",
            "  azure_client_secret:".into(),
            "  azure_other:".into(),
            "data.azure_client_secret",
        ),
        (
            "gcp",
            "  service_account.json: ".into(),
            format!("  service_account.json: {} #", b64("not json")),
            "data.service_account.json",
        ),
        (
            "gcp",
            "  service_account.json: ".into(),
            format!("  service_account.json: {} #", b64("{}")),
            "data.service_account.json",
        ),
        (
            "gcp",
            "  service_account.json: ".into(),
            format!(
                "  service_account.json: {} #",
                b64("{\"type\":\"service_account\"}")
            ),
            "data.service_account.json",
        ),
        (
            "gcp",
            "  service_account.json: ".into(),
            format!("  service_account.json: {} #", b64("[1,2]")),
            "data.service_account.json",
        ),
    ];
    for (fixture, from, to, field) in creds {
        cases.push(edit_case(fixture, CREDS, &from, &to, field));
    }

    // Other asset files.
    cases.push(case("asset dir missing", 2, &["(dir)"], |ctx| {
        (ctx.reserve(), Vec::new())
    }));
    cases.push(case(
        "Infrastructure manifest missing",
        2,
        &[INFRA, "(file)"],
        |ctx| {
            copy_fixture(ctx, "aws");
            fs::remove_file(ctx.assets().join(INFRA)).unwrap();
            (ctx.reserve(), Vec::new())
        },
    ));
    cases.push(case(
        "cluster-config a dangling symlink",
        2,
        &[ic, "dangling"],
        |ctx| {
            copy_fixture(ctx, "aws");
            let p = ctx.assets().join(IC);
            fs::remove_file(&p).unwrap();
            std::os::unix::fs::symlink(ctx.root.join("nowhere"), &p).unwrap();
            (ctx.reserve(), Vec::new())
        },
    ));
    cases.push(case(
        "cluster-config empty",
        2,
        &[ic, "(document)"],
        |ctx| {
            copy_fixture(ctx, "aws");
            fs::write(ctx.assets().join(IC), "").unwrap();
            (ctx.reserve(), Vec::new())
        },
    ));
    cases.push(case("cluster-config binary", 2, &[ic, "(file)"], |ctx| {
        copy_fixture(ctx, "aws");
        fs::write(ctx.assets().join(IC), [0xff, 0xfe, 0, 1]).unwrap();
        (ctx.reserve(), Vec::new())
    }));
    cases.push(case(
        "DNS manifest of another kind",
        2,
        &["cluster-dns-02-config.yml", "kind"],
        |ctx| {
            copy_fixture(ctx, "aws-user-dns");
            edit(
                &ctx.assets().join("manifests/cluster-dns-02-config.yml"),
                "kind: DNS",
                "kind: Secret",
                false,
            );
            (ctx.reserve(), Vec::new())
        },
    ));
    cases.push(case(
        "cvo-overrides of another kind (run)",
        2,
        &["cvo-overrides.yaml", "kind"],
        |ctx| {
            copy_fixture(ctx, "aws");
            edit(
                &ctx.assets().join("manifests/cvo-overrides.yaml"),
                "kind: ClusterVersion",
                "kind: Secret",
                false,
            );
            (ctx.run(&[]), Vec::new())
        },
    ));

    // Kubeconfig: loaded and a client config built before any lock (run, wait, apply).
    for command in ["run", "wait", "apply"] {
        for (what, body) in [
            ("empty", ""),
            (
                "without current-context",
                "apiVersion: v1\nkind: Config\nclusters: []\n",
            ),
            (
                "unparsable",
                "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: \"kube-token-DO-NOT-LOG\n",
            ),
            (
                "a context naming no cluster",
                "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: kube-token-DO-NOT-LOG}\ncontexts:\n- name: x\n  context: {cluster: gone, user: u}\ncurrent-context: x\n",
            ),
        ] {
            cases.push(case(
                &format!("{command}: kubeconfig {what}"),
                2,
                &["kubeconfig", "BOOTSTRAP_AGENT_KUBECONFIG"],
                move |ctx| {
                    copy_fixture(ctx, "aws");
                    fs::write(ctx.kubeconfig(), body).unwrap();
                    let mut a = ctx.run(&[]);
                    a[0] = command.to_string();
                    if command != "run" {
                        // wait and apply take no --bootstrap-ip semantics beyond Common; keep it.
                    }
                    (a, Vec::new())
                },
            ));
        }
        cases.push(case(
            &format!("{command}: kubeconfig missing"),
            2,
            &["kubeconfig", "BOOTSTRAP_AGENT_KUBECONFIG"],
            move |ctx| {
                copy_fixture(ctx, "aws");
                std::os::unix::fs::symlink(ctx.root.join("nowhere"), ctx.kubeconfig()).unwrap();
                let mut a = ctx.run(&[]);
                a[0] = command.to_string();
                (a, Vec::new())
            },
        ));
    }

    // Options and their environment variables.
    cases.push(case(
        "--feature-gates ClusterAPI,,",
        2,
        &["--feature-gates", "BOOTSTRAP_AGENT_FEATURE_GATES", "empty"],
        |ctx| {
            copy_fixture(ctx, "aws");
            (ctx.run(&["--feature-gates", "ClusterAPI,,"]), Vec::new())
        },
    ));
    cases.push(case(
        "BOOTSTRAP_AGENT_FEATURE_GATES=,ClusterAPI",
        2,
        &["--feature-gates", "BOOTSTRAP_AGENT_FEATURE_GATES"],
        |ctx| {
            copy_fixture(ctx, "aws");
            (
                args(&[
                    "capabilities",
                    "validate",
                    "--assets",
                    &Ctx::s(&ctx.assets()),
                ]),
                vec![("BOOTSTRAP_AGENT_FEATURE_GATES".into(), ",ClusterAPI".into())],
            )
        },
    ));
    cases.push(case(
        "--feature-set Bogus",
        2,
        &["--feature-set", "BOOTSTRAP_AGENT_FEATURE_SET"],
        |ctx| {
            copy_fixture(ctx, "aws");
            (ctx.run(&["--feature-set", "Bogus"]), Vec::new())
        },
    ));
    for (flag, env, bad) in [
        ("--gate-timeout", "BOOTSTRAP_AGENT_GATE_TIMEOUT", "-5s"),
        ("--gate-timeout", "BOOTSTRAP_AGENT_GATE_TIMEOUT", "soon"),
        ("--gate-timeout", "BOOTSTRAP_AGENT_GATE_TIMEOUT", "0s"),
        ("--step-timeout", "BOOTSTRAP_AGENT_STEP_TIMEOUT", "-1m"),
        (
            "--step-timeout",
            "BOOTSTRAP_AGENT_STEP_TIMEOUT",
            "10 parsecs",
        ),
        (
            "--bootstrap-ip",
            "BOOTSTRAP_AGENT_BOOTSTRAP_IP",
            "10.0.0.300",
        ),
        ("--bootstrap-ip", "BOOTSTRAP_AGENT_BOOTSTRAP_IP", "0.0.0.0"),
        ("--bootstrap-ip", "BOOTSTRAP_AGENT_BOOTSTRAP_IP", "x"),
        ("--drain-wait", "BOOTSTRAP_AGENT_DRAIN_WAIT", "forever"),
        ("--drain-wait", "BOOTSTRAP_AGENT_DRAIN_WAIT", "-3s"),
        ("--dns-ttl", "BOOTSTRAP_AGENT_DNS_TTL", "0"),
        ("--dns-ttl", "BOOTSTRAP_AGENT_DNS_TTL", "-5s"),
        ("--dns-ttl", "BOOTSTRAP_AGENT_DNS_TTL", "1.5s"),
        ("--dns-seeding", "BOOTSTRAP_AGENT_DNS_SEEDING", "fast"),
        ("--dns-check", "BOOTSTRAP_AGENT_DNS_CHECK", "dig"),
        ("--dns", "BOOTSTRAP_AGENT_DNS", "mine"),
        ("--wire-proof", "BOOTSTRAP_AGENT_WIRE_PROOF", "maybe"),
        (
            "--wire-dial-override",
            "BOOTSTRAP_AGENT_WIRE_DIAL_OVERRIDES",
            "10.0.0.1=x",
        ),
    ] {
        cases.push(case(
            &format!("{flag} {bad}"),
            2,
            &[flag, env, "expected"],
            move |ctx| {
                copy_fixture(ctx, "aws");
                let mut a = ctx.run(&[]);
                if flag == "--bootstrap-ip" {
                    let at = a.iter().position(|x| x == flag).unwrap();
                    a.drain(at..at + 2);
                }
                a.extend([flag.to_string(), bad.to_string()]);
                (a, Vec::new())
            },
        ));
        let from_env = format!("from {env}");
        cases.push(case(
            &format!("{env}={bad}"),
            2,
            &[flag, env, "expected", &from_env],
            move |ctx| {
                copy_fixture(ctx, "aws");
                let mut a = ctx.run(&[]);
                let at = a.iter().position(|x| x == "--bootstrap-ip").unwrap();
                if flag == "--bootstrap-ip" {
                    a.drain(at..at + 2);
                }
                (a, vec![(env.to_string(), bad.to_string())])
            },
        ));
    }
    // `--skip-preflight` names a line of this cloud's checklist, from the flag or its variable,
    // checked in the one pass (before: after the lock, naming the flag only).
    cases.push(case(
        "--skip-preflight with another cloud's check",
        2,
        &[
            "--skip-preflight (environment variable BOOTSTRAP_AGENT_SKIP_PREFLIGHT)",
            "\"quota-elastic-ips\"",
            "no such preflight check on gcp",
            "permissions, quota-addresses",
        ],
        |ctx| {
            copy_fixture(ctx, "gcp");
            (
                ctx.run(&["--skip-preflight", "quota-elastic-ips"]),
                Vec::new(),
            )
        },
    ));
    cases.push(case(
        "BOOTSTRAP_AGENT_SKIP_PREFLIGHT with a typo, and another problem",
        2,
        &[
            "2 problems in the input",
            "BOOTSTRAP_AGENT_SKIP_PREFLIGHT",
            "\"subnet\"",
            "quota-elastic-ips, public-ipv4-pool, subnets",
            "--dns-ttl (environment variable BOOTSTRAP_AGENT_DNS_TTL)",
        ],
        |ctx| {
            copy_fixture(ctx, "aws");
            (
                ctx.run(&["--dns-ttl", "0"]),
                vec![(
                    "BOOTSTRAP_AGENT_SKIP_PREFLIGHT".into(),
                    "quota-elastic-ips,subnet".into(),
                )],
            )
        },
    ));
    // Switches set by their variable take true or false only.
    for (flag, env) in [
        ("--adopt-only", "BOOTSTRAP_AGENT_ADOPT_ONLY"),
        ("--dns-wait", "BOOTSTRAP_AGENT_DNS_WAIT"),
    ] {
        cases.push(case(
            &format!("{env}=yes"),
            2,
            &[flag, env, "expected true or false"],
            move |ctx| {
                copy_fixture(ctx, "aws");
                (ctx.run(&[]), vec![(env.to_string(), "yes".to_string())])
            },
        ));
    }
    // An option without a variable says so; `status` reads no asset dir but checks it too.
    cases.push(case(
        "--output yml",
        2,
        &[
            "--output (no environment variable)",
            "expected one of text, json, yaml",
        ],
        |ctx| {
            copy_fixture(ctx, "aws");
            let mut a = ctx.reserve();
            a.extend(args(&["--output", "yml"]));
            (a, Vec::new())
        },
    ));
    cases.push(case(
        "status --output yml",
        2,
        &["--output (no environment variable)", "expected one of"],
        |ctx| {
            (
                args(&[
                    "status",
                    "--state-dir",
                    &Ctx::s(&ctx.state()),
                    "--output",
                    "yml",
                ]),
                Vec::new(),
            )
        },
    ));
    cases.push(case(
        "plan --step levitate",
        2,
        &["--step", "\"levitate\"", "expected one of"],
        |ctx| {
            copy_fixture(ctx, "aws");
            (
                args(&[
                    "plan",
                    "--offline",
                    "--assets",
                    &Ctx::s(&ctx.assets()),
                    "--state-dir",
                    &Ctx::s(&ctx.state()),
                    "--step",
                    "reserve,levitate",
                ]),
                Vec::new(),
            )
        },
    ));

    // Vague messages no more: a wrong type is said with the field and what was expected.
    cases.push(
        case(
            "creds: stringData key of the wrong type",
            2,
            &[
                CREDS,
                "stringData.aws_secret_access_key",
                "expected a string, found a number",
            ],
            |ctx| {
                copy_fixture(ctx, "aws");
                // The key moved from data to stringData, with a number for its value.
                let creds = ctx.assets().join(CREDS);
                edit(&creds, "  aws_secret_access_key:", "  moved_away:", false);
                edit(
                    &creds,
                    "type: Opaque\n",
                    "type: Opaque\nstringData:\n  aws_secret_access_key: 12345\n",
                    false,
                );
                (ctx.reserve(), Vec::new())
            },
        )
        .never_saying(&["missing"]),
    );
    cases.push(
        case(
            "creds: stringData a list",
            2,
            &[CREDS, "stringData", "expected a mapping"],
            |ctx| {
                copy_fixture(ctx, "aws");
                edit(
                    &ctx.assets().join(CREDS),
                    "type: Opaque\n",
                    "type: Opaque\nstringData:\n- aws_secret_access_key\n",
                    false,
                );
                (ctx.reserve(), Vec::new())
            },
        )
        .never_saying(&["missing"]),
    );
    cases.push(
        case(
            "capabilities filter: metadata.annotations a list",
            2,
            &["0000_50_x.yaml", "metadata.annotations", "expected a mapping", "found a list"],
            |ctx| {
                let m = ctx.root.join("manifests");
                fs::create_dir_all(&m).unwrap();
                fs::write(
                    m.join("0000_50_x.yaml"),
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: b\n  annotations:\n  - capability.openshift.io/name\n",
                )
                .unwrap();
                let out = ctx.state().join("out");
                (
                    args(&["capabilities", "filter", "--manifests", &Ctx::s(&m), "--out", &Ctx::s(&out)]),
                    Vec::new(),
                )
            },
        )
        .never_saying(&["line ", "column"]),
    );
    cases.push(
        case(
            "--templates: metadata.annotations a list",
            2,
            &["external-lb.yaml", "metadata.annotations", "expected a mapping", "found a list"],
            |ctx| {
                copy_fixture(ctx, "aws-installer-vpc");
                let t = ctx.root.join("templates/services/aws");
                fs::create_dir_all(&t).unwrap();
                fs::write(
                    t.join("external-lb.yaml"),
                    "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  namespace: y\n  annotations:\n  - service.beta.kubernetes.io/aws-load-balancer-type\nspec: {type: LoadBalancer}\n",
                )
                .unwrap();
                (
                    ctx.run(&["--templates", &Ctx::s(&ctx.root.join("templates"))]),
                    Vec::new(),
                )
            },
        )
        .never_saying(&["line ", "column"]),
    );
    cases.push(case(
        "--done-file in a missing dir",
        2,
        &["--done-file", "BOOTSTRAP_AGENT_DONE_FILE"],
        |ctx| {
            copy_fixture(ctx, "aws");
            let done = ctx.root.join("no/such/dir/done.json");
            (ctx.run(&["--done-file", &Ctx::s(&done)]), Vec::new())
        },
    ));
    cases.push(case(
        "--templates dir missing",
        2,
        &["templates", "BOOTSTRAP_AGENT_TEMPLATES"],
        |ctx| {
            copy_fixture(ctx, "aws");
            let t = ctx.root.join("no-templates");
            (ctx.run(&["--templates", &Ctx::s(&t)]), Vec::new())
        },
    ));
    cases.push(case(
        "--templates that do not render (installer-made VPC)",
        2,
        &["external-lb.yaml"],
        |ctx| {
            copy_fixture(ctx, "aws-installer-vpc");
            let t = ctx.root.join("templates/services/aws");
            fs::create_dir_all(&t).unwrap();
            fs::write(t.join("external-lb.yaml"), "{{ no_such_variable }}").unwrap();
            (
                ctx.run(&["--templates", &Ctx::s(&ctx.root.join("templates"))]),
                Vec::new(),
            )
        },
    ));
    cases.push(case(
        "--registry missing",
        2,
        &["registry.yaml", "(file)"],
        |ctx| {
            copy_fixture(ctx, "aws");
            (
                ctx.run(&["--registry", &Ctx::s(&ctx.root.join("registry.yaml"))]),
                Vec::new(),
            )
        },
    ));

    // Manifest dirs of `capabilities filter`: a link loop is an error, not a skipped file.
    for (what, make) in [
        (
            "symlink loop",
            (|p: &Path| std::os::unix::fs::symlink(p, p).unwrap()) as fn(&Path),
        ),
        ("dangling symlink", |p: &Path| {
            std::os::unix::fs::symlink(p.with_extension("gone"), p).unwrap()
        }),
        ("oversized", |p: &Path| {
            fs::File::create(p).unwrap().set_len(64 << 20).unwrap()
        }),
    ] {
        cases.push(case(
            &format!("capabilities filter: manifest {what}"),
            2,
            &["0000_50_x.yaml", "(file)"],
            move |ctx| {
                let m = ctx.root.join("manifests");
                fs::create_dir_all(&m).unwrap();
                fs::write(
                    m.join("0000_10_a.yaml"),
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n",
                )
                .unwrap();
                make(&m.join("0000_50_x.yaml"));
                let out = ctx.state().join("out");
                (
                    args(&[
                        "capabilities",
                        "filter",
                        "--manifests",
                        &Ctx::s(&m),
                        "--out",
                        &Ctx::s(&out),
                    ]),
                    Vec::new(),
                )
            },
        ));
    }

    // Everything at once: every problem is reported, not only the first.
    cases.push(case(
        "all problems at once",
        2,
        &[
            "baseDomain",
            "metadata.name",
            "data.aws_access_key_id",
            "BOOTSTRAP_AGENT_KUBECONFIG",
            "BOOTSTRAP_AGENT_FEATURE_GATES",
            "problems in the input",
        ],
        |ctx| {
            copy_fixture(ctx, "aws");
            edit(
                &ctx.assets().join(IC),
                "baseDomain: example.com",
                "baseDomain: \"a b\"",
                false,
            );
            edit(
                &ctx.assets().join(IC),
                "      name: mycluster\n",
                "      name: My_Cluster\n",
                false,
            );
            edit(
                &ctx.assets().join(CREDS),
                "aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=",
                "aws_access_key_id: \"\"",
                false,
            );
            fs::write(ctx.kubeconfig(), "").unwrap();
            (ctx.run(&["--feature-gates", "ClusterAPI,,"]), Vec::new())
        },
    ));

    // Options (from flags and variables), the loader's own rules, creds and kubeconfig: one
    // report, every problem in it.
    cases.push(case(
        "options with every other input at once",
        2,
        &[
            "10 problems in the input",
            "--gate-timeout (environment variable BOOTSTRAP_AGENT_GATE_TIMEOUT): value \"-5s\"",
            "--bootstrap-ip (environment variable BOOTSTRAP_AGENT_BOOTSTRAP_IP): value \"x\" from BOOTSTRAP_AGENT_BOOTSTRAP_IP",
            "--dns-ttl (environment variable BOOTSTRAP_AGENT_DNS_TTL)",
            "--dns-seeding (environment variable BOOTSTRAP_AGENT_DNS_SEEDING)",
            "baseDomain",
            "controlPlane.replicas",
            "capabilities.additionalEnabledCapabilities[1]",
            "data.aws_access_key_id",
            "BOOTSTRAP_AGENT_KUBECONFIG",
        ],
        |ctx| {
            copy_fixture(ctx, "aws");
            let ic = ctx.assets().join(CLUSTER_CONFIG);
            edit(&ic, "baseDomain: example.com", "baseDomain: \"a b\"", false);
            // Only the loader checks these two.
            edit(&ic, "      replicas: 3\n    compute", "      replicas: -1\n    compute", false);
            edit(&ic, "      - Console\n", "      - 7\n", false);
            edit(
                &ctx.assets().join(CREDS),
                "aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=",
                "aws_access_key_id: \"\"",
                false,
            );
            fs::write(ctx.kubeconfig(), "").unwrap();
            let mut a = ctx.run(&["--gate-timeout", "-5s", "--dns-ttl", "0", "--dns-seeding", "fast"]);
            let at = a.iter().position(|x| x == "--bootstrap-ip").unwrap();
            a.drain(at..at + 2);
            (a, vec![("BOOTSTRAP_AGENT_BOOTSTRAP_IP".into(), "x".into())])
        },
    ));

    // A corrupt journal: exit 5, named, untouched.
    for (what, bytes) in [
        (
            "truncated",
            &b"{\"version\": 1, \"generation\": 1, \"steps\": {"[..],
        ),
        ("binary", &[0xff, 0x00, 0xfe, 0x7b][..]),
        ("empty", &b""[..]),
        (
            "wrong types",
            &b"{\"version\": \"one\", \"generation\": 1}"[..],
        ),
        (
            "unknown step",
            &b"{\"version\": 1, \"generation\": 1, \"run_step\": \"levitate\"}"[..],
        ),
        (
            "unsupported format",
            &b"{\"version\": 99, \"generation\": 1}"[..],
        ),
    ] {
        for command in ["status", "reserve", "plan"] {
            cases.push(case(
                &format!("journal {what}: {command}"),
                5,
                &["journal.json"],
                move |ctx| {
                    copy_fixture(ctx, "aws");
                    fs::create_dir_all(ctx.state()).unwrap();
                    fs::write(ctx.state().join("journal.json"), bytes).unwrap();
                    let a = match command {
                        "status" => args(&["status", "--state-dir", &Ctx::s(&ctx.state())]),
                        "plan" => args(&[
                            "plan",
                            "--offline",
                            "--assets",
                            &Ctx::s(&ctx.assets()),
                            "--state-dir",
                            &Ctx::s(&ctx.state()),
                        ]),
                        _ => ctx.reserve(),
                    };
                    (a, Vec::new())
                },
            ));
        }
    }
}

struct Outcome {
    name: String,
    problem: Option<String>,
}

/// Runs one case in its own temp dir and says what is wrong with the outcome, if anything.
fn run_case(case: &Case) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        root: dir.path().to_path_buf(),
    };
    let (argv, env) = (case.setup)(&ctx);
    let journal_before = fs::read(ctx.state().join("journal.json")).ok();
    let state_before = listing(&ctx.state());
    let mut cmd = Command::new(BIN);
    cmd.args(&argv)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("BOOTSTRAP_AGENT_LOG", "trace")
        .env("AWS_ENDPOINT_URL_EC2", NOWHERE)
        .env("AWS_ENDPOINT_URL_ROUTE_53", NOWHERE)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(60)) else {
        return Outcome {
            name: case.name.clone(),
            problem: Some("did not finish within 60 s".into()),
        };
    };
    let out = out.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    if out.status.code() != Some(case.code) {
        problems.push(format!(
            "exit {:?}, expected {}",
            out.status.code(),
            case.code
        ));
    }
    for want in &case.must_name {
        if !stderr.contains(want.as_str()) {
            problems.push(format!("stderr does not name {want:?}"));
        }
    }
    for vague in &case.must_not_say {
        if stderr.contains(vague.as_str()) {
            problems.push(format!("stderr says {vague:?}"));
        }
    }
    for canary in CANARIES {
        if stdout.contains(canary) || stderr.contains(canary) {
            problems.push(format!("printed the credential {canary:?}"));
        }
    }
    if stderr.contains("panicked") {
        problems.push("panicked".into());
    }
    if listing(&ctx.state()) != state_before {
        problems.push(format!(
            "the state dir changed: {:?} -> {:?}",
            state_before,
            listing(&ctx.state())
        ));
    }
    if fs::read(ctx.state().join("journal.json")).ok() != journal_before {
        problems.push("the journal changed".into());
    }
    Outcome {
        name: case.name.clone(),
        problem: (!problems.is_empty()).then(|| {
            format!(
                "{}\n    args: {argv:?}\n    stderr: {}",
                problems.join("; "),
                stderr.lines().rev().take(6).collect::<Vec<_>>().join(" | ")
            )
        }),
    }
}

/// The state dir's entries (None: it does not exist).
fn listing(dir: &Path) -> Option<Vec<String>> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Some(names)
}

#[test]
fn every_bad_input_is_refused_naming_file_and_field_with_nothing_written() {
    let cases = corpus();
    assert!(
        cases.len() >= 150,
        "the corpus has only {} cases",
        cases.len()
    );
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let outcome = run_case(case);
                    if let Some(p) = outcome.problem {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{}: {p}", outcome.name));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "bad-input corpus: {} cases, {} refused as expected, in {:.1} s",
        cases.len(),
        cases.len() - failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
