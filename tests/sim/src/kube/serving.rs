//! What serves now: the IPs a client can reach the API server through (a load balancer's,
//! while its Service has ingress and a ready endpoint), and local front doors that stand in
//! for one such IP.

use super::store::Key;
use super::{KubeSim, Shared, lb, meta, resources};
use anyhow::Result;
use serde_json::Value;
use std::time::Duration;

impl KubeSim {
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
