//! The route scripts MCO installs on every master, which make a load-balancer VIP answer on
//! the master itself. Both add `redirect` rules on two hooks: prerouting (the "external"
//! chain: packets the load balancer delivers with the VIP still their destination) and
//! output (the "local" chain: the master's own connections to the VIP).
//!
//! - GCP, `openshift-gcp-routes.sh` (`templates/master/00-master/gcp/files/
//!   opt-libexec-openshift-gcp-routes-sh.yaml`): `list_lb_ips` reads GCE metadata
//!   `instance/network-interfaces/*/forwarded-ips/*`, every forwarding rule whose backends hold
//!   this instance, ours included. Prerouting redirects each; output redirects each unless
//!   `/run/cloud-routes/<vip>.down` exists. It re-reads on every change of the run dir and at
//!   least every 30 s (`sleep_or_watch`: `inotifywait -t 30`).
//! - Azure, `openshift-azure-routes.sh` (`templates/master/00-master/azure/files/
//!   opt-libexec-openshift-azure-routes-sh.yaml`): `list_lb_ips` takes every
//!   `/run/cloud-routes/*.up`; `sync_rules` redirects each on both hooks, all ports, and
//!   `add_routes` reroutes pod traffic to it through OVN (`lr-policy 1010 ... reroute`), so a
//!   master's pods are redirected too. Its path unit runs it on every change of the run dir.

use super::watcher::RunDir;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

/// `sleep_or_watch`: gcp-routes re-reads the metadata at least this often.
pub const GCP_ROUTES_REFRESH: Duration = Duration::from_secs(30);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloud {
    Gcp,
    Azure,
}

/// What one master's route script has programmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redirects {
    /// Prerouting: packets to these addresses answer on this master.
    pub external: BTreeSet<IpAddr>,
    /// Output: this master's own connections to these addresses answer on this master.
    pub local: BTreeSet<IpAddr>,
}

/// What the script programs from what it reads: GCP's forwarded IPs as last read from the
/// metadata, the run dir the watcher writes.
pub fn programmed(cloud: Cloud, forwarded: &BTreeSet<IpAddr>, run: &RunDir) -> Redirects {
    match cloud {
        Cloud::Gcp => Redirects {
            external: forwarded.clone(),
            local: forwarded
                .iter()
                .filter(|ip| !run.down.contains(ip))
                .copied()
                .collect(),
        },
        Cloud::Azure => Redirects {
            external: run.up.clone(),
            local: run.up.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> BTreeSet<IpAddr> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn gcp_redirects_every_forwarded_ip_and_withdraws_only_a_down_one_from_local_clients() {
        let forwarded = ips(&["10.0.2.5", "34.1.2.3"]);
        let run = RunDir {
            up: ips(&[]),
            down: ips(&["10.0.2.5"]),
        };
        let r = programmed(Cloud::Gcp, &forwarded, &run);
        assert_eq!(r.external, forwarded);
        assert_eq!(r.local, ips(&["34.1.2.3"]));
        // An address the watcher marks up but the metadata does not forward: nothing.
        let up_only = RunDir {
            up: ips(&["10.0.1.10"]),
            down: ips(&[]),
        };
        assert!(programmed(Cloud::Gcp, &ips(&[]), &up_only).local.is_empty());
    }

    #[test]
    fn azure_redirects_exactly_the_up_files_whatever_they_name() {
        let run = RunDir {
            up: ips(&["10.0.1.10"]),
            down: ips(&["10.0.2.5"]),
        };
        let r = programmed(Cloud::Azure, &ips(&["10.0.2.5"]), &run);
        assert_eq!(r.external, ips(&["10.0.1.10"]));
        assert_eq!(r.local, ips(&["10.0.1.10"]));
    }
}
