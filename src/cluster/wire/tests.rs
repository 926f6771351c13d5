use super::*;

#[test]
fn overrides_parse_and_pick_the_exact_ip_first() {
    let any = DialOverride::parse("*:6443=127.0.0.1:5000").unwrap();
    assert_eq!(any.ip, None);
    let one = DialOverride::parse("203.0.113.5:6443=127.0.0.1:5001").unwrap();
    let v6 = DialOverride::parse("[2001:db8::1]:22623=[::1]:5002").unwrap();
    assert_eq!(v6.ip, Some("2001:db8::1".parse().unwrap()));
    for bad in [
        "",
        "1.2.3.4:6443",
        "1.2.3.4=127.0.0.1:1",
        "x:6443=127.0.0.1:1",
        "*:6443=nowhere",
    ] {
        assert!(DialOverride::parse(bad).is_err(), "{bad}");
    }
    let proof = WireProof {
        roots: Arc::new(rustls::RootCertStore::empty()),
        server_name: rustls::pki_types::ServerName::try_from("api.example.com").unwrap(),
        overrides: vec![any, one],
    };
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    assert_eq!(
        proof.target(ip("203.0.113.5"), 6443),
        "127.0.0.1:5001".parse().unwrap()
    );
    assert_eq!(
        proof.target(ip("203.0.113.9"), 6443),
        "127.0.0.1:5000".parse().unwrap()
    );
    assert_eq!(
        proof.target(ip("203.0.113.9"), 22623),
        "203.0.113.9:22623".parse().unwrap()
    );
}

#[test]
fn chunked_bodies_are_joined() {
    assert_eq!(
        dechunk(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
            "2\r\nok\r\n0\r\n\r\n"
        ),
        "ok"
    );
    assert_eq!(dechunk("HTTP/1.1 200 OK", "ok"), "ok");
}

#[test]
fn an_ip_serves_mcs_when_a_service_claiming_it_exposes_22623() {
    let claim = |name: &str, ips: &[&str], ports: &[u16]| crate::render::ServiceClaim {
        namespace: "ns".into(),
        name: name.into(),
        claims: ips.iter().map(|s| s.parse().unwrap()).collect(),
        needs_aws_lb_controller: false,
        ports: ports.to_vec(),
    };
    let kept = kept_ips(&[
        claim("external", &["203.0.113.1"], &[6443]),
        claim("internal", &["10.0.1.5"], &[6443]),
        claim("mcs", &["10.0.1.5"], &[22623]),
    ]);
    assert!(!kept[&"203.0.113.1".parse::<IpAddr>().unwrap()]);
    assert!(kept[&"10.0.1.5".parse::<IpAddr>().unwrap()]);
}
