//! The command lines of the `bootstrap-sim` subcommands: `--flag value` pairs.

use anyhow::{Result, bail};

/// The `--flag value` pairs of `args`; a flag without its value is refused, naming it (and
/// `usage` when there is one).
pub fn flag_values<'a>(args: &[&'a str], usage: &str) -> Result<Vec<(&'a str, &'a str)>> {
    args.chunks(2)
        .map(|pair| match *pair {
            [flag, value] => Ok((flag, value)),
            _ => {
                let flag = pair.first().copied().unwrap_or_default();
                match usage {
                    "" => bail!("{flag} needs a value"),
                    usage => bail!("{flag} needs a value\n{usage}"),
                }
            }
        })
        .collect()
}

/// `--output text|json`: whether JSON.
pub fn output_arg(value: &str) -> Result<bool> {
    match value {
        "json" => Ok(true),
        "text" => Ok(false),
        other => bail!("--output: expected text or json, found {other:?}"),
    }
}

/// The cloud named on the command line, or an error naming the three.
pub fn cloud_arg(cloud: &str) -> Result<&str> {
    match cloud {
        "aws" | "gcp" | "azure" => Ok(cloud),
        other => bail!("unknown cloud {other:?}: expected aws, gcp or azure"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_pair_with_their_values_and_a_lone_flag_is_refused() {
        let pairs = flag_values(&["--a", "1", "--b", "two"], "USAGE").unwrap_or_default();
        assert_eq!(pairs, [("--a", "1"), ("--b", "two")]);
        let err = flag_values(&["--a", "1", "--b"], "USAGE")
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.to_string(), "--b needs a value\nUSAGE");
        let err = flag_values(&["--b"], "").map(|_| ()).unwrap_err();
        assert_eq!(err.to_string(), "--b needs a value");
    }
}
