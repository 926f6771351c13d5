//! The controller's model of a Service's NLB, built from its annotations (errors are
//! `FailedBuildModel`): its name and hostname, scheme, subnets, private IPs and EIP
//! allocations, and the settings `nlb_config` builds.

use super::super::nlb_config;
use crate::kube::meta;
use serde_json::Value;
use std::net::Ipv4Addr;

const SCHEME: &str = "service.beta.kubernetes.io/aws-load-balancer-scheme";
const SUBNETS: &str = "service.beta.kubernetes.io/aws-load-balancer-subnets";
const PRIVATE_IPS: &str = "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses";
const EIPS: &str = "service.beta.kubernetes.io/aws-load-balancer-eip-allocations";

/// FNV-1a of `seed`, as lowercase hex of `n` digits (stable names from the Service uid).
fn hex(seed: &str, n: usize) -> String {
    let mut out = String::new();
    let mut round = 0u8;
    while out.len() < n {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.bytes().chain([round]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
        round += 1;
    }
    out.truncate(n);
    out
}

/// `k8s-<ns>-<name>-<hash>`: the controller's name for a Service's NLB (namespace and name
/// stripped of non-alphanumerics and cut to 8 characters, a 10-character hash).
pub fn lb_name(svc: &Value) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect()
    };
    format!(
        "k8s-{}-{}-{}",
        clean(meta::namespace(svc)),
        clean(meta::name(svc)),
        hex(meta::uid(svc), 10)
    )
}

/// The 16 hex digits ELB appends to the NLB's DNS name and ARN.
fn lb_id(svc: &Value) -> String {
    hex(&format!("{}/id", meta::uid(svc)), 16)
}

/// The NLB's DNS name, the only thing the controller writes into the ingress.
pub fn hostname(svc: &Value, region: &str) -> String {
    format!("{}-{}.elb.{region}.amazonaws.com", lb_name(svc), lb_id(svc))
}

/// What the Service asks of its NLB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub lb_name: String,
    pub description: String,
    pub internal: bool,
    pub subnets: Vec<String>,
    pub private_ips: Vec<Ipv4Addr>,
    pub eips: Vec<String>,
    /// Attributes, listeners, health check and source ranges.
    pub config: nlb_config::Config,
}

