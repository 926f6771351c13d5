//! Cluster-hosted DNS (`userProvisionedDNS: Enabled`) on each local cloud: `publish-lb-ips`
//! reserves and writes the reserved IPs into the Infrastructure manifest and the lb-config
//! ConfigMap, a second one changes nothing, and `run` then reserves nothing more, makes not
//! one DNS call and leaves the manifests holding the IPs. Bad input and cloud DNS are refused
//! or skipped before anything is reserved.
#![cfg(all(feature = "aws", feature = "gcp", feature = "azure"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bootstrap_sim::kube::{CloudOptions, ControllerKnobs, KubeSim, KubeSimOptions};
use common::*;
use serde_json::Value;

const INFRA: &str = "manifests/cluster-infrastructure-02-config.yml";
const LB_CONFIG: &str = "openshift/openshift-lb-config.yaml";

fn read_yaml(agent: &Agent, file: &str) -> Value {
    let text = std::fs::read_to_string(agent.assets.join(file)).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn strings(value: &Value) -> Vec<String> {
    let mut list = agent::strings(value);
    list.sort();
    list
}

/// The asset dir as a private copy (the GCP and Azure harnesses read the fixture in place).
fn private_assets(agent: &mut Agent) {
    let copy = agent.dir.path().join("assets-copy");
    agent::fixtures::copy_dir(&agent.assets, &copy);
    agent.assets = copy;
}

/// What one cloud needs for the shared test body.
struct CloudCase<'a, P: Cloud> {
    h: &'a mut Harness<P>,
    cloud: &'a str,
    lb_cloud: CloudOptions,
    /// Every DNS call the cloud's peers saw.
    dns_calls: fn(&P) -> Vec<String>,
    /// Whether a mutating call reserves an address.
    reserves: fn(&str) -> bool,
}

