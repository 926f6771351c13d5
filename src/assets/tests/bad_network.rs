//! Bad network inputs (machine networks, subnets, zones): each refusal names the file, the field
//! and what was expected.

use super::*;

#[test]
fn bad_machine_networks_and_subnet_ids_are_refused() {
    assert_refusals(&[
        Refusal {
            case: "a machine network's prefix too long",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "      - cidr: 10.0.0.0/16",
            to: "      - cidr: 10.0.0.0/33",
            field: "data.install-config: networking.machineNetwork[0].cidr",
            problem_has: &["prefix length \"33\" is not 0..=32"],
        },
        Refusal {
            case: "a machine network without a prefix",
            fixture: "aws-dualstack",
            file: CLUSTER_CONFIG,
            from: "      - cidr: fd00:10::/48",
            to: "      - cidr: \"fd00:10::\"",
            field: "data.install-config: networking.machineNetwork[1].cidr",
            problem_has: &["expected a CIDR like 10.0.0.0/16"],
        },
        Refusal {
            case: "a machine network that is not an IP address",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "      - cidr: 10.0.0.0/16",
            to: "      - cidr: 10.0.0/16",
            field: "data.install-config: networking.machineNetwork[0].cidr",
            problem_has: &["\"10.0.0\" is not an IP address"],
        },
        Refusal {
            case: "a VPC id for a subnet id",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "- id: subnet-0a1b2c3d4e5f60002",
            to: "- id: vpc-0a1b2c3d4e5f60002",
            field: "data.install-config: platform.aws.vpc.subnets[1].id",
            problem_has: &["expected a subnet id"],
        },
    ]);
}

/// Each load balancer role some subnet must have: (role, the role it is changed to, what the
/// problem adds).
#[test]
fn aws_without_a_subnet_of_a_needed_load_balancer_role_is_rejected() {
    for (role, other_role, why) in [
        ("ControlPlaneInternalLB", "ClusterNode", ""),
        (
            "ControlPlaneExternalLB",
            "IngressControllerLB",
            "; publish External needs at least one",
        ),
    ] {
        let dir = rewritten("aws", CLUSTER_CONFIG, |text| {
            let typed = format!("type: {role}");
            assert_eq!(text.matches(&typed).count(), 3, "{role}");
            text.replace(&typed, &format!("type: {other_role}"))
        });
        let err = load_err(dir.path(), CLUSTER_CONFIG);
        assert_names(
            role,
            &err,
            "data.install-config: platform.aws.vpc.subnets",
            &[&format!("no subnet has the role {role}{why}")],
        );
    }
}

#[test]
fn unknown_subnet_role_type_names_the_role() {
    // The first subnet's third role.
    let dir = rewritten("aws", CLUSTER_CONFIG, |text| {
        text.replacen("type: BootstrapNode", "type: Bootstrapper", 1)
    });
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets[0].roles[2].type",
        "expected one of ClusterNode",
    );
    assert!(err.problem.contains("ControlPlaneInternalLB"), "{err}");
}
