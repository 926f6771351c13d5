//! What a [`KubeSim`] is started with: the simulated service controller's
//! knobs (changeable at runtime) and the server's options.

#[cfg(doc)]
use super::KubeSim;
use super::{CloudOptions, PodSet, User};
use serde_json::Value;
use std::time::Duration;

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
