//! The one way to wait for a long-running cloud operation (a GCP operation, a Cloud DNS or
//! Route53 change, an ARM asynchronous operation or provisioning state): look again after a
//! growing delay, or after what the service asked for (`Retry-After`), and give up as
//! *transient* once the operation's budget is spent, so the runner's stage retry and the step
//! deadline outside decide what happens next. Every such loop in this crate goes through
//! `Poll::wait`. The one other wait, the Azure private-IP settle, waits on other clusters for
//! a fixed time at least and then yields the address (not an error), so it keeps its own loop.

use crate::{CloudError, ErrorKind};
use std::time::Duration;
use tokio::time::Instant;

/// How long one long-running operation may take, whichever cloud runs it.
pub const OPERATION_BUDGET: Duration = Duration::from_secs(300);

pub struct Poll {
    operation: String,
    deadline: Instant,
    delay: Duration,
    min: Duration,
    max: Duration,
}

impl Poll {
    /// Polls `operation` for at most `budget`, the first wait `first`, doubling up to `max`.
    pub fn new(operation: &str, budget: Duration, first: Duration, max: Duration) -> Self {
        Self {
            operation: operation.to_string(),
            deadline: Instant::now() + budget,
            delay: first,
            min: first.min(max),
            max,
        }
    }

    /// A change a cloud applies on its own (a DNS change, a resource's provisioning): the
    /// operation budget, the first wait `first`, doubling up to 5 s.
    pub fn change(operation: &str, first: Duration) -> Self {
        Self::new(operation, OPERATION_BUDGET, first, Duration::from_secs(5))
    }

    /// Waits before the next look: `asked` (the service's `Retry-After`) when given, else the
    /// growing delay; always within `[first, max]`. Fails (transient) instead of waiting past
    /// the budget.
    pub async fn wait(&mut self, asked: Option<Duration>) -> Result<(), CloudError> {
        let delay = asked.unwrap_or(self.delay).clamp(self.min, self.max);
        self.delay = (self.delay * 2).min(self.max);
        if Instant::now() + delay > self.deadline {
            return Err(CloudError::new(
                ErrorKind::Transient,
                &self.operation,
                "long-running operation did not finish in time",
            ));
        }
        tokio::time::sleep(delay).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waits_grow_to_the_cap_and_stop_at_the_budget() {
        let (first, max) = (Duration::from_millis(100), Duration::from_secs(2));
        let mut poll = Poll::new("op", Duration::from_secs(10), first, max);
        let start = Instant::now();
        let mut waits = Vec::new();
        loop {
            let before = Instant::now();
            match poll.wait(None).await {
                Ok(()) => waits.push(Instant::now() - before),
                Err(e) => {
                    assert!(e.is_transient(), "{e}");
                    break;
                }
            }
        }
        assert_eq!(waits[0], first);
        assert_eq!(waits[1], first * 2);
        assert!(waits.iter().all(|w| *w <= max), "{waits:?}");
        assert!(Instant::now() - start <= Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_that_ends_exactly_at_the_budget_is_still_taken() {
        let step = Duration::from_millis(100);
        let mut poll = Poll::new("op", step * 3, step, step);
        for n in 1..=3 {
            poll.wait(None)
                .await
                .unwrap_or_else(|e| panic!("wait {n} ends within the budget: {e}"));
        }
        assert!(
            poll.wait(None).await.is_err(),
            "the fourth would end past it"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_services_retry_after_is_waited_within_the_bounds() {
        let mut poll = Poll::new(
            "op",
            Duration::from_secs(60),
            Duration::from_millis(100),
            Duration::from_secs(10),
        );
        let before = Instant::now();
        poll.wait(Some(Duration::from_secs(3))).await.unwrap();
        assert_eq!(Instant::now() - before, Duration::from_secs(3));
        let before = Instant::now();
        poll.wait(Some(Duration::from_secs(600))).await.unwrap();
        assert_eq!(Instant::now() - before, Duration::from_secs(10), "capped");
    }
}
