//! GCP: OpenShift's GCE cloud-controller-manager (openshift/cloud-provider-gcp) against the GCE
//! fake and the local API server.
//!
//! The controller is pointed at loopback before it starts, nothing left to its defaults that
//! dials out (openshift/cloud-provider-gcp 30cc0479 `providers/gce/gce.go:244-285,384-460`):
//! `api-endpoint` and `container-api-endpoint` name the fake; `project-id` and `local-zone` are
//! given; the network, the zone's project number and the token come from the metadata server
//! the fake serves (`GCE_METADATA_HOST=127.0.0.1:PORT`, read by
//! `vendor/cloud.google.com/go/compute/metadata`; the default token source is metadata's).
//! The rest is what the installer writes (`pkg/asset/manifests/gcp/cloudproviderconfig.go`):
//! regional + multizone, the three node tags, `node-instance-prefix` and
//! `external-instance-groups-prefix` = the infra id, `subnetwork-name` = the compute subnet.
//! The flags are the operator's (cluster-cloud-controller-manager-operator
//! `pkg/cloud/gcp/assets/cloud-controller-manager.yaml`: every controller but node IPAM, no
//! cloud routes), plus JSON to the API server (it speaks no protobuf), no leader election,
//! and no listener (`--secure-port=0`, `--webhook-secure-port=0`: the webhook port would
//! otherwise listen on every interface).

use super::{AgentRuns, Controller, Report, service_events, until};
use crate::gcp::{FakeOptions, GcpPeers};
use crate::kube::{CloudOptions, KubeSim, KubeSimOptions};
use crate::proxy::{Proxy, Service};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// Where the controller comes from (no recipe here: build it from its own tree).
pub const SOURCE: &str = "Build OpenShift's GCE cloud-controller-manager (./cmd/cloud-controller-manager) from github.com/openshift/cloud-provider-gcp at commit 30cc04797f50e78e91f8e47cc6c36c0da84eee2c or later, and pass its path.";

/// The Nodes of the cluster: one per VM of the fake that is a Node (the bootstrap VM is none),
/// named as the instance, with its zone and provider id, Ready.
fn nodes(peers: &GcpPeers) -> Vec<Value> {
    let seed = peers.fake.seed();
    seed.instances
        .iter()
        .filter(|vm| vm.node)
        .map(|vm| {
            let ip = peers
                .fake
                .instance_addresses(&vm.name)
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            let role = if vm.name.contains("-master-") {
                "node-role.kubernetes.io/master"
            } else {
                "node-role.kubernetes.io/worker"
            };
            json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": vm.name,
                    "labels": {
                        "kubernetes.io/hostname": vm.name,
                        "topology.kubernetes.io/zone": vm.zone,
                        "topology.kubernetes.io/region": seed.region,
                        role: "",
                    },
                },
                "spec": {"providerID": format!("gce://{}/{}/{}", seed.project, vm.zone, vm.name)},
                "status": {
                    "addresses": [{"type": "InternalIP", "address": ip},
                                  {"type": "Hostname", "address": vm.name}],
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                    "lastHeartbeatTime": crate::gcp::now_rfc3339(),
                                    "lastTransitionTime": crate::gcp::now_rfc3339()}],
                },
            })
        })
        .collect()
}

fn cloud_config(peers: &GcpPeers, ccm_proxy: &Proxy) -> String {
    let seed = peers.fake.seed();
    let infra = &seed.infra_id;
    let zone = crate::gcp::region_zones(&seed.region).remove(0);
    let (project, subnet, api) = (
        &seed.project,
        &seed.cloud_config_subnetwork,
        ccm_proxy.url(),
    );
    format!(
        "[global]\nproject-id = {project}\nlocal-zone = {zone}\nregional = true\nmultizone = true\n\
         node-tags = {infra}-master\nnode-tags = {infra}-control-plane\nnode-tags = {infra}-worker\n\
         node-instance-prefix = {infra}\nexternal-instance-groups-prefix = {infra}\n\
         subnetwork-name = {subnet}\napi-endpoint = {api}/compute/v1/\ncontainer-api-endpoint = {api}/\n"
    )
}

