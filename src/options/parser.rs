//! Option values join the one pass. Clap refuses a malformed value at once and alone, before
//! any other input is read; so every option with a value has a [`Checked`] parser, which does
//! not refuse while [`collecting`]: it records the problem (the flag, its environment variable,
//! where the value came from and what was expected) and hands clap a stand-in. `cli::run`
//! gives the records to `validate::check`, which reports them with every other problem and
//! refuses the command: a stand-in is never acted on. Outside [`collecting`] (a plain
//! `Cli::parse`) the parser refuses as clap's own do, so no stand-in can leak.
//!
//! Clap builds value parsers from the derive attributes, statically, so they cannot be handed
//! a collector: they record into one kept for the parsing thread.

use crate::error::InputError;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::parser::ValueSource;
use std::cell::RefCell;
use std::ffi::OsStr;
use std::sync::Arc;

thread_local! {
    /// Some while [`collecting`] on this thread.
    static MALFORMED: RefCell<Option<Vec<InputError>>> = const { RefCell::new(None) };
}

/// Runs `parse` (clap's parsing) with the [`Checked`] parsers recording instead of refusing:
/// its result, and every malformed option value in the order clap met them.
pub fn collecting<T>(parse: impl FnOnce() -> T) -> (T, Vec<InputError>) {
    MALFORMED.with(|m| *m.borrow_mut() = Some(Vec::new()));
    let parsed = parse();
    let found = MALFORMED
        .with(|m| m.borrow_mut().take())
        .unwrap_or_default();
    (parsed, found)
}

type Check<T> = Arc<dyn Fn(&str) -> Result<T, String> + Send + Sync>;

/// A value parser whose refusal joins the one pass (see the module docs).
#[derive(Clone)]
pub struct Checked<T> {
    check: Check<T>,
    /// Handed to clap in place of a malformed value; never acted on.
    stand_in: T,
    /// Shown by `--help`.
    possible: Vec<PossibleValue>,
}

/// `check` says what was expected when it refuses a value.
pub fn checked<T: Clone + Send + Sync + 'static>(
    check: impl Fn(&str) -> Result<T, String> + Send + Sync + 'static,
    stand_in: T,
) -> Checked<T> {
    Checked {
        check: Arc::new(check),
        stand_in,
        possible: Vec::new(),
    }
}

/// A value enum: one of its names.
pub fn one_of<E: clap::ValueEnum + Clone + Send + Sync + 'static>(stand_in: E) -> Checked<E> {
    let possible: Vec<PossibleValue> = E::value_variants()
        .iter()
        .filter_map(E::to_possible_value)
        .collect();
    let names = names(&possible);
    Checked {
        check: Arc::new(move |text| {
            E::from_str(text, false).map_err(|_| format!("expected one of {names}"))
        }),
        stand_in,
        possible,
    }
}

/// One of `words`, kept as the word.
pub fn words(words: &'static [&'static str]) -> Checked<String> {
    let possible: Vec<PossibleValue> = words.iter().map(|w| PossibleValue::new(*w)).collect();
    let names = names(&possible);
    Checked {
        check: Arc::new(move |text| {
            words
                .contains(&text)
                .then(|| text.to_string())
                .ok_or_else(|| format!("expected one of {names}"))
        }),
        stand_in: words.first().map(|w| w.to_string()).unwrap_or_default(),
        possible,
    }
}

/// A switch (`--flag`, or its variable set to `true` or `false`).
pub fn switch() -> Checked<bool> {
    let possible = vec![PossibleValue::new("true"), PossibleValue::new("false")];
    Checked {
        check: Arc::new(|text| match text {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err("expected true or false".to_string()),
        }),
        stand_in: false,
        possible,
    }
}

fn names(possible: &[PossibleValue]) -> String {
    possible
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Checked<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        self.parse_ref_(cmd, arg, value, ValueSource::CommandLine)
    }

    fn parse_ref_(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
        source: ValueSource,
    ) -> Result<T, clap::Error> {
        let verdict = match value.to_str() {
            Some(text) => (self.check)(text),
            None => Err("not UTF-8 text".to_string()),
        };
        let problem = match verdict {
            Ok(v) => return Ok(v),
            Err(problem) => problem,
        };
        let error = malformed(arg, value, source, problem);
        MALFORMED.with(|m| match m.borrow_mut().as_mut() {
            Some(found) => {
                found.push(error);
                Ok(self.stand_in.clone())
            }
            None => Err(clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("{error}\n"),
            )
            .with_cmd(cmd)),
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        (!self.possible.is_empty()).then(|| {
            Box::new(self.possible.iter().cloned()) as Box<dyn Iterator<Item = PossibleValue>>
        })
    }
}

