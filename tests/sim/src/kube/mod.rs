//! `KubeSim`: an in-process fake kube-apiserver (HTTPS, bearer token, kubeconfig) with a
//! simulated service controller, for testing clients that apply LoadBalancer Services and
//! wait for them.
//!
//! # What is faithful
//! - Transport: HTTPS (HTTP/1.1, ALPN `http/1.1`) with a generated CA, a server certificate
//!   for 127.0.0.1/::1/localhost, bearer-token auth (401 `Status` otherwise), and a
//!   kubeconfig with `certificate-authority-data` and a token.
//! - Discovery: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>` (legacy
//!   format) for core/v1 namespaces, services (+status), endpoints, configmaps, secrets,
//!   pods (+status), events, nodes (+status; created by `bootstrap-sim real-ccm` for a real
//!   cloud-controller-manager);
//!   discovery.k8s.io/v1 endpointslices; coordination.k8s.io/v1 leases;
//!   config.openshift.io/v1 clusterversions, infrastructures and dnses (cluster-scoped,
//!   +status; Infrastructure and DNS from openshift/api's CRDs); apiextensions.k8s.io/v1
//!   customresourcedefinitions (holding the CRDs of the custom resources); apps/v1
//!   deployments (+status; the AWS Load Balancer Controller's, see `aws_controller`);
//!   operators.coreos.com v1 operatorgroups and v1alpha1 subscriptions (OLM), and
//!   networking.olm.openshift.io/v1 awsloadbalancercontrollers (cluster-scoped), each from
//!   its project's CRD (`tests/fixtures/crds`).
//! - Objects: uid, a global resourceVersion counter, generation (bumped on changes outside
//!   metadata/status), creationTimestamp, Service defaults and allocation (see `service`),
//!   namespace defaults; kind/apiVersion on objects and watch events; `XList` kinds with the
//!   list resourceVersion; built-in list items without kind/apiVersion (as kube-apiserver
//!   encodes them), custom-resource items with them.
//! - Verbs: get, list (limit/continue), watch, create (201; generateName), update (409 on a
//!   stale resourceVersion), patch (JSON, merge, strategic-as-merge, apply), delete (object or
//!   `Status` Success per type, finalizers, preconditions, owner-reference GC, namespace
//!   termination), deletecollection; `dryRun=All`; status subresources.
//! - Errors: `Status` bodies with kube-apiserver's messages, reasons and details for 400, 401,
//!   403, 404, 405, 409 (AlreadyExists, Conflict, apply conflicts), 410, 415 and 422.
//! - Server-side apply with managedFields: see `apply`. Watch: see `watch`.
//! - Namespaces default, kube-system, kube-public, kube-node-lease and the `default/kubernetes`
//!   Service exist at start.
//!
//! # What is simplified
//! - Lists are atomic for apply and strategic merge (Service `spec.ports` is a map keyed by
//!   port+protocol in kube-apiserver); only the validations in `objects`/`service` are done;
//!   ClusterVersion is pruned and validated against its structural schema (`schema`), and
//!   Infrastructure, DNS, OperatorGroup, Subscription and AWSLoadBalancerController against
//!   their CRDs' schemas,
//!   where an unknown field answers as kube-apiserver answers it: `fieldValidation` Strict
//!   400, Warn (the default) pruned with a `Warning` header, Ignore pruned; server-side
//!   apply 500 "field not declared in schema" (`objects::unknown_fields`). Other custom
//!   resources are schemaless. No defaulting (`subnetTagging: Auto` is not filled in).
//! - Lists always come from the latest state (`resourceVersionMatch` is ignored).
//! - RBAC for every request (see `rbac`), as the token's user ([`KubeSimOptions::user`]).
//! - No admission, no aggregated discovery, no OpenAPI, no protobuf, no HTTP/2.
//! - GC and namespace termination complete inside the DELETE request.
//! - The controllers only serve Services of type LoadBalancer (see `controller`); pods exist
//!   only on the simulated control-plane nodes (see `kubelet`); load balancers follow the
//!   rules of `lb`.

