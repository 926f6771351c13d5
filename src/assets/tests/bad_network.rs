//! Bad network inputs (machine networks, subnets, zones): each refusal names the file, the field
//! and what was expected.

use super::*;

#[test]
fn machine_network_prefix_too_long_is_rejected() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "      - cidr: 10.0.0.0/16",
        "      - cidr: 10.0.0.0/33",
        "data.install-config: networking.machineNetwork[0].cidr",
        "prefix length \"33\" is not 0..=32",
    );
}

#[test]
fn machine_network_that_is_not_a_cidr_is_rejected() {
    refused(
        "aws-dualstack",
        CLUSTER_CONFIG,
        "      - cidr: fd00:10::/48",
        "      - cidr: \"fd00:10::\"",
        "data.install-config: networking.machineNetwork[1].cidr",
        "expected a CIDR like 10.0.0.0/16",
    );
    refused(
        "aws",
        CLUSTER_CONFIG,
        "      - cidr: 10.0.0.0/16",
        "      - cidr: 10.0.0/16",
        "data.install-config: networking.machineNetwork[0].cidr",
        "\"10.0.0\" is not an IP address",
    );
}

#[test]
fn aws_without_an_internal_lb_subnet_is_rejected() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("type: ControlPlaneInternalLB").count(), 3);
    std::fs::write(
        &path,
        text.replace("type: ControlPlaneInternalLB", "type: ClusterNode"),
    )
    .unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "no subnet has the role ControlPlaneInternalLB",
    );
}

#[test]
fn unknown_subnet_role_type_names_the_role() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CLUSTER_CONFIG);
    let text = std::fs::read_to_string(&path).unwrap();
    // The first subnet's third role.
    std::fs::write(
        &path,
        text.replacen("type: BootstrapNode", "type: Bootstrapper", 1),
    )
    .unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[0].roles[2].type",
        "expected one of ClusterNode",
    );
    assert!(err.problem.contains("ControlPlaneInternalLB"), "{err}");
}

#[test]
fn bad_subnet_id_is_rejected() {
    refused(
        "aws",
        CLUSTER_CONFIG,
        "- id: subnet-0a1b2c3d4e5f60002",
        "- id: vpc-0a1b2c3d4e5f60002",
        "data.install-config: platform.aws.vpc.subnets[1].id",
        "expected a subnet id",
    );
}