fn list(svc: &Value, key: &str) -> Vec<String> {
    meta::get_str(svc, &["metadata", "annotations", key])
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Addresses the Service gives per subnet (`count` of `what`): none, or one per subnet when
/// the scheme is the one they are for (`allowed`, the `for_scheme` load balancers).
fn per_subnet(
    what: &str,
    count: usize,
    subnets: usize,
    allowed: bool,
    for_scheme: &str,
) -> Result<(), String> {
    if count == 0 {
        return Ok(());
    }
    if !allowed {
        return Err(format!(
            "{what} can only be set for {for_scheme} load balancers"
        ));
    }
    if count != subnets {
        return Err(format!(
            "count of {what} ({count}) and subnets ({subnets}) must match"
        ));
    }
    Ok(())
}

/// What the controller makes of `wanted` for an NLB built as `existing`: later reconciles
/// compare the subnets only, so with the same subnets the NLB keeps the private IPs and EIPs
/// it was created with, whatever the Service asks now
/// (../shared/research/aws-lb-controller-observed.md, 2). Other subnets: the Service's.
pub fn as_kept(existing: &Model, wanted: Model) -> Model {
    if existing.subnets != wanted.subnets {
        return wanted;
    }
    Model {
        private_ips: existing.private_ips.clone(),
        eips: existing.eips.clone(),
        ..wanted
    }
}

/// The model, or why it cannot be built (the text after "Failed build model due to").
pub fn build(svc: &Value) -> Result<Model, String> {
    let internal = match meta::get_str(svc, &["metadata", "annotations", SCHEME]) {
        None | Some("internal") => true,
        Some("internet-facing") => false,
        Some(other) => return Err(format!("unknown scheme {other:?}")),
    };
    let subnets = list(svc, SUBNETS);
    let private_ips = list(svc, PRIVATE_IPS)
        .iter()
        .map(|ip| {
            ip.parse::<Ipv4Addr>()
                .map_err(|_| format!("invalid private IPv4 address {ip:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let eips = list(svc, EIPS);
    let subnet_count = subnets.len();
    let (ip_count, eip_count) = (private_ips.len(), eips.len());
    per_subnet(
        "private IPv4 addresses",
        ip_count,
        subnet_count,
        internal,
        "internal",
    )?;
    per_subnet(
        "EIP allocations",
        eip_count,
        subnet_count,
        !internal,
        "internet facing",
    )?;
    let config = nlb_config::build(svc)?;
    let lb_name = lb_name(svc);
    Ok(Model {
        config,
        description: format!("ELB net/{lb_name}/{}", lb_id(svc)),
        lb_name,
        internal,
        subnets,
        private_ips,
        eips,
    })
}

/// Which subnet each EIP of `aws-load-balancer-eip-allocations` goes to: the controller sorts
/// the subnets by ID (`pkg/networking/subnet_resolver.go`, `sortSubnetsByID`) and gives the
/// i-th allocation to the i-th sorted subnet (`pkg/service/model_build_load_balancer.go`),
/// whatever order the `aws-load-balancer-subnets` annotation lists them in.
pub fn eip_subnets(model: &Model) -> Vec<(&String, &String)> {
    let mut subnets: Vec<&String> = model.subnets.iter().collect();
    subnets.sort();
    model.eips.iter().zip(subnets).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc(annotations: Value) -> Value {
        json!({"metadata": {"name": "internal-lb", "namespace": "openshift-kube-apiserver",
                            "uid": "5f0c7c2e-0000-4000-8000-000000000001",
                            "annotations": annotations}})
    }

    #[test]
    fn names_follow_the_controller_and_elb() {
        let s = svc(json!({}));
        let name = lb_name(&s);
        assert!(name.starts_with("k8s-openshif-internal-"), "{name}");
        assert_eq!(name.len(), "k8s-openshif-internal-".len() + 10);
        let host = hostname(&s, "us-east-1");
        assert!(
            host.starts_with(&format!("{name}-")) && host.ends_with(".elb.us-east-1.amazonaws.com"),
            "{host}"
        );
        assert!(
            build(&s)
                .unwrap()
                .description
                .starts_with(&format!("ELB net/{name}/"))
        );
    }

    #[test]
    fn the_model_refuses_what_the_controller_refuses() {
        let both = |extra: Value| {
            let mut a = json!({SUBNETS: "subnet-a,subnet-b"});
            a.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            build(&svc(a)).unwrap_err()
        };
        assert!(
            both(json!({PRIVATE_IPS: "10.0.4.5"}))
                .contains("count of private IPv4 addresses (1) and subnets (2)")
        );
        assert!(both(json!({EIPS: "eipalloc-1,eipalloc-2"})).contains("internet facing"));
        assert!(
            both(json!({SCHEME: "internet-facing", PRIVATE_IPS: "10.0.4.5,10.0.5.5"}))
                .contains("internal load balancers")
        );
        assert!(
            both(json!({PRIVATE_IPS: "10.0.4.5,nope"})).contains("invalid private IPv4 address")
        );
        assert!(both(json!({SCHEME: "sideways"})).contains("unknown scheme"));
        let ok = build(&svc(json!({SUBNETS: "subnet-a", PRIVATE_IPS: "10.0.4.5"}))).unwrap();
        assert!(ok.internal, "internal is the default scheme");
    }

    /// The real controller's later reconciles compare subnets only: an existing NLB keeps its
    /// addresses whatever the Service asks now; other subnets are a change it makes.
    #[test]
    fn an_existing_nlb_keeps_its_addresses_and_follows_only_a_subnet_change() {
        let external = |subnets: &str, eips: &str| {
            build(&svc(
                json!({SCHEME: "internet-facing", SUBNETS: subnets, EIPS: eips}),
            ))
            .unwrap()
        };
        let built = external("subnet-a,subnet-b", "eipalloc-1,eipalloc-2");
        let asked = external("subnet-a,subnet-b", "eipalloc-1,eipalloc-9");
        assert_eq!(as_kept(&built, asked), built, "the EIP change is ignored");
        let internal = |ips: &str| {
            build(&svc(
                json!({SUBNETS: "subnet-a,subnet-b", PRIVATE_IPS: ips}),
            ))
            .unwrap()
        };
        let built = internal("10.0.4.5,10.0.5.5");
        assert_eq!(as_kept(&built, internal("10.0.4.6,10.0.5.5")), built);
        let moved = external("subnet-a,subnet-c", "eipalloc-1,eipalloc-3");
        assert_eq!(
            as_kept(
                &external("subnet-a,subnet-b", "eipalloc-1,eipalloc-2"),
                moved.clone()
            ),
            moved
        );
    }

    #[test]
    fn the_ith_eip_goes_to_the_ith_subnet_by_id_not_by_annotation_order() {
        let svc = json!({"metadata": {"name": "external-lb", "namespace": "ns", "uid": "u",
            "annotations": {
                SCHEME: "internet-facing",
                SUBNETS: "subnet-0c,subnet-0a,subnet-0b",
                EIPS: "eipalloc-c,eipalloc-a,eipalloc-b"}}});
        let model = build(&svc).unwrap();
        let pairs: Vec<(&str, &str)> = eip_subnets(&model)
            .into_iter()
            .map(|(e, s)| (e.as_str(), s.as_str()))
            .collect();
        // The controller's pairing: the first allocation listed to the lowest subnet id.
        assert_eq!(
            pairs,
            [
                ("eipalloc-c", "subnet-0a"),
                ("eipalloc-a", "subnet-0b"),
                ("eipalloc-b", "subnet-0c")
            ]
        );
    }
}