mod access;
mod apply;
mod aws_controller;
mod controller;
mod delete;
mod discovery;
mod endpoints;
mod events;
mod fields;
mod http;
mod kubelet;
pub(crate) mod lb;
mod meta;
mod objects;
mod ops;
mod rbac;
mod request_info;
mod resources;
mod rest;
mod schema;
mod selector;
mod service;
mod status;
mod store;
mod strategic;
mod tls;
mod watch;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::{Key, Store};
use tokio::task::JoinHandle;

pub use kubelet::PodSet;
pub use lb::{
    AddressBook, AddressUsers, CloudOptions, Ipv4Cidr, Ipv6Cidr, gcp_no_address, lb_resource_name,
};
pub use rbac::User;
pub use tls::SERVER_NAMES;

/// How the simulated service controller behaves. Can be changed at runtime
/// ([`KubeSim::set_knobs`]): pending steps are cancelled and redone with the new knobs.
#[derive(Clone, Debug)]
pub struct ControllerKnobs {
    /// After a LoadBalancer Service appears/changes, set `status.loadBalancer.ingress`.
    pub ingress_delay: Duration,
    /// After that, create EndpointSlices from the matching pods ("masters coming up").
    pub endpoints_delay: Duration,
    /// How many control-plane nodes run the control-plane pods (so: how many endpoints a
    /// Service that selects them gets).
    pub endpoints: usize,
    /// Never set ingress nor endpoints.
    pub never_ready: bool,
    /// Ingress yes, endpoints never.
    pub ingress_without_endpoints: bool,
    /// Endpoints toggle ready/not-ready with this period.
    pub flapping: Option<Duration>,
    /// The server closes every open watch stream with this period.
    pub drop_watches_every: Option<Duration>,
    /// How soon a load balancer the cloud refused is reconciled again.
    pub refusal_retry: Duration,
}

impl Default for ControllerKnobs {
    fn default() -> Self {
        Self {
            ingress_delay: Duration::from_millis(100),
            endpoints_delay: Duration::from_millis(100),
            endpoints: 3,
            never_ready: false,
            ingress_without_endpoints: false,
            flapping: None,
            drop_watches_every: None,
            refusal_retry: Duration::from_millis(500),
        }
    }
}

pub struct KubeSimOptions {
    pub controller: ControllerKnobs,
    /// Watch events kept per resource type for resuming watches; older resourceVersions get
    /// 410 Expired.
    pub history_limit: usize,
    /// Period of BOOKMARK events on watches with `allowWatchBookmarks=true`.
    pub bookmark_interval: Duration,
    /// The bearer token; a random one when None.
    pub token: Option<String>,
    /// Objects created at start (full objects with apiVersion/kind; status is kept).
    pub objects: Vec<Value>,
    /// What the load-balancer controllers know of the cloud (see [`CloudOptions`]).
    pub cloud: CloudOptions,
    /// Pods every control-plane node runs once their namespace exists (default: OpenShift's
    /// kube-apiserver and machine-config-server, see [`PodSet::openshift`]).
    pub control_plane_pods: Vec<PodSet>,
    /// The control-plane nodes' IPs, node `i` the i-th (e.g. machines of the world's subnets,
    /// all in one zone); when empty, the cloud's ([`CloudOptions::control_plane_ips`]); the
    /// default (and nodes beyond the list): `10.0.0.<i+1>`.
    pub node_ips: Vec<std::net::Ipv4Addr>,
    /// The kubeconfig's token's user: `system:admin` in `system:masters` (allowed everything)
    /// when None. Anyone else may do what the roles bound to it allow (`rbac`): give them
    /// in [`KubeSimOptions::objects`] (Role/ClusterRole, RoleBinding/ClusterRoleBinding).
    pub user: Option<User>,
    /// AWS: the AWS Load Balancer Controller is installed (`cloud.aws_lb_controller`) but does
    /// not serve yet: its Deployment has no available replica and its webhook no ready
    /// endpoint ([`KubeSim::set_aws_lb_controller_serving`] brings it up).
    pub aws_lb_controller_down: bool,
}

