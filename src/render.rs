//! Service manifests from minijinja templates, parsed back into typed objects before anything
//! is applied. Templates are embedded; `--templates DIR` overrides them (air-gapped installs,
//! custom annotations). A template that renders to nothing (the external LB with publish
//! Internal; machine-config-server on AWS, where it is a listener of the one internal NLB)
//! yields no object; one that renders to an invalid Service is an error naming it.

use crate::assets::{ClusterSpec, Platform};
use anyhow::{Context, Result};
use bootstrap_cloud::{IpFamily, Reservation, Scope};
use k8s_openapi::api::core::v1::Service;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The Services, by the template file that renders each (namespace/name fixed in the templates).
pub const SERVICE_TEMPLATES: [&str; 3] = [
    "external-lb.yaml",
    "internal-lb.yaml",
    "internal-lb-machine-config-server.yaml",
];

/// Label on everything the agent applies.
pub const INFRA_LABEL: &str = "bootstrap-agent.openshift.io/infra-id";

macro_rules! embedded {
    ($cloud:literal) => {
        [
            include_str!(concat!(
                "../templates/services/",
                $cloud,
                "/external-lb.yaml"
            )),
            include_str!(concat!(
                "../templates/services/",
                $cloud,
                "/internal-lb.yaml"
            )),
            include_str!(concat!(
                "../templates/services/",
                $cloud,
                "/internal-lb-machine-config-server.yaml"
            )),
        ]
    };
}

const AWS: [&str; 3] = embedded!("aws");
const AZURE: [&str; 3] = embedded!("azure");
const GCP: [&str; 3] = embedded!("gcp");

/// One rendered Service and where it came from.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// `services/<cloud>/<file>`, as named in errors.
    pub template: String,
    pub service: Service,
}

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
struct TemplateContext {
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

fn context(spec: &ClusterSpec, reservations: &[Reservation]) -> TemplateContext {
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
        labels: BTreeMap::from([
            (
                "app.kubernetes.io/managed-by".to_string(),
                "bootstrap-agent".to_string(),
            ),
            (INFRA_LABEL.to_string(), spec.infra_id.clone()),
        ]),
        public_ip: by_family(&public),
        private_ip: by_family(&private),
        public,
        private,
    }
}

/// Renders the Services for the spec's platform from the kept reservations.
/// A rendered Service and the reserved IPs it claims: what the readiness gate waits for, and
/// what the journal remembers between ApplyServices and the gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ServiceClaim {
    pub namespace: String,
    pub name: String,
    /// The reserved IPs this Service claims (DNS points at them); a load balancer must hold
    /// exactly these. Empty: no claim to prove (a Service that asks for no fixed IP).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<IpAddr>,
    /// Set on Services of `aws-load-balancer-type: external`: only the AWS Load Balancer
    /// Controller serves them, and the reason says so when nothing does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_aws_lb_controller: bool,
    /// The Service's ports (the proof on the wire dials 22623 where one exposes it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
}

impl ServiceClaim {
    /// The gate's target for a rendered Service that claims `claims`.
    pub fn for_service(service: &Service, claims: Vec<IpAddr>) -> Self {
        let annotation = |k: &str| {
            service
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(k))
                .map(String::as_str)
        };
        Self {
            namespace: service.metadata.namespace.clone().unwrap_or_default(),
            name: service.metadata.name.clone().unwrap_or_default(),
            claims,
            needs_aws_lb_controller: annotation(
                "service.beta.kubernetes.io/aws-load-balancer-type",
            ) == Some("external"),
            ports: service
                .spec
                .iter()
                .flat_map(|s| s.ports.iter().flatten())
                .filter_map(|p| u16::try_from(p.port).ok())
                .collect(),
        }
    }
}

/// Annotations whose values are the IPs a load balancer must hold (comma lists).
const IP_ANNOTATIONS: &[&str] = &[
    "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses",
    "service.beta.kubernetes.io/azure-load-balancer-ipv4",
    "service.beta.kubernetes.io/azure-load-balancer-ipv6",
];
/// Annotation naming the EIP allocations of an AWS NLB (reservation ids, not IPs).
const EIP_ALLOCATIONS: &str = "service.beta.kubernetes.io/aws-load-balancer-eip-allocations";

