//! The AWS vertical against the real emulators: moto (EC2) and ministack (Route53), each
//! behind a counting proxy that can also freeze the agent between two mutations. The behaviour
//! every cloud shares comes from `common/suite.rs`; what is AWS's own follows.
#![cfg(feature = "aws")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::{AwsPeers, Hold, VpcLayout};
use serde_json::Value;

mod common;

use common::aws::*;
use common::*;

common::suite::cloud_suite!(AwsPeers);

common::suite::sigkill_suite!(AwsPeers;
    sigkill_before_the_second_eip_resumes_without_duplicates: Hold::Before(2),
    sigkill_after_an_eip_was_allocated_but_not_journaled_resumes_without_leak: Hold::After(2),
    sigkill_after_an_eni_was_created_but_not_journaled_resumes_without_leak: Hold::After(5),
);

#[tokio::test(flavor = "multi_thread")]
async fn keys_from_the_sdk_credential_chain_are_never_printed_even_at_trace() {
    let mut h = AwsHarness::new("aws").await;
    // No creds secret: the SDK's default chain finds the keys in the environment.
    std::fs::remove_file(h.assets.join("openshift/99_cloud-creds-secret.yaml")).unwrap();
    h.env.extend([
        ("AWS_ACCESS_KEY_ID".into(), "AKIAENVCHAINCANARY01".into()),
        (
            "AWS_SECRET_ACCESS_KEY".into(),
            "env-chain-secret-DO-NOT-LOG-0123456789".into(),
        ),
        (
            "AWS_SESSION_TOKEN".into(),
            "env-chain-session-token-DO-NOT-LOG".into(),
        ),
    ]);
    h.assert_reserve_never_leaks(&[
        ("AKIAENVCHAINCANARY01", "access key id"),
        ("env-chain-secret-DO-NOT-LOG", "secret"),
        ("env-chain-session-token-DO-NOT-LOG", "session token"),
    ])
    .await;
}

// ---- installer-default networks: subnets found in EC2 --------------------------------------

/// `plan` made no mutating call (`why` it only reads); the bootstrap then puts our EIPs in
/// exactly the `public` subnets and our ENIs in exactly the `private` ones (see
/// [`assert_reserved_in`]), and a second one changes nothing.
async fn assert_bootstrap_reserves_in(
    h: &AwsHarness,
    why: &str,
    public: &[String],
    private: &[String],
) {
    assert!(h.peers.mutating_calls().is_empty(), "{why}");
    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(&[]);
    assert_reserved_in(&world, public, private);
    h.assert_bootstrap_converged().await;
}

