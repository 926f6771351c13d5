//! AWS subnets: the installer's VPC, flat lists, and the subnets settled from what EC2
//! reports (pure).

use super::*;

#[test]
fn aws_installer_vpc_leaves_the_subnets_to_the_cluster_tag() {
    let spec = load_fixture("aws-installer-vpc");
    assert_common_fields(&spec);
    let lookup = lookup(&spec);
    assert!(matches!(lookup.how, LookupKind::ClusterTag), "{lookup:?}");
    assert!(lookup.file.ends_with(CLUSTER_CONFIG));
    assert_eq!(
        lookup.query(),
        bootstrap_cloud::subnets::SubnetQuery::ClusterTag
    );
    let aws = aws_spec(&spec);
    assert!(public(aws).is_empty() && private(aws).is_empty());
    assert!(spec.network_values().is_empty(), "nothing known yet");
}

#[test]
fn aws_flat_list_as_converted_by_the_installer_is_classified_at_run_time() {
    // Both keys, as the installer writes them: vpc.subnets (no roles) is used.
    let spec = load_fixture("aws-flat-subnets");
    let ids: Vec<&str> = PRIVATE_SUBNETS
        .iter()
        .chain(&PUBLIC_SUBNETS)
        .copied()
        .collect();
    let fields: Vec<String> = (0..6)
        .map(|i| format!("platform.aws.vpc.subnets[{i}].id"))
        .collect();
    let expected: Vec<(&str, &str)> = ids
        .iter()
        .zip(&fields)
        .map(|(id, field)| (*id, field.as_str()))
        .collect();
    assert_eq!(listed(&spec), expected);
    assert_eq!(
        lookup(&spec).query(),
        bootstrap_cloud::subnets::SubnetQuery::Ids(ids.iter().map(|s| s.to_string()).collect())
    );
}

#[test]
fn aws_deprecated_flat_list_alone_is_read_from_platform_aws_subnets() {
    // An older installer wrote only the deprecated key.
    let dir = rewritten("aws-flat-subnets", CLUSTER_CONFIG, |text| {
        let start = text.find("        vpc:\n").unwrap();
        let end = text.find("    pullSecret:").unwrap();
        format!("{}{}", &text[..start], &text[end..])
    });
    let spec = load(dir.path()).unwrap();
    let entries = listed(&spec);
    assert_eq!(entries.len(), 6);
    assert_eq!(entries[0], (PRIVATE_SUBNETS[0], "platform.aws.subnets[0]"));
    assert_eq!(entries[5], (PUBLIC_SUBNETS[2], "platform.aws.subnets[5]"));
}

#[test]
fn bad_flat_lists_and_roles_are_refused_naming_the_entry() {
    assert_refusals(&[
        Refusal {
            case: "a flat list entry that is a VPC id",
            fixture: "aws-flat-subnets",
            file: CLUSTER_CONFIG,
            from: "        - subnet-0a1b2c3d4e5f60002\n",
            to: "        - vpc-0a1b2c3d4e5f60002\n",
            field: "data.install-config: platform.aws.subnets[1]",
            problem_has: &[
                "expected a subnet id like subnet-0123456789abcdef0, found \"vpc-0a1b2c3d4e5f60002\"",
            ],
        },
        Refusal {
            case: "a flat list entry that is a mapping",
            fixture: "aws-flat-subnets",
            file: CLUSTER_CONFIG,
            from: "        - subnet-0a1b2c3d4e5f60003\n",
            to: "        - {id: subnet-0a1b2c3d4e5f60003}\n",
            field: "data.install-config: platform.aws.subnets[2]",
            problem_has: &["expected a subnet id like subnet-0123456789abcdef0, found a mapping"],
        },
        Refusal {
            case: "a flat list that disagrees with its converted copy",
            fixture: "aws-flat-subnets",
            file: CLUSTER_CONFIG,
            from: "        - subnet-0a1b2c3d4e5f60013\n",
            to: "        - subnet-0a1b2c3d4e5f60099\n",
            field: "data.install-config: platform.aws.subnets",
            problem_has: &[
                "but platform.aws.vpc.subnets names",
                "subnet-0a1b2c3d4e5f60099",
            ],
        },
        Refusal {
            case: "roles on some subnets only",
            fixture: "aws-flat-subnets",
            file: CLUSTER_CONFIG,
            from: "          - id: subnet-0a1b2c3d4e5f60002\n",
            to: "          - id: subnet-0a1b2c3d4e5f60002\n            roles:\n            - type: ControlPlaneInternalLB\n",
            field: "data.install-config: platform.aws.vpc.subnets[0].roles",
            problem_has: &[
                "but platform.aws.vpc.subnets[1] has roles; expected roles on every subnet or on none",
            ],
        },
    ]);
}

