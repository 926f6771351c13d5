//! What every bench prints: percentiles of its timed samples. Included with `#[path]`.
#![allow(dead_code)]

use std::time::Duration;

/// The `p`-quantile (0.0..=1.0) of `samples`, nearest rank; sorts them.
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

/// One line: `name` padded to `name_width`, the sample count padded to `n_width`, p50, p99.
pub fn report(name: &str, mut samples: Vec<Duration>, name_width: usize, n_width: usize) {
    let p50 = percentile(&mut samples, 0.50);
    let p99 = percentile(&mut samples, 0.99);
    println!(
        "{name:<name_width$} n={:<n_width$} p50={p50:>10.3?} p99={p99:>10.3?}",
        samples.len()
    );
}