pub async fn run(ccm: &Path) -> Result<Report> {
    let work = crate::venv::target_dir().join("real-ccm-gcp");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let peers = GcpPeers::start(FakeOptions::realistic()).await?;
    let ccm_proxy = Proxy::start(peers.fake.addr, Service::Google).await?;
    let objects = nodes(&peers);
    let kube = KubeSim::start(KubeSimOptions {
        cloud: CloudOptions {
            external_controller: true,
            ..peers.lb_cloud()
        },
        objects,
        ..Default::default()
    })
    .await?;
    let conf = work.join("gce.conf");
    std::fs::write(&conf, cloud_config(&peers, &ccm_proxy))?;
    let infra = peers.fake.seed().infra_id;
    let args: Vec<String> = [
        "--cloud-provider=gce".to_string(),
        format!("--cloud-config={}", conf.display()),
        format!("--kubeconfig={}", kube.kubeconfig_path().display()),
        "--controllers=*,-node-ipam-controller".into(),
        "--configure-cloud-routes=false".into(),
        "--allocate-node-cidrs=false".into(),
        format!("--cluster-name={infra}"),
        "--leader-elect=false".into(),
        "--secure-port=0".into(),
        "--webhook-secure-port=0".into(),
        "--bind-address=127.0.0.1".into(),
        "--kube-api-content-type=application/json".into(),
        "--v=2".into(),
    ]
    .into();
    // A guard, as the Azure harness has: any HTTP(S) dial off loopback goes to a closed
    // loopback port and fails (Go's proxy from the environment), so the CCM never reaches out.
    let env = vec![
        ("GCE_METADATA_HOST".to_string(), peers.fake.addr.to_string()),
        ("HTTPS_PROXY".into(), "http://127.0.0.1:9".into()),
        ("HTTP_PROXY".into(), "http://127.0.0.1:9".into()),
        ("NO_PROXY".into(), "127.0.0.1,localhost".into()),
    ];
    let mut controller = Controller::spawn(ccm, &args, &env, &work.join("ccm.log"))?;
    let started = until(Duration::from_secs(60), || {
        peers
            .fake
            .request_log()
            .iter()
            .any(|(_, p)| p.ends_with("/zones"))
    })
    .await;
    if !started || !controller.alive() {
        anyhow::bail!(
            "the controller did not start (it never listed the zones); see {}",
            work.join("ccm.log").display()
        );
    }
    let runs = AgentRuns {
        agent: super::agent_binary()?,
        work: work.clone(),
        assets: crate::peers::fixture("gcp"),
        env: peers.agent_env(),
        kubeconfig: kube.kubeconfig_path().to_path_buf(),
        api: kube.url().trim_start_matches("https://").to_string(),
    };
    let mut report = Report {
        cloud: "gcp".into(),
        kube: "local API server".into(),
        ..Default::default()
    };
    ccm_proxy.reset();
    report.run_exit = runs.step(&["run"], 1).await?.0;
    report.finalizers_after_run = kube
        .list("", "v1", "services", None)
        .iter()
        .filter(|s| s["spec"]["type"] == "LoadBalancer")
        .map(|s| {
            format!(
                "{}/{}: {}",
                s["metadata"]["namespace"].as_str().unwrap_or_default(),
                s["metadata"]["name"].as_str().unwrap_or_default(),
                s["metadata"]["finalizers"]
            )
        })
        .collect();
    let serving = peers.fake.serving_since();
    let joined = peers.fake.dns_additions();
    for (ip, since) in &serving {
        if let Some((at, _)) = joined.iter().find(|(_, v)| v == ip) {
            let lag = match at.duration_since(*since) {
                Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
                Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
            };
            report.gate_lag_ms.push((ip.clone(), lag));
        }
    }
    let services = serving.len().max(1) as f64;
    let calls = ccm_proxy.calls();
    report.calls_per_service = calls.len() as f64 / services;
    report.mutating_calls_per_service =
        calls.iter().filter(|c| c.mutating).count() as f64 / services;
    peers.reset_counts();
    runs.step(&["run"], 2).await?;
    report.second_run_mutations = peers.mutating_calls().len();
    let (exit, took) = runs
        .step(&["teardown", "--all", "--step-timeout", "90s"], 1)
        .await?;
    report.teardown_exit = exit;
    report.teardown_ms = took.as_millis();
    // The controller deletes what it shares between Services (instance group, node health
    // check and its firewall) once the last of them is gone.
    until(Duration::from_secs(60), || {
        peers.fake.controller_made().is_empty()
    })
    .await;
    report.left_ccm = peers.fake.controller_made();
    report.left_ours = peers
        .fake
        .addresses()
        .iter()
        .filter(|a| a["labels"].get("bootstrap-agent-reservation").is_some())
        .filter_map(|a| a["name"].as_str().map(str::to_string))
        .collect();
    report.events = service_events(&kube);
    let requests: Vec<String> = kube
        .request_log()
        .iter()
        .map(|(method, path)| format!("{method} {path}"))
        .collect();
    std::fs::write(work.join("kube-requests.log"), requests.join("\n"))?;
    if !controller.alive() {
        report.events.push(format!(
            "the controller exited during the run; see {}",
            work.join("ccm.log").display()
        ));
    }
    std::fs::write(
        work.join("report.json"),
        serde_json::to_string_pretty(&report.to_json()).context("report")?,
    )?;
    Ok(report)
}