impl Default for KubeSimOptions {
    fn default() -> Self {
        Self {
            controller: ControllerKnobs::default(),
            history_limit: 1000,
            bookmark_interval: Duration::from_secs(1),
            token: None,
            objects: Vec::new(),
            cloud: CloudOptions::default(),
            control_plane_pods: PodSet::openshift(),
            node_ips: Vec::new(),
            user: None,
            aws_lb_controller_down: false,
        }
    }
}

/// State shared by the server, the watches and the controller.
pub(crate) struct Shared {
    store: Arc<Store>,
    token: String,
    server: String,
    bookmark_interval: Duration,
    shutdown: tokio::sync::watch::Receiver<bool>,
    log: Mutex<Vec<(String, String)>>,
    user_agents: Mutex<std::collections::BTreeSet<String>>,
    /// From each request's arrival to its answer (watches aside: they stay open).
    busy: Mutex<Vec<(std::time::Instant, std::time::Instant)>>,
    /// The token's user.
    user: User,
}

impl Shared {
    fn saw_user_agent(&self, agent: &str) {
        self.user_agents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(agent.to_string());
    }

    fn busy(&self, from: std::time::Instant) {
        self.busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((from, std::time::Instant::now()));
    }

    fn log(&self, method: &str, path: &str) {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((method.to_string(), path.to_string()));
    }
}

pub struct KubeSim {
    shared: Arc<Shared>,
    controller: controller::Controller,
    url: String,
    ca_pem: String,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
    stop: tokio::sync::watch::Sender<bool>,
    server: JoinHandle<()>,
    /// The listeners of [`KubeSim::front_door`].
    front_doors: Mutex<Vec<JoinHandle<()>>>,
}

