//! The route scripts on OpenShift's GCP and Azure nodes, which make a load-balancer VIP answer
//! on the node itself. Each adds `redirect` rules on up to two nftables hooks, prerouting
//! (packets the load balancer delivers with the VIP still their destination) and output (the
//! node's own connections), and the MCO ones an OVN reroute of the node's pods' traffic
//! (`lr-policy 1010 ... reroute <ovn-k8s-mp0>`, so pods reach the node's prerouting rule).
//!
//! Read at openshift/machine-config-operator 7ff337a4 and coreos/rhel-coreos-config aaf67438:
//! - GCP masters, `openshift-gcp-routes.sh` (MCO `templates/master/00-master/gcp/files/
//!   opt-libexec-openshift-gcp-routes-sh.yaml`): `list_lb_ips` (:167-188) reads GCE metadata
//!   `instance/network-interfaces/*/forwarded-ips/*`, every forwarding rule whose backends hold
//!   this instance, ours included, and marks one down when `/run/cloud-routes/<vip>.down`
//!   exists. `sync_rules` (:100-122): prerouting redirects all of them, output all but the down
//!   ones; `add_routes` (:124-149) reroutes pods for the non-down ones. It re-reads on every
//!   change of the run dir and at least every 30 s (`sleep_or_watch`, `inotifywait -t 30`,
//!   :190-192). MCO masks RHCOS's own `gcp-routes.service` on masters only
//!   (`templates/master/00-master/gcp/units/gcp-routes.service.yaml`,
//!   `ConditionPathExists=/enoent`).
//! - GCP workers and the bootstrap VM, RHCOS's `gcp-routes.sh` (rhel-coreos-config
//!   `overlay.d/06gcp-routes/usr/sbin/gcp-routes.sh`, enabled by `44-gcp-routes.preset`): the
//!   same forwarded IPs redirected in prerouting ONLY (:33-56), no output rule, no pod reroute;
//!   `.down` files in `/run/gcp-routes`, which nothing writes; re-read at least every 240 s
//!   (`inotifywait -t 240`, :85-87).
//! - Azure masters, `openshift-azure-routes.sh` (MCO `templates/master/00-master/azure/files/
//!   opt-libexec-openshift-azure-routes-sh.yaml`): `list_lb_ips` (:182-206) takes every
//!   `/run/cloud-routes/*.up` without a `.down`, whatever address it names; `sync_rules`
//!   (:89-114) redirects each, all ports, in one chain both hooks jump to (`initialize`
//!   :39-52); `add_routes` (:116-163) reroutes pods to it. Its path unit
//!   (`openshift-azure-routes.path`, `PathChanged=/run/cloud-routes/`) runs it on every change.
//!   Azure workers run nothing of the kind.

use super::Role;
use super::watcher::RunDir;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

/// MCO's `openshift-gcp-routes.sh` re-reads the metadata at least this often.
pub const GCP_ROUTES_REFRESH: Duration = Duration::from_secs(30);
/// RHCOS's `gcp-routes.sh` (workers, the bootstrap VM) at least this often.
pub const RHCOS_GCP_ROUTES_REFRESH: Duration = Duration::from_secs(240);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloud {
    Gcp,
    Azure,
}

/// Which route script a node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// MCO's `openshift-gcp-routes.sh` (GCP masters).
    McoGcp,
    /// RHCOS's `gcp-routes.sh` (GCP workers and the bootstrap VM).
    RhcosGcp,
    /// MCO's `openshift-azure-routes.sh` (Azure masters).
    McoAzure,
}

impl Script {
    /// The script a node of `role` runs on `cloud`, if any.
    pub fn of(cloud: Cloud, role: Role) -> Option<Script> {
        match (cloud, role) {
            (Cloud::Gcp, Role::Master) => Some(Script::McoGcp),
            (Cloud::Gcp, Role::Worker | Role::Bootstrap) => Some(Script::RhcosGcp),
            (Cloud::Azure, Role::Master) => Some(Script::McoAzure),
            (Cloud::Azure, Role::Worker | Role::Bootstrap) => None,
        }
    }

