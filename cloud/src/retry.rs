//! The one per-call retry policy ([`PER_CALL`]) and the backoff with jitter it uses.
//!
//! Retries happen in three layers, each with its own job (docs/design.md "Retries"):
//! - **per call** ([`PER_CALL`]): a transient failure (throttling, 5xx, a lost connection) of
//!   one API call is retried a few times, honouring `Retry-After`, within a total budget of
//!   waiting per call. Every client takes its settings from here: the AWS SDK's
//!   `RetryConfig`, the GCP clients' gax policies, and [`CallPolicy::run`] for the ARM client
//!   and GCP's plain-REST calls.
//! - **per step** (the runner, in the root crate): a step that still fails transiently is
//!   run again from a fresh observation (not a blind repeat), under the step deadline.
//! - **compare-and-swap** (`dns.rs`): a DNS edit that lost a race to another writer re-reads
//!   and retries; conflicts only.
//!
//! Jitter spreads out clients that failed together (twenty agents losing the same race, or a
//! burst of throttled calls) so they do not come back together.

use crate::CloudError;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A random number from the standard library's per-process random hash keys; enough for
/// jitter and fresh token generations, and no dependency.
pub fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    hasher.finish()
}

/// Uniform in `[0, 1)`.
pub fn unit() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The delay before retry number `attempt` (1-based): exponential from `initial`, capped at
/// `max`, with "equal jitter" (uniform between half of that and all of it), so a retry never
/// comes back at once and never waits longer than the cap.
pub fn backoff(attempt: u32, initial: Duration, max: Duration) -> Duration {
    let exp = initial.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
    jitter(exp.min(max))
}

/// "Equal jitter": uniform between half of `ceiling` and all of it.
pub fn jitter(ceiling: Duration) -> Duration {
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

/// How one API call retries its transient failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPolicy {
    /// Attempts per call, the first included.
    pub max_attempts: u32,
    /// The backoff before the first retry; it doubles per retry up to `max_delay`.
    pub initial_delay: Duration,
    pub max_delay: Duration,
    /// The most one call waits between its attempts, in all. A `Retry-After` that does not
    /// fit in what is left ends the call with its transient error (and the `Retry-After`),
    /// which the step's retry honours under the step deadline.
    pub budget: Duration,
}

/// The per-call policy of every cloud client: 5 attempts, backoff from 200 ms to 5 s, at most
/// 30 s of waiting per call. (AWS SDK's own default starts at 1 s and may sleep 20 s in one
/// wait; ours retries quickly and leaves longer waits to the step, which re-observes first.)
pub const PER_CALL: CallPolicy = CallPolicy {
    max_attempts: 5,
    initial_delay: Duration::from_millis(200),
    max_delay: Duration::from_secs(5),
    budget: Duration::from_secs(30),
};

impl CallPolicy {
    /// The wait before attempt `attempt + 1`, after `attempt` failed (1-based) and `waited`
    /// was already spent waiting in this call; None: the call gives up. The service's
    /// `Retry-After` is honoured (with a little spread) when it fits in the budget.
    pub fn next_delay(
        &self,
        attempt: u32,
        retry_after: Option<Duration>,
        waited: Duration,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        let left = self.budget.checked_sub(waited)?;
        let delay = match retry_after {
            Some(wait) if wait > left => return None,
            Some(wait) => after(wait, left),
            None => backoff(attempt, self.initial_delay, self.max_delay).min(left),
        };
        Some(delay)
    }

    /// Runs `attempt` until it succeeds or fails for good: a failure `retries` accepts is
    /// tried again after [`Self::next_delay`] while that allows one; anything else, or the
    /// last failure, is returned as it is.
    pub async fn run<T, F, Fut>(
        &self,
        operation: &str,
        retries: impl Fn(&CloudError) -> bool,
        mut attempt: F,
    ) -> Result<T, CloudError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, CloudError>>,
    {
        let (mut tries, mut waited) = (1, Duration::ZERO);
        loop {
            let result = attempt().await;
            let delay = match &result {
                Err(e) if retries(e) => self.next_delay(tries, e.retry_after, waited),
                _ => None,
            };
            let (Some(delay), Err(e)) = (delay, &result) else {
                return result;
            };
            tracing::debug!(operation, attempt = tries, ?delay, error = %e, "retrying the call");
            tokio::time::sleep(delay).await;
            tries += 1;
            waited += delay;
        }
    }

