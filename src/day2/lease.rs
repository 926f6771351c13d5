//! One day-2 change at a time per cluster: a coordination.k8s.io Lease
//! kube-system/bootstrap-agent-publish held while the change runs. The local state dir's lock
//! keeps out a second agent on the same machine; the Lease, one on another admin's machine.
//!
//! The holder is `user@host <state dir>`, so the same admin resuming the same journal after a
//! crash takes it back at once; anyone else waits until it expires (`LEASE_SECONDS` after the
//! holder's last renewal). Taken and renewed with the resourceVersion it was read at, so two
//! agents racing for it cannot both win. Released when the change ends by clearing its holder
//! (as client-go's leader election releases one), so it is made once and then only updated.

use anyhow::Result;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff;
use kube::api::{ObjectMeta, PostParams};
use std::time::Duration;

pub const NAME: &str = "bootstrap-agent-publish";
const NAMESPACE: &str = "kube-system";
/// How long a holder that stopped renewing keeps it.
pub const LEASE_SECONDS: i32 = 60;
const RENEW_EVERY: Duration = Duration::from_secs(20);

/// Another agent holds the Lease (exit 3, as a locked state dir).
#[derive(Debug, thiserror::Error)]
#[error(
    "another day-2 change of this cluster is under way: Lease {NAMESPACE}/{NAME} is held by {holder} (renewed {renewed}, expires {LEASE_SECONDS}s after); wait for it to finish"
)]
pub struct LeaseHeld {
    pub holder: String,
    pub renewed: String,
}

/// The Lease, held: renewed in the background until [`Held::release`] (or the process ends).
pub struct Held {
    api: kube::Api<Lease>,
    holder: String,
    renewing: tokio::task::JoinHandle<()>,
}

/// Who holds it: the admin, the machine and the journal.
pub fn holder_identity(state_dir: &std::path::Path) -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into());
    format!("{user}@{host} {}", state_dir.display())
}

fn now() -> MicroTime {
    MicroTime(jiff::Timestamp::now())
}

/// PURE: whether a Lease renewed at `renewed` for `seconds` has expired at `at`.
pub fn expired(renewed: Option<&MicroTime>, seconds: Option<i32>, at: jiff::Timestamp) -> bool {
    let Some(renewed) = renewed else {
        return true;
    };
    let ttl = jiff::SignedDuration::from_secs(i64::from(seconds.unwrap_or(LEASE_SECONDS)));
    renewed.0.checked_add(ttl).is_ok_and(|until| until <= at)
}

/// Takes the Lease for `holder`, or says who holds it.
pub async fn acquire(client: &kube::Client, holder: &str) -> Result<Held> {
    let api: kube::Api<Lease> = kube::Api::namespaced(client.clone(), NAMESPACE);
    let wanted = |resource_version: Option<String>, acquired: Option<MicroTime>| Lease {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
            namespace: Some(NAMESPACE.into()),
            resource_version,
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.to_string()),
            lease_duration_seconds: Some(LEASE_SECONDS),
            acquire_time: acquired.or_else(|| Some(now())),
            renew_time: Some(now()),
            ..Default::default()
        }),
    };
    let object = format!("Lease {NAMESPACE}/{NAME}");
    match api
        .get_opt(NAME)
        .await
        .map_err(|e| super::refused(e, &object))?
    {
        None => {
            api.create(&PostParams::default(), &wanted(None, None))
                .await
                .map_err(lost_race)?;
        }
        Some(live) => {
            let spec = live.spec.clone().unwrap_or_default();
            let theirs = spec
                .holder_identity
                .clone()
                .filter(|h| !h.is_empty() && h != holder);
            if let Some(other) = theirs
                && !expired(
                    spec.renew_time.as_ref(),
                    spec.lease_duration_seconds,
                    jiff::Timestamp::now(),
                )
            {
                return Err(LeaseHeld {
                    holder: other,
                    renewed: spec.renew_time.map_or("never".into(), |t| t.0.to_string()),
                }
                .into());
            }
            let ours = spec.holder_identity.as_deref() == Some(holder);
            let acquired = ours.then_some(spec.acquire_time).flatten();
            api.replace(
                NAME,
                &PostParams::default(),
                &wanted(live.metadata.resource_version, acquired),
            )
            .await
            .map_err(lost_race)?;
        }
    }
    let renewing = tokio::spawn(renew(api.clone(), holder.to_string()));
    Ok(Held {
        api,
        holder: holder.to_string(),
        renewing,
    })
}

/// A create or replace that lost to another agent (409) is that agent's Lease.
fn lost_race(e: kube::Error) -> anyhow::Error {
    match e {
        kube::Error::Api(s) if s.code == 409 => LeaseHeld {
            holder: "another agent (it took it a moment ago)".into(),
            renewed: "now".into(),
        }
        .into(),
        other => super::refused(other, &format!("Lease {NAMESPACE}/{NAME}")),
    }
}

/// Renews the Lease while it is ours; stops when it is not (logged: the change goes on under
/// the journal's lock, but another admin may start).
async fn renew(api: kube::Api<Lease>, holder: String) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let renewed = async {
            let mut live = api.get(NAME).await?;
            let spec = live.spec.get_or_insert_with(Default::default);
            if spec.holder_identity.as_deref() != Some(holder.as_str()) {
                anyhow::bail!("it is held by {:?} now", spec.holder_identity);
            }
            spec.renew_time = Some(now());
            api.replace(NAME, &PostParams::default(), &live).await?;
            Ok(())
        }
        .await;
        if let Err(e) = renewed {
            tracing::warn!(error = %crate::error::render_chain(&e), "cannot renew Lease {NAMESPACE}/{NAME}");
            return;
        }
    }
}

impl Held {
    /// Stops renewing and releases the Lease (its holder cleared), if it is still ours.
    pub async fn release(self) -> Result<()> {
        self.renewing.abort();
        let object = format!("Lease {NAMESPACE}/{NAME}");
        let Some(mut live) = self
            .api
            .get_opt(NAME)
            .await
            .map_err(|e| super::refused(e, &object))?
        else {
            return Ok(());
        };
        let spec = live.spec.get_or_insert_with(Default::default);
        if spec.holder_identity.as_deref() != Some(self.holder.as_str()) {
            // Another agent took it after ours expired: theirs to release.
            return Ok(());
        }
        spec.holder_identity = None;
        spec.acquire_time = None;
        spec.renew_time = None;
        match self.api.replace(NAME, &PostParams::default(), &live).await {
            Ok(_) => Ok(()),
            // Taken by another agent between the read and the write: theirs now.
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(super::refused(e, &object)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_expires_its_duration_after_the_last_renewal() {
        let at: jiff::Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let renewed = MicroTime("2026-01-01T00:00:30Z".parse().unwrap());
        assert!(!expired(Some(&renewed), Some(60), at));
        assert!(expired(Some(&renewed), Some(30), at));
        assert!(expired(None, Some(60), at), "never renewed");
    }
}
