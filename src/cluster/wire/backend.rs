//! The proof from the cloud side, for a load balancer the bootstrap host cannot test by
//! dialling it: GCP's internal one, whose backends include the bootstrap VM (GCE hands a
//! backend's connection to its own internal load balancer back to it, so a dial from here
//! would reach this host). There the cloud's health check stands in: every forwarding rule
//! the IP needs (6443, and 22623 where the IP serves the machine-config server) must have a
//! backend other than the bootstrap host passing it (see
//! `bootstrap_cloud::AddressProvider::backend_health`). The gate's other half, a ready
//! endpoint, is checked by the gate itself.

use super::{API_PORT, IpProof, MCS_PORT, WireProof};
use bootstrap_cloud::{AddressProvider, CloudError, FrontendHealth};
use std::net::IpAddr;

/// One IP's proof: the cloud's word where the wire from here proves nothing, else the wire.
pub async fn prove_ip(
    wire: &WireProof,
    cloud: Option<&dyn AddressProvider>,
    ip: IpAddr,
    mcs: bool,
) -> IpProof {
    if let Some(cloud) = cloud
        && let Some(answer) = cloud.backend_health(ip).await
    {
        return judge(ip, mcs, answer);
    }
    wire.prove(ip, mcs).await
}

/// PURE: the cloud's answer for `ip` as a proof: each port the IP must serve has a frontend
/// with a healthy backend that is not the bootstrap host.
pub fn judge(ip: IpAddr, mcs: bool, answer: Result<Vec<FrontendHealth>, CloudError>) -> IpProof {
    let fail = |reason: String| IpProof {
        ip,
        ok: false,
        reason,
    };
    let frontends = match answer {
        Ok(f) => f,
        Err(e) => {
            return fail(format!(
                "{ip}: cannot ask the cloud which backends serve it: {e}"
            ));
        }
    };
    let ports: &[u16] = if mcs {
        &[API_PORT, MCS_PORT]
    } else {
        &[API_PORT]
    };
    let mut proven = Vec::new();
    let mut waiting = Vec::new();
    for port in ports {
        let text = port.to_string();
        let serving: Vec<&FrontendHealth> = frontends
            .iter()
            .filter(|f| f.ports.contains(&text))
            .collect();
        if serving.is_empty() {
            waiting.push(format!("no forwarding rule for port {port} yet"));
            continue;
        }
        match serving.iter().find(|f| !f.healthy.is_empty()) {
            Some(f) => proven.push(format!(
                "{port} by {} (healthy: {})",
                f.frontend,
                f.healthy.join(", ")
            )),
            None => waiting.push(format!(
                "port {port}: no backend but the bootstrap host passes the health check yet ({})",
                serving
                    .iter()
                    .map(|f| match f.unhealthy.is_empty() {
                        true => format!("{}: no backend", f.frontend),
                        false => format!("{}: unhealthy {}", f.frontend, f.unhealthy.join(", ")),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    if waiting.is_empty() {
        IpProof {
            ip,
            ok: true,
            reason: format!(
                "{ip}: cloud: the load balancer's health check passes {} (the bootstrap host is one of its backends, so a dial from here proves nothing)",
                proven.join(", ")
            ),
        }
    } else {
        fail(format!("{ip}: {}", waiting.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip() -> IpAddr {
        "10.0.2.5".parse().unwrap()
    }

    fn frontend(name: &str, port: &str, healthy: &[&str], unhealthy: &[&str]) -> FrontendHealth {
        FrontendHealth {
            frontend: name.into(),
            ports: vec![port.into()],
            healthy: healthy.iter().map(|s| s.to_string()).collect(),
            unhealthy: unhealthy.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_healthy_backend_other_than_the_bootstrap_host_on_every_port_proves_the_ip() {
        let answer = vec![
            frontend("a1", "6443", &["master-0"], &["bootstrap"]),
            frontend("a2", "22623", &["master-1"], &[]),
        ];
        let proof = judge(ip(), true, Ok(answer));
        assert!(proof.ok, "{}", proof.reason);
        assert!(
            proof.reason.contains("6443 by a1 (healthy: master-0)"),
            "{}",
            proof.reason
        );
        assert!(proof.reason.contains("22623 by a2"), "{}", proof.reason);
    }

    #[test]
    fn only_the_bootstrap_host_healthy_or_a_port_without_a_rule_is_not_proof() {
        let unhealthy = vec![
            frontend("a1", "6443", &[], &["bootstrap"]),
            frontend("a2", "22623", &["master-1"], &[]),
        ];
        let proof = judge(ip(), true, Ok(unhealthy));
        assert!(!proof.ok);
        assert!(
            proof
                .reason
                .contains("port 6443: no backend but the bootstrap host")
                && proof.reason.contains("a1: unhealthy bootstrap"),
            "{}",
            proof.reason
        );
        let api_only = vec![frontend("a1", "6443", &["master-0"], &[])];
        assert!(judge(ip(), false, Ok(api_only.clone())).ok);
        let proof = judge(ip(), true, Ok(api_only));
        assert!(!proof.ok);
        assert!(
            proof.reason.contains("no forwarding rule for port 22623"),
            "{}",
            proof.reason
        );
        assert!(!judge(ip(), false, Ok(Vec::new())).ok);
        let none = judge(ip(), false, Ok(vec![frontend("a1", "6443", &[], &[])]));
        assert!(none.reason.contains("a1: no backend"), "{}", none.reason);
    }

    #[test]
    fn a_failed_read_is_never_proof() {
        let proof = judge(
            ip(),
            false,
            Err(CloudError::new(
                bootstrap_cloud::ErrorKind::Transient,
                "regionBackendServices.getHealth",
                "connection failed",
            )),
        );
        assert!(!proof.ok);
        assert!(
            proof.reason.contains("regionBackendServices.getHealth"),
            "{}",
            proof.reason
        );
    }
}
