//! GCP for `bootstrap-sim real-ccm`: OpenShift's GCE cloud-controller-manager
//! (openshift/cloud-provider-gcp) against the GCE fake (`crate::gcp`).
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
//!
//! The node change is a fourth worker: its VM added to the fake, its Node to the API server
//! (`add_a_node`).

use super::kube::Kube;
use super::upi::UserAddresses;
use super::{CcmCommand, CloudUnderTest, NodeChange, UserMade};
use crate::gcp::{FakeOptions, GcpPeers};
use crate::kube::{CloudOptions, KubeSimOptions};
use crate::proxy::{Proxy, Service};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

pub struct Gcp {
    peers: GcpPeers,
    ccm_proxy: Proxy,
}

impl Gcp {
    /// The GCE fake as the installer leaves the project, and a counting proxy for the CCM.
    pub async fn start() -> Result<Self> {
        let peers = GcpPeers::start(FakeOptions::realistic()).await?;
        let ccm_proxy = Proxy::start(peers.fake.addr, Service::Google).await?;
        Ok(Self { peers, ccm_proxy })
    }
}

/// `at` (the fake's wall clock) on the monotonic clock the harness measures with.
fn instant(at: SystemTime) -> Instant {
    let now = Instant::now();
    match SystemTime::now().duration_since(at) {
        Ok(ago) => now.checked_sub(ago).unwrap_or(now),
        Err(ahead) => now + ahead.duration(),
    }
}

impl CloudUnderTest for Gcp {
    fn name(&self) -> &'static str {
        "gcp"
    }

    fn agent_env(&self) -> Vec<(String, String)> {
        self.peers.agent_env()
    }

    fn agent_proxies(&self) -> Vec<&Proxy> {
        self.peers.proxies()
    }

    fn ccm_proxy(&self) -> &Proxy {
        &self.ccm_proxy
    }

    /// Its forwarding rule on `ip` inserted and healthy (any port: a rule holds them all).
    fn serving_since(&self, ip: IpAddr, _port: u16) -> Option<Instant> {
        let serving = self.peers.fake.serving_since();
        serving.get(&ip.to_string()).copied().map(instant)
    }

    fn gate_lag_per_ip(&self) -> Vec<(String, i64)> {
        let joined = self.peers.fake.dns_additions();
        let mut out = Vec::new();
        for (ip, since) in self.peers.fake.serving_since() {
            if let Some((at, _)) = joined.iter().find(|(_, v)| *v == ip) {
                let lag = match at.duration_since(since) {
                    Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
                    Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
                };
                out.push((ip, lag));
            }
        }
        out
    }

    /// Our labelled address reservations.
    fn left_ours(&self) -> Vec<String> {
        self.peers
            .fake
            .addresses()
            .iter()
            .filter(|a| a["labels"].get("bootstrap-agent-reservation").is_some())
            .filter_map(|a| a["name"].as_str().map(|n| format!("address {n}")))
            .collect()
    }

    fn left_ccm(&self) -> Vec<String> {
        self.peers.fake.controller_made()
    }

    fn nodes(&self) -> Vec<Value> {
        nodes(&self.peers)
    }

    fn local_kube_options(&self, external_controller: bool) -> KubeSimOptions {
        KubeSimOptions {
            cloud: CloudOptions {
                external_controller,
                ..self.peers.lb_cloud()
            },
            ..Default::default()
        }
    }

    fn ccm_command(&self, kubeconfig: &Path, work: &Path) -> Result<CcmCommand> {
        let conf = work.join("gce.conf");
        std::fs::write(&conf, cloud_config(&self.peers, &self.ccm_proxy))
            .with_context(|| format!("cannot write {}", conf.display()))?;
        let infra = self.peers.fake.seed().infra_id;
        let args = vec![
            "--cloud-provider=gce".to_string(),
            format!("--cloud-config={}", conf.display()),
            format!("--kubeconfig={}", kubeconfig.display()),
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
        ];
        let env = vec![(
            "GCE_METADATA_HOST".to_string(),
            self.peers.fake.addr.to_string(),
        )];
        Ok(CcmCommand { args, env })
    }

    /// The two regional addresses of docs/upi.md: EXTERNAL for the public API, INTERNAL
    /// `SHARED_LOADBALANCER_VIP` in the compute subnetwork for the internal one (its two
    /// forwarding rules share it). Found by name; no file needed.
    async fn make_user_addresses(&self, _work: &Path) -> Result<UserMade> {
        let seed = self.peers.fake.seed();
        let [public, private] = user_address_names(&self.peers);
        crate::upi::gcp_address(&self.peers.fake, &public, None)
            .await
            .with_context(|| format!("the user's address {public}"))?;
        let subnetwork = format!(
            "projects/{}/regions/{}/subnetworks/{}",
            seed.project, seed.region, seed.cloud_config_subnetwork
        );
        let internal = Some(("SHARED_LOADBALANCER_VIP", subnetwork.as_str()));
        crate::upi::gcp_address(&self.peers.fake, &private, internal)
            .await
            .with_context(|| format!("the user's address {private}"))?;
        Ok(UserMade {
            agent_env: Vec::new(),
            named_only: Vec::new(),
        })
    }

    fn user_addresses(&self) -> UserAddresses {
        let names = user_address_names(&self.peers);
        self.peers
            .fake
            .addresses()
            .into_iter()
            .filter_map(|a| {
                let name = a["name"].as_str()?.to_string();
                names.contains(&name).then_some((name, a))
            })
            .collect()
    }

    /// The simulated controller's internal load balancers are recorded in the fake, so the
    /// node change shows there too.
    fn node_change_simulated(&self) -> bool {
        true
    }

    async fn add_a_node(&self, kube: &Kube, limit: Duration) -> Result<Option<NodeChange>> {
        add_a_node(self, kube, limit).await
    }

    /// It lists the zones once it has read its configuration and the metadata.
    fn ccm_started(&self) -> bool {
        let log = self.peers.fake.request_log();
        log.iter().any(|(_, p)| p.ends_with("/zones"))
    }
}

