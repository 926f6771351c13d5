//! Harness of the GCP integration tests: the in-process fake of compute.v1 + dns.v1 behind two
//! counting proxies, and the agent binary run against it with `tests/fixtures/assets/gcp`
//! (the fake is seeded with that fixture's project, region, subnetworks and zones).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::Hold;
use bootstrap_sim::gcp::{FakeOptions, GcpPeers};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub const BOOTSTRAP_IP: &str = "10.0.0.5";
pub const OTHER_WRITER: &str = "192.0.2.9";
pub const API: &str = "api.mycluster.example.com A";
pub const API_INT: &str = "api-int.mycluster.example.com A";
pub const CLUSTER_LABEL: &str = "kubernetes-io-cluster-mycluster-7xk2p";
pub const RESERVATION_LABEL: &str = "bootstrap-agent-reservation";

pub struct Harness {
    pub peers: GcpPeers,
    pub dir: tempfile::TempDir,
    pub assets: PathBuf,
    pub state: PathBuf,
    /// Extra arguments for every command but `status` (e.g. --kubeconfig).
    pub extra: Vec<String>,
}

impl Harness {
    pub async fn new() -> Self {
        Self::with_options(FakeOptions::realistic()).await
    }

    pub async fn with_options(options: FakeOptions) -> Self {
        let peers = GcpPeers::start(options).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/assets/gcp");
        let state = dir.path().join("state");
        Self {
            peers,
            dir,
            assets,
            state,
            extra: Vec::new(),
        }
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"));
        cmd.args(args)
            .arg("--state-dir")
            .arg(&self.state)
            .envs(self.peers.agent_env())
            .kill_on_drop(true);
        if args[0] != "status" {
            cmd.arg("--assets")
                .arg(&self.assets)
                .args(["--bootstrap-ip", BOOTSTRAP_IP])
                .args(&self.extra);
        }
        cmd
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        let out = self.command(args).output().await.unwrap();
        assert!(
            out.status.success(),
            "bootstrap-agent {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    pub async fn bootstrap(&self) {
        self.run(&["reserve"]).await;
        self.run(&["dns", "seed"]).await;
    }

    /// Starts `args`, waits until the proxy froze it at `hold`, SIGKILLs it.
    pub async fn kill_at(&self, args: &[&str], dns: bool, hold: Hold) {
        let proxy = if dns {
            &self.peers.dns_proxy
        } else {
            &self.peers.compute_proxy
        };
        proxy.hold(hold);
        let mut child = self
            .command(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        tokio::select! {
            _ = proxy.wait_held() => {}
            status = child.wait() => panic!("agent exited before reaching {hold:?}: {status:?}"),
        }
        child.start_kill().unwrap(); // SIGKILL
        child.wait().await.unwrap();
        proxy.reset();
    }

    pub fn world(&self) -> World {
        World(self.peers.inspect())
    }
}

/// The fake's view of what exists.
pub struct World(pub Value);

impl World {
    pub fn addresses(&self) -> Vec<&Value> {
        self.0["addresses"].as_array().unwrap().iter().collect()
    }

    /// Addresses carrying both of our labels.
    pub fn ours(&self) -> Vec<&Value> {
        self.addresses()
            .into_iter()
            .filter(|a| a["labels"][RESERVATION_LABEL].is_string())
            .filter(|a| a["labels"][CLUSTER_LABEL] == "owned")
            .collect()
    }

    pub fn ours_of(&self, purpose: &str) -> Vec<&Value> {
        self.ours()
            .into_iter()
            .filter(|a| a["labels"][RESERVATION_LABEL] == purpose)
            .collect()
    }

    pub fn ips(&self, purpose: &str) -> Vec<String> {
        let mut ips: Vec<String> = self
            .ours_of(purpose)
            .iter()
            .map(|a| a["ip"].as_str().unwrap().to_string())
            .collect();
        ips.sort();
        ips
    }

    pub fn record(&self, zone: &str, name: &str) -> Vec<String> {
        let mut values: Vec<String> = self.0["zones"][zone][name]
            .as_array()
            .map(|v| v.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        values.sort();
        values
    }

    /// The stage-1 picture: one public and one private address of ours, and the records.
    pub fn assert_seeded(&self, extra_private: &[&str]) {
        let public = self.ours_of("public-ipv4");
        let private = self.ours_of("private-ipv4");
        assert_eq!(public.len(), 1, "one public address: {:#}", self.0);
        assert_eq!(private.len(), 1, "one private address: {:#}", self.0);
        assert_eq!(self.ours().len(), 2, "nothing else of ours: {:#}", self.0);
        assert_eq!(public[0]["name"], "mycluster-7xk2p-rsvd-public-ipv4");
        assert_eq!(public[0]["addressType"], "EXTERNAL");
        assert_eq!(private[0]["name"], "mycluster-7xk2p-rsvd-private-ipv4");
        assert_eq!(private[0]["addressType"], "INTERNAL");
        assert_eq!(private[0]["purpose"], "SHARED_LOADBALANCER_VIP");
        let private_ip = private[0]["ip"].as_str().unwrap();
        assert!(
            private_ip.starts_with("10.0."),
            "from the master subnet: {private_ip}"
        );
        let mut expected = vec![private_ip.to_string(), BOOTSTRAP_IP.to_string()];
        expected.extend(extra_private.iter().map(|s| s.to_string()));
        expected.sort();
        for name in [API, API_INT] {
            assert_eq!(self.record("private", name), expected, "private {name}");
        }
        assert_eq!(
            self.record("public", API),
            self.ips("public-ipv4"),
            "public api"
        );
    }
}
