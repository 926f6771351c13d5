//! Who may reach each load balancer: the machine-config server (its ignition holds secrets)
//! only from the machine network, the API as the installer's (a child of the render tests, for
//! their reservations and fixtures).

use super::*;

/// GCP: the cloud provider's firewall rule for an internal Service allows its
/// `loadBalancerSourceRanges`, 0.0.0.0/0 when unset. The machine-config server serves ignition
/// (secrets): only the machine network may reach 22623, as the installer's firewall allows
/// only the cluster's machines; the API Service stays open as the installer's (public) is.
#[test]
fn gcp_machine_config_server_is_open_to_the_machine_network_only() {
    // The `loadBalancerSourceRanges` of the Service named `name`, rendered for `fixture_name`.
    let ranges = |fixture_name: &str, name: &str| {
        let spec = fixture(fixture_name);
        services(&spec, &reservations(&spec), None)
            .unwrap()
            .into_iter()
            .find(|r| r.service.metadata.name.as_deref() == Some(name))
            .unwrap()
            .service
            .spec
            .unwrap()
            .load_balancer_source_ranges
    };
    const MCS: &str = "internal-lb-machine-config-server";
    assert_eq!(ranges("gcp", MCS), Some(vec!["10.0.0.0/16".to_string()]));
    assert_eq!(ranges("gcp", "internal-lb"), None);
    // Dual stack: the IPv4 ranges only (the internal load balancer is IPv4).
    assert_eq!(
        ranges("gcp-dualstack", MCS),
        Some(vec!["10.0.0.0/16".to_string()])
    );
}

/// The AWS Services as the installer's NLBs (openshift/installer
/// pkg/asset/manifests/aws/cluster.go): cross-zone on, HTTPS health checks of /readyz every
/// 10 s with thresholds of 2; the internal NLB (which carries the machine-config server, whose
/// ignition holds secrets) admits only the machine network, the external one everyone.
#[test]
fn aws_load_balancers_are_the_installers_with_the_internal_one_closed_to_all_but_the_machine_network()
 {
    let spec = fixture("aws");
    let rendered = services(&spec, &reservations(&spec), None).unwrap();
    let by_name = |name: &str| {
        rendered
            .iter()
            .map(|r| &r.service)
            .find(|s| s.metadata.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let aws = |key: &str| format!("service.beta.kubernetes.io/aws-load-balancer-{key}");
    for (name, hc_port) in [("external-lb", "traffic-port"), ("internal-lb", "6443")] {
        let svc = by_name(name);
        let a = svc.metadata.annotations.as_ref().unwrap();
        for (key, value) in [
            ("attributes", "load_balancing.cross_zone.enabled=true"),
            ("healthcheck-protocol", "HTTPS"),
            ("healthcheck-port", hc_port),
            ("healthcheck-path", "/readyz"),
            ("healthcheck-interval", "10"),
            ("healthcheck-timeout", "10"),
            ("healthcheck-healthy-threshold", "2"),
            ("healthcheck-unhealthy-threshold", "2"),
        ] {
            assert_eq!(
                a.get(&aws(key)).map(String::as_str),
                Some(value),
                "{name} {key}"
            );
        }
    }
    let ranges = |svc: &k8s_openapi::api::core::v1::Service| {
        svc.spec
            .as_ref()
            .unwrap()
            .load_balancer_source_ranges
            .clone()
    };
    assert_eq!(
        ranges(by_name("internal-lb")),
        Some(vec!["10.0.0.0/16".to_string()]),
        "22623 and 6443 of the internal NLB: the fixture's machine network only"
    );
    assert_eq!(
        ranges(by_name("external-lb")),
        None,
        "the public API is open to every address, as the installer's"
    );

    // Every IPv4 machine network, as a network address; IPv6 ones are left out (the
    // controller refuses a v6 range on an IPv4 NLB); none listed: the installer's default.
    let with_networks = |networks: &[&str]| {
        let mut spec = fixture("aws");
        spec.machine_networks = networks
            .iter()
            .map(|n| {
                let (ip, len) = n.split_once('/').unwrap();
                crate::assets::Cidr {
                    network: ip.parse().unwrap(),
                    prefix: len.parse().unwrap(),
                }
            })
            .collect();
        let rendered = services(&spec, &reservations(&spec), None).unwrap();
        let internal = rendered
            .iter()
            .find(|r| r.service.metadata.name.as_deref() == Some("internal-lb"))
            .unwrap();
        ranges(&internal.service).unwrap_or_default()
    };
    assert_eq!(
        with_networks(&[
            "10.0.5.7/16",
            "fd00:10::/48",
            "192.168.7.0/24",
            "10.0.0.0/16"
        ]),
        ["10.0.0.0/16", "192.168.7.0/24"]
    );
    assert_eq!(with_networks(&[]), ["10.0.0.0/16"]);
}
