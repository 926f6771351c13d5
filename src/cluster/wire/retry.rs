//! When to look again at an IP the proof has not passed yet. The proof waits on the cloud
//! (GCE's first health check of a new backend service, a frontend's first probe), which has
//! no watch: a look soon after the first, then further apart, so an IP that starts to serve
//! is seen within [`RETRY_MAX`] and a slow one costs a few reads a second at most. Jittered,
//! so a fleet of agents does not ask in step.

use std::time::Duration;

/// The first look again, after a failed proof.
pub const RETRY_FIRST: Duration = Duration::from_millis(250);
/// The longest wait between two looks.
pub const RETRY_MAX: Duration = Duration::from_millis(800);

/// The waits between looks: [`RETRY_FIRST`], doubling up to [`RETRY_MAX`], each shortened by
/// up to a tenth (jitter that never makes a wait longer than the schedule says).
#[derive(Debug, Clone)]
pub struct ProofRetry {
    next: Duration,
}

impl Default for ProofRetry {
    fn default() -> Self {
        Self { next: RETRY_FIRST }
    }
}

impl ProofRetry {
    /// The wait before the next look, with `jitter` in [0, 1) (0: none); the one after it is
    /// twice as long, up to [`RETRY_MAX`].
    pub fn after_failure(&mut self, jitter: f64) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(RETRY_MAX);
        wait.mul_f64(1.0 - jitter.clamp(0.0, 0.999) / 10.0)
    }

    /// A proof passed: the next failure starts the schedule again.
    pub fn reset(&mut self) {
        self.next = RETRY_FIRST;
    }
}

/// A jitter in [0, 1): the cloud clients' own random source.
pub fn jitter() -> f64 {
    bootstrap_cloud::retry::unit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_start_short_double_and_stop_at_the_cap_and_a_pass_starts_over() {
        let mut retry = ProofRetry::default();
        let waits: Vec<u128> = (0..5)
            .map(|_| retry.after_failure(0.0).as_millis())
            .collect();
        assert_eq!(waits, [250, 500, 800, 800, 800]);
        retry.reset();
        assert_eq!(retry.after_failure(0.0), RETRY_FIRST);
    }

    #[test]
    fn jitter_only_shortens_a_wait_by_at_most_a_tenth() {
        let mut retry = ProofRetry::default();
        let wait = retry.after_failure(0.5);
        assert_eq!(wait, Duration::from_micros(237_500));
        let mut retry = ProofRetry::default();
        let most = retry.after_failure(7.0);
        assert!(most > Duration::from_millis(225), "{most:?}");
        assert!(most < RETRY_FIRST, "{most:?}");
        let mut retry = ProofRetry::default();
        assert_eq!(retry.after_failure(-1.0), RETRY_FIRST);
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
