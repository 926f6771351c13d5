//! What the operating tests of every cloud share (`operating*.rs`): a cloud's harness with a
//! local API server ([`PreflightWorld`]), and reading the lines of a `preflight --output json`
//! report.

use super::agent::{preflight_line, preflight_line_names};
use super::cloud::{Cloud, Harness};
use bootstrap_sim::kube::{CloudOptions, KubeSim, KubeSimOptions};
use serde_json::Value;

/// The lines of every cloud's checklist, after the cloud's own.
pub const EVERY_CLOUD: [&str; 3] = ["dns-zones", "reservations", "bootstrap-ip"];
/// The cluster's lines, when preflight is given the kubeconfig.
pub const CLUSTER: [&str; 3] = [
    "kube-api",
    "kube-services-apply",
    "kube-clusterversion-write",
];

/// A cloud's peers and agent, whose `run` flags point at a local API server.
pub struct PreflightWorld<P> {
    pub h: Harness<P>,
    pub kube: KubeSim,
    /// The cloud's own lines (before [`EVERY_CLOUD`]), which pass on a good world.
    pub lines: &'static [&'static str],
    /// Whether preflight is given the kubeconfig (and so checks the cluster too).
    pub with_kubeconfig: bool,
    /// Texts no preflight may print (the stderr) or report: the fixture's secrets
    /// ([`Cloud::FIXTURE_SECRETS`]) and any a test adds.
    pub never_shown: Vec<String>,
}

impl<P: Cloud> PreflightWorld<P> {
    /// `h` with a local API server that sees the cloud's load balancers as `cloud` says; the
    /// cloud's own preflight lines are `lines`.
    pub async fn new(h: Harness<P>, cloud: CloudOptions, lines: &'static [&'static str]) -> Self {
        let options = KubeSimOptions {
            cloud,
            ..Default::default()
        };
        Self::with_options(h, options, lines).await
    }

    /// [`PreflightWorld::new`] with a local API server started with `options` (`run` waits
    /// for its gate 60 s).
    pub async fn with_options(
        mut h: Harness<P>,
        options: KubeSimOptions,
        lines: &'static [&'static str],
    ) -> Self {
        let kube = KubeSim::start(options).await.unwrap();
        h.run_flags(kube.kubeconfig_path(), "60s");
        Self {
            h,
            kube,
            lines,
            with_kubeconfig: false,
            never_shown: P::FIXTURE_SECRETS
                .iter()
                .map(|(secret, _)| secret.to_string())
                .collect(),
        }
    }

    /// `preflight --output json`: (exit code, report).
    pub async fn preflight(&mut self) -> (Option<i32>, Value) {
        self.preflight_with(&[]).await
    }

    /// `preflight --output json` exits `code`: the report.
    pub async fn preflight_exits(&mut self, code: i32) -> Value {
        let (exit, report) = self.preflight().await;
        assert_eq!(exit, Some(code), "{report:#}");
        report
    }

    /// [`PreflightWorld::preflight`] with `flags`; no secret of [`PreflightWorld::never_shown`]
    /// in its stderr or report.
    pub async fn preflight_with(&mut self, flags: &[&str]) -> (Option<i32>, Value) {
        let kubeconfig = self.kube.kubeconfig_path().display().to_string();
        let mut flags = flags.to_vec();
        if self.with_kubeconfig {
            flags.extend(["--kubeconfig", &kubeconfig]);
        }
        let (code, report, stderr) = self.h.preflight_json(&flags).await;
        assert!(!self.never_shown.is_empty(), "no secret to look for");
        for secret in &self.never_shown {
            assert!(!stderr.contains(secret.as_str()), "secret in {stderr}");
            assert!(
                !report.to_string().contains(secret.as_str()),
                "secret in {report}"
            );
        }
        (code, report)
    }

    /// Of the lines that pass on a good world (the cloud's own, every cloud's, and the
    /// cluster's when preflight checks it), exactly `failing` failed and every other passed.
    pub fn assert_only_failure(&self, report: &Value, failing: &str) {
        let cluster: &[&str] = if self.with_kubeconfig { &CLUSTER } else { &[] };
        for name in [self.lines, &EVERY_CLOUD, cluster].concat() {
            let want = if name == failing { "fail" } else { "pass" };
            assert_line(report, name, want, &[]);
        }
    }

    /// Preflight exits 2, `failing` alone failed and its reason says each of `says`: the report.
    pub async fn preflight_fails_only(&mut self, failing: &str, says: &[&str]) -> Value {
        let report = self.preflight_exits(2).await;
        self.assert_only_failure(&report, failing);
        assert_line(&report, failing, "fail", says);
        report
    }

    /// On a good world: preflight exits 0, every cloud line passes, each line of `says` saying
    /// each of its texts, with no mutating call; and every line's name is one the validation
    /// pass knows for this cloud (it refuses the others). The report.
    pub async fn assert_preflight_passes(&mut self, says: &[(&str, &[&str])]) -> Value {
        self.h.peers.reset_counts();
        let report = self.preflight_exits(0).await;
        self.assert_only_failure(&report, "");
        for (name, texts) in says {
            assert_line(&report, name, "pass", texts);
        }
        let calls = self.h.peers.mutating_calls();
        assert!(calls.is_empty(), "preflight changed something: {calls:?}");
        let names = preflight_line_names(&report);
        let (code, skipped) = self.preflight_with(&["--skip-preflight", &names]).await;
        assert_eq!(code, Some(0), "{skipped:#}");
        report
    }

    /// Preflight fails on `failing` alone (its reason saying each of `says`), and `run` stops at
    /// the checklist changing nothing: the report.
    pub async fn assert_refused_for(&mut self, failing: &str, says: &[&str]) -> Value {
        let report = self.preflight_fails_only(failing, says).await;
        self.assert_run_refused(failing).await;
        report
    }

    /// `run` stops at the checklist: exit 2, `name` failed, no mutating call, no journal.
    pub async fn assert_run_refused(&self, name: &str) {
        self.h.assert_run_refused_by_preflight(&[name]).await;
    }

    /// The agent with `args` exits `code`: its stderr.
    pub async fn stderr_of(&self, args: &[&str], code: i32) -> String {
        let out = self.h.command(args).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        stderr
    }
}

/// The `field` (`reason`, `fix`) of the line `name`.
pub fn line_text<'a>(report: &'a Value, name: &str, field: &str) -> &'a str {
    preflight_line(report, name)[field]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: no {field}: {report}"))
}

/// The reason of the line `name`.
pub fn reason<'a>(report: &'a Value, name: &str) -> &'a str {
    line_text(report, name, "reason")
}

/// The line `name` has `verdict`, and its reason says each of `says`. The line.
pub fn assert_line<'a>(report: &'a Value, name: &str, verdict: &str, says: &[&str]) -> &'a Value {
    let line = preflight_line(report, name);
    assert_eq!(line["verdict"], verdict, "{name}: {report:#}");
    for said in says {
        assert!(
            reason(report, name).contains(said),
            "{name}: {said:?}: {line}"
        );
    }
    line
}