    /// How often it re-reads its inputs at least (GCP's metadata); None: only on a change.
    pub fn refresh(self) -> Option<Duration> {
        match self {
            Script::McoGcp => Some(GCP_ROUTES_REFRESH),
            Script::RhcosGcp => Some(RHCOS_GCP_ROUTES_REFRESH),
            Script::McoAzure => None,
        }
    }
}

/// What one node's route script has programmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redirects {
    /// Prerouting: packets to these addresses answer on this node.
    pub external: BTreeSet<IpAddr>,
    /// Output: this node's own connections to these addresses answer on this node.
    pub local: BTreeSet<IpAddr>,
    /// OVN reroute: this node's pods' connections to these addresses go to this node.
    pub pods: BTreeSet<IpAddr>,
}

/// What `script` programs from what it reads: GCP's forwarded IPs as last read from the
/// metadata, the run dir the watcher writes (`/run/cloud-routes`; RHCOS's script reads
/// `/run/gcp-routes`, which nothing writes).
pub fn programmed(script: Script, forwarded: &BTreeSet<IpAddr>, run: &RunDir) -> Redirects {
    match script {
        Script::McoGcp => {
            let not_down: BTreeSet<IpAddr> = forwarded
                .iter()
                .filter(|ip| !run.down.contains(ip))
                .copied()
                .collect();
            Redirects {
                external: forwarded.clone(),
                local: not_down.clone(),
                pods: not_down,
            }
        }
        Script::RhcosGcp => Redirects {
            external: forwarded.clone(),
            ..Redirects::default()
        },
        Script::McoAzure => {
            let up: BTreeSet<IpAddr> = run.up.difference(&run.down).copied().collect();
            Redirects {
                external: up.clone(),
                local: up.clone(),
                pods: up,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> BTreeSet<IpAddr> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn gcp_masters_redirect_every_forwarded_ip_and_withdraw_a_down_one_from_local_and_pods() {
        let forwarded = ips(&["10.0.2.5", "34.1.2.3"]);
        let run = RunDir {
            up: ips(&[]),
            down: ips(&["10.0.2.5"]),
        };
        let r = programmed(Script::McoGcp, &forwarded, &run);
        assert_eq!(r.external, forwarded);
        assert_eq!(r.local, ips(&["34.1.2.3"]));
        assert_eq!(r.pods, ips(&["34.1.2.3"]), "the OVN reroute follows .down");
        // An address the watcher marks up but the metadata does not forward: nothing.
        let up_only = RunDir {
            up: ips(&["10.0.1.10"]),
            down: ips(&[]),
        };
        assert_eq!(
            programmed(Script::McoGcp, &ips(&[]), &up_only),
            Redirects::default()
        );
    }

    /// RHCOS's own script, on workers and the bootstrap VM: prerouting only, whatever the
    /// run dir says (the old model ran nothing there).
    #[test]
    fn gcp_workers_and_the_bootstrap_vm_redirect_forwarded_ips_in_prerouting_only() {
        let forwarded = ips(&["10.0.2.5"]);
        let run = RunDir {
            up: ips(&[]),
            down: ips(&["10.0.2.5"]),
        };
        let r = programmed(Script::RhcosGcp, &forwarded, &run);
        assert_eq!(r.external, forwarded);
        assert!(r.local.is_empty() && r.pods.is_empty());
        for role in [Role::Worker, Role::Bootstrap] {
            assert_eq!(Script::of(Cloud::Gcp, role), Some(Script::RhcosGcp));
            assert_eq!(Script::of(Cloud::Azure, role), None);
        }
        assert_eq!(
            Script::RhcosGcp.refresh(),
            Some(Duration::from_secs(240)),
            "inotifywait -t 240"
        );
    }

    #[test]
    fn azure_redirects_every_up_file_without_a_down_one_whatever_it_names() {
        let run = RunDir {
            up: ips(&["10.0.1.10", "10.0.1.11", "10.0.2.5"]),
            down: ips(&["10.0.2.5"]),
        };
        let r = programmed(Script::McoAzure, &ips(&["10.0.2.5"]), &run);
        let want = ips(&["10.0.1.10", "10.0.1.11"]);
        assert_eq!(
            (r.external, r.local, r.pods),
            (want.clone(), want.clone(), want)
        );
    }
}
