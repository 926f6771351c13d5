//! The bad-input corpus: several hundred inputs, each a valid example (an asset fixture, a
//! kubeconfig, a manifest dir, options, a journal) with ONE defect. Every one must be refused
//! by the real binary with exit 2 (5 for a corrupt journal), naming the file (or the flag and
//! its environment variable) and the field, with nothing written in the state dir and no
//! credential in the output, even at log level `trace`. The cases run in parallel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/fixtures.rs"]
mod fixtures;
#[path = "common/inputs.rs"]
mod inputs;

use inputs::{BIN, CANARIES, CLUSTER_CONFIG, CREDS, KUBECONFIG, aws_nowhere};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const INFRA: &str = "manifests/cluster-infrastructure-02-config.yml";

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
    /// `command` on the assets and state dir, for the bootstrap IP 10.0.1.10.
    fn command(&self, command: &str) -> Vec<String> {
        args(&[
            command,
            "--assets",
            &Self::s(&self.assets()),
            "--state-dir",
            &Self::s(&self.state()),
            "--bootstrap-ip",
            "10.0.1.10",
        ])
    }
    /// `reserve` on the assets: it would lock, journal and call EC2 if the input passed.
    fn reserve(&self) -> Vec<String> {
        self.command("reserve")
    }
    /// `run`, with a valid kubeconfig unless the case replaced it.
    fn run(&self, extra: &[&str]) -> Vec<String> {
        if !self.kubeconfig().exists() && fs::symlink_metadata(self.kubeconfig()).is_err() {
            fs::write(self.kubeconfig(), KUBECONFIG).unwrap();
        }
        let mut a = self.command("run");
        a.extend(args(&["--kubeconfig", &Self::s(&self.kubeconfig())]));
        a.extend(args(extra));
        a
    }
    /// Replaces the first `from` in the asset file `file` by `to`.
    fn edit(&self, file: &str, from: &str, to: &str) {
        edit(&self.assets().join(file), from, to, false);
    }
    /// The manifest dir of `capabilities filter`.
    fn manifests(&self) -> PathBuf {
        self.root.join("manifests")
    }
    /// Writes the manifest `name` into [`Ctx::manifests`].
    fn manifest(&self, name: &str, text: &str) {
        fs::create_dir_all(self.manifests()).unwrap();
        fs::write(self.manifests().join(name), text).unwrap();
    }
    /// `capabilities filter` of [`Ctx::manifests`] into the state dir, which it must not create.
    fn filter(&self) -> Vec<String> {
        args(&[
            "capabilities",
            "filter",
            "--manifests",
            &Self::s(&self.manifests()),
            "--out",
            &Self::s(&self.state().join("out")),
        ])
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

/// A case on a copy of `fixture` (exit 2, no extra env): `command` breaks what the case is
/// about and returns the arguments.
fn fixture_case(
    name: &str,
    must_name: &[&str],
    fixture: &str,
    command: impl Fn(&Ctx) -> Vec<String> + Send + Sync + 'static,
) -> Case {
    let fixture = fixture.to_string();
    case(name, 2, must_name, move |ctx| {
        copy_fixture(ctx, &fixture);
        (command(ctx), Vec::new())
    })
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
    for (file, from, to, field) in [
        (CLUSTER_CONFIG, "kind: ConfigMap", "kind: Secret", "kind"),
        (
            CLUSTER_CONFIG,
            "apiVersion: v1\nkind: ConfigMap",
            "apiVersion: v2\nkind: ConfigMap",
            "apiVersion",
        ),
        (INFRA, "kind: Infrastructure", "kind: Deployment", "kind"),
        (
            INFRA,
            "apiVersion: config.openshift.io/v1",
            "apiVersion: apps/v1",
            "apiVersion",
        ),
        (
            CLUSTER_CONFIG,
            "      name: mycluster\n",
            "      name: \"My_Cluster!.x\"\n",
            "metadata.name",
        ),
        (
            CLUSTER_CONFIG,
            "baseDomain: example.com",
            "baseDomain: \"exa mple..com/x\"",
            "baseDomain",
        ),
        (
            INFRA,
            "apiServerInternalURI: https://api-int.mycluster.example.com:6443",
            "apiServerInternalURI: not a url",
            "status.apiServerInternalURI",
        ),
        (
            INFRA,
            "apiServerInternalURI: https://api-int.mycluster.example.com:6443",
            "apiServerInternalURI: https://api-int.other.example.com:6443",
            "status.apiServerInternalURI",
        ),
        (
            INFRA,
            "infrastructureName: mycluster-7xk2p",
            "infrastructureName: Bad_Infra!",
            "status.infrastructureName",
        ),
        (
            CLUSTER_CONFIG,
            "      - cidr: 10.0.0.0/16\n",
            "      - cidr: 10.0.0.0/16\n      - cidr: 10.0.0.0/16\n",
            "networking.machineNetwork[1].cidr",
        ),
        (
            CLUSTER_CONFIG,
            "  install-config: |",
            "  install-config: [42]\n  was: |",
            "data.install-config",
        ),
    ] {
        every_fixture(&mut cases, file, from, to, field);
    }
    for fixture in all_fixtures() {
        for (what, said, make) in [
            ("oversized cluster-config", "MiB", oversized as Breaker),
            ("cluster-config a symlink loop", "(file)", symlink_loop),
        ] {
            cases.push(fixture_case(
                &format!("{fixture}: {what}"),
                &[CLUSTER_CONFIG, said],
                &fixture,
                move |ctx| {
                    broken(ctx, CLUSTER_CONFIG, make);
                    ctx.reserve()
                },
            ));
        }
        if fixture_text(&fixture, CREDS).is_none() {
            continue;
        }
        for (what, make) in creds_breakers() {
            cases.push(fixture_case(
                &format!("{fixture}: creds secret {what}"),
                &[CREDS, "(file)"],
                &fixture,
                move |ctx| {
                    broken(ctx, CREDS, make);
                    ctx.reserve()
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

/// Makes, where nothing is yet, a file that is there but cannot be read.
type Breaker = fn(&Path);

fn symlink_loop(p: &Path) {
    std::os::unix::fs::symlink(p, p).unwrap();
}

fn dangling_symlink(p: &Path) {
    std::os::unix::fs::symlink(p.with_extension("gone"), p).unwrap();
}

fn directory(p: &Path) {
    fs::create_dir(p).unwrap();
}

/// Sparse: refused by its size before a byte is read.
fn oversized(p: &Path) {
    fs::File::create(p).unwrap().set_len(64 << 20).unwrap();
}

/// Replaces the asset file `file` by what `make` makes.
fn broken(ctx: &Ctx, file: &str, make: Breaker) {
    let p = ctx.assets().join(file);
    fs::remove_file(&p).unwrap();
    make(&p);
}

/// A creds secret that exists but cannot be read: never "absent", never the ambient identity.
fn creds_breakers() -> Vec<(&'static str, Breaker)> {
    vec![
        ("dangling symlink", dangling_symlink),
        ("symlink loop", symlink_loop),
        ("a directory", directory),
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
    cases.push(fixture_case(
        "aws: publish External without a ControlPlaneExternalLB subnet",
        &[ic, "platform.aws.vpc.subnets", "ControlPlaneExternalLB"],
        "aws",
        |ctx| {
            edit(
                &ctx.assets().join(IC),
                "            - type: ControlPlaneExternalLB\n",
                "",
                true,
            );
            ctx.reserve()
        },
    ));

    // The creds secret's fields (values are never quoted).
    let aws_key = "QUtJQUZJWFRVUkVFWEFNUExFMDA=";
    let creds: Vec<(&str, String, &str, Vec<String>)> = vec![
        (
            "aws",
            format!("aws_access_key_id: {aws_key}"),
            "data.aws_access_key_id",
            vec![
                "aws_access_key_id: \"\"".into(),
                format!("aws_access_key_id: {}", b64("short")),
                "aws_access_key_id: '%%%'".into(),
                "aws_access_key_id: [1]".into(),
            ],
        ),
        (
            "aws",
            "type: Opaque\n".into(),
            "stringData.aws_secret_access_key",
            vec!["type: Opaque\nstringData:\n  aws_secret_access_key: 12345\n".into()],
        ),
        (
            "aws",
            "  aws_secret_access_key:".into(),
            "data.aws_secret_access_key",
            vec!["  other_key:".into()],
        ),
        (
            "aws",
            "  aws_secret_access_key: ".into(),
            "data.aws_secret_access_key",
            vec!["  aws_secret_access_key: \"   \" #".into()],
        ),
        (
            "azure",
            "azure_tenant_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAz".into(),
            "data.azure_tenant_id",
            vec![
                "azure_tenant_id: \"\"".into(),
                format!("azure_tenant_id: {}", b64("not-a-guid")),
            ],
        ),
        (
            "azure",
            "azure_subscription_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAx".into(),
            "data.azure_subscription_id",
            vec![format!("azure_subscription_id: {}", b64(""))],
        ),
        (
            "azure",
            "azure_client_id: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAy".into(),
            "data.azure_client_id",
            vec![format!("azure_client_id: {}", b64("0000-0000"))],
        ),
        (
            "azure",
            "  azure_client_secret:".into(),
            "data.azure_client_secret",
            vec!["  azure_other:".into()],
        ),
        (
            "gcp",
            "  service_account.json: ".into(),
            "data.service_account.json",
            ["not json", "{}", "{\"type\":\"service_account\"}", "[1,2]"]
                .map(|json| format!("  service_account.json: {} #", b64(json)))
                .into(),
        ),
    ];
    for (fixture, from, field, tos) in creds {
        for to in tos {
            cases.push(edit_case(fixture, CREDS, &from, &to, field));
        }
    }

    // Other asset files.
    cases.push(case("asset dir missing", 2, &["(dir)"], |ctx| {
        (ctx.reserve(), Vec::new())
    }));
    cases.push(fixture_case(
        "Infrastructure manifest missing",
        &[INFRA, "(file)"],
        "aws",
        |ctx| {
            fs::remove_file(ctx.assets().join(INFRA)).unwrap();
            ctx.reserve()
        },
    ));
    cases.push(fixture_case(
        "cluster-config a dangling symlink",
        &[ic, "dangling"],
        "aws",
        |ctx| {
            let p = ctx.assets().join(IC);
            fs::remove_file(&p).unwrap();
            std::os::unix::fs::symlink(ctx.root.join("nowhere"), &p).unwrap();
            ctx.reserve()
        },
    ));
    for (what, text, said) in [
        ("empty", &b""[..], "(document)"),
        ("binary", &[0xff, 0xfe, 0, 1][..], "(file)"),
    ] {
        cases.push(fixture_case(
            &format!("cluster-config {what}"),
            &[ic, said],
            "aws",
            move |ctx| {
                fs::write(ctx.assets().join(IC), text).unwrap();
                ctx.reserve()
            },
        ));
    }
    cases.push(edit_case(
        "aws-user-dns",
        "manifests/cluster-dns-02-config.yml",
        "kind: DNS",
        "kind: Secret",
        "kind",
    ));
    cases.push(fixture_case(
        "cvo-overrides of another kind (run)",
        &["cvo-overrides.yaml", "kind"],
        "aws",
        |ctx| {
            ctx.edit(
                "manifests/cvo-overrides.yaml",
                "kind: ClusterVersion",
                "kind: Secret",
            );
            ctx.run(&[])
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
    cases.push(fixture_case(
        "--feature-gates ClusterAPI,,",
        &["--feature-gates", "BOOTSTRAP_AGENT_FEATURE_GATES", "empty"],
        "aws",
        |ctx| ctx.run(&["--feature-gates", "ClusterAPI,,"]),
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
    cases.push(fixture_case(
        "--feature-set Bogus",
        &["--feature-set", "BOOTSTRAP_AGENT_FEATURE_SET"],
        "aws",
        |ctx| ctx.run(&["--feature-set", "Bogus"]),
    ));
    // Each bad value given by the flag, then by its variable.
    let bad_values: [(&str, &str, &[&str]); 10] = [
        (
            "--gate-timeout",
            "BOOTSTRAP_AGENT_GATE_TIMEOUT",
            &["-5s", "soon", "0s"],
        ),
        (
            "--step-timeout",
            "BOOTSTRAP_AGENT_STEP_TIMEOUT",
            &["-1m", "10 parsecs"],
        ),
        (
            "--bootstrap-ip",
            "BOOTSTRAP_AGENT_BOOTSTRAP_IP",
            &["10.0.0.300", "0.0.0.0", "x"],
        ),
        (
            "--drain-wait",
            "BOOTSTRAP_AGENT_DRAIN_WAIT",
            &["forever", "-3s"],
        ),
        (
            "--dns-ttl",
            "BOOTSTRAP_AGENT_DNS_TTL",
            &["0", "-5s", "1.5s"],
        ),
        ("--dns-seeding", "BOOTSTRAP_AGENT_DNS_SEEDING", &["fast"]),
        ("--dns-check", "BOOTSTRAP_AGENT_DNS_CHECK", &["dig"]),
        ("--dns", "BOOTSTRAP_AGENT_DNS", &["mine"]),
        ("--wire-proof", "BOOTSTRAP_AGENT_WIRE_PROOF", &["maybe"]),
        (
            "--wire-dial-override",
            "BOOTSTRAP_AGENT_WIRE_DIAL_OVERRIDES",
            &["10.0.0.1=x"],
        ),
    ];
    for (flag, env, bads) in bad_values {
        for &bad in bads {
            cases.push(fixture_case(
                &format!("{flag} {bad}"),
                &[flag, env, "expected"],
                "aws",
                move |ctx| {
                    let mut a = run_but_for(ctx, flag);
                    a.extend([flag.to_string(), bad.to_string()]);
                    a
                },
            ));
            let from_env = format!("from {env}");
            cases.push(case(
                &format!("{env}={bad}"),
                2,
                &[flag, env, "expected", &from_env],
                move |ctx| {
                    copy_fixture(ctx, "aws");
                    (
                        run_but_for(ctx, flag),
                        vec![(env.to_string(), bad.to_string())],
                    )
                },
            ));
        }
    }
    // `--skip-preflight` names a line of this cloud's checklist, from the flag or its variable,
    // checked in the one pass (before: after the lock, naming the flag only).
    cases.push(fixture_case(
        "--skip-preflight with another cloud's check",
        &[
            "--skip-preflight (environment variable BOOTSTRAP_AGENT_SKIP_PREFLIGHT)",
            "\"quota-elastic-ips\"",
            "no such preflight check on gcp",
            "permissions, quota-addresses",
        ],
        "gcp",
        |ctx| ctx.run(&["--skip-preflight", "quota-elastic-ips"]),
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
    cases.push(fixture_case(
        "--output yml",
        &[
            "--output (no environment variable)",
            "expected one of text, json, yaml",
        ],
        "aws",
        |ctx| {
            let mut a = ctx.reserve();
            a.extend(args(&["--output", "yml"]));
            a
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
    cases.push(fixture_case(
        "plan --step levitate",
        &["--step", "\"levitate\"", "expected one of"],
        "aws",
        |ctx| {
            let mut a = offline_plan(ctx);
            a.extend(args(&["--step", "reserve,levitate"]));
            a
        },
    ));

    // Vague messages no more: a wrong type is said with the field and what was expected.
    cases.push(
        fixture_case(
            "creds: stringData key of the wrong type",
            &[
                CREDS,
                "stringData.aws_secret_access_key",
                "expected a string, found a number",
            ],
            "aws",
            |ctx| {
                // The key moved from data to stringData, with a number for its value.
                ctx.edit(CREDS, "  aws_secret_access_key:", "  moved_away:");
                ctx.edit(
                    CREDS,
                    "type: Opaque\n",
                    "type: Opaque\nstringData:\n  aws_secret_access_key: 12345\n",
                );
                ctx.reserve()
            },
        )
        .never_saying(&["missing"]),
    );
    cases.push(
        fixture_case(
            "creds: stringData a list",
            &[CREDS, "stringData", "expected a mapping"],
            "aws",
            |ctx| {
                ctx.edit(
                    CREDS,
                    "type: Opaque\n",
                    "type: Opaque\nstringData:\n- aws_secret_access_key\n",
                );
                ctx.reserve()
            },
        )
        .never_saying(&["missing"]),
    );
    cases.push(
        case(
            "capabilities filter: metadata.annotations a list",
            // Decided as the cluster decides it (no annotations: excluded), and said as a bad
            // input with exit 6, the others still decided (issue 43). Without `--out`, so
            // nothing is written.
            6,
            &["0000_50_x.yaml", "document 0: metadata.annotations", "is a list, not a mapping"],
            |ctx| {
                ctx.manifest(
                    "0000_50_x.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: b\n  annotations:\n  - capability.openshift.io/name\n",
                );
                let mut filter = ctx.filter();
                filter.truncate(4);
                (filter, Vec::new())
            },
        )
        .never_saying(&["line ", "column"]),
    );
    cases.push(
        fixture_case(
            "--templates: metadata.annotations a list",
            &["external-lb.yaml", "metadata.annotations", "expected a mapping", "found a list"],
            "aws-installer-vpc",
            |ctx| {
                run_with_external_lb_template(ctx, "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  namespace: y\n  annotations:\n  - service.beta.kubernetes.io/aws-load-balancer-type\nspec: {type: LoadBalancer}\n")
            },
        )
        .never_saying(&["line ", "column"]),
    );
    // Paths given by flag that are not there.
    for (flag, missing, must_name) in [
        (
            "--done-file",
            "no/such/dir/done.json",
            ["--done-file", "BOOTSTRAP_AGENT_DONE_FILE"],
        ),
        (
            "--templates",
            "no-templates",
            ["templates", "BOOTSTRAP_AGENT_TEMPLATES"],
        ),
        ("--registry", "registry.yaml", ["registry.yaml", "(file)"]),
    ] {
        cases.push(fixture_case(
            &format!("{flag} {missing} missing"),
            &must_name,
            "aws",
            move |ctx| ctx.run(&[flag, &Ctx::s(&ctx.root.join(missing))]),
        ));
    }
    cases.push(fixture_case(
        "--templates that do not render (installer-made VPC)",
        &["external-lb.yaml"],
        "aws-installer-vpc",
        |ctx| run_with_external_lb_template(ctx, "{{ no_such_variable }}"),
    ));

    // Manifest dirs of `capabilities filter`: a link loop is an error, not a skipped file.
    for (what, make) in [
        ("symlink loop", symlink_loop as Breaker),
        ("dangling symlink", dangling_symlink),
        ("oversized", oversized),
    ] {
        cases.push(case(
            &format!("capabilities filter: manifest {what}"),
            2,
            &["0000_50_x.yaml", "(file)"],
            move |ctx| {
                ctx.manifest(
                    "0000_10_a.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n",
                );
                make(&ctx.manifests().join("0000_50_x.yaml"));
                (ctx.filter(), Vec::new())
            },
        ));
    }

    // Everything at once: every problem is reported, not only the first.
    cases.push(fixture_case(
        "all problems at once",
        &[
            "baseDomain",
            "metadata.name",
            "data.aws_access_key_id",
            "BOOTSTRAP_AGENT_KUBECONFIG",
            "BOOTSTRAP_AGENT_FEATURE_GATES",
            "problems in the input",
        ],
        "aws",
        |ctx| {
            break_domain_creds_and_kubeconfig(ctx);
            ctx.edit(IC, "      name: mycluster\n", "      name: My_Cluster\n");
            ctx.run(&["--feature-gates", "ClusterAPI,,"])
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
            break_domain_creds_and_kubeconfig(ctx);
            // Only the loader checks these two.
            ctx.edit(IC, "      replicas: 3\n    compute", "      replicas: -1\n    compute");
            ctx.edit(IC, "      - Console\n", "      - 7\n");
            let mut a = run_but_for(ctx, "--bootstrap-ip");
            a.extend(args(&["--gate-timeout", "-5s", "--dns-ttl", "0", "--dns-seeding", "fast"]));
            (a, vec![("BOOTSTRAP_AGENT_BOOTSTRAP_IP".into(), "x".into())])
        },
    ));

    // The state dir's lock path holds a directory: refused in the one pass by the commands that
    // take the lock (before: exit 1 once the command had started), named, and left as it is.
    for command in ["reserve", "run", "publish"] {
        cases.push(case(
            &format!("lock path is a directory: {command}"),
            2,
            &[
                "state/lock",
                "is a directory",
                "expected the state dir's lock file",
            ],
            move |ctx| {
                copy_fixture(ctx, "aws");
                fs::create_dir_all(ctx.state().join("lock")).unwrap();
                let a = match command {
                    "run" => ctx.run(&[]),
                    "publish" => {
                        let mut a = ctx.run(&[]);
                        a[0] = "publish".into();
                        a.extend(args(&["--scope", "Internal"]));
                        a
                    }
                    _ => ctx.reserve(),
                };
                (a, Vec::new())
            },
        ));
    }

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
                        "plan" => offline_plan(ctx),
                        _ => ctx.reserve(),
                    };
                    (a, Vec::new())
                },
            ));
        }
    }
}

/// `run` without `flag` where [`Ctx::run`] gives it (the bootstrap IP), so that the case's own
/// value is the only one.
fn run_but_for(ctx: &Ctx, flag: &str) -> Vec<String> {
    let mut a = ctx.run(&[]);
    if let Some(at) = a.iter().position(|x| x == flag) {
        a.drain(at..at + 2);
    }
    a
}

/// Three inputs broken at once: the base domain, the creds' key id and the kubeconfig.
fn break_domain_creds_and_kubeconfig(ctx: &Ctx) {
    ctx.edit(
        CLUSTER_CONFIG,
        "baseDomain: example.com",
        "baseDomain: \"a b\"",
    );
    ctx.edit(
        CREDS,
        "aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=",
        "aws_access_key_id: \"\"",
    );
    fs::write(ctx.kubeconfig(), "").unwrap();
}

/// `plan --offline` on the assets and state dir.
fn offline_plan(ctx: &Ctx) -> Vec<String> {
    args(&[
        "plan",
        "--offline",
        "--assets",
        &Ctx::s(&ctx.assets()),
        "--state-dir",
        &Ctx::s(&ctx.state()),
    ])
}

/// `run --templates` with `text` as the AWS external load balancer's template.
fn run_with_external_lb_template(ctx: &Ctx, text: &str) -> Vec<String> {
    let t = ctx.root.join("templates/services/aws");
    fs::create_dir_all(&t).unwrap();
    fs::write(t.join("external-lb.yaml"), text).unwrap();
    ctx.run(&["--templates", &Ctx::s(&ctx.root.join("templates"))])
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
        .env("BOOTSTRAP_AGENT_LOG", "trace");
    aws_nowhere(&mut cmd);
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
