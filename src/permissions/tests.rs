use super::*;
use serde_json::json;
use std::path::Path;

fn fixture(name: &str) -> ClusterSpec {
    crate::assets::load(&Path::new("tests/fixtures/assets").join(name)).unwrap()
}

fn statement<'a>(policy: &'a Value, sid: &str) -> &'a Value {
    policy["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["Sid"] == sid)
        .unwrap_or_else(|| panic!("no {sid}: {policy}"))
}

/// A zone named by id is the only zone the Route53 writes may touch; the private zone of
/// another account is written through the role, so the cluster's identity gets AssumeRole
/// on that role and no Route53 write of it; ReleaseAddress only on what carries our tag.
#[test]
fn the_aws_policy_is_scoped_by_the_assets() {
    let pool = document("aws", Some(&fixture("aws-public-ipv4-pool")), &Command::ALL).unwrap();
    // The private zone is found by its tags (its id is known only after the lookup).
    let zones = statement(&pool, "HostedZones");
    assert_eq!(
        zones["Resource"],
        json!("arn:aws:route53:::hostedzone/*"),
        "{pool}"
    );
    assert!(
        pool.to_string().contains("route53:ListTagsForResource"),
        "{pool}"
    );
    let mut named = AwsScoping::of(Some(&fixture("aws-public-ipv4-pool")));
    named.plan.zones = vec![Some("Z0PUBLIC".into()), Some("Z0PRIVATE".into())];
    named.plan.zone_by_tags = false;
    let named = aws_policy(&named, &Command::ALL);
    assert_eq!(
        statement(&named, "HostedZones")["Resource"],
        json!([
            "arn:aws:route53:::hostedzone/Z0PUBLIC",
            "arn:aws:route53:::hostedzone/Z0PRIVATE"
        ]),
        "{named}"
    );
    assert!(
        !named.to_string().contains("ListHostedZonesByName"),
        "{named}"
    );
    let owned = statement(&pool, "OwnedByTheCluster");
    assert_eq!(
        owned["Condition"]["StringEquals"]["aws:ResourceTag/kubernetes.io/cluster/mycluster-7xk2p"],
        "owned",
        "{pool}"
    );
    assert!(
        pool.to_string().contains("ec2:DescribePublicIpv4Pools"),
        "{pool}"
    );
    let tag = statement(&pool, "TagOnCreate");
    assert_eq!(
        tag["Condition"]["StringEquals"]["ec2:CreateAction"],
        json!(["AllocateAddress", "CreateNetworkInterface"])
    );

    let cross = document(
        "aws",
        Some(&fixture("aws-cross-account-zone")),
        &Command::ALL,
    )
    .unwrap();
    assert_eq!(
        statement(&cross, "HostedZoneRole")["Action"],
        json!(["sts:AssumeRole"])
    );
    assert_eq!(
        statement(&cross, "HostedZoneRole")["Resource"],
        "arn:aws:iam::111122223333:role/ocp-shared-vpc-dns"
    );
    assert!(!cross.to_string().contains("route53:"), "{cross}");

    let user_dns = document("aws", Some(&fixture("aws-user-dns")), &Command::ALL).unwrap();
    assert!(!user_dns.to_string().contains("route53:"), "{user_dns}");
    // Only the cluster: no cloud action.
    let none = aws_policy(&AwsScoping::of(None), &[Command::CapabilitiesApply]);
    assert_eq!(none["Statement"], json!([]));
    assert!(document("gcp", Some(&fixture("aws")), &Command::ALL).is_err());
}

/// GCP's role holds each project's permissions (the Shared VPC host's subnetwork use);
/// Azure's role is assignable to exactly the groups it needs.
#[test]
fn the_gcp_and_azure_roles_follow_the_assets() {
    let gcp = document("gcp", Some(&fixture("gcp-shared-vpc")), &Command::ALL).unwrap();
    let held = gcp["includedPermissions"].as_array().unwrap();
    assert!(held.contains(&json!("compute.subnetworks.use")), "{gcp}");
    assert!(
        gcp["description"]
            .as_str()
            .unwrap()
            .contains("example-host-project"),
        "{gcp}"
    );
    let user_dns = document("gcp", Some(&fixture("gcp-user-dns")), &Command::ALL).unwrap();
    assert!(!user_dns.to_string().contains("dns."), "{user_dns}");
    let azure = document("azure", Some(&fixture("azure")), &Command::ALL).unwrap();
    let scopes = azure["AssignableScopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 4, "{azure}");
    assert!(
        scopes.contains(&json!(
            "/subscriptions/00000000-0000-0000-0000-000000000001"
        )),
        "{azure}"
    );
    assert!(
        azure["Actions"]
            .as_array()
            .unwrap()
            .contains(&json!("Microsoft.Network/publicIPAddresses/delete")),
        "{azure}"
    );
    let only_kube = document(
        "azure",
        Some(&fixture("azure")),
        &[Command::CapabilitiesApply],
    );
    assert_eq!(only_kube.unwrap()["Actions"], json!([]));
}

#[test]
fn the_cluster_role_differs_per_command() {
    let apply = kube_cluster_role(&[Command::CapabilitiesApply]);
    assert_eq!(apply["rules"].as_array().unwrap().len(), 1, "{apply}");
    let all = kube_cluster_role(&Command::ALL);
    assert!(all.to_string().contains("services"), "{all}");
}
