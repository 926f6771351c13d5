//! The zones as the DNS manifest and the install-config name them (`dns_zones`).

use super::*;

/// The DNS manifest the installer writes for the private zone it makes (tags, no id) and the
/// public zone it found: the aws-public-ipv4-pool fixture's.
fn tagged_dns_manifest() -> String {
    std::fs::read_to_string(fixture("aws-public-ipv4-pool").join(DNS_CONFIG)).unwrap()
}

/// The public zone that manifest names.
const PUBLIC_ZONE: &str = "Z0FIXTUREPUBLICZONE0";

fn with_dns_manifest(fixture_name: &str, text: &str) -> TempDir {
    let dir = copy_fixture(fixture_name);
    std::fs::write(dir.path().join(DNS_CONFIG), text).unwrap();
    dir
}

/// A GCP private zone in another project: named by the DNS manifest, or without one by the
/// install-config.
#[test]
fn gcp_private_zone_of_another_project_comes_from_the_dns_manifest_or_the_install_config() {
    let with_manifest = load_fixture("gcp-private-zone-project");
    let dir = without("gcp-private-zone-project", DNS_CONFIG);
    let without_manifest = load(dir.path()).unwrap();
    for (spec, source) in [
        (
            &with_manifest,
            "manifests/cluster-dns-02-config.yml spec.privateZone.id",
        ),
        (
            &without_manifest,
            "install-config platform.gcp.dns.privateZone",
        ),
    ] {
        assert_eq!(
            spec.zones.private.id.as_deref(),
            Some("projects/example-dns-project/managedZones/mycluster-private-zone"),
            "{source}"
        );
        assert_eq!(spec.zones.private_source.as_deref(), Some(source));
    }
    assert_eq!(
        with_manifest.zones.public.id.as_deref(),
        Some("projects/example-project/managedZones/example-com")
    );
    assert_eq!(with_manifest.zones.private.domain, "mycluster.example.com");
    assert_eq!(with_manifest.zones.public.domain, "example.com");
    assert_eq!(without_manifest.zones.public.id, None, "found by domain");
}

#[test]
fn gcp_bare_zone_names_of_older_installers_are_kept_as_they_are() {
    let spec = load_broken(
        "gcp-shared-vpc",
        DNS_CONFIG,
        "id: projects/example-project/managedZones/mycluster-7xk2p-private-zone",
        "id: mycluster-7xk2p-private-zone",
    );
    assert_eq!(
        spec.zones.private.id.as_deref(),
        Some("mycluster-7xk2p-private-zone")
    );
}

#[test]
fn gcp_private_zone_without_a_name_is_refused() {
    let dir = broken(
        "gcp-private-zone-project",
        CLUSTER_CONFIG,
        "            name: mycluster-private-zone\n",
        "",
    );
    std::fs::remove_file(dir.path().join(DNS_CONFIG)).unwrap();
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.gcp.dns.privateZone.name",
        "missing",
    );
}

#[test]
fn aws_private_zone_is_the_one_tagged_for_the_cluster() {
    let dir = with_dns_manifest("aws", &tagged_dns_manifest());
    let spec = load(dir.path()).unwrap();
    let tags: Vec<(&str, &str)> = spec
        .zones
        .private
        .tags
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        tags,
        [
            ("Name", "mycluster-7xk2p-int"),
            ("kubernetes.io/cluster/mycluster-7xk2p", "owned")
        ]
    );
    assert_eq!(spec.zones.private.id, None);
    assert_eq!(spec.zones.public.id.as_deref(), Some(PUBLIC_ZONE));
    assert_eq!(spec.zones.private_zone_role, None);
}

#[test]
fn aws_public_zone_id_loses_the_hostedzone_prefix() {
    let dir = with_dns_manifest(
        "aws",
        &tagged_dns_manifest().replace(PUBLIC_ZONE, &format!("/hostedzone/{PUBLIC_ZONE}")),
    );
    let spec = load(dir.path()).unwrap();
    assert_eq!(spec.zones.public.id.as_deref(), Some(PUBLIC_ZONE));
}

#[test]
fn aws_manifest_zone_id_and_role_must_match_the_install_config() {
    let manifest = tagged_dns_manifest()
        .replace(
            "  privateZone:\n    tags:\n      Name: mycluster-7xk2p-int\n      kubernetes.io/cluster/mycluster-7xk2p: owned\n",
            "  privateZone:\n    id: Z0OTHER\n",
        );
    let dir = with_dns_manifest("aws", &manifest);
    rewrite(dir.path(), CLUSTER_CONFIG, |text| {
        text.replacen(
            "        region: us-east-1\n",
            "        region: us-east-1\n        hostedZone: Z0CROSSACCOUNT\n",
            1,
        )
    });
    let err = load_err(dir.path(), DNS_CONFIG);
    assert_problem(
        &err,
        "spec.privateZone.id",
        "platform.aws.hostedZone is \"Z0CROSSACCOUNT\"",
    );
}

