//! Which controller serves a Service (from its annotations), the addresses it asks for, one
//! per IP family, and the ingress its controller reports.

use super::super::meta;
use super::{CloudOptions, aws};
use serde_json::{Value, json};
use std::net::Ipv6Addr;

const AZURE_IPV4: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
const AZURE_IPV6: &str = "service.beta.kubernetes.io/azure-load-balancer-ipv6";
const AZURE_INTERNAL: &str = "service.beta.kubernetes.io/azure-load-balancer-internal";
const GKE_TYPE: &str = "networking.gke.io/load-balancer-type";
const GCE_TYPE: &str = "cloud.google.com/load-balancer-type";
const AWS_PREFIX: &str = "service.beta.kubernetes.io/aws-load-balancer-";

/// Which controller serves a Service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    AwsLoadBalancerController,
    AwsInTree,
    GcpInternal,
    AzureInternal,
    Other,
}
fn annotation<'a>(svc: &'a Value, key: &str) -> Option<&'a str> {
    meta::get_str(svc, &["metadata", "annotations", key])
}

pub(super) fn kind(svc: &Value) -> Kind {
    let has_aws = meta::get(svc, &["metadata", "annotations"])
        .and_then(Value::as_object)
        .is_some_and(|a| a.keys().any(|k| k.starts_with(AWS_PREFIX)));
    if annotation(svc, aws::TYPE) == Some("external") {
        Kind::AwsLoadBalancerController
    } else if has_aws {
        Kind::AwsInTree
    } else if [GKE_TYPE, GCE_TYPE]
        .iter()
        .any(|k| annotation(svc, k).is_some_and(|v| v.eq_ignore_ascii_case("internal")))
    {
        Kind::GcpInternal
    } else if annotation(svc, AZURE_INTERNAL) == Some("true") {
        Kind::AzureInternal
    } else {
        Kind::Other
    }
}

/// The addresses asked for, one per family of `spec.ipFamilies` (the API server defaults it
/// to `[IPv4]`): the family's Azure annotation, else `spec.loadBalancerIP` when it is of that
/// family. A `loadBalancerIP` that is no IP counts as IPv4, so its owner refuses it.
pub(super) fn requested_ips(svc: &Value) -> Vec<&str> {
    let families: Vec<&str> = meta::get(svc, &["spec", "ipFamilies"])
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .filter(|f: &Vec<&str>| !f.is_empty())
        .unwrap_or_else(|| vec!["IPv4"]);
    let lb_ip = meta::get_str(svc, &["spec", "loadBalancerIP"]).map(str::trim);
    let lb_ip_is_v6 = lb_ip.is_some_and(|ip| ip.parse::<Ipv6Addr>().is_ok());
    families
        .iter()
        .filter_map(|family| {
            let v6 = *family == "IPv6";
            let annotated = annotation(svc, if v6 { AZURE_IPV6 } else { AZURE_IPV4 });
            annotated
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .or(lb_ip.filter(|_| lb_ip_is_v6 == v6))
                .filter(|s| !s.is_empty())
        })
        .collect()
}

/// The CRD the AWS Load Balancer Controller installs (`targetgroupbindings.elbv2.k8s.aws`),
/// by which a client can tell that the controller is there.
pub fn aws_lb_controller_crd() -> Value {
    let names = json!({"plural": "targetgroupbindings", "singular": "targetgroupbinding",
                       "kind": "TargetGroupBinding", "listKind": "TargetGroupBindingList"});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "targetgroupbindings.elbv2.k8s.aws"},
        "spec": {"group": "elbv2.k8s.aws", "names": names, "scope": "Namespaced",
                 "versions": [{"name": "v1beta1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]},
        "status": {"acceptedNames": names, "storedVersions": ["v1beta1"]}
    })
}

/// Whether only the AWS Load Balancer Controller serves the Service
/// (`aws-load-balancer-type: external`).
pub fn needs_aws_lb_controller(svc: &Value) -> bool {
    kind(svc) == Kind::AwsLoadBalancerController
}