/// `--flag (environment variable NAME): value "x" from the command line: problem`.
fn malformed(
    arg: Option<&clap::Arg>,
    value: &OsStr,
    source: ValueSource,
    problem: String,
) -> InputError {
    let flag = arg
        .and_then(clap::Arg::get_long)
        .map_or_else(|| "(option)".to_string(), |long| format!("--{long}"));
    let env = arg
        .and_then(clap::Arg::get_env)
        .map(|e| e.to_string_lossy().into_owned());
    let file = match &env {
        Some(env) => super::flag(flag.trim_start_matches("--"), env),
        None => format!("{flag} (no environment variable)").into(),
    };
    let text = value.to_string_lossy();
    let mut shown: String = text.chars().take(80).collect();
    if text.chars().count() > 80 {
        shown.push('…');
    }
    let from = match (source, &env) {
        (ValueSource::EnvVariable, Some(env)) => format!("from {env}"),
        (ValueSource::DefaultValue, _) => "the default".to_string(),
        _ => "from the command line".to_string(),
    };
    InputError::new(file, format!("value {shown:?} {from}"), problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Parser, ValueEnum};

    #[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Parser)]
    struct Args {
        #[arg(long, env = "OPTION_PARSER_TEST_TIMEOUT", allow_hyphen_values = true, default_value = "1m",
              value_parser = checked(super::super::deadline, std::time::Duration::ZERO))]
        timeout: std::time::Duration,
        #[arg(long, value_parser = one_of(Mode::Fast), default_value = "fast")]
        mode: Mode,
        #[arg(long, env = "OPTION_PARSER_TEST_PROOF", value_parser = words(&["on", "off"]), default_value = "on")]
        proof: String,
    }

    #[test]
    fn every_malformed_value_is_recorded_with_flag_variable_and_what_was_expected() {
        let (parsed, found) = collecting(|| {
            Args::try_parse_from([
                "x",
                "--timeout",
                "-5s",
                "--mode",
                "quick",
                "--proof",
                "maybe",
            ])
        });
        let args = parsed.unwrap();
        assert_eq!(found.len(), 3, "{found:?}");
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(
            lines[0].starts_with(
                "--timeout (environment variable OPTION_PARSER_TEST_TIMEOUT): value \"-5s\" from the command line: "
            ) && lines[0].contains("negative"),
            "{lines:?}"
        );
        assert_eq!(
            lines[1],
            "--mode (no environment variable): value \"quick\" from the command line: expected one of fast, slow"
        );
        assert!(
            lines[2].contains("OPTION_PARSER_TEST_PROOF")
                && lines[2].contains("expected one of on, off")
        );
        // The stand-ins are what clap got; the pass refuses the command before they are used.
        assert_eq!((args.mode, args.proof.as_str()), (Mode::Fast, "on"));
    }

    #[test]
    fn valid_values_pass_and_nothing_is_recorded() {
        let (parsed, found) =
            collecting(|| Args::try_parse_from(["x", "--timeout", "90s", "--mode", "slow"]));
        let args = parsed.unwrap();
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(args.timeout, std::time::Duration::from_secs(90));
        assert_eq!(args.mode, Mode::Slow);
    }

    #[test]
    fn outside_collecting_a_malformed_value_is_refused_naming_flag_and_variable() {
        let e = Args::try_parse_from(["x", "--timeout", "soon"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let text = e.to_string();
        assert!(
            text.contains("--timeout") && text.contains("OPTION_PARSER_TEST_TIMEOUT"),
            "{text}"
        );
    }

    #[test]
    fn help_still_lists_the_possible_values() {
        let help = <Args as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(
            help.contains("fast") && help.contains("slow") && help.contains("off"),
            "{help}"
        );
    }

    /// What the parser says where the value came from; a long value is cut at 80 characters.
    #[test]
    fn the_source_of_a_value_is_named_and_a_long_value_is_cut() {
        let arg = clap::Arg::new("proof")
            .long("proof")
            .env("OPTION_PARSER_TEST_NEVER_SET");
        let cmd = clap::Command::new("x");
        let parser = words(&["on", "off"]);
        let (long, longer) = ("y".repeat(80), "z".repeat(81));
        let ((), found) = collecting(|| {
            for (value, source) in [
                ("maybe", ValueSource::EnvVariable),
                ("perhaps", ValueSource::DefaultValue),
                (long.as_str(), ValueSource::CommandLine),
                (longer.as_str(), ValueSource::CommandLine),
            ] {
                let stand_in = parser
                    .parse_ref_(&cmd, Some(&arg), OsStr::new(value), source)
                    .unwrap();
                assert_eq!(stand_in, "on");
            }
        });
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines[0],
            "--proof (environment variable OPTION_PARSER_TEST_NEVER_SET): value \"maybe\" from OPTION_PARSER_TEST_NEVER_SET: expected one of on, off"
        );
        assert_eq!(lines.len(), 4, "{lines:?}");
        let what_the_others_say = [
            "value \"perhaps\" the default: ".to_string(),
            format!("value \"{long}\" from the command line"),
            format!("value \"{}…\" from the command line", &longer[..80]),
        ];
        for (line, said) in lines[1..].iter().zip(&what_the_others_say) {
            assert!(line.contains(said.as_str()), "{said:?} not in {line:?}");
        }
    }

    #[test]
    fn a_switch_is_true_or_false_and_nothing_else() {
        let arg = clap::Arg::new("wait").long("wait");
        let cmd = clap::Command::new("x");
        let parse = |text: &str| switch().parse_ref(&cmd, Some(&arg), OsStr::new(text));
        assert!(parse("true").unwrap());
        assert!(!parse("false").unwrap());
        let e = parse("yes").unwrap_err().to_string();
        assert!(
            e.contains("--wait") && e.contains("expected true or false"),
            "{e}"
        );
    }
}
