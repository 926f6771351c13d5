//! What a template sees: the cluster's names and, per scope and family, the reserved address.

use crate::assets::ClusterSpec;
use bootstrap_cloud::{IpFamily, Reservation, Scope};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
struct Address {
    subnet: String,
    id: String,
    ip: String,
    family: IpFamily,
}

#[derive(Debug, Default, Serialize)]
struct ByFamily {
    ipv4: Option<String>,
    ipv6: Option<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct TemplateContext {
    infra_id: String,
    cluster_domain: String,
    publish_external: bool,
    dual_stack: bool,
    labels: BTreeMap<String, String>,
    /// Reserved public addresses, sorted by subnet (AWS: one per public subnet).
    public: Vec<Address>,
    private: Vec<Address>,
    /// The first public/private address per family (Azure, GCP: there is one).
    public_ip: ByFamily,
    private_ip: ByFamily,
}

pub(super) fn context(spec: &ClusterSpec, reservations: &[Reservation]) -> TemplateContext {
    let addresses = |scope: Scope| -> Vec<Address> {
        let mut list: Vec<Address> = reservations
            .iter()
            .filter(|r| r.key.scope == scope)
            .map(|r| Address {
                subnet: r.key.placement.clone().unwrap_or_default(),
                id: r.id.clone(),
                ip: r.ip.to_string(),
                family: r.key.family,
            })
            .collect();
        list.sort_by(|a, b| (a.family, &a.subnet).cmp(&(b.family, &b.subnet)));
        list
    };
    let by_family = |list: &[Address]| ByFamily {
        ipv4: list
            .iter()
            .find(|a| a.family == IpFamily::Ipv4)
            .map(|a| a.ip.clone()),
        ipv6: list
            .iter()
            .find(|a| a.family == IpFamily::Ipv6)
            .map(|a| a.ip.clone()),
    };
    let (public, private) = (addresses(Scope::Public), addresses(Scope::Private));
    TemplateContext {
        infra_id: spec.infra_id.clone(),
        cluster_domain: spec.cluster_domain(),
        publish_external: spec.publish.public_api(),
        dual_stack: spec.ip_families.len() > 1,
        labels: super::our_labels(&spec.infra_id),
        public_ip: by_family(&public),
        private_ip: by_family(&private),
        public,
        private,
    }
}
