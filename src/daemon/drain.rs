//! Step 3's drain: after the bootstrap IP left DNS, wait until cached answers naming the
//! bootstrap host have expired, while it still serves the API.

use crate::journal::Journal;
use crate::notify;
use anyhow::{Context, Result};
use std::time::Duration;

/// How long the drain after removing the bootstrap IP lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainWait {
    /// The TTL our private records actually carry, read back from the zone: cached answers
    /// naming the bootstrap host expire within it.
    RecordTtl,
    Fixed(Duration),
}

impl DrainWait {
    /// `ttl` or a duration (`0s` turns the drain off).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "ttl" => Ok(DrainWait::RecordTtl),
            other => crate::options::duration(other)
                .map(DrainWait::Fixed)
                .map_err(|e| format!("{e}, or `ttl`")),
        }
    }

    /// PURE: the drain after a RemoveBootstrap that left the records as `after` shows them.
    pub fn duration(self, after: &crate::plan::Observed) -> Duration {
        match self {
            DrainWait::Fixed(d) => d,
            DrainWait::RecordTtl => Duration::from_secs(u64::from(
                after
                    .records
                    .iter()
                    .filter(|r| r.zone.private)
                    .filter_map(|r| r.current.as_ref().map(|c| c.ttl))
                    .max()
                    .unwrap_or(crate::plan::DEFAULT_TTL),
            )),
        }
    }
}

/// PURE: how much of the drain is left at `now`, given the recorded end (None: not started).
pub fn drain_left(until: Option<std::time::SystemTime>, now: std::time::SystemTime) -> Duration {
    until
        .and_then(|u| u.duration_since(now).ok())
        .unwrap_or(Duration::ZERO)
}

/// Waits one record TTL (by default) after the bootstrap IP left DNS, so resolvers' cached
/// answers that still name the bootstrap host expire while it still serves the API. The end
/// is journaled first, so a restart waits only for the rest.
pub(super) async fn drain(journal: &mut Journal, wait: Duration) -> Result<()> {
    let until = match journal.state.drain_until.as_deref() {
        Some(t) => humantime::parse_rfc3339(t)
            .with_context(|| format!("journal: drain_until is not an RFC 3339 time: {t}"))?,
        None => {
            let until = std::time::SystemTime::now() + wait;
            journal.state.drain_until = Some(humantime::format_rfc3339_seconds(until).to_string());
            journal.save()?;
            until
        }
    };
    let left = drain_left(Some(until), std::time::SystemTime::now());
    if !left.is_zero() {
        let line = format!(
            "stage 3: bootstrap IP removed from DNS; draining cached answers for {}",
            humantime::format_duration(Duration::from_secs(left.as_secs()))
        );
        tracing::info!("{line}");
        notify::status(&line);
        tokio::time::sleep(left).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn the_drain_waits_only_for_what_is_left() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        assert_eq!(drain_left(None, now), Duration::ZERO);
        assert_eq!(
            drain_left(Some(now + Duration::from_secs(45)), now),
            Duration::from_secs(45)
        );
        assert_eq!(
            drain_left(Some(now - Duration::from_secs(5)), now),
            Duration::ZERO
        );
    }

    #[test]
    fn the_drain_lasts_the_ttl_our_private_records_carry_or_the_fixed_setting() {
        use bootstrap_cloud::{RecordKey, RecordSet, RecordType, ZoneRef};
        let record = |private: bool, ttl: u32| crate::plan::ObservedRecord {
            zone: ZoneRef {
                domain: "d".into(),
                private,
                id: None,
                tags: Default::default(),
            },
            key: RecordKey {
                name: "api.d".into(),
                rtype: RecordType::A,
            },
            current: Some(RecordSet {
                ttl,
                values: Default::default(),
                version: None,
            }),
        };
        let after = crate::plan::Observed {
            records: vec![record(true, 30), record(true, 45), record(false, 300)],
            ..Default::default()
        };
        assert_eq!(
            DrainWait::RecordTtl.duration(&after),
            Duration::from_secs(45)
        );
        assert_eq!(
            DrainWait::RecordTtl.duration(&crate::plan::Observed::default()),
            Duration::from_secs(u64::from(crate::plan::DEFAULT_TTL))
        );
        assert_eq!(
            DrainWait::Fixed(Duration::ZERO).duration(&after),
            Duration::ZERO
        );
        assert_eq!(DrainWait::parse("ttl"), Ok(DrainWait::RecordTtl));
        assert_eq!(
            DrainWait::parse("5s"),
            Ok(DrainWait::Fixed(Duration::from_secs(5)))
        );
        assert!(DrainWait::parse("soon").is_err());
    }
}
