//! The rules of option values. Each returns what was expected when it refuses a value; the
//! [`Checked`](parser::Checked) parser that calls it names the flag and its
//! environment variable, since either may have set it, and the one pass (`validate::check`)
//! reports it with every other problem. Checks that need more than the value (feature gates
//! against the registry, the done-file's directory) are in the pass itself.

use std::net::IpAddr;
use std::time::Duration;

mod parser;

pub use parser::{Checked, checked, collecting, one_of, switch, words};

/// The flag and its variable, as the "file" of an option's error.
pub fn flag(name: &str, env: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("--{name} (environment variable {env})"))
}

/// A duration like `30m`; a leading `-` is a negative one, not a flag (the options that take
/// a duration allow hyphen values, so `-5s` reaches this check).
pub fn duration(value: &str) -> Result<Duration, String> {
    let trimmed = value.trim();
    if trimmed.starts_with('-') {
        return Err("a negative duration; expected a duration like 30m or 90s".to_string());
    }
    humantime::parse_duration(trimmed)
        .map_err(|e| format!("{e}; expected a duration like 30m or 90s"))
}

/// A deadline: a duration above zero (a zero deadline would fail every step at once).
pub fn deadline(value: &str) -> Result<Duration, String> {
    let d = duration(value)?;
    if d.is_zero() {
        Err("zero; expected a duration above 0 like 10m".to_string())
    } else {
        Ok(d)
    }
}

pub fn bootstrap_ip(value: &str) -> Result<IpAddr, String> {
    let ip: IpAddr = value
        .trim()
        .parse()
        .map_err(|_| "expected an IPv4 or IPv6 address like 10.0.0.5".to_string())?;
    if ip.is_unspecified() || ip.is_loopback() || ip.is_multicast() {
        return Err(format!(
            "{ip} is not a host's private address; expected the bootstrap host's IP"
        ));
    }
    Ok(ip)
}

/// `--feature-gates`: no empty name (`ClusterAPI,,` is a typo, not "no more gates").
pub fn feature_gates(gates: &[String]) -> Result<(), String> {
    let empty: Vec<String> = gates
        .iter()
        .enumerate()
        .filter(|(_, g)| g.trim().is_empty())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if empty.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "entry {} of the comma-separated list is empty; expected gate names like ClusterAPI,OtherGate",
            empty.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_or_zero_deadline_says_what_was_expected() {
        let e = deadline("-5s").unwrap_err();
        assert!(
            e.contains("negative") && e.contains("expected a duration"),
            "{e}"
        );
        assert!(deadline("0s").unwrap_err().contains("above 0"));
        assert!(deadline("10 parsecs").unwrap_err().contains("expected"));
        assert_eq!(deadline("30m").unwrap(), Duration::from_secs(1800));
        // A drain may be zero (it turns the drain off); a deadline may not.
        assert_eq!(duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn a_bad_bootstrap_ip_says_what_was_expected() {
        let e = bootstrap_ip("10.0.0.300").unwrap_err();
        assert!(e.contains("expected an IPv4 or IPv6 address"), "{e}");
        assert!(bootstrap_ip("x").is_err());
        assert!(bootstrap_ip("127.0.0.1").is_err());
        assert!(bootstrap_ip("10.0.0.5").is_ok());
    }

    #[test]
    fn empty_feature_gates_are_refused() {
        let gates: Vec<String> = ["ClusterAPI", "", ""].map(String::from).to_vec();
        assert!(feature_gates(&gates).unwrap_err().contains("entry 2, 3"));
        assert!(feature_gates(&["ClusterAPI".to_string()]).is_ok());
    }
}