impl KubeSim {
    /// Starts the server and the controller on the current tokio runtime.
    pub async fn start(opts: KubeSimOptions) -> Result<KubeSim> {
        let pki = tls::generate()?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let url = format!("https://{addr}");
        let token = opts
            .token
            .clone()
            .unwrap_or_else(|| format!("sim-{}", meta::new_uid().replace('-', "")));
        let dir = tempfile::Builder::new().prefix("kube-sim").tempdir()?;
        let kubeconfig = tls::write_kubeconfig(dir.path(), &url, &pki.ca_pem, &token)?;
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            store: Arc::new(Store::new(resources::RESOURCES.len(), opts.history_limit)),
            token,
            server: addr.to_string(),
            bookmark_interval: opts.bookmark_interval,
            shutdown,
            log: Mutex::new(Vec::new()),
            user_agents: Mutex::new(Default::default()),
            busy: Mutex::new(Vec::new()),
            user: opts.user.clone().unwrap_or_else(User::admin),
        });
        let mut objects = opts.objects.clone();
        if opts.cloud.aws_lb_controller {
            objects.push(lb::aws_lb_controller_crd());
            objects.extend(aws_controller::objects(!opts.aws_lb_controller_down));
        }
        seed(&shared, &objects)?;
        let acceptor = tokio_rustls::TlsAcceptor::from(pki.server);
        let server = tokio::spawn(http::serve(listener, acceptor, shared.clone()));
        // The cloud's own control-plane machines, unless the test places the nodes itself.
        let node_ips = if opts.node_ips.is_empty() {
            opts.cloud.control_plane_ips.clone()
        } else {
            opts.node_ips
        };
        let controller = controller::Controller::start(
            shared.clone(),
            opts.controller,
            opts.cloud,
            opts.control_plane_pods,
            node_ips,
        )?;
        Ok(KubeSim {
            shared,
            controller,
            url,
            ca_pem: pki.ca_pem,
            kubeconfig,
            _dir: dir,
            stop,
            server,
            front_doors: Mutex::new(Vec::new()),
        })
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// The CA certificate (PEM) that signed the server certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    pub fn knobs(&self) -> ControllerKnobs {
        self.controller.knobs()
    }

    pub fn set_knobs(&self, knobs: ControllerKnobs) {
        self.controller.set_knobs(knobs);
    }

    /// Brings the AWS Load Balancer Controller up (its Deployment available, its webhook's
    /// endpoint ready) or down; the controllers then go over every Service again, as the real
    /// controller reconciles all of them when it starts.
    pub fn set_aws_lb_controller_serving(&self, serving: bool) -> Result<()> {
        aws_controller::set_serving(&mut self.shared.store.lock(), serving)?;
        self.controller.set_knobs(self.controller.knobs());
        Ok(())
    }

    /// The service proxy (ovnkube-node: `:10256` and the nodePorts) of the node `node`
    /// (`master-<i>`) answers (`up`) or not: the GCP and Azure load balancers' health checks
    /// and probes test it. An Azure load balancer whose every backend fails its probe serves
    /// nothing (see `lb::backends`).
    pub fn set_service_proxy(&self, node: &str, up: bool) {
        self.controller.load_balancers().set_service_proxy(node, up);
    }

    /// Labels the node `node` (`master-<i>`) with
    /// `node.kubernetes.io/exclude-from-external-load-balancers` (`excluded`) or removes the
    /// label: the service controller leaves it out of every load balancer's backends.
    pub fn exclude_from_load_balancers(&self, node: &str, excluded: bool) {
        self.controller
            .load_balancers()
            .set_excluded(node, excluded);
    }

    /// The Azure load balancer's backend pool, healthy backends and probes for the Service
    /// `namespace/name` (see `lb::backends`); None when no Azure load balancer fronts it.
    pub fn azure_backend(&self, namespace: &str, name: &str) -> Option<Value> {
        let svc = self.get("", "v1", "services", Some(namespace), name)?;
        self.controller.load_balancers().azure_backend(&svc)
    }

    /// Makes this Service's ingress and ready endpoints true now (or as soon as the Service
    /// exists); returns immediately.
    pub fn make_ready(&self, namespace: &str, name: &str) {
        self.controller.make_ready(namespace, name);
    }

    /// A stored object; `group` is "" for core.
    pub fn get(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let res = resources::find(group, version, plural)?;
        let key = Key::new(res, namespace.unwrap_or(""), name);
        self.shared.store.lock().get(&key).map(|o| (*o).clone())
    }

    /// Stored objects of a type, optionally in one namespace.
    pub fn list(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Vec<Value> {
        let Some(res) = resources::find(group, version, plural) else {
            return Vec::new();
        };
        let inner = self.shared.store.lock();
        inner
            .list(res, namespace)
            .into_iter()
            .map(|(_, o)| (*o).clone())
            .collect()
    }

    /// Creates an object directly (as manager `kube-sim`), status included.
    pub fn create(&self, obj: Value) -> Result<Value> {
        create_object(&self.shared, obj)
    }

    /// Creates `obj`, or replaces the object of its name (as `kubectl replace`, by manager
    /// `kube-sim`): e.g. an admin changing the roles a user holds.
    pub fn create_or_replace(&self, obj: Value) -> Result<Value> {
        let res = resource_of(&obj)?;
        let key = Key::new(res, meta::namespace(&obj), meta::name(&obj));
        let mut inner = self.shared.store.lock();
        let Some(live) = inner.get(&key) else {
            drop(inner);
            return create_object(&self.shared, obj);
        };
        let mut body = obj;
        meta::set(
            &mut body,
            &["metadata", "resourceVersion"],
            live["metadata"]["resourceVersion"].clone(),
        );
        let ctx = ops::WriteCtx::internal("kube-sim", false);
        ops::update(&mut inner, &key, body, apply::Scope::Main, &ctx)
            .map_err(|e| anyhow::anyhow!("{}", e.message))
    }

    /// The Events about the Service `namespace/name`, in the order they were last written.
    pub fn service_events(&self, namespace: &str, name: &str) -> Vec<Value> {
        events::of_service(&self.shared.store.lock(), namespace, name)
    }

    /// The IPs a client can reach an API server through now: those of the load balancer of a
    /// Service that has ingress and at least one ready endpoint (a load balancer without a
    /// healthy target does not answer; on Azure also a healthy backend node, see
    /// [`KubeSim::set_service_proxy`]). A load balancer's IPs: what it holds in the cloud
    /// (an NLB's private IPs and EIPs, an internal frontend), and the IPs of its ingress. An
    /// NLB's address counts only when it forwards every listener (see `lb::nlb_config`: an
    /// address in a zone without a healthy target serves only across zones).
    pub async fn serving_ips(&self) -> std::collections::BTreeSet<std::net::IpAddr> {
        serving(&self.shared, &self.controller.load_balancers(), None, None).await
    }

    /// A local stand-in for the load-balancer address `ip` on `port` (the proof on the wire
    /// dials it through `--wire-dial-override IP:PORT=<this>`): each connection goes through
    /// to this API server while `ip` serves `port` (as [`KubeSim::serving_ips`] decides, per
    /// listener), and is otherwise accepted and left silent until the client gives up, as an
    /// NLB node without a target to forward to drops the traffic.
    pub async fn front_door(
        &self,
        ip: std::net::IpAddr,
        port: u16,
    ) -> Result<std::net::SocketAddr> {
        self.front_door_from(ip, port, None).await
    }

    /// [`KubeSim::front_door`] for clients at `source` (when given): an NLB whose security
    /// group does not admit `source` on `port` drops them too.
    pub async fn front_door_from(
        &self,
        ip: std::net::IpAddr,
        port: u16,
        source: Option<std::net::Ipv4Addr>,
    ) -> Result<std::net::SocketAddr> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (shared, lbs) = (self.shared.clone(), self.controller.load_balancers());
        let task = tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let serves = serving(&shared, &lbs, Some(port), source)
                    .await
                    .contains(&ip);
                let api = shared.server.clone();
                tokio::spawn(async move {
                    if !serves {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    }
                    if let Ok(mut upstream) = tokio::net::TcpStream::connect(api).await {
                        let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
                    }
                });
            }
        });
        self.front_doors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(task);
        Ok(addr)
    }

    /// The current (global) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.store.lock().rv()
    }

    /// Closes all open watch streams now.
    pub fn drop_watches(&self) {
        self.shared.store.lock().drop_watches();
    }

    /// Every change of objects of type `plural` (of `group`/`version`; core is `""`/`v1`)
    /// from now on, as the objects after the change (a deleted one as it was last), in order.
    /// None for a type the server does not serve.
    pub fn changes(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<Value>> {
        let res = resources::find(group, version, plural)?;
        let (_, mut events) = self.shared.store.lock().subscribe(res, None, true).ok()?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(e) = events.recv().await {
                if tx.send((*e.obj).clone()).is_err() {
                    return;
                }
            }
        });
        Some(rx)
    }

    /// (method, path+query) of every request so far, in order.
    pub fn request_log(&self) -> Vec<(String, String)> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// From each request's arrival to its answer, watches aside: the time a client waited on
    /// this API server (the dns bench tells it apart from the agent's own).
    pub fn busy_spans(&self) -> Vec<(std::time::Instant, std::time::Instant)> {
        self.shared
            .busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Every distinct `User-Agent` header seen so far ("" for a request without one).
    pub fn user_agents(&self) -> Vec<String> {
        self.shared
            .user_agents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    pub fn clear_request_log(&self) {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

impl Drop for KubeSim {
    fn drop(&mut self) {
        self.stop.send_replace(true);
        self.server.abort();
        for task in self
            .front_doors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            task.abort();
        }
        self.shared.store.lock().drop_watches();
    }
}

/// What serves now (see [`KubeSim::serving_ips`]); on listener `port` only and to a client
/// at `source`, when given.
async fn serving(
    shared: &Shared,
    lbs: &lb::LoadBalancers,
    port: Option<u16>,
    source: Option<std::net::Ipv4Addr>,
) -> std::collections::BTreeSet<std::net::IpAddr> {
    // (namespace, name, ingress IPs, ready endpoint addresses, ports) of each Service that
    // has ingress and a ready endpoint.
    let mut ready = Vec::new();
    {
        let inner = shared.store.lock();
        for (_, svc) in inner.list(resources::SERVICES, None) {
            let (ns, name) = (meta::namespace(&svc), meta::name(&svc));
            let ingress: Vec<std::net::IpAddr> =
                meta::get(&svc, &["status", "loadBalancer", "ingress"])
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i["ip"].as_str().and_then(|ip| ip.parse().ok()))
                    .collect();
            let has_ingress = meta::get(&svc, &["status", "loadBalancer", "ingress"])
                .and_then(Value::as_array)
                .is_some_and(|i| !i.is_empty());
            let targets: Vec<std::net::Ipv4Addr> = inner
                .get(&Key::new(resources::ENDPOINTS, ns, name))
                .and_then(|ep| ep["subsets"].as_array().cloned())
                .into_iter()
                .flatten()
                .flat_map(|s| s["addresses"].as_array().cloned().unwrap_or_default())
                .filter_map(|a| a["ip"].as_str().and_then(|ip| ip.parse().ok()))
                .collect();
            let ports: Vec<u16> = meta::get(&svc, &["spec", "ports"])
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p["port"].as_u64().and_then(|n| u16::try_from(n).ok()))
                .collect();
            // An Azure load balancer without a healthy backend drops new flows (see `lb`).
            if has_ingress && !targets.is_empty() && lbs.forwards(&svc) {
                ready.push((ns.to_string(), name.to_string(), ingress, targets, ports));
            }
        }
    }
    let mut ips = std::collections::BTreeSet::new();
    for (ns, name, ingress, targets, ports) in ready {
        if port.is_some_and(|p| !ports.contains(&p)) {
            continue;
        }
        ips.extend(ingress);
        ips.extend(lbs.serving(&ns, &name, &targets, port, source).await);
    }
    ips
}

