//! Option values. Clap's value parsers refuse a malformed value before anything runs; their
//! messages name the flag AND its environment variable, since either may have set it. Checks
//! that need more than the value (feature gates against the registry, the done-file's
//! directory) are in the one pass (`validate::check`).

use std::net::IpAddr;
use std::time::Duration;

/// "(flag --x, environment variable Y)".
fn from(flag: &str, env: &str) -> String {
    format!("(flag --{flag}, environment variable {env})")
}

fn duration(value: &str, flag: &str, env: &str) -> Result<Duration, String> {
    let trimmed = value.trim();
    if trimmed.starts_with('-') {
        return Err(format!(
            "a negative duration; expected a duration like 30m or 90s {}",
            from(flag, env)
        ));
    }
    humantime::parse_duration(trimmed).map_err(|e| {
        format!(
            "{e}; expected a duration like 30m or 90s {}",
            from(flag, env)
        )
    })
}

pub fn step_timeout(value: &str) -> Result<Duration, String> {
    positive(
        duration(value, "step-timeout", "BOOTSTRAP_AGENT_STEP_TIMEOUT")?,
        "step-timeout",
        "BOOTSTRAP_AGENT_STEP_TIMEOUT",
    )
}

pub fn gate_timeout(value: &str) -> Result<Duration, String> {
    positive(
        duration(value, "gate-timeout", "BOOTSTRAP_AGENT_GATE_TIMEOUT")?,
        "gate-timeout",
        "BOOTSTRAP_AGENT_GATE_TIMEOUT",
    )
}

/// A zero deadline would fail every step at once: refused as a typo.
fn positive(d: Duration, flag: &str, env: &str) -> Result<Duration, String> {
    if d.is_zero() {
        Err(format!(
            "zero; expected a duration above 0 like 10m {}",
            from(flag, env)
        ))
    } else {
        Ok(d)
    }
}

pub fn bootstrap_ip(value: &str) -> Result<IpAddr, String> {
    let ip: IpAddr = value.trim().parse().map_err(|_| {
        format!(
            "expected an IPv4 or IPv6 address like 10.0.0.5 {}",
            from("bootstrap-ip", "BOOTSTRAP_AGENT_BOOTSTRAP_IP")
        )
    })?;
    if ip.is_unspecified() || ip.is_loopback() || ip.is_multicast() {
        return Err(format!(
            "{ip} is not a host's private address; expected the bootstrap host's IP {}",
            from("bootstrap-ip", "BOOTSTRAP_AGENT_BOOTSTRAP_IP")
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
    fn a_negative_or_zero_duration_names_flag_and_variable() {
        let e = gate_timeout("-5s").unwrap_err();
        assert!(
            e.contains("negative")
                && e.contains("--gate-timeout")
                && e.contains("BOOTSTRAP_AGENT_GATE_TIMEOUT"),
            "{e}"
        );
        assert!(
            step_timeout("0s")
                .unwrap_err()
                .contains("BOOTSTRAP_AGENT_STEP_TIMEOUT")
        );
        assert_eq!(gate_timeout("30m").unwrap(), Duration::from_secs(1800));
    }

    #[test]
    fn a_bad_bootstrap_ip_names_flag_and_variable() {
        let e = bootstrap_ip("10.0.0.300").unwrap_err();
        assert!(
            e.contains("--bootstrap-ip") && e.contains("BOOTSTRAP_AGENT_BOOTSTRAP_IP"),
            "{e}"
        );
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
