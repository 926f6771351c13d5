//! OpenShift's `apiserver-watcher`, a static pod on every GCP and Azure master, as it is since
//! OpenShift 4.8 (read at openshift/machine-config-operator 7ff337a4, 2026-08-20;
//! `cmd/apiserver-watcher/run.go`, manifest
//! `templates/master/00-master/{gcp,azure}/files/etc-kubernetes-manifests-apiserver-watcher.yaml`).
//!
//! - `newHandler` (run.go:138-152): the host of `--health-check-url` is looked up ONCE per
//!   start (`net.LookupHost`) and EVERY address it gets is a VIP, of either family. It fails
//!   only on a lookup error or zero addresses ("hostname %s has no addresses, expected at
//!   least 1 - aborting", :144). The `--vip` flag and the one-address check of 4.7 are gone
//!   (6fcd8762a, 2021-03, "apiserver-watcher support for dual-stack").
//! - It never exits once started (run.go:128-135 only returns on a failed file write), so the
//!   VIPs stay those of its start until the process is restarted; the pod's
//!   `restartPolicy: Always` restarts it after a failed start with the kubelet's crash-loop
//!   back-off (10 s doubling to 300 s).
//! - `healthTracker.OnComplete` (run.go:239-268, thresholds :97-98, interval :107): the local
//!   `/readyz` every 2 s; 1 success writes `/run/cloud-routes/<vip>.up` and removes `.down`
//!   for ALL its VIPs together (`onSuccess` :169-180); 8 failures in a row write `.down` and
//!   remove `.up` for all of them (`onFailure` :155-166). Each runs only on a change of state.
//! - Only SIGINT writes `.down` before exiting (:116-126); the kubelet stops a container with
//!   SIGTERM, so a restarted watcher leaves the files of its old VIPs where they were.
//! - With an IP literal as the URL's host, `LookupHost` returns it unchanged (Go
//!   `net/lookup.go`): [`HealthCheckHost::Literal`].

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

/// The health check's interval (`Interval: time.Duration(2) * time.Second`).
pub const CHECK_INTERVAL: Duration = Duration::from_secs(2);
/// `FailureThreshold: 8 // LB = 6 seconds, plus 10 seconds for propagation`.
pub const FAILURE_THRESHOLD: u32 = 8;
/// `SuccessThreshold: 1`.
pub const SUCCESS_THRESHOLD: u32 = 1;
/// The kubelet's crash-loop back-off of a container that exits: 10 s, doubled each time, at
/// most 300 s (kubernetes `pkg/kubelet/kubelet.go`, `backOffPeriod` and `MaxContainerBackOff`).
pub const FIRST_BACKOFF: Duration = Duration::from_secs(10);
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// `/run/cloud-routes/`: the flag files the watcher writes and the route scripts read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunDir {
    pub up: BTreeSet<IpAddr>,
    pub down: BTreeSet<IpAddr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tracker {
    Unknown,
    Failed,
    Succeeded,
}

/// One apiserver-watcher process, or the kubelet's attempts to start one.
#[derive(Clone, Debug)]
pub struct Watcher {
    /// The VIPs it watches for: empty until a start succeeded.
    vips: Vec<IpAddr>,
    state: Tracker,
    failed: u32,
    succeeded: u32,
    /// Until a start succeeds: when the kubelet starts it again, and the back-off after that.
    next_start: Duration,
    backoff: Duration,
    /// The last failed start's message.
    pub last_error: Option<String>,
}

/// `newHandler`'s lookup: every address of the answer, or the abort message when it is empty.
pub fn lookup_vips(host: &str, answer: &[IpAddr]) -> Result<Vec<IpAddr>, String> {
    match answer {
        [] => Err(format!(
            "hostname {host} has no addresses, expected at least 1 - aborting"
        )),
        all => Ok(all.to_vec()),
    }
}

impl Watcher {
    /// The static pod's first start, at `now` (the master's boot).
    pub fn new(now: Duration) -> Watcher {
        Watcher {
            vips: Vec::new(),
            state: Tracker::Unknown,
            failed: 0,
            succeeded: 0,
            next_start: now,
            backoff: FIRST_BACKOFF,
            last_error: None,
        }
    }

    pub fn vips(&self) -> &[IpAddr] {
        &self.vips
    }

    /// The kubelet's side: starts the process when it is due; `answer` is the health-check
    /// host as the master's resolver gives it now. Returns whether a start happened.
    pub fn maybe_start(&mut self, now: Duration, host: &str, answer: &[IpAddr]) -> bool {
        if !self.vips.is_empty() || now < self.next_start {
            return false;
        }
        match lookup_vips(host, answer) {
            Ok(vips) => {
                self.vips = vips;
                self.last_error = None;
            }
            Err(e) => {
                self.last_error = Some(e);
                self.next_start = now + self.backoff;
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
            }
        }
        true
    }

    /// The container stopped (SIGTERM: no `.down` written) and started again at `now`: a new
    /// process that looks the host up afresh; the files of its old VIPs stay.
    pub fn restart(&mut self, now: Duration) {
        *self = Watcher::new(now);
    }

