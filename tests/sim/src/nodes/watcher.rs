//! OpenShift's `apiserver-watcher`, a static pod on every GCP and Azure master
//! (openshift/machine-config-operator `cmd/apiserver-watcher/run.go`, manifest
//! `templates/master/00-master/{gcp,azure}/files/etc-kubernetes-manifests-apiserver-watcher.yaml`).
//!
//! - `newHandler`: the VIP is the api-int host looked up ONCE, when the process starts
//!   (`net.LookupHost`, then `filterAddrList` by family). Anything but exactly one address of
//!   its family aborts the process: "hostname %s has %d addresses, expected 1 - aborting". The
//!   pod's `restartPolicy: Always` makes the kubelet start it again with its crash-loop
//!   back-off (10 s, doubling, at most 300 s), and only a start that finds one address runs.
//! - `healthTracker.OnComplete`: the local `/readyz` every 2 s; 1 success writes
//!   `/run/cloud-routes/<vip>.up` and removes `.down` (`onSuccess`); 8 failures in a row write
//!   `.down` and remove `.up` (`onFailure`). Each runs only on a change of state.

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

/// One apiserver-watcher process, or its crash loop.
#[derive(Clone, Debug)]
pub struct Watcher {
    /// The VIP it watches for: None while it crash-loops.
    vip: Option<IpAddr>,
    state: Tracker,
    failed: u32,
    succeeded: u32,
    /// While crash-looping: when the kubelet starts it again, and the back-off after that.
    next_start: Duration,
    backoff: Duration,
    /// The last abort's message.
    pub last_error: Option<String>,
}

/// `newHandler`'s lookup: the one address of the family, or the abort message.
pub fn lookup_vip(host: &str, answer: &[IpAddr], ipv6: bool) -> Result<IpAddr, String> {
    let of_family: Vec<IpAddr> = answer
        .iter()
        .copied()
        .filter(|ip| ip.is_ipv6() == ipv6)
        .collect();
    match of_family.as_slice() {
        [one] => Ok(*one),
        other => Err(format!(
            "hostname {host} has {} addresses, expected 1 - aborting",
            other.len()
        )),
    }
}

impl Watcher {
    /// The static pod's first start, at `now` (the master's boot).
    pub fn new(now: Duration) -> Watcher {
        Watcher {
            vip: None,
            state: Tracker::Unknown,
            failed: 0,
            succeeded: 0,
            next_start: now,
            backoff: FIRST_BACKOFF,
            last_error: None,
        }
    }

    pub fn vip(&self) -> Option<IpAddr> {
        self.vip
    }

    /// The kubelet's side: starts the process when it is due; `answer` is api-int as the
    /// master's resolver gives it now. Returns whether a start happened.
    pub fn maybe_start(&mut self, now: Duration, host: &str, answer: &[IpAddr]) -> bool {
        if self.vip.is_some() || now < self.next_start {
            return false;
        }
        match lookup_vip(host, answer, false) {
            Ok(vip) => {
                self.vip = Some(vip);
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

    /// One health check of the local `/readyz` (`healthTracker.OnComplete`): updates the
    /// flag files on a change of state.
    pub fn on_check(&mut self, ready: bool, run: &mut RunDir) {
        let Some(vip) = self.vip else {
            return;
        };
        if ready {
            self.failed = 0;
            self.succeeded += 1;
            if self.succeeded >= SUCCESS_THRESHOLD {
                if self.state != Tracker::Succeeded {
                    run.down.remove(&vip);
                    run.up.insert(vip);
                }
                self.state = Tracker::Succeeded;
            }
        } else {
            self.succeeded = 0;
            self.failed += 1;
            if self.failed >= FAILURE_THRESHOLD {
                if self.state != Tracker::Failed {
                    run.down.insert(vip);
                    run.up.remove(&vip);
                }
                self.state = Tracker::Failed;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_vip_is_the_one_address_of_its_family_or_the_watcher_aborts() {
        assert_eq!(
            lookup_vip("api-int.c", &[ip("10.0.1.10"), ip("fd00::10")], false),
            Ok(ip("10.0.1.10"))
        );
        assert_eq!(
            lookup_vip("api-int.c", &[ip("10.0.1.10"), ip("10.0.2.5")], false),
            Err("hostname api-int.c has 2 addresses, expected 1 - aborting".into())
        );
        assert!(lookup_vip("api-int.c", &[], false).is_err());
    }

    #[test]
    fn a_crash_loop_starts_again_with_the_kubelets_backoff_and_keeps_the_first_good_answer() {
        let two = [ip("10.0.1.10"), ip("10.0.2.5")];
        let mut w = Watcher::new(Duration::ZERO);
        assert!(w.maybe_start(Duration::ZERO, "api-int", &two));
        assert_eq!(w.vip(), None);
        assert!(!w.maybe_start(Duration::from_secs(9), "api-int", &two));
        assert!(w.maybe_start(Duration::from_secs(10), "api-int", &two));
        // Second back-off: 20 s.
        assert!(!w.maybe_start(Duration::from_secs(29), "api-int", &[ip("10.0.2.5")]));
        assert!(w.maybe_start(Duration::from_secs(30), "api-int", &[ip("10.0.2.5")]));
        assert_eq!(w.vip(), Some(ip("10.0.2.5")));
        // Once running it never looks again.
        assert!(!w.maybe_start(Duration::from_secs(99), "api-int", &two));
        assert_eq!(w.vip(), Some(ip("10.0.2.5")));
    }

    #[test]
    fn one_success_writes_up_and_eight_failures_write_down() {
        let mut w = Watcher::new(Duration::ZERO);
        w.maybe_start(Duration::ZERO, "api-int", &[ip("10.0.2.5")]);
        let mut run = RunDir::default();
        w.on_check(false, &mut run);
        assert_eq!(run, RunDir::default(), "unknown state: nothing written");
        w.on_check(true, &mut run);
        assert!(run.up.contains(&ip("10.0.2.5")) && run.down.is_empty());
        for _ in 0..7 {
            w.on_check(false, &mut run);
        }
        assert!(run.down.is_empty(), "7 failures are not enough");
        w.on_check(false, &mut run);
        assert!(run.down.contains(&ip("10.0.2.5")) && run.up.is_empty());
        w.on_check(true, &mut run);
        assert!(run.up.contains(&ip("10.0.2.5")) && run.down.is_empty());
    }
}