/// Whether a controller serves the Service at all (the AWS Load Balancer Controller only
/// when installed).
pub fn served(svc: &Value, cloud: &CloudOptions) -> bool {
    !cloud.external_controller
        && (kind(svc) != Kind::AwsLoadBalancerController || cloud.aws_lb_controller)
}

/// The ingress entries the Service's controller reports once its load balancer exists.
pub fn ingress(svc: &Value, cloud: &CloudOptions) -> Vec<Value> {
    match kind(svc) {
        Kind::AwsLoadBalancerController => {
            vec![json!({"hostname": aws::hostname(svc, &cloud.aws_region)})]
        }
        Kind::AwsInTree => vec![json!({"hostname": elb_hostname(svc, &cloud.aws_region)})],
        Kind::GcpInternal | Kind::AzureInternal | Kind::Other => {
            let ips = requested_ips(svc);
            if ips.is_empty() {
                vec![json!({"hostname": elb_hostname(svc, &cloud.aws_region)})]
            } else {
                ips.iter()
                    .map(|ip| json!({"ip": ip, "ipMode": "VIP"}))
                    .collect()
            }
        }
    }
}

/// The in-tree provider's ELB name shape: `<name>-<hex>.elb.<region>.amazonaws.com`.
fn elb_hostname(svc: &Value, region: &str) -> String {
    let hex: String = meta::uid(svc)
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect();
    format!("{}-{hex}.elb.{region}.amazonaws.com", meta::name(svc))
}
#[cfg(test)]
mod tests {
    use super::*;

    /// As cloud-provider-azure reads a Service: one address per family of `spec.ipFamilies`,
    /// from the family's annotation, else from `loadBalancerIP` when it is of the family.
    #[test]
    fn requested_addresses_follow_the_ip_families() {
        let svc = |annotations: Value, spec: Value| json!({"metadata": {"annotations": annotations}, "spec": spec});
        let both = json!({AZURE_IPV4: "10.0.1.5", AZURE_IPV6: "fd00::5"});
        let dual = json!({"ipFamilies": ["IPv4", "IPv6"]});
        assert_eq!(
            requested_ips(&svc(both.clone(), dual.clone())),
            ["10.0.1.5", "fd00::5"]
        );
        assert_eq!(
            requested_ips(&svc(both.clone(), json!({}))),
            ["10.0.1.5"],
            "single stack (the default): the IPv6 annotation is ignored"
        );
        assert_eq!(
            requested_ips(&svc(json!({}), json!({"loadBalancerIP": "10.0.1.6"}))),
            ["10.0.1.6"]
        );
        let mut with_lb_ip = dual.clone();
        with_lb_ip["loadBalancerIP"] = json!("fd00::6");
        assert_eq!(
            requested_ips(&svc(json!({AZURE_IPV4: "10.0.1.5"}), with_lb_ip)),
            ["10.0.1.5", "fd00::6"]
        );
        let ingress = ingress(&svc(both, dual), &CloudOptions::default());
        assert_eq!(
            ingress,
            [
                json!({"ip": "10.0.1.5", "ipMode": "VIP"}),
                json!({"ip": "fd00::5", "ipMode": "VIP"})
            ]
        );
    }

    #[test]
    fn services_are_told_apart_by_their_annotations() {
        let with = |a: Value| json!({"metadata": {"annotations": a}});
        assert_eq!(
            kind(&with(json!({aws::TYPE: "external"}))),
            Kind::AwsLoadBalancerController
        );
        assert_eq!(kind(&with(json!({aws::TYPE: "nlb"}))), Kind::AwsInTree);
        assert_eq!(
            kind(&with(json!({GKE_TYPE: "Internal"}))),
            Kind::GcpInternal
        );
        assert_eq!(
            kind(&with(json!({GCE_TYPE: "Internal"}))),
            Kind::GcpInternal
        );
        assert_eq!(
            kind(&with(json!({AZURE_INTERNAL: "true"}))),
            Kind::AzureInternal
        );
        assert_eq!(kind(&with(json!({AZURE_IPV4: "10.0.1.5"}))), Kind::Other);
    }
}
