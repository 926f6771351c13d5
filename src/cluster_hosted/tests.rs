#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use bootstrap_cloud::{IpFamily, Reservation, ReservationKey, Scope};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(name)
}

fn reservation(scope: Scope, ip: &str, subnet: &str) -> Reservation {
    Reservation {
        key: ReservationKey {
            scope,
            family: IpFamily::Ipv4,
            placement: Some(subnet.to_string()),
        },
        id: format!("id-{ip}"),
        name: format!("rsvd-{subnet}"),
        ip: ip.parse().unwrap(),
    }
}

/// Three EIPs and three ENI IPs, one per subnet of the aws-user-dns fixture.
fn kept() -> BTreeMap<ReservationKey, Reservation> {
    [
        reservation(Scope::Public, "203.0.113.10", "subnet-0a1b2c3d4e5f60011"),
        reservation(Scope::Public, "203.0.113.11", "subnet-0a1b2c3d4e5f60012"),
        reservation(Scope::Public, "203.0.113.12", "subnet-0a1b2c3d4e5f60013"),
        reservation(Scope::Private, "10.0.1.20", "subnet-0a1b2c3d4e5f60001"),
        reservation(Scope::Private, "10.0.2.20", "subnet-0a1b2c3d4e5f60002"),
        reservation(Scope::Private, "10.0.3.20", "subnet-0a1b2c3d4e5f60003"),
    ]
    .into_iter()
    .map(|r| (r.key.clone(), r))
    .collect()
}

fn infra_doc(name: &str) -> Doc {
    Doc::read(&fixture(name).join(INFRASTRUCTURE)).unwrap()
}

fn ips(list: &[&str]) -> Vec<IpAddr> {
    list.iter().map(|s| s.parse().unwrap()).collect()
}

#[test]
fn golden_cluster_hosted_manifests_aws_user_dns() {
    let spec = assets::load(&fixture("aws-user-dns")).unwrap();
    let lb = LbIps::of(&spec, &kept());
    let infra = with_lb_ips(&infra_doc("aws-user-dns"), "aws", &lb).unwrap();
    let actual = format!(
        "# {INFRASTRUCTURE}\n{}---\n# {LB_CONFIG}\n{}",
        serde_saphyr::to_string(&infra).unwrap(),
        serde_saphyr::to_string(&lb_config(&lb)).unwrap()
    );
    crate::golden::assert_golden("tests/golden/cluster-hosted/aws-user-dns.yaml", &actual);
}

#[test]
fn a_public_api_publishes_the_public_ips_and_the_lb_config_joins_them_with_commas() {
    let spec = assets::load(&fixture("aws-user-dns")).unwrap();
    let lb = LbIps::of(&spec, &kept());
    assert_eq!(lb.api_int, ips(&["10.0.1.20", "10.0.2.20", "10.0.3.20"]));
    assert_eq!(
        lb.api,
        ips(&["203.0.113.10", "203.0.113.11", "203.0.113.12"])
    );
    let cm = lb_config(&lb);
    assert_eq!(cm["metadata"]["namespace"], "openshift-infra");
    assert_eq!(cm["metadata"]["name"], "openshift-lb-config");
    assert_eq!(
        cm["data"]["internal-api-lb-ips"],
        "10.0.1.20,10.0.2.20,10.0.3.20"
    );
    assert_eq!(
        cm["data"]["external-api-lb-ips"],
        "203.0.113.10,203.0.113.11,203.0.113.12"
    );
}

#[test]
fn a_private_api_publishes_the_internal_ips_as_the_api_ips_too() {
    let mut spec = assets::load(&fixture("aws-user-dns")).unwrap();
    spec.publish = crate::assets::Publish::Internal;
    let lb = LbIps::of(&spec, &kept());
    assert_eq!(lb.api, lb.api_int);
    assert_eq!(lb.api, ips(&["10.0.1.20", "10.0.2.20", "10.0.3.20"]));
}

#[test]
fn every_other_field_of_the_infrastructure_stays_and_a_second_edit_changes_nothing() {
    let doc = infra_doc("aws-user-dns");
    let lb = LbIps {
        api_int: ips(&["10.0.1.20"]),
        api: ips(&["203.0.113.10"]),
    };
    let mut edited = with_lb_ips(&doc, "aws", &lb).unwrap();
    let config = &edited["status"]["platformStatus"]["aws"]["cloudLoadBalancerConfig"];
    assert_eq!(
        config["clusterHosted"]["apiIntLoadBalancerIPs"],
        serde_json::json!(["10.0.1.20"])
    );
    assert_eq!(
        config["clusterHosted"]["apiLoadBalancerIPs"],
        serde_json::json!(["203.0.113.10"])
    );
    let again = Doc {
        file: doc.file.clone(),
        root: edited.clone(),
    };
    assert_eq!(
        with_lb_ips(&again, "aws", &lb).unwrap(),
        edited,
        "idempotent"
    );
    edited["status"]["platformStatus"]["aws"]["cloudLoadBalancerConfig"]
        .as_object_mut()
        .unwrap()
        .remove("clusterHosted");
    assert_eq!(edited, doc.root, "nothing else changed");
}