// ---- AWS subnets settled from what EC2 reports (pure) ---------------------------------------

/// What EC2 reports for subnet `id` of vpc-1 in us-east-1a.
fn facts(
    id: &str,
    tags: &[(&str, &str)],
    route: Option<(&str, bool, Option<&str>)>,
) -> SubnetFacts {
    subnet_facts(id, "vpc-1", "us-east-1a", tags, route)
}

const OWNED: (&str, &str) = ("kubernetes.io/cluster/mycluster-7xk2p", "owned");
const ELB: (&str, &str) = ("kubernetes.io/role/elb", "1");
const INTERNAL_ELB: (&str, &str) = ("kubernetes.io/role/internal-elb", "1");

fn resolve(fixture: &str, found: &[SubnetFacts]) -> Result<AwsSpec, InputError> {
    let spec = load_fixture(fixture);
    let lookup = lookup(&spec).clone();
    let subnets = lookup.resolve(&spec.infra_id, "us-east-1", spec.publish, found)?;
    let mut aws = aws_spec(&spec).clone();
    aws.subnets = subnets;
    Ok(aws)
}

fn known(aws: &AwsSpec) -> (&[AwsSubnet], &[String]) {
    match &aws.subnets {
        AwsSubnets::Known { subnets, ignored } => (subnets, ignored),
        AwsSubnets::Pending(_) => panic!("still pending"),
    }
}

/// The settled subnet `id`.
fn settled<'a>(aws: &'a AwsSpec, id: &str) -> &'a AwsSubnet {
    let (subnets, _) = known(aws);
    subnets
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("{id} not among {subnets:?}"))
}

#[test]
fn discovered_subnets_are_public_or_private_by_their_role_tags() {
    let aws = resolve(
        "aws-installer-vpc",
        &[
            facts("subnet-pub-b", &[OWNED, ELB], None),
            facts(
                "subnet-pub-a",
                &[OWNED, ("kubernetes.io/role/elb", "")],
                None,
            ),
            facts("subnet-prv-a", &[OWNED, INTERNAL_ELB], None),
            facts("subnet-edge", &[OWNED], None),
            facts(
                "subnet-off",
                &[OWNED, ("kubernetes.io/role/internal-elb", "0")],
                None,
            ),
        ],
    )
    .unwrap();
    assert_eq!(public(&aws), ["subnet-pub-a", "subnet-pub-b"]);
    assert_eq!(private(&aws), ["subnet-prv-a"]);
    assert_eq!(known(&aws).1, ["subnet-edge", "subnet-off"]);
    let prv = settled(&aws, "subnet-prv-a");
    assert_eq!(
        prv.source,
        Source::DiscoveredByTag {
            tag: "kubernetes.io/cluster/mycluster-7xk2p=owned".into()
        }
    );
    assert_eq!(
        prv.classified_by,
        Classification::Tag {
            tag: "kubernetes.io/role/internal-elb=1".into()
        }
    );
}

#[test]
fn discovery_that_finds_nothing_says_what_it_looked_for() {
    let err = resolve("aws-installer-vpc", &[]).unwrap_err();
    assert!(err.file.ends_with(CLUSTER_CONFIG), "{err}");
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "no subnet in us-east-1 has the tag kubernetes.io/cluster/mycluster-7xk2p (owned or shared)",
    );
}

#[test]
fn discovery_without_an_internal_elb_subnet_is_rejected() {
    let err = resolve(
        "aws-installer-vpc",
        &[
            facts("subnet-pub", &[OWNED, ELB], None),
            facts("subnet-x", &[OWNED], None),
        ],
    )
    .unwrap_err();
    assert_problem(
        &err,
        "data.install-config: platform.aws.vpc.subnets",
        "of the subnets tagged kubernetes.io/cluster/mycluster-7xk2p in us-east-1 (subnet-pub, subnet-x), none has the tag kubernetes.io/role/internal-elb; the internal API load balancer needs at least one",
    );
}

#[test]
fn discovery_without_an_elb_subnet_is_rejected_when_the_api_is_external() {
    let err = resolve(
        "aws-installer-vpc",
        &[facts("subnet-prv", &[OWNED, INTERNAL_ELB], None)],
    )
    .unwrap_err();
    assert!(
        err.problem.contains(
            "none has the tag kubernetes.io/role/elb; publish External needs at least one"
        ),
        "{err}"
    );
}

