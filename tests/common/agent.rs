//! The agent binary as every cloud's integration tests drive it: a state dir and an asset dir
//! in a temp dir, the cloud's endpoint environment, extra flags, and a way to SIGKILL it at a
//! proxy hold. [`super::cloud::Harness`] pairs it with a cloud's peers and derefs to it.

#[path = "fixtures.rs"]
pub mod fixtures;

pub use fixtures::fixture;

use bootstrap_sim::kube::KubeSim;
use bootstrap_sim::{Hold, Proxy};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// A JSON array of strings as `Vec<String>`; missing means empty.
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|v| v.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// The string `field` of each object of the JSON array `array`; missing means empty.
pub fn string_fields(array: &Value, field: &str) -> Vec<String> {
    strings(&Value::from(
        array
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|item| item[field].clone())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
    ))
}

/// A `templates_with` edit: `from` replaced by `to` in the files whose name starts with
/// `prefix`, the others as they are.
pub fn replace_in(
    prefix: &'static str,
    from: &'static str,
    to: &'static str,
) -> impl Fn(&str, String) -> String {
    move |name, text| {
        if name.starts_with(prefix) {
            text.replace(from, to)
        } else {
            text
        }
    }
}

/// A value another writer put into our records.
pub const OTHER_WRITER: &str = "192.0.2.9";
pub const API: &str = "api.mycluster.example.com A";
pub const API_INT: &str = "api-int.mycluster.example.com A";

/// Step 1: `reserve`, then `dns seed`.
pub const BOOTSTRAP: &[&[&str]] = &[&["reserve"], &["dns", "seed"]];

/// The Services `run` creates and hands the API over to on GCP and Azure: the internal API
/// and machine-config-server Services share one address (one IP fronts several rules there).
pub const SERVICES: [(&str, &str); 3] = [
    ("openshift-kube-apiserver", "external-lb"),
    ("openshift-kube-apiserver", "internal-lb"),
    (
        "openshift-machine-config-operator",
        "internal-lb-machine-config-server",
    ),
];

/// On AWS: a private IP belongs to one NLB only, so one internal Service carries both ports.
pub const AWS_SERVICES: [(&str, &str); 2] = [
    ("openshift-kube-apiserver", "external-lb"),
    ("openshift-kube-apiserver", "internal-lb"),
];

/// The data of the agent's signal ConfigMap kube-system/bootstrap-agent.
pub fn signal(kube: &KubeSim) -> Value {
    kube.get(
        "",
        "v1",
        "configmaps",
        Some("kube-system"),
        "bootstrap-agent",
    )
    .expect("the signal ConfigMap")["data"]
        .clone()
}

/// The Service `ns/name`, which must be of type LoadBalancer.
pub fn load_balancer_service(kube: &KubeSim, ns: &str, name: &str) -> Value {
    let svc = kube
        .get("", "v1", "services", Some(ns), name)
        .unwrap_or_else(|| panic!("{ns}/{name} missing"));
    assert_eq!(svc["spec"]["type"], "LoadBalancer", "{ns}/{name}");
    svc
}

/// The Service `name` of namespace openshift-kube-apiserver.
pub fn apiserver_service(kube: &KubeSim, name: &str) -> Value {
    kube.get("", "v1", "services", Some("openshift-kube-apiserver"), name)
        .unwrap_or_else(|| panic!("openshift-kube-apiserver/{name} missing"))
}

/// The ClusterVersion `version`, if it exists.
pub fn cluster_version(kube: &KubeSim) -> Option<Value> {
    kube.get(
        "config.openshift.io",
        "v1",
        "clusterversions",
        None,
        "version",
    )
}

/// The requests to the local API server that change something, as (method, path).
pub fn kube_mutations(kube: &KubeSim) -> Vec<(String, String)> {
    kube.request_log()
        .into_iter()
        // A SelfSubjectAccessReview (preflight) asks; it creates nothing.
        .filter(|(m, p)| m != "GET" && !p.contains("selfsubjectaccessreviews"))
        .collect()
}