#[test]
fn a_dns_manifest_of_another_cluster_is_refused() {
    let dir = with_dns_manifest(
        "aws",
        &tagged_dns_manifest().replace(
            "baseDomain: mycluster.example.com",
            "baseDomain: other.example.com",
        ),
    );
    let err = load_err(dir.path(), DNS_CONFIG);
    assert_problem(&err, "spec.baseDomain", "\"other.example.com\"");
}

#[test]
fn user_provisioned_dns_manifests_name_no_zone() {
    let spec = load_fixture("aws-user-dns");
    assert_eq!(spec.zones.private.id, None);
    assert!(spec.zones.private.tags.is_empty());
    assert_eq!(spec.zones.public.id, None);
}

#[test]
fn aws_service_endpoints_come_from_the_install_config_or_the_infrastructure_manifest() {
    let spec = load_broken(
        "aws",
        CLUSTER_CONFIG,
        "        region: us-east-1\n",
        "        region: us-east-1\n        serviceEndpoints:\n        - name: ec2\n          url: https://ec2.internal.example\n        - name: route53\n          url: route53.internal.example\n",
    );
    let endpoints: Vec<(&str, &str)> = aws_spec(&spec)
        .service_endpoints
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        endpoints,
        [
            ("ec2", "https://ec2.internal.example"),
            ("route53", "https://route53.internal.example")
        ]
    );

    let spec = load_broken(
        "aws",
        INFRASTRUCTURE,
        "      region: us-east-1",
        "      region: us-east-1\n      serviceEndpoints:\n      - name: sts\n        url: https://sts.internal.example",
    );
    assert_eq!(
        aws_spec(&spec)
            .service_endpoints
            .get("sts")
            .map(String::as_str),
        Some("https://sts.internal.example")
    );
}

#[test]
fn aws_public_ipv4_pool_is_read() {
    let spec = load_fixture("aws-public-ipv4-pool");
    assert_eq!(
        aws_spec(&spec).public_ipv4_pool.as_deref(),
        Some("ipv4pool-ec2-0123456789abcdef0")
    );
}

#[test]
fn zone_and_endpoint_settings_the_installer_refuses_are_refused() {
    assert_refusals(&[
        Refusal {
            case: "tags name a zone on AWS only",
            fixture: "gcp-shared-vpc",
            file: DNS_CONFIG,
            from: "  privateZone:\n    id: projects/example-project/managedZones/mycluster-7xk2p-private-zone",
            to: "  privateZone:\n    tags:\n      Name: mycluster-7xk2p-int",
            field: "spec.privateZone.tags",
            problem_has: &["AWS only"],
        },
        Refusal {
            case: "a hosted zone role without a hosted zone",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "        region: us-east-1\n",
            to: "        region: us-east-1\n        hostedZoneRole: arn:aws:iam::111122223333:role/dns\n",
            field: "data.install-config: platform.aws.hostedZoneRole",
            problem_has: &["without platform.aws.hostedZone"],
        },
        Refusal {
            case: "a service endpoint given twice",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "        region: us-east-1\n",
            to: "        region: us-east-1\n        serviceEndpoints:\n        - name: ec2\n          url: https://a.example\n        - name: ec2\n          url: https://b.example\n",
            field: "data.install-config: platform.aws.serviceEndpoints[1].name",
            problem_has: &["given twice"],
        },
        Refusal {
            case: "a service endpoint over http",
            fixture: "aws",
            file: CLUSTER_CONFIG,
            from: "        region: us-east-1\n",
            to: "        region: us-east-1\n        serviceEndpoints:\n        - name: ec2\n          url: http://ec2.example\n",
            field: "data.install-config: platform.aws.serviceEndpoints[0].url",
            problem_has: &["expected https"],
        },
        Refusal {
            case: "a public IPv4 pool without a public API",
            fixture: "aws-internal",
            file: CLUSTER_CONFIG,
            from: "        region: us-east-1\n",
            to: "        region: us-east-1\n        publicIpv4Pool: ipv4pool-ec2-0123456789abcdef0\n",
            field: "data.install-config: platform.aws.publicIpv4Pool",
            problem_has: &["only with publish External"],
        },
    ]);
}