async fn publish_then_run<P: Cloud>(case: CloudCase<'_, P>) {
    let CloudCase {
        h,
        cloud,
        lb_cloud,
        dns_calls,
        reserves,
    } = case;
    // Before bootkube: publish. It takes no kubeconfig (nothing of the cluster exists yet).
    let out = h.run(&["publish-lb-ips", "--output", "json"]).await;
    let published: Value = serde_json::from_slice(&out.stdout).unwrap();
    let world = h.world().await;
    let (private, public) = (world.reserved_private(), world.reserved_public());
    assert!(
        !private.is_empty() && !public.is_empty(),
        "{:#}",
        world.raw()
    );
    let infra = read_yaml(h, INFRA);
    let hosted = &infra["status"]["platformStatus"][cloud]["cloudLoadBalancerConfig"];
    assert_eq!(hosted["dnsType"], "ClusterHosted");
    assert_eq!(
        strings(&hosted["clusterHosted"]["apiIntLoadBalancerIPs"]),
        private
    );
    assert_eq!(
        strings(&hosted["clusterHosted"]["apiLoadBalancerIPs"]),
        public
    );
    let lb = read_yaml(h, LB_CONFIG);
    assert_eq!(lb["metadata"]["namespace"], "openshift-infra");
    let split = |key: &str| {
        let mut ips: Vec<String> = lb["data"][key]
            .as_str()
            .unwrap()
            .split(',')
            .map(String::from)
            .collect();
        ips.sort();
        ips
    };
    assert_eq!(split("internal-api-lb-ips"), private);
    assert_eq!(split("external-api-lb-ips"), public);
    assert_eq!(
        published["written"].as_array().unwrap().len(),
        2,
        "{published:#}"
    );

    // A second publish: no call that changes anything, no file rewritten.
    let before = std::fs::read(h.assets.join(INFRA)).unwrap();
    let again = h
        .assert_changes_nothing(
            &[&["publish-lb-ips", "--output", "json"]],
            "a second publish",
        )
        .await;
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["written"], serde_json::json!([]), "{again:#}");
    assert_eq!(again["reserved"], 0);
    assert_eq!(std::fs::read(h.assets.join(INFRA)).unwrap(), before);

    // Then `run`, as its unit does after this one: it finds every reservation made.
    let kube = KubeSim::start(KubeSimOptions {
        controller: ControllerKnobs::default(),
        cloud: lb_cloud,
        ..Default::default()
    })
    .await
    .unwrap();
    h.run_flags(kube.kubeconfig_path(), "60s");
    h.peers.reset_counts();
    h.run(&["run"]).await;
    let status = h.status().await;
    assert_eq!(status["run_step"], "done", "{status:#}");
    let reserving: Vec<String> = h
        .peers
        .mutating_calls()
        .into_iter()
        .filter(|c| reserves(c))
        .collect();
    assert!(reserving.is_empty(), "run reserved again: {reserving:?}");
    let dns = dns_calls(&h.peers);
    assert!(dns.is_empty(), "no DNS call at all: {dns:?}");
    assert_eq!(
        std::fs::read(h.assets.join(INFRA)).unwrap(),
        before,
        "the IPs stay"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn aws_publish_then_run_reserves_once_writes_no_dns_and_leaves_the_ips_published() {
    let mut h = aws::AwsHarness::new("aws-user-dns").await;
    let lb_cloud = h.peers.lb_cloud();
    publish_then_run(CloudCase {
        h: &mut h,
        cloud: "aws",
        lb_cloud,
        dns_calls: |p| {
            p.route53_proxy
                .calls()
                .into_iter()
                .map(|c| c.action)
                .collect()
        },
        reserves: |c| c == "AllocateAddress" || c == "CreateNetworkInterface",
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gcp_publish_then_run_reserves_once_writes_no_dns_and_leaves_the_ips_published() {
    let mut h =
        gcp::GcpHarness::with_fixture("gcp-user-dns", bootstrap_sim::gcp::FakeOptions::realistic())
            .await;
    private_assets(&mut h);
    let lb_cloud = h.peers.lb_cloud();
    publish_then_run(CloudCase {
        h: &mut h,
        cloud: "gcp",
        lb_cloud,
        dns_calls: |p| p.dns_proxy.calls().into_iter().map(|c| c.action).collect(),
        reserves: |c| c.starts_with("POST") && c.contains("/addresses"),
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_publish_then_run_reserves_once_writes_no_dns_and_leaves_the_ips_published() {
    let mut h = azure::AzureHarness::new("azure-user-dns").await;
    private_assets(&mut h);
    let lb_cloud = h.peers.lb_cloud();
    publish_then_run(CloudCase {
        h: &mut h,
        cloud: "azure",
        lb_cloud,
        dns_calls: |p| {
            p.arm_proxy
                .calls()
                .into_iter()
                .map(|c| c.action)
                .filter(|a| a.contains("dnsZones") || a.contains("privateDnsZones"))
                .collect()
        },
        reserves: |c| {
            c.starts_with("PUT")
                && (c.contains("publicIPAddresses") || c.contains("networkInterfaces"))
        },
    })
    .await;
}

/// A malformed Infrastructure manifest: exit 2 naming the file and the field, before the
/// lock and the cloud: nothing reserved, nothing written.
#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_infrastructure_manifest_is_refused_before_anything_is_reserved() {
    let h = aws::AwsHarness::new("aws-user-dns").await;
    let path = h.assets.join(INFRA);
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = text.replace(
        "        dnsType: ClusterHosted\n",
        "        dnsType: ClusterHosted\n        clusterHosted: [10.0.0.1]\n",
    );
    assert_ne!(bad, text);
    std::fs::write(&path, &bad).unwrap();
    let out = h.command(&["publish-lb-ips"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(INFRA), "{stderr}");
    assert!(
        stderr.contains("status.platformStatus.aws.cloudLoadBalancerConfig.clusterHosted"),
        "{stderr}"
    );
    assert!(h.peers.mutating_calls().is_empty(), "nothing reserved");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        bad,
        "nothing written"
    );
    assert!(!h.assets.join(LB_CONFIG).exists());
}

/// With cloud DNS the installer publishes no IPs, and neither does the step: it succeeds
/// without reserving or writing anything (its unit can be installed on every bootstrap host).
#[tokio::test(flavor = "multi_thread")]
async fn with_cloud_dns_publish_does_nothing() {
    let h = aws::AwsHarness::new("aws").await;
    let before = std::fs::read(h.assets.join(INFRA)).unwrap();
    let out = h.run(&["publish-lb-ips", "--dns", "manual"]).await;
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("nothing to publish"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(h.peers.mutating_calls().is_empty());
    assert_eq!(std::fs::read(h.assets.join(INFRA)).unwrap(), before);
    assert!(!h.assets.join(LB_CONFIG).exists());
}