/// The agent signalled `complete` in the cluster (ConfigMap kube-system/bootstrap-agent),
/// which it does only after the gate passed and the bootstrap IP left DNS.
pub fn assert_gate_passed(kube: &KubeSim) {
    let cm = serde_json::json!({"data": signal(kube)});
    assert_eq!(cm["data"]["passed"], "true");
    assert_eq!(cm["data"]["phase"], "complete");
}

/// The step deadline of commands run under injected faults: generous for a loaded 2-core
/// machine (the slowest step measured took about 30 s at 40% faults), far below the default
/// 10 min, so a hang shows as a failed test rather than a stuck one.
pub const FAULT_STEP_TIMEOUT: &str = "2m";

/// Each fault test's seed: the runs are reproducible (the n-th request through a proxy gets the
/// same verdict every time; only the order of concurrent requests may differ). This one makes
/// every kind of fault occur early on each cloud; `FAULT_SEED=n` explores others.
pub fn fault_seed() -> u64 {
    std::env::var("FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4)
}

pub struct Agent {
    pub dir: tempfile::TempDir,
    pub assets: PathBuf,
    pub state: PathBuf,
    pub bootstrap_ip: &'static str,
    /// Extra arguments for every command but `status` (e.g. --kubeconfig).
    pub extra: Vec<String>,
    /// The environment of every command (the cloud's endpoints and credentials).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<&'static str>,
}

/// `*:6443=<api>,*:22623=<api>` for the API server the kubeconfig names.
pub fn wire_overrides(kubeconfig: &Path) -> String {
    let text = std::fs::read_to_string(kubeconfig).unwrap();
    let api = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .expect("the kubeconfig names an https server")
        .trim()
        .to_string();
    format!("*:6443={api},*:22623={api}")
}

impl Agent {
    /// `assets` may live under `dir` (the harness gets to fill it after this).
    pub fn new(
        dir: tempfile::TempDir,
        assets: PathBuf,
        bootstrap_ip: &'static str,
        env: Vec<(String, String)>,
    ) -> Self {
        let state = dir.path().join("state");
        Self {
            dir,
            assets,
            state,
            bootstrap_ip,
            extra: Vec::new(),
            env,
            env_remove: Vec::new(),
        }
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"));
        cmd.args(args)
            .arg("--state-dir")
            .arg(&self.state)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        for name in &self.env_remove {
            cmd.env_remove(name);
        }
        cmd.kill_on_drop(true);
        if args[0] != "status" {
            cmd.arg("--assets")
                .arg(&self.assets)
                .args(["--bootstrap-ip", self.bootstrap_ip])
                .args(&self.extra);
        }
        cmd
    }

    /// `args` as an admin runs them on their own machine once the bootstrap host is gone: no
    /// asset dir, no bootstrap IP, the run flags (kubeconfig, ...); `--state-dir` only when
    /// `state` is given, else the default under [`Agent::admin_state_home`].
    pub fn admin_command(&self, args: &[&str], state: Option<&Path>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bootstrap-agent"));
        cmd.args(args)
            .args(&self.extra)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("XDG_STATE_HOME", self.admin_state_home())
            .env_remove("BOOTSTRAP_AGENT_STATE_DIR")
            .env_remove("BOOTSTRAP_AGENT_ASSETS");
        for name in &self.env_remove {
            cmd.env_remove(name);
        }
        if let Some(state) = state {
            cmd.arg("--state-dir").arg(state);
        }
        cmd.kill_on_drop(true);
        cmd
    }

    /// The admin's `XDG_STATE_HOME` (day-2 journals default to `<it>/bootstrap-agent/<infra-id>`).
    pub fn admin_state_home(&self) -> PathBuf {
        self.dir.path().join("admin-state-home")
    }

    /// [`Agent::admin_command`], which must succeed.
    pub async fn admin_run(&self, args: &[&str], state: Option<&Path>) -> Output {
        Self::succeeds(args, self.admin_command(args, state)).await
    }

    /// [`Agent::admin_command`], which must exit with `code`: (stdout, stderr).
    pub async fn admin_run_exits(
        &self,
        args: &[&str],
        state: Option<&Path>,
        code: i32,
    ) -> (String, String) {
        let out = self.admin_command(args, state).output().await.unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        assert_eq!(out.status.code(), Some(code), "{stdout}\n{stderr}");
        (stdout, stderr)
    }

    /// The bootstrap host is destroyed: its journal is gone, and its asset dir when it is this
    /// harness's own copy (AWS writes one with the world's subnet ids). A shared fixture of the
    /// repository (GCP, Azure) stays, as other tests read it: the admin's commands are never
    /// given its path, and without `--assets` they read only the cluster.
    pub fn destroy_bootstrap_host(&self) {
        if self.assets.starts_with(self.dir.path()) {
            std::fs::remove_dir_all(&self.assets).unwrap();
        }
        std::fs::remove_dir_all(&self.state).unwrap();
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        Self::succeeds(args, self.command(args)).await
    }

    /// [`Agent::run`] logging at `trace` (where the SDKs print their whole configuration and
    /// every identity they sign with), for the tests that no secret is printed.
    pub async fn run_at_trace(&self, args: &[&str]) -> Output {
        let mut command = self.command(args);
        command.env("BOOTSTRAP_AGENT_LOG", "trace");
        Self::succeeds(args, command).await
    }

    async fn succeeds(args: &[&str], mut command: tokio::process::Command) -> Output {
        let out = command.output().await.unwrap();
        assert!(
            out.status.success(),
            "bootstrap-agent {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// On a by-hand install over the user's two reservations, `plan` shows both adopted and
    /// reserves only the bootstrap host's second address (the user's addresses are the load
    /// balancers').
    pub async fn assert_plan_adopts_both_and_reserves_only_the_second_address(&self) {
        let plan = String::from_utf8(self.run(&["plan"]).await.stdout).unwrap();
        assert_eq!(plan.matches("adopted (yours)").count(), 2, "{plan}");
        let reserved: Vec<&str> = plan.lines().filter(|l| l.contains("+ reserve")).collect();
        assert_eq!(
            reserved,
            ["  + reserve bootstrap-ipv4 mycluster-7xk2p-rsvd-bootstrap-ipv4"],
            "{plan}"
        );
    }

    /// After a by-hand install on the `n` reservations the user made: `status` shows them
    /// adopted, and `teardown --all` leaves them in place, saying so.
    pub async fn assert_user_reservations_adopted_and_left(&self, n: usize) {
        let status = String::from_utf8(self.run(&["status"]).await.stdout).unwrap();
        assert_eq!(status.matches("adopted (yours)").count(), n, "{status}");
        let out = String::from_utf8(self.run(&["teardown", "--all"]).await.stdout).unwrap();
        assert!(
            out.contains(&format!("leaves the {n} reservation(s) you made in place")),
            "{out}"
        );
    }

    /// Replaces `from` by `to` in the asset `file` (which must hold it).
    pub fn edit_asset(&self, file: &str, from: &str, to: &str) {
        let path = self.assets.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file}: {from}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    }

    /// `plan` and `reserve` each refuse (exit 2) before any change: their stderr.
    pub async fn plan_and_reserve_refusals(&self) -> Vec<String> {
        let mut refusals = Vec::new();
        for command in [&["plan"][..], &["reserve"]] {
            refusals.push(self.run_exits(command, 2).await.1);
        }
        refusals
    }

    /// `args` must exit with `code` (its stderr in the failure message): (stdout, stderr).
    pub async fn run_exits(&self, args: &[&str], code: i32) -> (String, String) {
        let out = self.command(args).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        (String::from_utf8_lossy(&out.stdout).to_string(), stderr)
    }

    /// `args` under the fault tests' step deadline, successful or not.
    pub async fn try_run(&self, args: &[&str]) -> Output {
        self.command(args)
            .env("BOOTSTRAP_AGENT_STEP_TIMEOUT", FAULT_STEP_TIMEOUT)
            .output()
            .await
            .unwrap()
    }

    /// Runs `commands` in order under the fault tests' step deadline; each must succeed.
    pub async fn run_all(&self, commands: &[&[&str]]) {
        for args in commands {
            let out = self.try_run(args).await;
            assert!(
                out.status.success(),
                "bootstrap-agent {args:?} did not survive the faults: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// Runs `commands` in order under the fault tests' step deadline until one fails; a
    /// failure must be the clear, resumable kind the README promises: exit 1, a message naming
    /// the operation that failed and why, and the error in the journal for `status`. Returns
    /// whether all completed.
    pub async fn run_all_or_stop_resumably(&self, commands: &[&[&str]]) -> bool {
        for args in commands {
            let out = self.try_run(args).await;
            if out.status.success() {
                continue;
            }
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            let message = stderr
                .lines()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or_else(|| panic!("{args:?} printed no error: {stderr}"));
            assert!(
                ["transient", "conflict", "did not finish within"]
                    .iter()
                    .any(|why| message.contains(why)),
                "{args:?} stopped for a reason a re-run cannot fix: {message}"
            );
            let status = self.run(&["status"]).await;
            let status = String::from_utf8_lossy(&status.stdout);
            let head: String = message.chars().take(40).collect();
            assert!(
                status.contains(&head),
                "the journal keeps the error for `status`: {status}"
            );
            eprintln!("{args:?} stopped resumably: {message}");
            return false;
        }
        true
    }

    pub async fn bootstrap(&self) {
        for args in BOOTSTRAP {
            self.run(args).await;
        }
    }

    /// `status --output json`.
    pub async fn status(&self) -> Value {
        serde_json::from_slice(&self.run(&["status", "--output", "json"]).await.stdout).unwrap()
    }

    /// Where `run` writes its gate result (`--done-file`, see [`Agent::run_flags`]).
    pub fn done_file(&self) -> PathBuf {
        self.dir.path().join("gate-passed.json")
    }

    /// The flags of `run` against the local API server: the kubeconfig, the done file and
    /// the gate timeout, as [`Agent::extra`].
    pub fn run_flags(&mut self, kubeconfig: &Path, gate_timeout: &str) {
        self.extra = vec![
            "--kubeconfig".into(),
            kubeconfig.display().to_string(),
            "--done-file".into(),
            self.done_file().display().to_string(),
            // The drain is the default of a real run; tests that need it set it themselves.
            "--drain-wait".into(),
            "0s".into(),
            // The proof on the wire dials each load-balancer IP; the local API server stands
            // in for every load balancer (the clouds' addresses are never dialled).
            "--wire-dial-override".into(),
            wire_overrides(kubeconfig),
            // Last: tests replace it by position.
            "--gate-timeout".into(),
            gate_timeout.into(),
        ];
    }

    /// `--templates DIR` for a copy of the embedded templates of `cloud` under the temp dir,
    /// with `edit(file name, text)` applied to each file.
    pub fn templates_with(
        &self,
        cloud: &str,
        edit: impl Fn(&str, String) -> String,
    ) -> [String; 2] {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("templates/services")
            .join(cloud);
        let dir = self.dir.path().join("templates");
        let to = dir.join("services").join(cloud);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().to_string();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(to.join(&name), edit(&name, text)).unwrap();
        }
        ["--templates".to_string(), dir.display().to_string()]
    }

    /// Starts `args`, waits until `proxy` froze it at `hold`, SIGKILLs it.
    pub async fn kill_at(&self, args: &[&str], proxy: &Proxy, hold: Hold) {
        Self::kill_command_at(self.command(args), proxy, hold).await;
    }

    /// Starts `command`, waits until `proxy` froze it at `hold`, SIGKILLs it.
    pub async fn kill_command_at(mut command: tokio::process::Command, proxy: &Proxy, hold: Hold) {
        proxy.hold(hold);
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
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

    /// After a SIGKILL: `status` shows the killed mutation journaled as an intent.
    pub async fn assert_killed_mutation_journaled(&self) {
        let states = string_fields(&self.status().await["mutations"], "state");
        assert!(
            states.iter().any(|state| state == "intent"),
            "the killed mutation is journaled as an intent: {states:?}"
        );
    }

    /// `reserve`, `dns seed` and `status`, logging at `trace` (where the SDKs print their
    /// whole configuration and every identity they sign with): neither their output nor the
    /// journal contain `secrets`.
    pub async fn assert_reserve_never_leaks(&self, secrets: &[(&str, &str)]) {
        let mut outputs = Vec::new();
        for args in [&["reserve"][..], &["dns", "seed"], &["status"]] {
            outputs.push(self.run_at_trace(args).await);
        }
        assert!(
            String::from_utf8_lossy(&outputs[0].stderr).contains("TRACE"),
            "the canary ran at trace level"
        );
        self.assert_never_leaked(&outputs.iter().collect::<Vec<_>>(), secrets);
    }

    /// Neither the journal nor `outputs` (stdout and stderr) contain any of `secrets`, given
    /// as (text, what it is).
    pub fn assert_never_leaked(&self, outputs: &[&Output], secrets: &[(&str, &str)]) {
        let journal = std::fs::read_to_string(self.state.join("journal.json")).unwrap();
        let texts = outputs
            .iter()
            .flat_map(|out| [&out.stdout, &out.stderr])
            .map(|bytes| String::from_utf8_lossy(bytes).to_string())
            .chain([journal]);
        for text in texts {
            for (secret, what) in secrets {
                let line = text.lines().find(|l| l.contains(secret));
                assert!(line.is_none(), "{what} leaked: {}", line.unwrap_or(""));
            }
        }
    }
}

impl Agent {
    /// Starts the local API server knowing `cloud` and points `run` at it (60 s gate).
    pub async fn local_api(
        &mut self,
        cloud: bootstrap_sim::kube::CloudOptions,
    ) -> bootstrap_sim::kube::KubeSim {
        self.local_api_with_gate(cloud, "60s").await
    }

    /// [`Agent::local_api`] with `run`'s gate timeout `gate_timeout`.
    pub async fn local_api_with_gate(
        &mut self,
        cloud: bootstrap_sim::kube::CloudOptions,
        gate_timeout: &str,
    ) -> bootstrap_sim::kube::KubeSim {
        let kube = bootstrap_sim::kube::KubeSim::start(bootstrap_sim::kube::KubeSimOptions {
            cloud,
            ..Default::default()
        })
        .await
        .unwrap();
        self.run_flags(kube.kubeconfig_path(), gate_timeout);
        kube
    }

    /// `run` with the embedded Service templates of `cloud` edited by `edit` (file name,
    /// text): it must stop at the gate (exit 4). Its stderr.
    pub async fn run_into_the_gate_with_templates(
        &mut self,
        cloud: &str,
        edit: impl Fn(&str, String) -> String,
    ) -> String {
        let templates = self.templates_with(cloud, edit);
        self.extra.extend(templates);
        self.run_exits(&["run"], 4).await.1
    }
}

/// Every line's name in a `preflight --output json` report, comma separated (a
/// `--skip-preflight` value).
pub fn preflight_line_names(report: &serde_json::Value) -> String {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join(",")
}

/// The line `name` of a `preflight --output json` report.
pub fn preflight_line<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

/// The files of a `gather` bundle, by name under `bootstrap-agent-gather/`.
pub fn unpack_bundle(bundle: &Path) -> std::collections::BTreeMap<String, String> {
    use std::io::Read;
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(bundle).unwrap());
    let mut archive = tar::Archive::new(gz);
    let mut files = std::collections::BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().to_string();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        let name = path
            .trim_start_matches("bootstrap-agent-gather/")
            .to_string();
        files.insert(name, text);
    }
    files
}
