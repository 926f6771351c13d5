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
//!
//! This file holds the server's shared state and [`KubeSim`]'s handle on it; its options are
//! in `options`, the objects it creates itself (the seed at start, a test's own) in `seed`,
//! what serves through the simulated load balancers (and the front doors) in `serving`, and
//! what the server saw (requests, user agents, busy spans) in `request_log`.

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
mod options;
mod rbac;
mod request_info;
mod request_log;
mod resources;
mod rest;
mod schema;
mod seed;
mod selector;
mod service;
mod serving;
mod status;
mod store;
mod strategic;
mod tls;
mod watch;

use anyhow::Result;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::{Key, Store};
use tokio::task::JoinHandle;

pub use kubelet::PodSet;
pub use lb::{
    AddressBook, AddressUsers, CloudOptions, Ipv4Cidr, Ipv6Cidr, gcp_no_address, lb_resource_name,
};
pub use options::{ControllerKnobs, KubeSimOptions};
pub use rbac::User;
pub use tls::SERVER_NAMES;

use seed::{create_object, resource_of, seed};

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

/// Resolves when the sim is stopping (or gone).
pub(crate) async fn stopped(rx: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

/// The CustomResourceDefinitions of the custom resources this server serves (ClusterVersion,
/// Infrastructure, DNS, ...), as it holds them: for a real kube-apiserver to serve the same
/// (`bootstrap-sim real-ccm --kubeconfig`).
pub fn custom_resource_definitions() -> Vec<Value> {
    discovery::crds()
}
