//! Pure format checks for the names and ids the agent reads. Each returns what was expected,
//! for the message; none quotes more than the value it was given.

use std::ops::RangeInclusive;

/// A DNS-1123 label (Kubernetes' IsDNS1123Label): 1-63 of a-z, 0-9 and '-', starting and
/// ending with a letter or digit. The installer validates `metadata.name` this way.
pub fn dns_label(s: &str) -> Result<(), String> {
    let ok = made_of(s, 1..=63, lower_digit_or_dash) && !s.starts_with('-') && !s.ends_with('-');
    verdict(ok, || {
        format!(
            "expected a DNS-1123 label (1-63 of a-z, 0-9 and '-', starting and ending with a letter or digit), found {s:?}"
        )
    })
}

/// A DNS-1123 subdomain (IsDNS1123Subdomain): dot-separated labels, at most 253 characters; a
/// trailing dot is accepted (the installer accepts it in `baseDomain`).
pub fn dns_domain(s: &str) -> Result<(), String> {
    let name = s.strip_suffix('.').unwrap_or(s);
    let ok = !name.is_empty() && name.len() <= 253 && name.split('.').all(|l| dns_label(l).is_ok());
    verdict(ok, || {
        format!(
            "expected a DNS domain (labels of a-z, 0-9 and '-' separated by dots, at most 253 characters), found {s:?}"
        )
    })
}