/// The seed's names of the user's addresses (UPI): public, private.
fn user_address_names(peers: &GcpPeers) -> [String; 2] {
    let infra = peers.fake.seed().infra_id;
    [
        format!("{infra}-rsvd-public-ipv4"),
        format!("{infra}-rsvd-private-ipv4"),
    ]
}

/// The Nodes of the cluster: one per VM of the fake that is a Node (the bootstrap VM is none).
fn nodes(peers: &GcpPeers) -> Vec<Value> {
    let seed = peers.fake.seed();
    seed.instances
        .iter()
        .filter(|vm| vm.node)
        .map(|vm| {
            let ip = peers.fake.instance_addresses(&vm.name).first().copied();
            node(&seed, &vm.name, &vm.zone, ip)
        })
        .collect()
}

/// The Node of the VM `name` in `zone` at `ip`: named as the instance, with its zone and
/// provider id, Ready.
fn node(seed: &crate::gcp::Seed, name: &str, zone: &str, ip: Option<Ipv4Addr>) -> Value {
    let ip = ip.map(|ip| ip.to_string()).unwrap_or_default();
    let role = if name.contains("-master-") {
        "node-role.kubernetes.io/master"
    } else {
        "node-role.kubernetes.io/worker"
    };
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": seed.region,
                role: "",
            },
        },
        "spec": {"providerID": format!("gce://{}/{zone}/{name}", seed.project)},
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip},
                          {"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "lastHeartbeatTime": crate::gcp::now_rfc3339(),
                            "lastTransitionTime": crate::gcp::now_rfc3339()}],
        },
    })
}

/// A node change: a new worker VM in the region's first zone, in the compute subnetwork (as
/// the Machine API makes one when a MachineSet scales up; no instance group of the installer
/// takes it), and its Node. How long until every load balancer's backend side holds it
/// (None: not within `limit`; each backend side as last seen). The real CCM's service controller syncs every load balancer
/// on a Node add (k8s.io/cloud-provider `controllers/service/controller.go:160-186` as
/// vendored at openshift/cloud-provider-gcp 30cc0479): the internal one puts the VM in its
/// own `k8s-ig--<cluster-id>` group of the zone (`ensureInternalInstanceGroup`,
/// `providers/gce/gce_loadbalancer_internal.go:654-727`: `instanceGroups.addInstances`), the
/// external one in its target pool (`updateTargetPool`, `gce_loadbalancer_external.go:656-706`:
/// `targetPools.addInstance`). Read off the fake every 50 ms: the cloud has nothing to watch.
async fn add_a_node(gcp: &Gcp, kube: &Kube, limit: Duration) -> Result<Option<NodeChange>> {
    let seed = gcp.peers.fake.seed();
    let zone = crate::gcp::region_zones(&seed.region).remove(0);
    let suffix = zone.rsplit('-').next().unwrap_or("a");
    let name = format!("{}-worker-{suffix}-n4v8q", seed.infra_id);
    let ip = gcp
        .peers
        .fake
        .add_instance(&name, &zone, &seed.cloud_config_subnetwork)
        .context("cannot add the fourth worker's VM to the GCP fake")?;
    let started = Instant::now();
    kube.create(node(&seed, &name, &zone, Some(ip)))
        .await
        .with_context(|| format!("cannot create the Node {name}"))?;
    let deadline = started + limit;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        tick.tick().await;
        let backends = gcp.peers.fake.backends_holding(&name);
        let all = !backends.is_empty() && backends.iter().all(|(_, holds)| *holds);
        if all || Instant::now() >= deadline {
            return Ok(Some(NodeChange {
                node: name,
                in_backends_ms: all.then(|| started.elapsed().as_millis()),
                backends,
            }));
        }
    }
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
