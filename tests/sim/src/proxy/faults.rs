//! What the proxy spoils: the fault settings ([`Faults`], [`Latency`]), the seeded generator
//! that decides each request's fault and delay, and the counts of what it injected. Apart
//! from the request path so that a seed's verdicts can be read (and tested) on their own.

use crate::rng::Rng;

/// What can go wrong with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// The service's own throttling error; the emulator never sees the request.
    Throttle,
    /// The service's own HTTP 500; the emulator never sees the request.
    ServerError,
    /// Forwarded and done by the emulator; the connection is then dropped unanswered.
    LostAnswer,
    /// The service's own HTTP 503 (unavailable); the emulator never sees the request.
    Unavailable,
    /// The connection is dropped before the request is forwarded: the emulator never sees it
    /// and the client hears nothing (a reset on the way there).
    Reset,
}

impl Fault {
    /// The three the seeded tests have always drawn from (their seeds' verdicts unchanged).
    pub const ALL: [Fault; 3] = [Fault::Throttle, Fault::ServerError, Fault::LostAnswer];
    /// Every kind: a bad day (`bootstrap-sim faults`).
    pub const BAD_DAY: [Fault; 5] = [
        Fault::Throttle,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::LostAnswer,
        Fault::Reset,
    ];
}

/// Fault injection settings: each request fails with probability `rate`, the fault picked
/// uniformly from `kinds`, until `limit` faults were injected (None: no limit); and, decided
/// apart (its own generator, so adding it leaves the faults of a seed as they were), each
/// request is delayed per `latency`.
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    pub rate: f64,
    pub seed: u64,
    pub kinds: Vec<Fault>,
    pub limit: Option<usize>,
    pub latency: Option<Latency>,
}

/// Added latency: with probability `rate` a request waits a uniform `min_ms..=max_ms` before
/// the proxy acts on it (forwards it, or answers with its fault).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub rate: f64,
    pub min_ms: u64,
    pub max_ms: u64,
}

impl Faults {
    /// Every kind of fault at `rate`.
    pub fn new(rate: f64, seed: u64) -> Self {
        Self {
            rate,
            seed,
            kinds: Fault::ALL.to_vec(),
            limit: None,
            latency: None,
        }
    }

    /// The same faults, and requests delayed per `latency` besides.
    pub fn with_latency(self, latency: Latency) -> Self {
        Self {
            latency: Some(latency),
            ..self
        }
    }

    /// Exactly the next `n` requests fail with `fault`.
    pub fn next(n: usize, fault: Fault) -> Self {
        Self {
            rate: 1.0,
            seed: 0,
            kinds: vec![fault],
            limit: Some(n),
            latency: None,
        }
    }
}

/// How many requests the proxy saw and how many of them it spoiled, by fault.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultStats {
    pub requests: usize,
    pub throttled: usize,
    pub server_errors: usize,
    pub lost_answers: usize,
    pub unavailable: usize,
    pub resets: usize,
    /// Requests delayed by [`Latency`] (not a failure: not counted by [`Self::injected`]).
    pub delayed: usize,
}

impl FaultStats {
    pub fn injected(&self) -> usize {
        self.throttled + self.server_errors + self.lost_answers + self.unavailable + self.resets
    }

    pub fn add(&mut self, other: &FaultStats) {
        self.requests += other.requests;
        self.throttled += other.throttled;
        self.server_errors += other.server_errors;
        self.lost_answers += other.lost_answers;
        self.unavailable += other.unavailable;
        self.resets += other.resets;
        self.delayed += other.delayed;
    }
}

pub(super) struct Injector {
    faults: Faults,
    rng: Rng,
    latency_rng: Rng,
    injected: usize,
}

impl Injector {
    pub(super) fn new(faults: Faults) -> Self {
        Self {
            rng: Rng(faults.seed),
            latency_rng: Rng(faults.seed ^ 0x5eed_1a7e_0000_0000),
            faults,
            injected: 0,
        }
    }

    /// How long this request waits first, if at all.
    pub(super) fn delay(&mut self) -> Option<std::time::Duration> {
        let latency = self.faults.latency?;
        let roll = self.latency_rng.next_f64();
        let pick = self.latency_rng.next_u64();
        if roll >= latency.rate {
            return None;
        }
        let span = latency.max_ms.saturating_sub(latency.min_ms) + 1;
        Some(std::time::Duration::from_millis(
            latency.min_ms + pick % span,
        ))
    }

    pub(super) fn decide(&mut self) -> Option<(Fault, u64)> {
        let roll = self.rng.next_f64();
        let pick = self.rng.next_u64();
        let spent = self.faults.limit.is_some_and(|l| self.injected >= l);
        if roll >= self.faults.rate || self.faults.kinds.is_empty() || spent {
            return None;
        }
        self.injected += 1;
        let kinds = &self.faults.kinds;
        let fault = kinds[(pick % kinds.len() as u64) as usize];
        Some((fault, pick))
    }
}