/// The flat fixture's six subnets: private ones by the VPC's main table (or an explicit one
/// without a way out), public ones by a table routing 0.0.0.0/0 to an internet gateway.
fn flat_facts() -> Vec<SubnetFacts> {
    let mut found = Vec::new();
    for (i, id) in PRIVATE_SUBNETS.iter().enumerate() {
        let route = if i == 0 {
            ("rtb-private", false, None)
        } else {
            ("rtb-main", true, None)
        };
        found.push(facts(id, &[], Some(route)));
    }
    for id in PUBLIC_SUBNETS {
        found.push(facts(id, &[], Some(("rtb-public", false, Some("igw-1")))));
    }
    found
}

#[test]
fn listed_subnets_without_role_tags_are_classified_by_their_route_tables() {
    let aws = resolve("aws-flat-subnets", &flat_facts()).unwrap();
    assert_eq!(public(&aws), PUBLIC_SUBNETS);
    assert_eq!(private(&aws), PRIVATE_SUBNETS);
    assert!(known(&aws).1.is_empty());
    let first_public = settled(&aws, PUBLIC_SUBNETS[0]);
    assert_eq!(
        first_public.source,
        Source::InstallConfig {
            field: "platform.aws.vpc.subnets[3].id".into()
        }
    );
    assert_eq!(
        first_public.classified_by.to_string(),
        "route table rtb-public: 0.0.0.0/0 -> igw-1"
    );
    assert_eq!(
        settled(&aws, PRIVATE_SUBNETS[1]).classified_by.to_string(),
        "the VPC's main route table rtb-main: no 0.0.0.0/0 route to an internet gateway"
    );
}

#[test]
fn a_listed_subnets_role_tag_wins_over_its_route_table() {
    let mut found = flat_facts();
    // Routes to the internet, but tagged for internal load balancers only.
    found[3] = facts(PUBLIC_SUBNETS[0], &[INTERNAL_ELB], None);
    let aws = resolve("aws-flat-subnets", &found).unwrap();
    assert_eq!(public(&aws), &PUBLIC_SUBNETS[1..]);
    assert!(private(&aws).contains(&PUBLIC_SUBNETS[0]));
    assert_eq!(
        settled(&aws, PUBLIC_SUBNETS[0]).classified_by.to_string(),
        "tag kubernetes.io/role/internal-elb=1"
    );
}

/// Listed subnets that cannot be settled: (case, the change to what EC2 reports for the flat
/// fixture, the field named, parts of the problem).
#[test]
fn listed_subnets_that_cannot_be_settled_are_refused_naming_their_entry() {
    type Change = fn(&mut Vec<SubnetFacts>);
    let cases: [(&str, Change, &str, &[&str]); 3] = [
        (
            "a listed subnet EC2 does not know",
            |found| {
                found.remove(1);
            },
            "data.install-config: platform.aws.vpc.subnets[1].id",
            &["subnet-0a1b2c3d4e5f60002 not found in us-east-1"],
        ),
        (
            "a listed untagged subnet without a route table",
            |found| found[2].route_table = None,
            "data.install-config: platform.aws.vpc.subnets[2].id",
            &[
                "has no role tag, and no route table applies to it (no explicit association, and vpc-1 has no main route table)",
            ],
        ),
        (
            "only public subnets",
            |found| {
                for f in found {
                    f.route_table = Some(RouteTableFacts {
                        id: "rtb-public".into(),
                        main: false,
                        internet_gateway: Some("igw-1".into()),
                    });
                }
            },
            "data.install-config: platform.aws.vpc.subnets",
            &[
                "none of the listed subnets (subnet-0a1b2c3d4e5f60001, ",
                "is private (tag kubernetes.io/role/internal-elb, or without role tags no 0.0.0.0/0 route to an internet gateway)",
            ],
        ),
    ];
    for (case, change, field, problem_has) in cases {
        let mut found = flat_facts();
        change(&mut found);
        let err = resolve("aws-flat-subnets", &found).expect_err(case);
        assert_names(case, &err, field, problem_has);
    }
}

#[test]
fn offline_planning_of_subnets_to_discover_is_refused_with_the_reason() {
    let offline_error = |fixture: &str| {
        let spec = load_fixture(fixture);
        lookup(&spec).offline_error(&spec.infra_id)
    };
    let field = "data.install-config: platform.aws.vpc.subnets";
    assert_problem(
        &offline_error("aws-installer-vpc"),
        field,
        "absent (installer-made VPC): the subnets are discovered at run time by tag kubernetes.io/cluster/mycluster-7xk2p",
    );
    assert_problem(
        &offline_error("aws-flat-subnets"),
        field,
        "lists subnets without roles; each is classified at run time",
    );
}