/// The reserved IPs a rendered Service claims: the IP annotations, `spec.loadBalancerIP`, and
/// the IPs of the EIP allocations it names. DNS points at exactly these, so the gate waits
/// until a load balancer holds them.
pub fn claimed_ips(service: &Service, reservations: &[Reservation]) -> Vec<std::net::IpAddr> {
    let annotations = service.metadata.annotations.as_ref();
    let listed = |key: &str| -> Vec<String> {
        annotations
            .and_then(|a| a.get(key))
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut ips: Vec<std::net::IpAddr> = IP_ANNOTATIONS
        .iter()
        .flat_map(|k| listed(k))
        .chain(
            service
                .spec
                .as_ref()
                .and_then(|s| s.load_balancer_ip.clone()),
        )
        .filter_map(|s| s.parse().ok())
        .collect();
    for id in listed(EIP_ALLOCATIONS) {
        ips.extend(reservations.iter().filter(|r| r.id == id).map(|r| r.ip));
    }
    ips.sort();
    ips.dedup();
    ips
}

pub fn services(
    spec: &ClusterSpec,
    reservations: &[Reservation],
    overrides: Option<&Path>,
) -> Result<Vec<Rendered>> {
    let (cloud, embedded) = match &spec.platform {
        Platform::Aws(_) => ("aws", AWS),
        Platform::Azure(_) => ("azure", AZURE),
        Platform::Gcp(_) => ("gcp", GCP),
        Platform::None => return Ok(Vec::new()),
    };
    let ctx = context(spec, reservations);
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A reservation that does not exist is None in the context. Printing it must fail rather
    // than write "None" into an annotation or `loadBalancerIP`, which no later check catches.
    env.set_formatter(|out, state, value| {
        if value.is_none() {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                "prints a missing value (a reservation is missing?)",
            ));
        }
        minijinja::escape_formatter(out, state, value)
    });
    let mut out = Vec::new();
    for (file, builtin) in SERVICE_TEMPLATES.iter().zip(embedded) {
        let name = format!("services/{cloud}/{file}");
        let source = match overrides {
            Some(dir) => {
                let path: PathBuf = dir.join(&name);
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read template {}", path.display()))?
            }
            None => builtin.to_string(),
        };
        let text = env
            .render_str(
                &source,
                minijinja::Value::from(minijinja::value::Serde(&ctx)),
            )
            .map_err(|e| anyhow::anyhow!("template {name}: {e:#}"))?;
        if text.trim().is_empty() {
            continue;
        }
        let service: Service = serde_saphyr::from_str(&text)
            .map_err(|e| anyhow::anyhow!("template {name} does not render a valid Service: {e}"))?;
        validate(&service).map_err(|problem| {
            anyhow::anyhow!("template {name} renders an invalid Service: {problem}")
        })?;
        out.push(Rendered {
            template: name,
            service,
        });
    }
    Ok(out)
}

fn validate(service: &Service) -> std::result::Result<(), String> {
    let meta = &service.metadata;
    let name = meta.name.as_deref().ok_or("metadata.name is missing")?;
    if !is_dns1123_label(name) {
        return Err(format!("metadata.name {name:?} is not a DNS-1123 label"));
    }
    let ns = meta
        .namespace
        .as_deref()
        .ok_or("metadata.namespace is missing")?;
    if !is_dns1123_label(ns) {
        return Err(format!("metadata.namespace {ns:?} is not a DNS-1123 label"));
    }
    let spec = service.spec.as_ref().ok_or("spec is missing")?;
    if spec.type_.as_deref() != Some("LoadBalancer") {
        return Err(format!(
            "spec.type is {:?}, expected LoadBalancer",
            spec.type_
        ));
    }
    if spec.ports.as_ref().is_none_or(Vec::is_empty) {
        return Err("spec.ports is empty".into());
    }
    if spec.selector.as_ref().is_none_or(BTreeMap::is_empty) {
        return Err("spec.selector is empty: the Service would never get endpoints".into());
    }
    for (key, value) in meta.annotations.iter().flatten() {
        if value.trim().is_empty() || value.split(',').any(|v| v.trim().is_empty()) {
            return Err(format!(
                "annotation {key} has an empty value (a reservation is missing?)"
            ));
        }
    }
    Ok(())
}

fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Multi-document YAML of the rendered Services (for `render --output yaml`).
pub fn to_yaml(rendered: &[Rendered]) -> Result<String> {
    let mut out = String::new();
    for r in rendered {
        out.push_str(&format!("---\n# from template {}\n", r.template));
        out.push_str(&serde_saphyr::to_string(&r.service).context("cannot encode Service")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assets::Publish;
    use std::path::Path;

    fn fixture(name: &str) -> ClusterSpec {
        crate::assets::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/assets")
                .join(name),
        )
        .unwrap()
    }

    /// One reservation per wanted key, with made-up ids and IPs.
    fn reservations(spec: &ClusterSpec) -> Vec<Reservation> {
        crate::plan::wanted_reservations(spec)
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                let ip = match (w.key.scope, w.key.family) {
                    (Scope::Public, IpFamily::Ipv4) => format!("203.0.113.{}", 10 + i),
                    (Scope::Public, IpFamily::Ipv6) => format!("2001:db8::{}", 10 + i),
                    (Scope::Private, IpFamily::Ipv4) => format!("10.0.{}.100", 1 + i),
                    (Scope::Private, IpFamily::Ipv6) => format!("fd00:10::{}", 10 + i),
                };
                Reservation {
                    id: format!("res-{i}"),
                    name: w.name,
                    ip: ip.parse().unwrap(),
                    key: w.key,
                }
            })
            .collect()
    }

    fn golden(name: &str, actual: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/render")
            .join(format!("{name}.yaml"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
        assert_eq!(actual, expected, "render golden {name} differs");
    }

    #[test]
    fn golden_services_for_every_cloud_fixture() {
        for name in ["aws", "aws-internal", "azure", "azure-dualstack", "gcp"] {
            let spec = fixture(name);
            let rendered = services(&spec, &reservations(&spec), None).unwrap();
            golden(name, &to_yaml(&rendered).unwrap());
        }
    }

    fn names(fixture_name: &str) -> Vec<String> {
        let spec = fixture(fixture_name);
        services(&spec, &reservations(&spec), None)
            .unwrap()
            .iter()
            .map(|r| r.service.metadata.name.clone().unwrap())
            .collect()
    }

    #[test]
    fn publish_internal_renders_no_external_service() {
        assert_eq!(names("aws-internal"), ["internal-lb"]);
        assert_eq!(
            names("gcp").len(),
            3,
            "publish External on GCP: external, internal API, internal MCS"
        );
    }

    /// Mixed: the external API Service exists exactly when the apiserver side is External
    /// (the gate then waits on it), whatever ingress says.
    #[test]
    fn publish_mixed_renders_the_external_service_only_for_a_public_api() {
        assert_eq!(
            names("azure-mixed-api-external"),
            [
                "external-lb",
                "internal-lb",
                "internal-lb-machine-config-server"
            ]
        );
        assert_eq!(
            names("azure-mixed-api-internal"),
            ["internal-lb", "internal-lb-machine-config-server"]
        );
    }

    /// On AWS a private IP belongs to one NLB only: one internal Service carries both ports.
    /// Azure and GCP can put several rules on one IP, so MCS keeps its own Service there.
    #[test]
    fn aws_renders_one_internal_service_with_both_ports_and_the_others_two() {
        assert_eq!(names("aws"), ["external-lb", "internal-lb"]);
        for cloud in ["azure", "gcp"] {
            assert_eq!(
                names(cloud),
                [
                    "external-lb",
                    "internal-lb",
                    "internal-lb-machine-config-server"
                ],
                "{cloud}"
            );
        }
        let spec = fixture("aws");
        let rendered = services(&spec, &reservations(&spec), None).unwrap();
        let internal = &rendered[1].service;
        let ports: Vec<(Option<String>, i32)> = internal
            .spec
            .as_ref()
            .unwrap()
            .ports
            .as_ref()
            .unwrap()
            .iter()
            .map(|p| (p.name.clone(), p.port))
            .collect();
        assert_eq!(
            ports,
            [
                (Some("https".to_string()), 6443),
                (Some("machine-config-server".to_string()), 22623)
            ]
        );
        let annotations = internal.metadata.annotations.as_ref().unwrap();
        assert_eq!(
            annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"],
            "internal"
        );
        assert_eq!(
            annotations["service.beta.kubernetes.io/aws-load-balancer-type"], "external",
            "private static IPs are an AWS Load Balancer Controller feature"
        );
        assert_eq!(
            annotations["service.beta.kubernetes.io/aws-load-balancer-target-group-attributes"],
            "preserve_client_ip.enabled=false"
        );
    }

    #[test]
    fn aws_services_carry_the_eips_and_private_ips_in_subnet_order() {
        let spec = fixture("aws");
        let res = reservations(&spec);
        let rendered = services(&spec, &res, None).unwrap();
        let ann = |i: usize, key: &str| {
            rendered[i].service.metadata.annotations.as_ref().unwrap()[key].clone()
        };
        assert_eq!(
            ann(
                0,
                "service.beta.kubernetes.io/aws-load-balancer-eip-allocations"
            ),
            "res-0,res-1,res-2"
        );
        assert_eq!(
            ann(0, "service.beta.kubernetes.io/aws-load-balancer-subnets"),
            "subnet-0a1b2c3d4e5f60011,subnet-0a1b2c3d4e5f60012,subnet-0a1b2c3d4e5f60013"
        );
        assert_eq!(
            ann(
                1,
                "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses"
            ),
            "10.0.4.100,10.0.5.100,10.0.6.100"
        );
        assert_eq!(
            ann(1, "service.beta.kubernetes.io/aws-load-balancer-subnets"),
            "subnet-0a1b2c3d4e5f60001,subnet-0a1b2c3d4e5f60002,subnet-0a1b2c3d4e5f60003"
        );
    }

    /// The labels real OpenShift pods carry: kube-apiserver static pods `app:
    /// openshift-kube-apiserver` + `apiserver: "true"`, machine-config-server DaemonSet pods
    /// `k8s-app: machine-config-server` (the seed's `app: kube-apiserver` matches nothing).
    #[test]
    fn default_selectors_match_the_real_openshift_pod_labels() {
        let api = BTreeMap::from([
            ("app".to_string(), "openshift-kube-apiserver".to_string()),
            ("apiserver".to_string(), "true".to_string()),
        ]);
        let mcs = BTreeMap::from([("k8s-app".to_string(), "machine-config-server".to_string())]);
        for name in ["aws", "azure", "gcp"] {
            let spec = fixture(name);
            for r in services(&spec, &reservations(&spec), None).unwrap() {
                let ns = r.service.metadata.namespace.as_deref().unwrap();
                let selector = r.service.spec.as_ref().unwrap().selector.clone().unwrap();
                let wanted = match ns {
                    "openshift-kube-apiserver" => &api,
                    "openshift-machine-config-operator" => &mcs,
                    other => panic!("{}: unexpected namespace {other}", r.template),
                };
                assert_eq!(&selector, wanted, "{}", r.template);
            }
        }
    }

    #[test]
    fn dual_stack_sets_ip_families_and_the_ipv6_annotation() {
        let spec = fixture("azure-dualstack");
        let rendered = services(&spec, &reservations(&spec), None).unwrap();
        let external = &rendered[0].service;
        let spec_ = external.spec.as_ref().unwrap();
        assert_eq!(
            spec_.ip_families.as_deref(),
            Some(&["IPv4".to_string(), "IPv6".to_string()][..])
        );
        assert_eq!(spec_.ip_family_policy.as_deref(), Some("RequireDualStack"));
        assert!(
            external
                .metadata
                .annotations
                .as_ref()
                .unwrap()
                .contains_key("service.beta.kubernetes.io/azure-load-balancer-ipv6")
        );
    }

    /// Dual stack on Azure: the internal Services carry the private IPv6 too and ask for both
    /// families (cloud-provider-azure makes a frontend per family in `spec.ipFamilies`).
    #[test]
    fn azure_dual_stack_internal_services_claim_the_private_ipv6() {
        let spec = fixture("azure-dualstack");
        let res = reservations(&spec);
        let private_v6 = res
            .iter()
            .find(|r| r.key.scope == Scope::Private && r.key.family == IpFamily::Ipv6)
            .expect("a private IPv6 is wanted on Azure dual stack")
            .ip;
        let rendered = services(&spec, &res, None).unwrap();
        for r in &rendered[1..] {
            let svc = &r.service;
            let spec_ = svc.spec.as_ref().unwrap();
            assert_eq!(
                spec_.ip_families.as_deref(),
                Some(&["IPv4".to_string(), "IPv6".to_string()][..]),
                "{}",
                r.template
            );
            assert_eq!(spec_.ip_family_policy.as_deref(), Some("RequireDualStack"));
            assert_eq!(
                svc.metadata.annotations.as_ref().unwrap()["service.beta.kubernetes.io/azure-load-balancer-ipv6"],
                private_v6.to_string(),
                "{}",
                r.template
            );
            assert!(
                claimed_ips(svc, &res).contains(&private_v6),
                "the gate waits for the IPv6 too"
            );
        }
        // Single stack: neither the annotation nor the families.
        let spec = fixture("azure");
        for r in services(&spec, &reservations(&spec), None).unwrap() {
            let svc = &r.service;
            assert!(
                svc.spec.as_ref().unwrap().ip_families.is_none(),
                "{}",
                r.template
            );
            assert!(
                !svc.metadata
                    .annotations
                    .as_ref()
                    .unwrap()
                    .contains_key("service.beta.kubernetes.io/azure-load-balancer-ipv6")
            );
        }
        // Without the private IPv6 reservation the internal Services do not render.
        let spec = fixture("azure-dualstack");
        let without: Vec<Reservation> = reservations(&spec)
            .into_iter()
            .filter(|r| !(r.key.scope == Scope::Private && r.key.family == IpFamily::Ipv6))
            .collect();
        let err = services(&spec, &without, None).unwrap_err().to_string();
        assert!(
            err.contains("services/azure/internal-lb.yaml") && err.contains("missing value"),
            "{err}"
        );
    }

    #[test]
    fn missing_reservation_is_an_error_naming_the_template() {
        let spec = fixture("aws");
        let err = services(&spec, &[], None).unwrap_err().to_string();
        assert!(
            err.contains("services/aws/external-lb.yaml") && err.contains("empty value"),
            "{err}"
        );
    }

    /// Azure and GCP print single addresses: without their reservation the value is missing,
    /// and the template must fail instead of rendering the word "None".
    #[test]
    fn a_missing_address_fails_the_template_on_every_cloud() {
        for (name, template) in [
            ("azure", "services/azure/external-lb.yaml"),
            ("gcp", "services/gcp/external-lb.yaml"),
        ] {
            let spec = fixture(name);
            let err = services(&spec, &[], None).unwrap_err().to_string();
            assert!(
                err.contains(template) && err.contains("missing value"),
                "{name}: {err}"
            );
        }
        // Publish Internal: the first template printing an address is the internal one.
        let mut spec = fixture("azure");
        spec.publish = Publish::Internal;
        let public_only: Vec<Reservation> = reservations(&fixture("azure"))
            .into_iter()
            .filter(|r| r.key.scope == Scope::Public)
            .collect();
        let err = services(&spec, &public_only, None).unwrap_err().to_string();
        assert!(
            err.contains("services/azure/internal-lb.yaml") && err.contains("missing value"),
            "{err}"
        );
    }

    #[test]
    fn override_dir_replaces_the_embedded_templates_and_bad_output_names_the_template() {
        let spec = fixture("gcp");
        let dir = tempfile::tempdir().unwrap();
        let cloud = dir.path().join("services/gcp");
        std::fs::create_dir_all(&cloud).unwrap();
        std::fs::write(cloud.join("external-lb.yaml"), "").unwrap();
        std::fs::write(
            cloud.join("internal-lb.yaml"),
            GCP[1].replace("Internal", "Custom"),
        )
        .unwrap();
        std::fs::write(
            cloud.join("internal-lb-machine-config-server.yaml"),
            "kind: Service\nmetadata: {name: x}\n",
        )
        .unwrap();
        let err = services(&spec, &reservations(&spec), Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("services/gcp/internal-lb-machine-config-server.yaml")
                && err.contains("namespace"),
            "{err}"
        );
        std::fs::write(cloud.join("internal-lb-machine-config-server.yaml"), GCP[2]).unwrap();
        let rendered = services(&spec, &reservations(&spec), Some(dir.path())).unwrap();
        assert_eq!(rendered.len(), 2, "an empty override renders nothing");
        assert_eq!(
            rendered[0].service.metadata.annotations.as_ref().unwrap()["networking.gke.io/load-balancer-type"],
            "Custom"
        );
    }

    #[test]
    fn a_template_error_names_the_template() {
        let spec = fixture("gcp");
        let dir = tempfile::tempdir().unwrap();
        let cloud = dir.path().join("services/gcp");
        std::fs::create_dir_all(&cloud).unwrap();
        std::fs::write(cloud.join("external-lb.yaml"), "{{ no_such_variable }}").unwrap();
        let err = services(&spec, &reservations(&spec), Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("services/gcp/external-lb.yaml"), "{err}");
    }
}