    /// The longest a call can wait in all under backoff alone: one `max_delay` per retry.
    /// Clients whose retry loop is not ours (the AWS SDK) are held to the budget by this.
    pub fn worst_backoff(&self) -> Duration {
        self.max_delay
            .saturating_mul(self.max_attempts.saturating_sub(1))
    }
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

    /// Every sequence of failures, with or without `Retry-After`, waits at most the budget in
    /// all and stops after `max_attempts` attempts (delays computed, nothing sleeps).
    #[test]
    fn the_budget_bounds_the_total_wait_of_one_call() {
        let p = PER_CALL;
        for retry_after in [
            None,
            Some(0),
            Some(1),
            Some(7),
            Some(29),
            Some(31),
            Some(600),
        ] {
            for _ in 0..20 {
                let mut waited = Duration::ZERO;
                let mut attempts = 1;
                while let Some(delay) =
                    p.next_delay(attempts, retry_after.map(Duration::from_secs), waited)
                {
                    waited += delay;
                    attempts += 1;
                }
                assert!(waited <= p.budget, "{retry_after:?}: waited {waited:?}");
                assert!(attempts <= p.max_attempts, "{retry_after:?}: {attempts}");
            }
        }
        assert!(
            p.worst_backoff() <= p.budget,
            "backoff alone fits the budget"
        );
    }

    #[test]
    fn retry_after_is_honoured_when_it_fits_and_ends_the_call_when_not() {
        let p = PER_CALL;
        let d = p.next_delay(1, Some(Duration::from_secs(3)), Duration::ZERO);
        assert!(d.is_some_and(|d| d >= Duration::from_secs(3)), "{d:?}");
        assert_eq!(
            p.next_delay(1, Some(Duration::from_secs(31)), Duration::ZERO),
            None,
            "longer than the budget: the step's retry honours it"
        );
        assert_eq!(
            p.next_delay(2, Some(Duration::from_secs(5)), Duration::from_secs(28)),
            None,
            "longer than what is left"
        );
        assert_eq!(p.next_delay(p.max_attempts, None, Duration::ZERO), None);
        let first = p.next_delay(1, None, Duration::ZERO).unwrap();
        assert!(
            first >= p.initial_delay / 2 && first <= p.initial_delay,
            "{first:?}"
        );
    }

    /// The call loop: what `retries` accepts is tried again until it succeeds or the policy
    /// gives up (then the last failure comes back); anything else ends the call at once.
    #[tokio::test(start_paused = true)]
    async fn a_call_retries_what_it_is_told_to_until_it_succeeds_or_the_policy_gives_up() {
        use crate::ErrorKind;
        let failing = |kind: ErrorKind, succeed_on: u32| {
            let tries = std::cell::Cell::new(0u32);
            async move {
                let result = PER_CALL
                    .run(
                        "Op",
                        |e| e.kind == ErrorKind::Transient,
                        || {
                            tries.set(tries.get() + 1);
                            let n = tries.get();
                            async move {
                                match n >= succeed_on {
                                    true => Ok(n),
                                    false => Err(CloudError::new(kind, "Op", format!("try {n}"))),
                                }
                            }
                        },
                    )
                    .await;
                (result.map_err(|e| e.message), tries.get())
            }
        };
        assert_eq!(failing(ErrorKind::Transient, 3).await, (Ok(3), 3));
        assert_eq!(
            failing(ErrorKind::Transient, 99).await,
            (Err("try 5".to_string()), PER_CALL.max_attempts)
        );
        assert_eq!(
            failing(ErrorKind::Conflict, 2).await,
            (Err("try 1".to_string()), 1),
            "not retried"
        );
    }
}
