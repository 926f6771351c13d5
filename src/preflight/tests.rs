use super::*;
use crate::assets::Cidr;
use crate::fixtures::aws_with_bootstrap_ip as spec;
use bootstrap_cloud::{IpFamily, ReservationKey, Scope};

fn reservation(ip: &str) -> Reservation {
    Reservation {
        key: ReservationKey {
            scope: Scope::Private,
            family: IpFamily::Ipv4,
            placement: Some("subnet-1".into()),
        },
        id: "eni-1".into(),
        name: "n".into(),
        ip: ip.parse().unwrap(),
    }
}

#[test]
fn the_bootstrap_ip_must_be_in_the_machine_network_and_none_of_ours() {
    let s = spec(Some("10.0.1.10"));
    assert!(
        !s.machine_networks.is_empty(),
        "the fixture has a machine network"
    );
    assert_eq!(bootstrap_ip(&s, &[])[0].verdict, Verdict::Pass);
    let held = bootstrap_ip(&s, &[reservation("10.0.1.10")]);
    assert_eq!(held[0].verdict, Verdict::Fail);
    assert!(held[0].reason.contains("eni-1"), "{:?}", held[0]);
    let outside = bootstrap_ip(&spec(Some("192.168.7.7")), &[]);
    assert_eq!(outside[0].verdict, Verdict::Fail);
    assert!(outside[0].reason.contains("outside"), "{:?}", outside[0]);
    assert_eq!(bootstrap_ip(&spec(None), &[])[0].verdict, Verdict::Fail);
}

#[test]
fn cidrs_contain_only_their_own_family_and_range() {
    let net = Cidr {
        network: "10.0.0.0".parse().unwrap(),
        prefix: 16,
    };
    assert!(net.contains("10.0.255.1".parse().unwrap()));
    assert!(!net.contains("10.1.0.1".parse().unwrap()));
    assert!(!net.contains("::1".parse().unwrap()));
    let all = Cidr {
        network: "0.0.0.0".parse().unwrap(),
        prefix: 0,
    };
    assert!(all.contains("192.0.2.1".parse().unwrap()));
    let v6 = Cidr {
        network: "fd00::".parse().unwrap(),
        prefix: 48,
    };
    assert!(v6.contains("fd00::5".parse().unwrap()));
    assert!(!v6.contains("fd01::5".parse().unwrap()));
}

#[test]
fn a_skipped_failure_no_longer_fails_and_an_unknown_name_is_refused() {
    let mut report = Report::new(
        "aws",
        vec![
            Check::pass("a", "fine"),
            Check::fail("quota-elastic-ips", "full", "release some"),
        ],
    );
    assert!(!report.passed);
    assert_eq!(report.failed().len(), 1);
    assert!(report.skip(&["nope".into()]).is_err());
    report.skip(&["quota-elastic-ips".into()]).unwrap();
    assert!(report.passed);
    assert_eq!(report.checks[1].verdict, Verdict::Skipped);
    assert!(report.checks[1].reason.contains("was FAIL"));
    let text = report.to_text();
    assert!(text.contains("skip  quota-elastic-ips"), "{text}");
    assert!(text.contains("1 skipped"), "{text}");
}

#[test]
fn needs_count_only_what_is_not_reserved_yet() {
    let s = spec(Some("10.0.1.10"));
    let wanted = crate::plan::wanted_reservations(&s);
    let none = needs(&s, &[], Vec::new());
    let public = wanted
        .iter()
        .filter(|w| w.key.scope == Scope::Public)
        .count() as u32;
    assert_eq!(none.public_addresses, public);
    assert!(!none.subnets.is_empty());
    let ours: Vec<Reservation> = wanted
        .iter()
        .map(|w| Reservation {
            key: w.key.clone(),
            id: "x".into(),
            name: w.name.clone(),
            ip: "10.0.9.9".parse().unwrap(),
        })
        .collect();
    let all = needs(&s, &ours, Vec::new());
    assert_eq!(all.public_addresses, 0);
    assert!(all.private_addresses.is_empty());
    // Reserved or not, the plan still holds (and may relabel or delete) every kind.
    let scopes: std::collections::BTreeSet<Scope> = wanted.iter().map(|w| w.key.scope).collect();
    assert_eq!(all.address_scopes, scopes);
    assert_eq!(none.address_scopes, scopes);
}

#[test]
fn skip_names_are_checked_against_the_clouds_lines_before_anything_runs() {
    let s = spec(Some("10.0.1.10"));
    let skips: Vec<String> = ["subnets", "aws-lb-controller", "quota-addresses"]
        .map(String::from)
        .to_vec();
    let errors = unknown_skips(&s.platform, &skips);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let shown = errors[0].to_string();
    assert!(
        shown.contains("BOOTSTRAP_AGENT_SKIP_PREFLIGHT") && shown.contains("\"quota-addresses\""),
        "{shown}"
    );
    assert!(shown.contains("no such preflight check on aws"), "{shown}");
    assert!(check_names(&Platform::None).contains(&"cloud"));
    assert!(!check_names(&Platform::None).contains(&"subnets"));
}