    /// One health check of the local `/readyz` (`healthTracker.OnComplete`): updates the
    /// flag files of every VIP on a change of state.
    pub fn on_check(&mut self, ready: bool, run: &mut RunDir) {
        if self.vips.is_empty() {
            return;
        }
        if ready {
            self.failed = 0;
            self.succeeded += 1;
            if self.succeeded >= SUCCESS_THRESHOLD {
                if self.state != Tracker::Succeeded {
                    for vip in &self.vips {
                        run.down.remove(vip);
                        run.up.insert(*vip);
                    }
                }
                self.state = Tracker::Succeeded;
            }
        } else {
            self.succeeded = 0;
            self.failed += 1;
            if self.failed >= FAILURE_THRESHOLD {
                if self.state != Tracker::Failed {
                    for vip in &self.vips {
                        run.down.insert(*vip);
                        run.up.remove(vip);
                    }
                }
                self.state = Tracker::Failed;
            }
        }
    }
}

/// What the manifest's `--health-check-url` names: the Infrastructure's
/// `apiServerInternalURL` (api-int, the default), or an IP literal (a MachineConfig overriding
/// the static pod, which pins its image).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthCheckHost {
    ApiInt,
    Literal(IpAddr),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// 4.7 aborted on two addresses ("hostname %s has %d addresses, expected 1"); since 4.8
    /// every address is a VIP, of both families.
    #[test]
    fn every_address_of_the_answer_is_a_vip_and_only_an_empty_answer_fails() {
        assert_eq!(
            lookup_vips("api-int.c", &[ip("10.0.1.10"), ip("10.0.2.5")]),
            Ok(vec![ip("10.0.1.10"), ip("10.0.2.5")])
        );
        assert_eq!(
            lookup_vips("api-int.c", &[ip("10.0.1.10"), ip("fd00::10")]),
            Ok(vec![ip("10.0.1.10"), ip("fd00::10")])
        );
        assert_eq!(
            lookup_vips("api-int.c", &[]),
            Err("hostname api-int.c has no addresses, expected at least 1 - aborting".into())
        );
    }

    #[test]
    fn two_addresses_at_boot_start_the_watcher_at_once_and_it_never_looks_again() {
        let two = [ip("10.0.1.10"), ip("10.0.1.11")];
        let mut w = Watcher::new(Duration::ZERO);
        assert!(w.maybe_start(Duration::ZERO, "api-int", &two));
        assert_eq!(w.vips(), two);
        assert!(!w.maybe_start(Duration::from_secs(99), "api-int", &[ip("10.0.2.5")]));
        assert_eq!(w.vips(), two, "the VIP that replaced them is never learnt");
    }

    #[test]
    fn an_empty_answer_is_retried_with_the_kubelets_backoff() {
        let mut w = Watcher::new(Duration::ZERO);
        assert!(w.maybe_start(Duration::ZERO, "api-int", &[]));
        assert!(w.vips().is_empty());
        assert!(!w.maybe_start(Duration::from_secs(9), "api-int", &[ip("10.0.2.5")]));
        assert!(w.maybe_start(Duration::from_secs(10), "api-int", &[]));
        // Second back-off: 20 s.
        assert!(!w.maybe_start(Duration::from_secs(29), "api-int", &[ip("10.0.2.5")]));
        assert!(w.maybe_start(Duration::from_secs(30), "api-int", &[ip("10.0.2.5")]));
        assert_eq!(w.vips(), [ip("10.0.2.5")]);
    }

    #[test]
    fn one_success_writes_up_and_eight_failures_write_down_for_every_vip() {
        let (a, b) = (ip("10.0.1.10"), ip("10.0.2.5"));
        let mut w = Watcher::new(Duration::ZERO);
        w.maybe_start(Duration::ZERO, "api-int", &[a, b]);
        let mut run = RunDir::default();
        w.on_check(false, &mut run);
        assert_eq!(run, RunDir::default(), "unknown state: nothing written");
        w.on_check(true, &mut run);
        assert_eq!(run.up, [a, b].into());
        assert!(run.down.is_empty());
        for _ in 0..7 {
            w.on_check(false, &mut run);
        }
        assert!(run.down.is_empty(), "7 failures are not enough");
        w.on_check(false, &mut run);
        assert_eq!(run.down, [a, b].into());
        assert!(run.up.is_empty());
        w.on_check(true, &mut run);
        assert_eq!(run.up, [a, b].into());
        assert!(run.down.is_empty());
    }

    /// Restarting the container (SIGTERM) makes it learn the answer of now, but the `.up`
    /// files of its old VIPs stay: nothing removes them until the node reboots (/run).
    #[test]
    fn a_restarted_watcher_learns_the_new_answer_and_leaves_the_old_files() {
        let (boot, vip) = (ip("10.0.1.10"), ip("10.0.2.5"));
        let mut w = Watcher::new(Duration::ZERO);
        w.maybe_start(Duration::ZERO, "api-int", &[boot]);
        let mut run = RunDir::default();
        w.on_check(true, &mut run);
        w.restart(Duration::from_secs(60));
        assert!(w.maybe_start(Duration::from_secs(60), "api-int", &[vip]));
        assert_eq!(w.vips(), [vip]);
        w.on_check(true, &mut run);
        assert_eq!(run.up, [boot, vip].into());
        for _ in 0..8 {
            w.on_check(false, &mut run);
        }
        assert_eq!(run.up, [boot].into(), "the old VIP is still up");
        assert_eq!(run.down, [vip].into());
    }
}
