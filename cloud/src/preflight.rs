//! Preflight: what each cloud can tell before anything is created, as checklist lines. The
//! per-cloud probes (`aws::preflight`, `gcp::preflight`, `azure::preflight`) only read, or ask
//! with a dry run; the agent's `preflight` module adds the checks every cloud shares and prints
//! them.

use crate::{CloudError, ErrorKind, Scope, Zone};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    /// Could not be decided (no dry run, a transient error) or looks risky: `run` goes on.
    Warn,
    /// Cannot work: `run` refuses to change anything.
    Fail,
    /// Named in `--skip-preflight`: not held against the run (the reason keeps the outcome).
    Skipped,
}

/// One line of the checklist: the reason always, the fix when there is something to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Stable kebab-case name (what `--skip-preflight` takes).
    pub name: String,
    pub verdict: Verdict,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn pass(name: &str, reason: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            verdict: Verdict::Pass,
            reason: reason.into(),
            fix: None,
        }
    }

    pub fn warn(name: &str, reason: impl Into<String>, fix: Option<String>) -> Self {
        Self {
            name: name.into(),
            verdict: Verdict::Warn,
            reason: reason.into(),
            fix,
        }
    }

    pub fn fail(name: &str, reason: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            verdict: Verdict::Fail,
            reason: reason.into(),
            fix: Some(fix.into()),
        }
    }

    /// No way to ask without doing it: said plainly, never a pass.
    pub fn not_checked(name: &str, why: impl Into<String>) -> Self {
        Self::warn(name, format!("not checked: {}", why.into()), None)
    }

    /// A call that could not be answered: a transient error only warns (the run's own retries
    /// may get through); a definite refusal fails with `fix`.
    pub fn from_error(name: &str, err: &CloudError, fix: impl Into<String>) -> Self {
        if err.is_transient() {
            Self::warn(
                name,
                format!("could not check: {err}"),
                Some("check the cloud endpoint and network; `run` retries".into()),
            )
        } else {
            Self::fail(name, err.to_string(), fix)
        }
    }
}

/// One quota of a region: its limit and use as the cloud reports them, and what is needed.
pub struct Quota {
    pub label: String,
    pub limit: f64,
    pub used: f64,
    pub needed: u32,
}

/// PURE: a region's quotas against what is still to create: pass when every one leaves room,
/// else fail naming the short ones; `fix` gets their labels (joined by "and").
pub fn quota_check(
    name: &str,
    region: &str,
    quotas: &[Quota],
    fix: impl Fn(&str) -> String,
) -> Check {
    let mut lines = Vec::new();
    let mut short = Vec::new();
    for q in quotas {
        let free = (q.limit - q.used).max(0.0).floor();
        lines.push(format!(
            "{} limit {}, used {}, free {free}, needed {}",
            q.label, q.limit, q.used, q.needed
        ));
        if free < f64::from(q.needed) {
            short.push(q.label.as_str());
        }
    }
    let reason = format!("{region}: {}", lines.join("; "));
    if short.is_empty() {
        Check::pass(name, reason)
    } else {
        Check::fail(name, reason, fix(&short.join(" and ")))
    }
}

/// Whether an error is the cloud's "you may not" (as opposed to "no such thing" or "try later").
pub fn is_denied(err: &CloudError) -> bool {
    err.kind == ErrorKind::Fatal
        && [
            "UnauthorizedOperation",
            "AccessDenied",
            "AuthFailure",
            "Forbidden",
            "PERMISSION_DENIED",
            "AuthorizationFailed",
        ]
        .iter()
        .any(|code| err.message.contains(code))
}

