//! Backoff with jitter for the retries the agent makes itself: ARM calls, and compare-and-swap
//! conflicts in DNS. Jitter spreads out clients that failed together (twenty agents losing the
//! same race, or a burst of throttled calls) so they do not come back together.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A random number from the standard library's per-process random hash keys; enough for
/// jitter, and no dependency.
fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    hasher.finish()
}

/// Uniform in `[0, 1)`.
fn unit() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The delay before retry number `attempt` (1-based): exponential from `initial`, capped at
/// `max`, with "equal jitter" (uniform between half of that and all of it), so a retry never
/// comes back at once and never waits longer than the cap.
pub fn backoff(attempt: u32, initial: Duration, max: Duration) -> Duration {
    let exp = initial.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
    let ceiling = exp.min(max);
    ceiling / 2 + ceiling.mul_f64(unit() / 2.0)
}

/// What to wait when the service said how long (`Retry-After`): that, plus up to 10% (at most
/// 1 s) so the clients it throttled together do not return together; capped at `max`.
pub fn after(retry_after: Duration, max: Duration) -> Duration {
    let spread = retry_after.mul_f64(0.1).min(Duration::from_secs(1));
    (retry_after + spread.mul_f64(unit())).min(max)
}

/// `Retry-After` as ARM and most HTTP services send it: whole seconds. (The HTTP-date form
/// is not used by the clouds we call; it yields None and the caller's backoff applies.)
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let (initial, max) = (Duration::from_millis(100), Duration::from_secs(2));
        for attempt in 1..12 {
            let ceiling = (initial * 2u32.pow(attempt - 1)).min(max);
            let d = backoff(attempt, initial, max);
            assert!(d >= ceiling / 2 && d <= ceiling, "{attempt}: {d:?}");
        }
        let spread: std::collections::BTreeSet<Duration> =
            (0..50).map(|_| backoff(5, initial, max)).collect();
        assert!(spread.len() > 10, "jittered: {spread:?}");
    }

    #[test]
    fn retry_after_is_honoured_with_a_little_spread() {
        for _ in 0..20 {
            let d = after(Duration::from_secs(3), Duration::from_secs(60));
            assert!(
                d >= Duration::from_secs(3) && d <= Duration::from_millis(3300),
                "{d:?}"
            );
        }
        assert_eq!(
            after(Duration::from_secs(600), Duration::from_secs(60)),
            Duration::from_secs(60)
        );
        assert_eq!(parse_retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