/// An EC2 subnet id: `subnet-` and 8 or 17 lowercase hex digits.
pub fn aws_subnet_id(s: &str) -> Result<(), String> {
    let ok = s.strip_prefix("subnet-").is_some_and(|hex| {
        (hex.len() == 8 || hex.len() == 17)
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    verdict(ok, || {
        format!(
            "expected a subnet id like subnet-0123456789abcdef0 (subnet- and 8 or 17 hex digits), found {s:?}"
        )
    })
}

/// A Route 53 hosted zone id: upper-case letters and digits (Z0123456789ABC), at most 32, and
/// without the `/hostedzone/` prefix.
pub fn aws_hosted_zone_id(s: &str) -> Result<(), String> {
    let ok = made_of(s, 1..=32, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
    verdict(ok, || {
        format!(
            "expected a hosted zone id like Z0123456789ABCDEFGHIJ (upper-case letters and digits, without /hostedzone/), found {s:?}"
        )
    })
}

/// An AWS region: `us-east-1`, `us-gov-west-1`, `eu-isoe-west-1`.
pub fn aws_region(s: &str) -> Result<(), String> {
    let parts: Vec<&str> = s.split('-').collect();
    let ok = parts.len() >= 3
        && parts
            .last()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && parts[..parts.len() - 1]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()));
    verdict(ok, || {
        format!("expected an AWS region like us-east-1, found {s:?}")
    })
}

/// An Azure region (location) name: `eastus`, `westeurope`, `southcentralus2`.
pub fn azure_region(s: &str) -> Result<(), String> {
    let ok = made_of(s, 1..=64, |b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && s.starts_with(|c: char| c.is_ascii_lowercase());
    verdict(ok, || {
        format!(
            "expected an Azure region name like eastus (lower-case letters and digits), found {s:?}"
        )
    })
}

/// An Azure resource group name: 1-90 of letters, digits, '_', '-', '.', '(' and ')', not
/// ending in '.' (Microsoft.Resources naming rules).
pub fn azure_resource_group(s: &str) -> Result<(), String> {
    let ok = made_of(s, 1..=90, |b| {
        b.is_ascii_alphanumeric() || b"_-.()".contains(&b)
    }) && !s.ends_with('.');
    verdict(ok, || {
        format!(
            "expected a resource group name (1-90 of letters, digits, _ - . ( ), not ending in .), found {s:?}"
        )
    })
}

/// An Azure virtual network or subnet name: 1-80 (vnet 2-64) of letters, digits, '_', '-' and
/// '.', starting with a letter or digit, ending with a letter, digit or '_'.
pub fn azure_network_name(s: &str, min: usize, max: usize) -> Result<(), String> {
    let ok = made_of(s, min..=max, |b| {
        b.is_ascii_alphanumeric() || b"_-.".contains(&b)
    }) && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
    verdict(ok, || {
        format!(
            "expected {min}-{max} of letters, digits, _ - and ., starting with a letter or digit and ending with a letter, digit or _; found {s:?}"
        )
    })
}

/// A GUID as Azure prints subscription, tenant and client ids (never quotes the value: these
/// come from the creds secret).
pub fn guid(s: &str) -> Result<(), String> {
    let groups: Vec<&str> = s.split('-').collect();
    let ok = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    verdict(ok, || {
        "expected a GUID like 00000000-0000-0000-0000-000000000000".to_string()
    })
}

/// A GCP project id: 6-30 of a-z, 0-9 and '-', starting with a letter, not ending with '-';
/// optionally after a `domain.example:` prefix (domain-scoped projects).
pub fn gcp_project(s: &str) -> Result<(), String> {
    let id = s.rsplit_once(':').map_or(s, |(_, id)| id);
    let ok = rfc1035_name(id, 6..=30);
    verdict(ok, || {
        format!(
            "expected a GCP project id (6-30 of a-z, 0-9 and '-', starting with a letter), found {s:?}"
        )
    })
}

/// A GCP region: `us-central1`, `northamerica-northeast1`.
pub fn gcp_region(s: &str) -> Result<(), String> {
    let ok = s.split_once('-').is_some_and(|(area, rest)| {
        !area.is_empty()
            && area.bytes().all(|b| b.is_ascii_lowercase())
            && rest.len() >= 2
            && rest.ends_with(|c: char| c.is_ascii_digit())
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    verdict(ok, || {
        format!("expected a GCP region like us-central1, found {s:?}")
    })
}

/// A GCE resource name (RFC 1035): 1-63 of a-z, 0-9 and '-', starting with a letter, not
/// ending with '-'.
pub fn gcp_name(s: &str) -> Result<(), String> {
    let ok = rfc1035_name(s, 1..=63);
    verdict(ok, || {
        format!(
            "expected a GCE name (1-63 of a-z, 0-9 and '-', starting with a letter, not ending with '-'), found {s:?}"
        )
    })
}

/// An AWS access key id: 16-128 letters and digits (IAM's AccessKeyId). Never quoted.
pub fn aws_access_key_id(s: &str) -> Result<(), String> {
    let ok = made_of(s, 16..=128, |b| b.is_ascii_alphanumeric());
    verdict(ok, || {
        "expected an access key id (16-128 letters and digits, like AKIAIOSFODNN7EXAMPLE)".into()
    })
}

/// `s` has a length in `len` (bytes) and only bytes that are `allowed`.
fn made_of(s: &str, len: RangeInclusive<usize>, allowed: impl Fn(u8) -> bool) -> bool {
    len.contains(&s.len()) && s.bytes().all(allowed)
}

/// The RFC 1035 rule GCE names and project ids share: a-z, 0-9 and '-', starting with a
/// letter, not ending with '-'.
fn rfc1035_name(s: &str, len: RangeInclusive<usize>) -> bool {
    made_of(s, len, lower_digit_or_dash)
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
}

fn lower_digit_or_dash(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
}

/// A check's answer: `Ok`, or what was expected (the message is built only then).
fn verdict(ok: bool, expected: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(expected()) }
}

/// `https://<host>[:<port>]` with nothing after it but an optional `/`: the host and port.
pub fn https_host_port(s: &str) -> Result<(String, Option<u16>), String> {
    let expected = || {
        format!(
            "expected an https URL like https://api-int.mycluster.example.com:6443, found {s:?}"
        )
    };
    let rest = s.strip_prefix("https://").ok_or_else(expected)?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => {
            let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(expected)?;
            (host, Some(port))
        }
        None => (rest, None),
    };
    dns_domain(host).map_err(|_| expected())?;
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_issue_s_bad_values_are_refused() {
        assert!(dns_domain("exa mple..com/x").is_err());
        assert!(dns_label("My_Cluster!.x").is_err());
        assert!(aws_subnet_id("subnet-").is_err());
        assert!(aws_subnet_id("subnet-ZZ!! ;rm").is_err());
        assert!(aws_hosted_zone_id("not a zone id!/..").is_err());
        assert!(https_host_port("not a url").is_err());
        assert!(guid("").is_err());
    }

    #[test]
    fn real_values_pass() {
        dns_label("mycluster").unwrap();
        dns_domain("example.com.").unwrap();
        aws_subnet_id("subnet-0a1b2c3d4e5f60001").unwrap();
        aws_subnet_id("subnet-12345678").unwrap();
        aws_hosted_zone_id("Z1D633PJN98FT9").unwrap();
        aws_region("us-gov-west-1").unwrap();
        azure_region("eastus").unwrap();
        azure_resource_group("dns-rg").unwrap();
        azure_network_name("mycluster-vnet", 2, 64).unwrap();
        guid("6cc926cb-f553-56d0-b741-51b0fa28aba8").unwrap();
        gcp_project("example-project").unwrap();
        gcp_region("northamerica-northeast1").unwrap();
        gcp_name("mycluster-7xk2p-network").unwrap();
        aws_access_key_id("AKIAIOSFODNN7EXAMPLE").unwrap();
        assert_eq!(
            https_host_port("https://api-int.mycluster.example.com:6443").unwrap(),
            ("api-int.mycluster.example.com".to_string(), Some(6443))
        );
    }

    #[test]
    fn a_guid_error_never_quotes_the_value() {
        let e = guid("secret-ish-value").unwrap_err();
        assert!(!e.contains("secret-ish-value"), "{e}");
        let e = aws_access_key_id("AKIA short").unwrap_err();
        assert!(!e.contains("AKIA short"), "{e}");
    }

    proptest! {
        // Whatever the checks accept is safe to put into a resource name, a DNS name or an
        // API path: no whitespace, slash, quote or shell character gets through.
        #[test]
        fn accepted_values_hold_no_separator(s in "\\PC{0,70}") {
            let unsafe_char = |c: char| c.is_whitespace() || "/\\\"';&|$`*?<>".contains(c);
            for check in [dns_label, dns_domain, aws_subnet_id, aws_hosted_zone_id, aws_region,
                          azure_region, azure_resource_group, gcp_project, gcp_region, gcp_name] {
                if check(&s).is_ok() {
                    prop_assert!(!s.chars().any(unsafe_char), "{s:?}");
                }
            }
        }

        #[test]
        fn every_dns_label_of_the_pattern_is_accepted(s in "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?") {
            prop_assert!(dns_label(&s).is_ok());
            let domain = format!("{s}.example.com");
            prop_assert!(dns_domain(&domain).is_ok());
        }

        #[test]
        fn urls_never_panic_and_round_trip(host in "[a-z]{1,10}(\\.[a-z]{1,10}){0,3}", port in 1u16..) {
            let url = format!("https://{host}:{port}");
            prop_assert_eq!(https_host_port(&url).unwrap(), (host, Some(port)));
        }

        #[test]
        fn any_text_is_judged_without_panic(s in "\\PC{0,300}") {
            let _ = https_host_port(&s);
            let _ = guid(&s);
            let _ = aws_access_key_id(&s);
            let _ = azure_network_name(&s, 1, 80);
        }
    }
}
