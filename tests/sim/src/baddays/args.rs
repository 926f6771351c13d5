//! The command line of `bootstrap-sim faults` and `bootstrap-sim soak`, parsed once: each
//! command names the flags it takes, and a flag another command takes is refused as unknown.

use anyhow::{Result, anyhow};
use serde_json::Value;
use std::time::Duration;

/// A flag of the bad-day commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `--p RATE`: the fault rate, in [0, 1).
    P,
    /// `--cycles N`: install/teardown cycles (at least 1).
    Cycles,
    /// `--seed S`: the faults' seed.
    Seed,
    /// `--long-gate DURATION`: how late the load-balancer controller is in the long gate.
    LongGate,
    /// `--output text|json`.
    Output,
}

impl Flag {
    fn name(self) -> &'static str {
        match self {
            Flag::P => "--p",
            Flag::Cycles => "--cycles",
            Flag::Seed => "--seed",
            Flag::LongGate => "--long-gate",
            Flag::Output => "--output",
        }
    }
}

/// What the command line set; None: the command's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub p: Option<f64>,
    pub cycles: Option<usize>,
    pub seed: Option<u64>,
    pub long_gate: Option<Duration>,
    pub json: bool,
}

/// Parses `args` (`--flag value` pairs) against the flags `takes`.
pub fn parse(args: &[&str], takes: &[Flag]) -> Result<Args> {
    let mut parsed = Args::default();
    let mut it = args.iter();
    while let Some(given) = it.next() {
        let flag = takes
            .iter()
            .copied()
            .find(|f| f.name() == *given)
            .ok_or_else(|| anyhow!("unknown option {given:?}"))?;
        let value = *it.next().ok_or_else(|| anyhow!("{given} needs a value"))?;
        let expected = |what: &str| anyhow!("{given}: expected {what}, found {value:?}");
        match flag {
            Flag::P => {
                parsed.p = Some(
                    value
                        .parse()
                        .ok()
                        .filter(|p: &f64| (0.0..1.0).contains(p))
                        .ok_or_else(|| expected("a rate in [0, 1)"))?,
                )
            }
            Flag::Cycles => {
                parsed.cycles = Some(
                    value
                        .parse()
                        .ok()
                        .filter(|n: &usize| *n >= 1)
                        .ok_or_else(|| expected("a number of at least 1"))?,
                )
            }
            Flag::Seed => parsed.seed = Some(value.parse().map_err(|_| expected("a number"))?),
            Flag::LongGate => {
                parsed.long_gate = Some(
                    humantime::parse_duration(value)
                        .ok()
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| expected("a duration such as 30m or 90s"))?,
                )
            }
            Flag::Output => parsed.json = crate::args::output_arg(value)?,
        }
    }
    Ok(parsed)
}

/// Prints the report: the whole JSON, or the one-line summary.
pub fn print(json: bool, report: &Value, summary: impl FnOnce() -> String) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        println!("{}", summary());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn each_command_takes_its_own_flags_and_refuses_the_others() {
        let all = [Flag::P, Flag::Cycles, Flag::Seed, Flag::Output];
        let args = parse(
            &[
                "--p", "0.4", "--cycles", "3", "--seed", "7", "--output", "json",
            ],
            &all,
        )
        .unwrap();
        assert_eq!(
            args,
            Args {
                p: Some(0.4),
                cycles: Some(3),
                seed: Some(7),
                long_gate: None,
                json: true
            }
        );
        let soak = [Flag::Cycles, Flag::LongGate, Flag::Output];
        assert_eq!(
            parse(&["--long-gate", "30m"], &soak).unwrap().long_gate,
            Some(Duration::from_secs(1800))
        );
        let err = parse(&["--p", "0.4"], &soak).unwrap_err();
        assert_eq!(err.to_string(), "unknown option \"--p\"");
    }

    #[test]
    fn a_bad_value_names_the_flag_and_what_was_expected() {
        let all = [
            Flag::P,
            Flag::Cycles,
            Flag::Seed,
            Flag::LongGate,
            Flag::Output,
        ];
        for (args, message) in [
            (
                &["--p", "1.0"][..],
                "--p: expected a rate in [0, 1), found \"1.0\"",
            ),
            (
                &["--cycles", "0"],
                "--cycles: expected a number of at least 1, found \"0\"",
            ),
            (&["--seed", "x"], "--seed: expected a number, found \"x\""),
            (
                &["--long-gate", "0s"],
                "--long-gate: expected a duration such as 30m or 90s, found \"0s\"",
            ),
            (
                &["--output", "yaml"],
                "--output: expected text or json, found \"yaml\"",
            ),
            (&["--cycles"], "--cycles needs a value"),
        ] {
            assert_eq!(parse(args, &all).unwrap_err().to_string(), message);
        }
    }
}
