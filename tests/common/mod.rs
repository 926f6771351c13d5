//! Shared harness of the integration tests: the AWS world (moto + ministack behind counting
//! proxies, inspected with boto3) and the agent binary run against it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::{AwsPeers, Hold};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub const BOOTSTRAP_IP: &str = "10.0.1.10";
pub const OTHER_WRITER: &str = "192.0.2.9";
pub const API: &str = "api.mycluster.example.com A";
pub const API_INT: &str = "api-int.mycluster.example.com A";

pub struct Harness {
    pub peers: AwsPeers,
    pub dir: tempfile::TempDir,
    pub assets: PathBuf,
    pub state: PathBuf,
    /// Extra arguments for every command but `status` (e.g. --kubeconfig).
    pub extra: Vec<String>,
}

impl Harness {
    pub async fn new(fixture: &str) -> Self {
        let peers = AwsPeers::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let assets = dir.path().join("assets");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/assets")
            .join(fixture);
        peers.setup_world(&fixture, &assets).await.unwrap();
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
    pub async fn kill_at(&self, args: &[&str], route53: bool, hold: Hold) {
        let proxy = if route53 {
            &self.peers.route53_proxy
        } else {
            &self.peers.ec2_proxy
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

    pub async fn world(&self) -> World {
        World(self.peers.inspect().await.unwrap())
    }
}

/// boto3's view of what exists.
pub struct World(pub Value);

impl World {
    pub fn ours<'a>(&'a self, kind: &str) -> Vec<&'a Value> {
        self.0[kind]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["tags"]["bootstrap-agent.openshift.io/reservation"].is_string())
            .filter(|r| r["tags"]["kubernetes.io/cluster/mycluster-7xk2p"] == "owned")
            .collect()
    }

    pub fn ips(&self, kind: &str) -> Vec<String> {
        let mut ips: Vec<String> = self
            .ours(kind)
            .iter()
            .map(|r| r["ip"].as_str().unwrap().to_string())
            .collect();
        ips.sort();
        ips
    }

    pub fn record(&self, zone: &str, name: &str) -> Vec<String> {
        self.0["zones"][zone][name]
            .as_array()
            .map(|v| v.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }

    pub fn count(&self, kind: &str) -> usize {
        self.0[kind].as_array().unwrap().len()
    }

    /// The stage-1 picture: 3 EIPs + 3 ENIs of ours, one per subnet, and the records.
    pub fn assert_seeded(&self, extra_private: &[&str]) {
        let eips = self.ours("eips");
        let enis = self.ours("enis");
        assert_eq!(eips.len(), 3, "one EIP per public subnet: {eips:?}");
        assert_eq!(enis.len(), 3, "one ENI per private subnet: {enis:?}");
        let mut keys: Vec<&str> = eips
            .iter()
            .chain(&enis)
            .map(|r| {
                r["tags"]["bootstrap-agent.openshift.io/reservation"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        keys.sort();
        keys.dedup();
        assert_eq!(
            keys.len(),
            6,
            "no two reservations for the same purpose: {keys:?}"
        );
        let mut private = self.ips("enis");
        private.push(BOOTSTRAP_IP.to_string());
        private.extend(extra_private.iter().map(|s| s.to_string()));
        private.sort();
        for name in [API, API_INT] {
            let mut got = self.record("private", name);
            got.sort();
            assert_eq!(got, private, "private {name}");
        }
        let mut public = self.record("public", API);
        public.sort();
        assert_eq!(public, self.ips("eips"), "public api");
    }
}