/// Our EIPs sit in exactly the `public` subnets and our ENIs in exactly the `private` ones,
/// one each, and every reservation tag names the subnet it is in.
fn assert_reserved_in(world: &AwsWorld, public: &[String], private: &[String]) {
    let placement = |r: &Value| {
        let key = r["tags"]["bootstrap-agent.openshift.io/reservation"]
            .as_str()
            .unwrap();
        key.split_once('@').unwrap().1.to_string()
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let eip_subnets = sorted(world.ours("eips").into_iter().map(placement).collect());
    assert_eq!(
        eip_subnets,
        sorted(public.to_vec()),
        "one EIP per public subnet"
    );
    let enis = world.ours("enis");
    for eni in &enis {
        assert_eq!(eni["subnet"].as_str().unwrap(), placement(eni), "{eni}");
    }
    let eni_subnets = sorted(enis.into_iter().map(placement).collect());
    assert_eq!(
        eni_subnets,
        sorted(private.to_vec()),
        "one ENI per private subnet"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn installer_vpc_subnets_are_discovered_by_tag_and_reserved_in() {
    let (h, setup) = AwsHarness::with_layout("aws-installer-vpc", &VpcLayout::Installer).await;
    let layout = &setup["layout"];
    let (public, private) = (strings(&layout["public"]), strings(&layout["private"]));
    assert_eq!((public.len(), private.len()), (3, 3), "{setup}");

    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    let owned = "discovered by tag kubernetes.io/cluster/mycluster-7xk2p=owned";
    for id in &public {
        let line = format!("public subnet {id}: {owned}; by tag kubernetes.io/role/elb=1");
        assert!(plan.contains(&line), "{line}\n{plan}");
        assert!(
            plan.contains(&format!("+ reserve public-ipv4@{id} ")),
            "{plan}"
        );
    }
    for id in &private {
        let line =
            format!("private subnet {id}: {owned}; by tag kubernetes.io/role/internal-elb=1");
        assert!(plan.contains(&line), "{line}\n{plan}");
    }
    for id in strings(&layout["ignored"]) {
        assert!(
            plan.contains(&format!(
                "aws subnet {id} is tagged for the cluster but has neither role tag"
            )),
            "{plan}"
        );
    }
    for id in strings(&layout["foreign"]) {
        assert!(
            !plan.contains(&id),
            "another cluster's or an untagged subnet: {id}\n{plan}"
        );
    }
    let json: Value = serde_json::from_slice(
        &h.run(&["plan", "--stage", "reserve,seed-dns", "--output", "json"])
            .await
            .stdout,
    )
    .unwrap();
    let network = json["network"].as_array().unwrap();
    assert_eq!(network.len(), 6, "{json:#}");
    assert!(
        network
            .iter()
            .all(|v| v["source"]["kind"] == "discovered_by_tag")
    );
    assert_bootstrap_reserves_in(&h, "discovery only reads", &public, &private).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn flat_subnet_list_is_classified_by_route_tables_and_reserved_in() {
    let public_fixture_ids: Vec<String> = (1..=3)
        .map(|i| format!("subnet-0a1b2c3d4e5f6001{i}"))
        .collect();
    let (h, setup) = AwsHarness::with_layout(
        "aws-flat-subnets",
        &VpcLayout::Flat {
            public: public_fixture_ids,
        },
    )
    .await;
    let layout = &setup["layout"];
    let (public, private) = (strings(&layout["public"]), strings(&layout["private"]));
    let igw = layout["internet_gateway"].as_str().unwrap();
    let public_rtb = layout["public_route_table"].as_str().unwrap();
    let private_rtb = layout["private_route_table"].as_str().unwrap();

    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    for (i, id) in public.iter().enumerate() {
        let line = format!(
            "public subnet {id}: install-config platform.aws.vpc.subnets[{}].id; by route table {public_rtb}: 0.0.0.0/0 -> {igw}",
            i + 3
        );
        assert!(plan.contains(&line), "{line}\n{plan}");
    }
    let explicit = format!(
        "private subnet {}: install-config platform.aws.vpc.subnets[0].id; by route table {private_rtb}: no 0.0.0.0/0 route to an internet gateway",
        private[0]
    );
    assert!(plan.contains(&explicit), "{explicit}\n{plan}");
    for (i, id) in private.iter().enumerate().skip(1) {
        let line = format!(
            "private subnet {id}: install-config platform.aws.vpc.subnets[{i}].id; by the VPC's main route table rtb-"
        );
        assert!(plan.contains(&line), "{line}\n{plan}");
    }
    assert_bootstrap_reserves_in(&h, "classifying only reads", &public, &private).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn installer_vpc_without_tagged_subnets_is_refused_before_anything_is_written() {
    // The fixture names no subnets and nothing in this VPC is tagged for the cluster.
    let (h, _) = AwsHarness::with_layout("aws-installer-vpc", &VpcLayout::Byo).await;
    let (_, stderr) = h.run_exits(&["reserve"], 2).await;
    assert!(
        stderr.contains("cluster-config.yaml: data.install-config: platform.aws.vpc.subnets: absent, so the installer made the VPC; but no subnet in us-east-1 has the tag kubernetes.io/cluster/mycluster-7xk2p (owned or shared)"),
        "{stderr}"
    );
    assert!(h.peers.mutating_calls().is_empty());
    assert!(!h.state.join("journal.json").exists(), "nothing written");
}

// ---- user-managed DNS --------------------------------------------------------------------------

/// userProvisionedDNS: Enabled. The IPs are reserved as usual, but `dns seed`, `dns teardown`
/// and `teardown --all` make no Route53 call at all (not even a zone lookup); `plan` and
/// `status` print the records the user must create, with the reserved IPs.
#[tokio::test(flavor = "multi_thread")]
async fn user_provisioned_dns_makes_no_route53_call_and_prints_the_records_to_create() {
    let h = AwsHarness::new("aws-user-dns").await;
    h.bootstrap().await;
    let world = h.world().await;
    assert_eq!(world.ours("eips").len(), 3, "one EIP per public subnet");
    assert_eq!(world.ours("enis").len(), 3, "one ENI per private subnet");
    for (zone, name) in [("private", API), ("private", API_INT), ("public", API)] {
        assert!(world.record(zone, name).is_empty(), "{zone} {name}");
    }

    let plan: Value = serde_json::from_slice(
        &h.run(&["plan", "--stage", "reserve,seed-dns", "--output", "json"])
            .await
            .stdout,
    )
    .unwrap();
    assert!(plan["changes"].as_array().unwrap().is_empty(), "{plan:#}");
    let user = &plan["user_dns"];
    assert_eq!(
        user["because"],
        "install-config platform.aws.userProvisionedDNS: Enabled"
    );
    let ips = |record: &Value| -> Vec<String> {
        let mut ips: Vec<String> = record["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["ip"].as_str().expect("every value is an IP now").into())
            .collect();
        ips.sort();
        ips
    };
    let mut private = world.ips("enis");
    private.push(BOOTSTRAP_IP.to_string());
    private.sort();
    let records = user["records"].as_array().unwrap();
    assert_eq!(records.len(), 3, "{user:#}");
    for (record, name, private_zone, want) in [
        (&records[0], "api.mycluster.example.com", true, &private),
        (&records[1], "api-int.mycluster.example.com", true, &private),
        (
            &records[2],
            "api.mycluster.example.com",
            false,
            &world.ips("eips"),
        ),
    ] {
        assert_eq!(record["record"]["name"], name);
        assert_eq!(record["zone"]["private"], private_zone);
        assert_eq!(&ips(record), want, "{record}");
    }
    let status = String::from_utf8(h.run(&["status"]).await.stdout).unwrap();
    assert!(
        status.contains("records to create in your DNS (user-managed DNS; the agent wrote none):"),
        "{status}"
    );
    for ip in world.ips("eips").iter().chain(&world.ips("enis")) {
        assert!(status.contains(ip.as_str()), "{ip}: {status}");
    }

    h.run(&["dns", "teardown"]).await;
    h.run(&["teardown", "--all"]).await;
    let world = h.world().await;
    world.assert_no_address_of_ours("nothing of ours");
    let route53 = h.peers.route53_proxy.calls();
    assert!(route53.is_empty(), "no Route53 call at all: {route53:?}");
    assert!(
        h.status().await.get("user_dns").is_none(),
        "teardown --all forgets them"
    );
}

// ---- where the private records go: tags, and another account's zone -------------------------

/// The DNS manifest as the installer writes it for the private zone it makes (tags, no id):
/// the `aws-public-ipv4-pool` fixture's, without its public zone's id (which names a zone of
/// that fixture's world).
fn tagged_dns_manifest() -> String {
    let path = agent::fixture("aws-public-ipv4-pool").join("manifests/cluster-dns-02-config.yml");
    let text = std::fs::read_to_string(path).unwrap();
    let public_zone = "  publicZone:\n    id: Z0FIXTUREPUBLICZONE0\n";
    assert!(text.contains("  privateZone:\n    tags:\n") && text.contains(public_zone));
    text.replace(public_zone, "")
}

fn zone_records<'a>(world: &'a AwsWorld, id: &str) -> &'a Value {
    &world.0["zones_by_id"][id.rsplit('/').next().unwrap()]
}

/// Two private zones named mycluster.example.com (one per VPC, as Route53 allows): the world's
/// carries the installer's tags, the other VPC's none. The DNS manifest's tags pick the
/// installer's, and the records go there; without the manifest the name alone matches both
/// and nothing is written.
#[tokio::test(flavor = "multi_thread")]
async fn the_installer_private_zone_is_found_by_its_tags_not_its_name() {
    let (h, setup) = AwsHarness::with_layout("aws", &VpcLayout::Byo).await;
    let other_vpcs = h
        .peers
        .create_private_zone_tagged("mycluster.example.com", true, &[])
        .await
        .unwrap();
    let out = h.command(&["plan"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("2 hosted zones match"), "{stderr}");

    std::fs::write(
        h.assets.join("manifests/cluster-dns-02-config.yml"),
        tagged_dns_manifest(),
    )
    .unwrap();
    h.bootstrap().await;
    let world = h.world().await;
    let mut want = world.ips("enis");
    want.push(BOOTSTRAP_IP.to_string());
    want.sort();
    let installers = setup["zones"]["private"].as_str().unwrap();
    for name in [API, API_INT] {
        assert_eq!(
            agent::strings(&zone_records(&world, installers)[name]),
            want,
            "{name} in the tagged zone"
        );
        assert!(
            zone_records(&world, &other_vpcs).get(name).is_none(),
            "nothing in the other VPC's zone of the same name: {:#}",
            world.0["zones_by_id"]
        );
    }
    h.assert_bootstrap_converged().await;
}

/// hostedZone + hostedZoneRole, credentialsMode Manual (no creds secret: the keys come from the
/// environment). The private zone lives in account 111122223333, which the cluster's keys
/// cannot see; every private record is written through sts:AssumeRole of the role.
#[tokio::test(flavor = "multi_thread")]
async fn cross_account_private_records_are_written_through_the_assumed_role() {
    let (mut h, setup) = AwsHarness::with_layout("aws-cross-account-zone", &VpcLayout::Byo).await;
    assert!(
        !h.assets
            .join("openshift/99_cloud-creds-secret.yaml")
            .exists()
    );
    h.env.extend([
        ("AWS_ACCESS_KEY_ID".into(), "AKIACLUSTERACCOUNT01".into()),
        (
            "AWS_SECRET_ACCESS_KEY".into(),
            "cluster-account-secret".into(),
        ),
    ]);
    let zone = setup["zones"]["cross_account"]
        .as_str()
        .unwrap()
        .to_string();
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    assert!(
        plan.contains("sts:AssumeRole of arn:aws:iam::111122223333:role/ocp-shared-vpc-dns"),
        "{plan}"
    );
    h.bootstrap().await;
    let world = h.world().await;
    assert!(world.ours("eips").is_empty(), "publish Internal");
    let mut want = world.ips("enis");
    assert_eq!(want.len(), 3);
    want.push(BOOTSTRAP_IP.to_string());
    want.sort();
    for name in [API, API_INT] {
        assert_eq!(
            agent::strings(&zone_records(&world, &zone)[name]),
            want,
            "{name} in the other account's zone"
        );
        assert!(world.record("private", name).is_empty(), "{name}");
    }
    h.assert_bootstrap_converged().await;
}

/// The refusal: the same zone written with the cluster account's own credentials (what the
/// agent did before it read hostedZoneRole) is no zone at all to Route53, and nothing lands.
#[tokio::test(flavor = "multi_thread")]
async fn the_other_accounts_zone_is_refused_without_the_assumed_role() {
    let (mut h, setup) = AwsHarness::with_layout("aws-cross-account-zone", &VpcLayout::Byo).await;
    h.env.extend([
        ("AWS_ACCESS_KEY_ID".into(), "AKIACLUSTERACCOUNT01".into()),
        (
            "AWS_SECRET_ACCESS_KEY".into(),
            "cluster-account-secret".into(),
        ),
    ]);
    for (file, line) in [
        (
            "manifests/cluster-config.yaml",
            "        hostedZoneRole: arn:aws:iam::111122223333:role/ocp-shared-vpc-dns\n",
        ),
        (
            "manifests/cluster-dns-02-config.yml",
            "      privateZoneIAMRole: arn:aws:iam::111122223333:role/ocp-shared-vpc-dns\n",
        ),
    ] {
        h.edit_asset(file, line, "");
    }
    // `reserve` reads no DNS (it changes no record); `dns seed` reads the records first and
    // stops there, before any write.
    let out = h.command(&["reserve"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "reserve: {stderr}");
    let out = h.command(&["dns", "seed"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "dns seed: {stderr}");
    assert!(stderr.contains("NoSuchHostedZone"), "dns seed: {stderr}");
    let zone = setup["zones"]["cross_account"].as_str().unwrap();
    let world = h.world().await;
    assert_eq!(
        zone_records(&world, zone).as_object().map(|o| o.len()),
        Some(0),
        "nothing written: {:#}",
        world.0["zones_by_id"]
    );
}

// ---- publicIpv4Pool ---------------------------------------------------------------------------

/// The local world's BYO-IP pool (tests/sim/py/moto_server.py) and its range.
const POOL_RANGE: &str = "203.0.113.";

/// `publicIpv4Pool`: every EIP comes from the pool (the fake hands out its lowest free
/// addresses), the private zone is the one the DNS manifest's tags name, and the public zone
/// the one its id names.
#[tokio::test(flavor = "multi_thread")]
async fn every_eip_comes_from_the_public_ipv4_pool() {
    let h = AwsHarness::new("aws-public-ipv4-pool").await;
    let plan = String::from_utf8(h.run(&["plan"]).await.stdout).unwrap();
    assert!(
        plan.contains("from public IPv4 pool ipv4pool-ec2-0123456789abcdef0"),
        "{plan}"
    );
    // Online, the pool's free addresses (DescribePublicIpv4Pools) against the EIPs planned.
    assert!(
        plan.contains(
            "public IPv4 pool ipv4pool-ec2-0123456789abcdef0: needs 3, has 16 free (of 16)\n"
        ),
        "{plan}"
    );
    h.bootstrap().await;
    let world = h.world().await;
    world.assert_seeded(&[]);
    let eips = world.ips("eips");
    assert_eq!(eips.len(), 3);
    assert!(
        eips.iter().all(|ip| ip.starts_with(POOL_RANGE)),
        "from the pool: {eips:?}"
    );
    h.assert_bootstrap_converged().await;
    let out = h
        .run(&["plan", "--step", "reserve", "--output", "json"])
        .await;
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        plan["public_ipv4_pool"],
        serde_json::json!({"pool": "ipv4pool-ec2-0123456789abcdef0", "needs": 0, "free": 13, "total": 16, "enough": true}),
        "{plan}"
    );
}

/// A pool with fewer free addresses than EIPs to allocate: `plan` prints the plan with the
/// shortage, then exits 2 naming the field; preflight fails its `public-ipv4-pool` line.
/// Nothing is allocated.
#[tokio::test(flavor = "multi_thread")]
async fn plan_and_preflight_refuse_a_pool_with_too_few_free_addresses() {
    let h = AwsHarness::new("aws-public-ipv4-pool").await;
    h.edit_asset(
        "manifests/cluster-config.yaml",
        "ipv4pool-ec2-0123456789abcdef0",
        "ipv4pool-ec2-0fffffffffffffff0",
    );
    let (stdout, stderr) = h.run_exits(&["plan"], 2).await;
    assert!(
        stdout.contains("public IPv4 pool ipv4pool-ec2-0fffffffffffffff0: needs 3, has 0 free (of 1): TOO FEW, add 3 address(es) to the pool"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  + reserve public-ipv4@"),
        "the plan is printed: {stdout}"
    );
    assert!(
        stderr.contains("manifests/cluster-config.yaml: data.install-config: platform.aws.publicIpv4Pool: public IPv4 pool ipv4pool-ec2-0fffffffffffffff0 has 0 free address(es)"),
        "{stderr}"
    );

    let out = h
        .command(&["preflight", "--output", "json"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pool = preflight_line(&report, "public-ipv4-pool");
    assert_eq!(pool["verdict"], "fail", "{pool}");
    assert_eq!(
        pool["reason"],
        "ipv4pool-ec2-0fffffffffffffff0: needs 3, has 0 free (of 1)"
    );
    assert!(h.world().await.ours("eips").is_empty());
}

/// The local cloud refuses an allocation from a pool that does not exist or has no free
/// address, as EC2 does; the agent stops before allocating and names the pool.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_or_empty_pool_is_refused_and_nothing_is_allocated() {
    for (pool, expected) in [
        (
            "ipv4pool-ec2-0000000000000000d",
            "InvalidPublicIpv4PoolID.NotFound",
        ),
        ("ipv4pool-ec2-0fffffffffffffff0", "has no free address"),
    ] {
        let h = AwsHarness::new("aws-public-ipv4-pool").await;
        h.edit_asset(
            "manifests/cluster-config.yaml",
            "ipv4pool-ec2-0123456789abcdef0",
            pool,
        );
        let out = h.command(&["reserve"]).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{pool}: {stderr}");
        assert!(stderr.contains(expected), "{pool}: {stderr}");
        assert!(stderr.contains(pool), "{pool}: {stderr}");
        assert!(h.world().await.ours("eips").is_empty(), "{pool}");
    }
}

// ---- serviceEndpoints -------------------------------------------------------------------------

/// `platform.aws.serviceEndpoints` names where EC2 and Route53 are: the agent's clients go
/// there, even though the environment names an address where nothing listens.
#[tokio::test(flavor = "multi_thread")]
async fn service_endpoints_are_where_the_ec2_and_route53_clients_go() {
    let mut h = AwsHarness::new("aws").await;
    let endpoints = format!(
        "        region: us-east-1\n        serviceEndpoints:\n        - name: ec2\n          url: {}\n        - name: route53\n          url: {}\n",
        h.peers.ec2_proxy.url(),
        h.peers.route53_proxy.url()
    );
    // The fixture names its region once.
    h.edit_asset(
        "manifests/cluster-config.yaml",
        "        region: us-east-1\n",
        &endpoints,
    );
    h.env.retain(|(k, _)| !k.starts_with("AWS_ENDPOINT_URL_"));
    h.env.extend([
        ("AWS_ENDPOINT_URL_EC2".into(), "http://127.0.0.1:9".into()),
        (
            "AWS_ENDPOINT_URL_ROUTE_53".into(),
            "http://127.0.0.1:9".into(),
        ),
    ]);
    h.bootstrap().await;
    h.world().await.assert_seeded(&[]);
}

/// UPI: EIPs and ENIs named as the seed says that cannot serve their purpose: exit 2 naming
/// them and what is wrong, before any change.
#[tokio::test(flavor = "multi_thread")]
async fn upi_reservations_that_do_not_fit_are_refused_naming_them() {
    let h = AwsHarness::new("aws").await;
    let world = h.world().await;
    let subnet = |prefix: &str| {
        world.0["subnets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["cidr"].as_str().unwrap().starts_with(prefix))
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (private, public) = (subnet("10.0.1."), subnet("10.0.4."));
    // Named for a private subnet, made in a public one.
    let (wrong_subnet, _) = h
        .peers
        .create_named(
            &format!("mycluster-7xk2p-rsvd-private-ipv4-{private}"),
            Some(&public),
        )
        .await
        .unwrap();
    // A plain-named ENI in a public subnet.
    let (public_eni, _) = h
        .peers
        .create_named("mycluster-7xk2p-rsvd-private-ipv4", Some(&public))
        .await
        .unwrap();
    // An EIP named as a private reservation: the wrong type.
    let (eip, _) = h
        .peers
        .create_named("mycluster-7xk2p-rsvd-private-ipv4", None)
        .await
        .unwrap();
    for err in h.plan_and_reserve_refusals().await {
        assert!(
            err.contains(&wrong_subnet) && err.contains(&format!("must be in subnet {private}")),
            "{err}"
        );
        assert!(
            err.contains(&public_eni) && err.contains(&format!("public subnet {public}")),
            "{err}"
        );
        assert!(
            err.contains(&eip) && err.contains("an elastic IP cannot hold a private IP"),
            "{err}"
        );
    }
    assert!(
        h.peers.mutating_calls().is_empty(),
        "{:?}",
        h.peers.mutating_calls()
    );
    assert!(!h.state.join("journal.json").exists(), "nothing written");
}

/// `--dns manual` on an install-config whose DNS is the cloud's: the same user-managed mode,
/// so `reserve` and `dns seed` make no Route53 call and `plan` prints the records to create.
#[tokio::test(flavor = "multi_thread")]
async fn dns_manual_is_the_user_managed_mode_and_makes_no_route53_call() {
    let h = AwsHarness::new("aws").await;
    h.run(&["reserve", "--dns", "manual"]).await;
    h.run(&["dns", "seed", "--dns", "manual"]).await;
    assert!(
        h.peers.route53_proxy.mutating_calls().is_empty(),
        "{:?}",
        h.peers.route53_proxy.mutating_calls()
    );
    let world = h.world().await;
    assert!(world.record("private", API).is_empty());
    let plan: Value = serde_json::from_slice(
        &h.run(&["plan", "--dns", "manual", "--output", "json"])
            .await
            .stdout,
    )
    .unwrap();
    assert_eq!(plan["user_dns"]["because"], "--dns manual", "{plan:#}");
    assert_eq!(plan["user_dns"]["records"].as_array().unwrap().len(), 3);
}

/// The Route53 peer (ministack through tests/sim/py/ministack_server.py) refuses an address
/// record next to a CNAME, and a CNAME next to an address record, as Route53 does
/// (InvalidChangeBatch; ministack alone accepts both).
#[tokio::test(flavor = "multi_thread")]
async fn the_route53_peer_refuses_a_cname_and_an_address_record_at_one_name() {
    let h = AwsHarness::new("aws").await;
    let (cname, a) = ("www.mycluster.example.com", "other.mycluster.example.com");
    h.peers
        .write_cname("private", cname, "elsewhere.example.net")
        .await
        .unwrap();
    let err = h
        .peers
        .write_record("private", cname, &["192.0.2.1"])
        .await
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("conflicting RRSet of type CNAME with the same DNS name"),
        "{err:#}"
    );
    h.peers
        .write_record("private", a, &["192.0.2.1"])
        .await
        .unwrap();
    let err = h
        .peers
        .write_cname("private", a, "elsewhere.example.net")
        .await
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("conflicts with other records with the same DNS name"),
        "{err:#}"
    );
}

/// The Route53 peer lists record sets in Route53's documented order ("labels reversed ...
/// in ASCII order", where the trailing dot sorts `-` before `.`): `api-int.` before `api.`,
/// a name's descendants after it, and a listing starts at the first name at or after
/// StartRecordName. ministack alone compares the labels one by one (`api` first).
#[tokio::test(flavor = "multi_thread")]
async fn the_route53_peer_lists_record_sets_in_route53_s_order() {
    let peers = AwsPeers::start().await.unwrap();
    let zone = peers.create_zone("example.org", false).await.unwrap();
    for name in [
        "x.api.c.example.org",
        "api.c.example.org",
        "api-int.c.example.org",
        "b.example.org",
    ] {
        peers
            .write_record_in(&zone, name, &["192.0.2.1"])
            .await
            .unwrap();
    }
    let names: Vec<String> = peers
        .listed(&zone)
        .await
        .unwrap()
        .into_iter()
        .map(|(set, _)| set)
        .filter(|set| set.ends_with(" A"))
        .collect();
    assert_eq!(
        names,
        [
            "b.example.org A",
            "api-int.c.example.org A",
            "api.c.example.org A",
            "x.api.c.example.org A"
        ]
    );
}

/// Route53 holds a change PENDING until it has propagated (here 3 s): `dns seed` waits for
/// it, polling each change with growing gaps (not every 100 ms), and the two zones' changes
/// wait at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_pending_change_is_polled_with_backoff_until_insync_and_zones_wait_at_once() {
    let propagation = std::time::Duration::from_secs(3);
    let peers = AwsPeers::start_with_propagation(propagation).await.unwrap();
    let h = AwsHarness::with_peers(peers, "aws").await;
    h.run(&["reserve"]).await;
    h.peers.route53_proxy.reset();
    let started = std::time::Instant::now();
    h.run(&["dns", "seed"]).await;
    let took = started.elapsed();
    assert!(took >= propagation, "{took:?}");
    let calls = h.peers.route53_proxy.timed_calls();
    let mut polls: std::collections::BTreeMap<&str, Vec<std::time::Instant>> = Default::default();
    let mut posts = Vec::new();
    for (at, call) in &calls {
        if let Some(id) = call.action.strip_prefix("GET /2013-04-01/change/") {
            polls.entry(id).or_default().push(*at);
        } else if call.mutating {
            posts.push(*at);
        }
    }
    assert_eq!(posts.len(), 2, "one change per zone: {calls:?}");
    assert_eq!(polls.len(), 2, "{calls:?}");
    for (id, times) in &polls {
        assert!(
            times.len() <= 8,
            "{id}: {} looks in {propagation:?}, not every 100 ms",
            times.len()
        );
        let last = *times.last().unwrap();
        assert!(last - times[0] >= propagation / 2, "{id} waited: {times:?}");
        let gaps: Vec<_> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.last()
                .is_some_and(|g| *g >= std::time::Duration::from_millis(700)),
            "{id}: the gaps grow: {gaps:?}"
        );
    }
    // Both changes were waiting at the same time: the second was made before the first was
    // done.
    assert!(posts[1] < polls.values().map(|t| *t.last().unwrap()).min().unwrap());
    h.world().await.assert_seeded(&[]);
}

/// The ListResourceRecordSets of `calls` per hosted zone id.
fn listings_per_zone(
    calls: &[bootstrap_sim::proxy::Call],
) -> std::collections::BTreeMap<String, usize> {
    let mut per_zone = std::collections::BTreeMap::new();
    for call in calls {
        if let Some(rest) = call.action.strip_prefix("GET /2013-04-01/hostedzone/")
            && let Some((zone, _)) = rest.split_once("/rrset")
        {
            *per_zone.entry(zone.to_string()).or_insert(0) += 1;
        }
    }
    per_zone
}

/// Under Route53's 5 requests per second every request counts, and a compare-and-swap of the
/// private `api` and `api-int` starts from when they were read: `dns seed` reads each zone's
/// record sets in one ListResourceRecordSets (the private zone's two from the cluster's
/// domain), not one per record set.
#[tokio::test(flavor = "multi_thread")]
async fn dns_seed_reads_each_zone_s_record_sets_in_one_request() {
    let h = AwsHarness::new("aws").await;
    h.run(&["reserve"]).await;
    h.peers.route53_proxy.reset();
    h.run(&["dns", "seed"]).await;
    let listings = listings_per_zone(&h.peers.route53_proxy.calls());
    assert_eq!(
        listings.values().collect::<Vec<_>>(),
        [&1, &1],
        "one listing per zone: {listings:?}"
    );
    h.world().await.assert_seeded(&[]);
}

/// A listing cut short before the cluster's record sets (more record sets sort before `api`
/// than one listing holds) proves nothing about them: each is then read alone, and the seed
/// keeps what another writer put there.
#[tokio::test(flavor = "multi_thread")]
async fn record_sets_a_truncated_listing_did_not_reach_are_read_alone() {
    let h = AwsHarness::new("aws").await;
    for i in 0..21 {
        h.peers
            .write_record(
                "private",
                &format!("a{i:02}.mycluster.example.com"),
                &["192.0.2.9"],
            )
            .await
            .unwrap();
    }
    for name in ["api.mycluster.example.com", "api-int.mycluster.example.com"] {
        h.peers
            .write_record("private", name, &["192.0.2.1"])
            .await
            .unwrap();
    }
    h.run(&["reserve"]).await;
    h.peers.route53_proxy.reset();
    h.run(&["dns", "seed"]).await;
    let listings = listings_per_zone(&h.peers.route53_proxy.calls());
    assert_eq!(
        listings.values().copied().max(),
        Some(3),
        "the private zone: one listing, then `api` and `api-int` alone: {listings:?}"
    );
    let world = h.world().await;
    world.assert_seeded(&["192.0.2.1"]);
}

/// The cluster's private records in a zone other clusters share (`platform.aws.hostedZone`):
/// a listing from the cluster's domain is cut short by the clusters after it, but it went
/// past the domain's names, so the records it did not hold are absent: one listing, no read
/// alone.
#[tokio::test(flavor = "multi_thread")]
async fn a_listing_that_went_past_the_cluster_s_names_proves_them_absent() {
    let h = AwsHarness::new("aws").await;
    let shared = h.peers.create_zone("example.com", true).await.unwrap();
    for i in 0..21 {
        h.peers
            .write_record_in(
                &shared,
                &format!("api.other{i:02}.example.com"),
                &["192.0.2.9"],
            )
            .await
            .unwrap();
    }
    h.edit_asset(
        "manifests/cluster-config.yaml",
        "        region: us-east-1\n",
        &format!("        region: us-east-1\n        hostedZone: {shared}\n"),
    );
    h.run(&["reserve"]).await;
    h.peers.route53_proxy.reset();
    h.run(&["dns", "seed"]).await;
    let listings = listings_per_zone(&h.peers.route53_proxy.calls());
    let shared_id = shared.rsplit('/').next().unwrap();
    assert_eq!(listings.get(shared_id), Some(&1), "{listings:?}");
    let records = h.peers.records(&shared).await.unwrap();
    for name in [
        "api.mycluster.example.com A",
        "api-int.mycluster.example.com A",
    ] {
        assert_eq!(
            records[name].as_array().unwrap().len(),
            4,
            "{name}: {records:?}"
        );
    }
}