#[test]
fn ingress_ips_already_published_are_kept() {
    let mut doc = infra_doc("aws-user-dns");
    doc.root["status"]["platformStatus"]["aws"]["cloudLoadBalancerConfig"]["clusterHosted"] = serde_json::json!({"ingressLoadBalancerIPs": ["10.0.9.9"], "apiLoadBalancerIPs": ["10.9.9.9"]});
    let lb = LbIps {
        api_int: ips(&["10.0.1.20"]),
        api: ips(&["203.0.113.10"]),
    };
    let edited = with_lb_ips(&doc, "aws", &lb).unwrap();
    let hosted =
        &edited["status"]["platformStatus"]["aws"]["cloudLoadBalancerConfig"]["clusterHosted"];
    assert_eq!(
        hosted["ingressLoadBalancerIPs"],
        serde_json::json!(["10.0.9.9"])
    );
    assert_eq!(
        hosted["apiLoadBalancerIPs"],
        serde_json::json!(["203.0.113.10"])
    );
}

#[test]
fn a_manifest_that_is_not_the_expected_shape_is_refused_naming_the_field() {
    let lb = LbIps {
        api_int: ips(&["10.0.1.20"]),
        api: ips(&["10.0.1.20"]),
    };
    let cases: [(&str, serde_json::Value, &str); 4] = [
        ("kind", serde_json::json!("DNS"), "kind"),
        ("status", serde_json::json!("up"), "status"),
        (
            "config",
            serde_json::json!("ClusterHosted"),
            "status.platformStatus.aws.cloudLoadBalancerConfig",
        ),
        (
            "hosted",
            serde_json::json!(["10.0.0.1"]),
            "status.platformStatus.aws.cloudLoadBalancerConfig.clusterHosted",
        ),
    ];
    for (what, value, field) in cases {
        let mut doc = infra_doc("aws-user-dns");
        match what {
            "kind" => doc.root["kind"] = value,
            "status" => doc.root["status"] = value,
            "config" => {
                doc.root["status"]["platformStatus"]["aws"]["cloudLoadBalancerConfig"] = value
            }
            _ => {
                doc.root["status"]["platformStatus"]["aws"]["cloudLoadBalancerConfig"]["clusterHosted"] =
                    value
            }
        }
        let err = with_lb_ips(&doc, "aws", &lb).unwrap_err();
        assert_eq!(err.field, field, "{what}: {err}");
        assert!(err.file.ends_with(INFRASTRUCTURE), "{err}");
    }
}

#[test]
fn more_than_sixteen_ips_are_refused_as_the_api_refuses_them() {
    let doc = infra_doc("aws-user-dns");
    let many: Vec<IpAddr> = (1..=17u8).map(|i| IpAddr::from([10, 0, 1, i])).collect();
    let ok = LbIps {
        api_int: many[..16].to_vec(),
        api: many[..16].to_vec(),
    };
    assert!(with_lb_ips(&doc, "aws", &ok).is_ok());
    let err = with_lb_ips(
        &doc,
        "aws",
        &LbIps {
            api_int: many,
            api: Vec::new(),
        },
    )
    .unwrap_err();
    assert!(
        err.field.ends_with("clusterHosted.apiIntLoadBalancerIPs"),
        "{err}"
    );
    assert!(err.problem.contains("at most 16"), "{err}");
}

#[test]
fn an_lb_config_file_is_taken_over_only_when_it_is_the_installers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openshift-lb-config.yaml");
    assert!(existing_lb_config(&path).unwrap().is_none(), "absent");
    std::fs::write(&path, "").unwrap();
    assert!(
        existing_lb_config(&path).unwrap().is_none(),
        "empty, as the installer leaves it"
    );
    let lb = LbIps {
        api_int: ips(&["10.0.1.20"]),
        api: ips(&["10.0.1.20"]),
    };
    std::fs::write(&path, serde_saphyr::to_string(&lb_config(&lb)).unwrap()).unwrap();
    assert_eq!(
        existing_lb_config(&path).unwrap().unwrap().root,
        lb_config(&lb)
    );
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  namespace: openshift-infra\n",
    )
    .unwrap();
    // Doc has no Debug (it may hold a secret): no unwrap_err.
    let Err(err) = existing_lb_config(&path) else {
        panic!("another ConfigMap was taken over")
    };
    assert_eq!(err.field, "metadata.name", "{err}");
}

#[test]
fn the_placeholders_count_the_reservations_to_come() {
    let spec = assets::load(&fixture("aws-user-dns")).unwrap();
    let p = placeholders(&spec);
    assert_eq!((p.api_int.len(), p.api.len()), (3, 3));
}