/// Resolves when the sim is stopping (or gone).
pub(crate) async fn stopped(rx: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

/// The index in [`resources::RESOURCES`] of `obj`'s apiVersion and kind.
fn resource_of(obj: &Value) -> Result<usize> {
    let api_version = meta::get_str(obj, &["apiVersion"]).unwrap_or("");
    let kind = meta::get_str(obj, &["kind"]).unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    match resources::RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.kind == kind)
    {
        Some(res) => Ok(res),
        None => bail!("kube-sim does not serve {api_version} {kind}"),
    }
}

fn create_object(shared: &Shared, obj: Value) -> Result<Value> {
    let res = resource_of(&obj)?;
    let ctx = ops::WriteCtx::internal("kube-sim", false);
    let mut inner = shared.store.lock();
    let ns = meta::namespace(&obj).to_string();
    let created = ops::create(&mut inner, res, &ns, obj.clone(), &ctx)
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    match obj.get("status") {
        Some(status) if resources::RESOURCES[res].status => {
            let key = Key::new(res, &ns, meta::name(&created));
            let mut with_status = created;
            with_status["status"] = status.clone();
            ops::update(&mut inner, &key, with_status, apply::Scope::Status, &ctx)
                .map_err(|e| anyhow::anyhow!("{}", e.message))
        }
        _ => Ok(created),
    }
}

/// The CustomResourceDefinitions of the custom resources this server serves (ClusterVersion,
/// Infrastructure, DNS, ...), as it holds them: for a real kube-apiserver to serve the same
/// (`bootstrap-sim real-ccm --kubeconfig`).
pub fn custom_resource_definitions() -> Vec<Value> {
    discovery::crds()
}

fn seed(shared: &Shared, extra: &[Value]) -> Result<()> {
    let mut objects: Vec<Value> = ["default", "kube-system", "kube-public", "kube-node-lease"]
        .iter()
        .map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}))
        .collect();
    objects.push(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "172.30.0.1",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}
    }));
    objects.extend(discovery::crds());
    objects.extend(rbac::bootstrap_policy());
    objects.extend(extra.iter().cloned());
    for o in objects {
        let what = format!(
            "{} {}",
            meta::get_str(&o, &["kind"]).unwrap_or("?"),
            meta::name(&o)
        );
        create_object(shared, o).with_context(|| format!("cannot seed {what}"))?;
    }
    Ok(())
}