/// Every line AWS's preflight may show (some only when they apply, e.g. `public-ipv4-pool`):
/// `--skip-preflight` names are checked against these before anything runs.
pub const AWS_CHECKS: &[&str] = &[
    "credentials",
    "permission-ec2-allocate-address",
    "permission-ec2-create-network-interface",
    "permission-ec2-release",
    "permission-route53-change-record-sets",
    "quota-elastic-ips",
    "public-ipv4-pool",
    "subnets",
    "private-zone-vpc",
    "control-plane-security-groups",
];
/// The lines every cloud's checklist has after its own (the agent's, from the assets and the
/// journal: `dns-zones` resolves the zones through the cloud's DNS API).
pub const SHARED_CHECKS: &[&str] = &["dns-zones", "reservations", "bootstrap-ip"];
/// Every line GCP's preflight shows.
pub const GCP_CHECKS: &[&str] = &[
    "credentials",
    "permissions",
    "quota-addresses",
    "subnets",
    "instance-groups",
    "private-zone-network",
];
/// Every line Azure's preflight shows.
pub const AZURE_CHECKS: &[&str] = &[
    "credentials",
    "permissions",
    "quota-public-ips",
    "subnets",
    "private-zone-vnet",
];

/// What the agent is about to create, so a cloud can say whether there is room for it.
#[derive(Debug, Clone, Default)]
pub struct Needs {
    /// Public addresses not reserved yet.
    pub public_addresses: u32,
    /// Private addresses not reserved yet, per placement (AWS subnet id; "" where the cloud
    /// takes no placement).
    pub private_addresses: BTreeMap<String, u32>,
    /// Every subnet the reservations go into (AWS subnet ids; GCP/Azure take theirs from the
    /// provider settings).
    pub subnets: Vec<String>,
    /// The scope of every address the plan holds, reserved already or not: the agent may
    /// create, relabel and delete each kind (a cloud asks the permissions for those).
    pub address_scopes: BTreeSet<Scope>,
    /// Every zone the agent writes, as found (empty: DNS is the user's, or none was found).
    pub zones: Vec<Zone>,
    /// The reservations still to make (key and name), in plan order: a cloud that tags on
    /// create asks its dry runs with the very tags the first real call of each scope sends.
    pub to_reserve: Vec<(crate::ReservationKey, String)>,
}

impl Needs {
    /// The private zone the agent writes, as found (None: DNS is the user's, or not found).
    pub fn private_zone(&self) -> Option<&Zone> {
        self.zones.iter().find(|z| z.reference.private)
    }
}

/// The cloud-specific part of preflight.
#[async_trait]
pub trait Preflight: Send + Sync {
    /// The checks this cloud can make for `needs`, in checklist order.
    async fn checks(&self, needs: &Needs) -> Vec<Check>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_with_exactly_the_room_needed_passes_and_one_short_fails_naming_it() {
        let quota = |label: &str, used: f64, needed: u32| Quota {
            label: label.into(),
            limit: 5.0,
            used,
            needed,
        };
        let fix = |short: &str| format!("raise {short}");
        let exact = quota_check("q", "r1", &[quota("A", 2.0, 3)], fix);
        assert_eq!(exact.verdict, Verdict::Pass, "{exact:?}");
        assert_eq!(exact.reason, "r1: A limit 5, used 2, free 3, needed 3");
        let short = quota_check("q", "r1", &[quota("A", 2.0, 3), quota("B", 4.5, 1)], fix);
        assert_eq!(short.verdict, Verdict::Fail, "{short:?}");
        assert_eq!(short.fix.as_deref(), Some("raise B"));
        let over = quota_check("q", "r1", &[quota("A", 9.0, 1)], fix);
        assert!(over.reason.contains("free 0"), "{over:?}");
    }

    #[test]
    fn a_transient_error_warns_and_a_refusal_fails() {
        let transient = CloudError::new(ErrorKind::Transient, "X", "503");
        assert_eq!(
            Check::from_error("c", &transient, "fix").verdict,
            Verdict::Warn
        );
        let denied = CloudError::fatal("X", "UnauthorizedOperation: no");
        assert!(is_denied(&denied));
        let check = Check::from_error("c", &denied, "grant it");
        assert_eq!(check.verdict, Verdict::Fail);
        assert_eq!(check.fix.as_deref(), Some("grant it"));
        assert!(!is_denied(&CloudError::fatal(
            "X",
            "InvalidSubnetID.NotFound"
        )));
    }
}
