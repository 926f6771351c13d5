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

    /// Waits before the next look: what the service asked for (`Retry-After`) when given,
    /// plus a little spread and even past `max` (an earlier look would only be refused
    /// again); else the growing delay with jitter (between half of it and all of it), so the
    /// agents of a fleet that started together do not look together. Fails (transient)
    /// instead of waiting past the budget.
    pub async fn wait(&mut self, asked: Option<Duration>) -> Result<(), CloudError> {
        let delay = match asked {
            Some(asked) => crate::retry::after(asked.max(self.min), Duration::MAX),
            None => crate::retry::jitter(self.delay),
        };
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
    async fn waits_grow_to_the_cap_jittered_and_stop_at_the_budget() {
        let (first, max) = (Duration::from_millis(100), Duration::from_secs(2));
        let budget = Duration::from_secs(10);
        let mut poll = Poll::new("op", budget, first, max);
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
        for (i, wait) in waits.iter().enumerate() {
            let ceiling = (first * 2u32.pow(i as u32)).min(max);
            assert!(
                *wait >= ceiling / 2 && *wait <= ceiling,
                "wait {i}: {wait:?} within [{:?}, {ceiling:?}]",
                ceiling / 2
            );
        }
        assert!(Instant::now() - start <= budget);
    }

    /// A hundred agents that started together: their looks spread out, not in lockstep.
    #[tokio::test(start_paused = true)]
    async fn pollers_that_start_together_do_not_look_together() {
        let mut firsts = std::collections::BTreeSet::new();
        for _ in 0..100 {
            let mut poll = Poll::change("op", Duration::from_millis(100));
            let before = Instant::now();
            poll.wait(None).await.unwrap();
            firsts.insert(Instant::now() - before);
        }
        assert!(firsts.len() > 20, "jittered: {firsts:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_waits_stop_where_the_next_would_end_past_the_budget() {
        let step = Duration::from_millis(100);
        let budget = step * 3;
        let mut poll = Poll::new("op", budget, step, step);
        let start = Instant::now();
        let mut looks = 0;
        while poll.wait(None).await.is_ok() {
            looks += 1;
        }
        assert!(
            looks >= 3,
            "at least three waits of at most {step:?} fit: {looks}"
        );
        assert!(Instant::now() - start <= budget);
    }

    /// ARM's per-5-minutes limits answer `Retry-After` in minutes: looking again before
    /// that only spends a request and is refused again.
    #[tokio::test(start_paused = true)]
    async fn the_services_retry_after_is_waited_even_past_the_cap() {
        let mut poll = Poll::new(
            "op",
            Duration::from_secs(60),
            Duration::from_millis(100),
            Duration::from_secs(10),
        );
        let before = Instant::now();
        poll.wait(Some(Duration::from_secs(3))).await.unwrap();
        let waited = Instant::now() - before;
        assert!(
            waited >= Duration::from_secs(3) && waited <= Duration::from_millis(3300),
            "{waited:?}"
        );
        let before = Instant::now();
        poll.wait(Some(Duration::from_secs(30))).await.unwrap();
        assert!(
            Instant::now() - before >= Duration::from_secs(30),
            "not capped"
        );
        assert!(
            poll.wait(Some(Duration::from_secs(600))).await.is_err(),
            "past the budget: transient, for the step to decide"
        );
    }
}
