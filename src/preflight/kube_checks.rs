//! The Kubernetes lines of preflight, with a kubeconfig: the API answers; the agent may
//! server-side apply its Services and write ClusterVersion spec (SelfSubjectAccessReview,
//! which answers for the kubeconfig's own user); on AWS, where the Services are
//! `aws-load-balancer-type: external`, the AWS Load Balancer Controller is installed (its
//! `targetgroupbindings.elbv2.k8s.aws` CRD exists) and serves (its Deployment available, its
//! webhook Service with a ready endpoint: see `cluster::lb_controller`; installed but not
//! serving only warns, because `run` waits for it before the hand-over).
//!
//! During an install the agent may start before the bootstrap API server answers: an API that
//! does not answer only warns (`run` connects later, at SetCapabilities).

use super::Inputs;
use bootstrap_cloud::preflight::Check;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use std::collections::BTreeSet;
use std::time::Duration;

/// Each Kubernetes call gets this long: an API that is not up yet must not hold `run`.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The CRD the AWS Load Balancer Controller installs and needs.
pub const AWS_LB_CONTROLLER_CRD: &str = "targetgroupbindings.elbv2.k8s.aws";

pub async fn run(inputs: &Inputs<'_>) -> Vec<Check> {
    let Some(kubeconfig) = inputs.kubeconfig else {
        return vec![Check::not_checked(
            "kube-api",
            "no --kubeconfig: the API, the agent's permissions in it and the load-balancer controller",
        )];
    };
    let client = match crate::cluster::client(kubeconfig).await {
        Ok(c) => c,
        Err(e) => {
            return vec![Check::fail(
                "kube-api",
                format!("no client: {}", crate::error::render_chain(&e)),
                "pass the installer's auth/kubeconfig with --kubeconfig",
            )];
        }
    };
    let version = match tokio::time::timeout(CALL_TIMEOUT, client.apiserver_version()).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return api_down(&e.to_string()),
        Err(_) => return api_down(&format!("no answer within {CALL_TIMEOUT:?}")),
    };
    let mut checks = vec![Check::pass(
        "kube-api",
        format!("answers: Kubernetes {}", version.git_version),
    )];
    let (namespaces, needs_lb_controller) = rendered_facts(inputs);
    let mut service_denials = Vec::new();
    for namespace in &namespaces {
        for verb in ["patch", "create"] {
            match allowed(&client, verb, "", "services", Some(namespace)).await {
                Ok(None) => {}
                Ok(Some(why)) => service_denials.push(format!("{verb} in {namespace}: {why}")),
                Err(e) => service_denials.push(format!("{verb} in {namespace}: cannot ask: {e}")),
            }
        }
    }
    checks.push(if service_denials.is_empty() {
        Check::pass(
            "kube-services-apply",
            format!(
                "may server-side apply Services (patch, create) in {}",
                namespaces.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    } else {
        Check::fail(
            "kube-services-apply",
            format!("may not: {}", service_denials.join("; ")),
            "use the installer's admin kubeconfig, or grant patch and create on services",
        )
    });
    // patch, and create: the server-side apply that creates `version` from
    // cvo-overrides.yaml needs both (kube-apiserver's patch handler authorizes the create).
    let mut cv_denials = Vec::new();
    let mut cv_unknown = Vec::new();
    for verb in ["patch", "create"] {
        match allowed(
            &client,
            verb,
            "config.openshift.io",
            "clusterversions",
            None,
        )
        .await
        {
            Ok(None) => {}
            Ok(Some(why)) => cv_denials.push(format!("{verb}: {why}")),
            Err(e) => cv_unknown.push(format!("{verb}: {e}")),
        }
    }
    checks.push(if !cv_denials.is_empty() {
        Check::fail(
            "kube-clusterversion-write",
            format!(
                "may not write clusterversions.config.openshift.io: {}",
                cv_denials.join("; ")
            ),
            "use the installer's admin kubeconfig, or grant patch and create on clusterversions.config.openshift.io",
        )
    } else if !cv_unknown.is_empty() {
        Check::warn(
            "kube-clusterversion-write",
            format!("could not ask: {}", cv_unknown.join("; ")),
            None,
        )
    } else {
        Check::pass(
            "kube-clusterversion-write",
            "may server-side apply ClusterVersion spec (patch, create clusterversions.config.openshift.io)",
        )
    });
    if needs_lb_controller {
        checks.push(lb_controller(&client).await);
    }
    checks
}

fn api_down(why: &str) -> Vec<Check> {
    vec![Check::warn(
        "kube-api",
        format!("does not answer yet ({why}); its permissions are not checked"),
        Some("`run` waits for it later; check the kubeconfig's server if it never answers".into()),
    )]
}

/// The namespaces of the Services and whether any needs the AWS Load Balancer Controller,
/// from the templates rendered with stand-in addresses (the real ones may not exist yet).
fn rendered_facts(inputs: &Inputs<'_>) -> (BTreeSet<String>, bool) {
    let stand_ins: Vec<bootstrap_cloud::Reservation> =
        crate::plan::wanted_reservations(inputs.spec)
            .into_iter()
            .enumerate()
            .map(|(i, w)| bootstrap_cloud::Reservation {
                id: format!("stand-in-{i}"),
                ip: match w.key.family {
                    bootstrap_cloud::IpFamily::Ipv4 => {
                        std::net::IpAddr::from([192, 0, 2, (i % 250) as u8 + 1])
                    }
                    bootstrap_cloud::IpFamily::Ipv6 => {
                        std::net::IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, i as u16 + 1])
                    }
                },
                name: w.name,
                key: w.key,
            })
            .collect();
    let rendered =
        crate::render::services(inputs.spec, &stand_ins, inputs.templates).unwrap_or_default();
    let namespaces = rendered
        .iter()
        .filter_map(|r| r.service.metadata.namespace.clone())
        .collect();
    let needs = rendered.iter().any(|r| {
        crate::render::ServiceClaim::for_service(&r.service, vec![]).needs_aws_lb_controller
    });
    (namespaces, needs)
}

/// None: allowed; Some(reason): denied.
async fn allowed(
    client: &kube::Client,
    verb: &str,
    group: &str,
    resource: &str,
    namespace: Option<&str>,
) -> Result<Option<String>, String> {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(verb.into()),
                group: Some(group.into()),
                resource: Some(resource.into()),
                namespace: namespace.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let answer = tokio::time::timeout(CALL_TIMEOUT, api.create(&PostParams::default(), &review))
        .await
        .map_err(|_| format!("no answer within {CALL_TIMEOUT:?}"))?
        .map_err(|e| match &e {
            kube::Error::Api(s) => crate::error::kube_api_line(s),
            other => other.to_string(),
        })?;
    let status = answer.status.unwrap_or_default();
    if status.allowed {
        Ok(None)
    } else {
        Ok(Some(
            status
                .reason
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| "denied".into()),
        ))
    }
}

async fn lb_controller(client: &kube::Client) -> Check {
    const NAME: &str = "aws-lb-controller";
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    match tokio::time::timeout(CALL_TIMEOUT, api.get_opt(AWS_LB_CONTROLLER_CRD)).await {
        Ok(Ok(Some(_))) => match serving_now(client).await {
            Ok(proof) => Check::pass(
                NAME,
                format!(
                    "the AWS Load Balancer Controller is installed (CRD {AWS_LB_CONTROLLER_CRD}) and serves: {proof}"
                ),
            ),
            Err(NotServing::Forbidden(why)) => Check::fail(
                NAME,
                format!(
                    "may not read the AWS Load Balancer Controller's Deployment or EndpointSlices: {why}"
                ),
                GRANT,
            ),
            Err(NotServing::Missing(why)) => Check::warn(
                NAME,
                format!(
                    "the AWS Load Balancer Controller is installed (CRD {AWS_LB_CONTROLLER_CRD}) but does not serve yet ({why}); `run` waits for it before handing over the private IPs"
                ),
                None,
            ),
        },
        Ok(Ok(None)) => Check::fail(
            NAME,
            format!(
                "no CRD {AWS_LB_CONTROLLER_CRD}: nothing serves the aws-load-balancer-type=external Services, they would never get a load balancer"
            ),
            "install the AWS Load Balancer Controller (OpenShift: the aws-load-balancer-operator) before the gate",
        ),
        Ok(Err(kube::Error::Api(e))) if e.code == 403 => Check::fail(
            NAME,
            format!("may not read CRD {AWS_LB_CONTROLLER_CRD}: {}", e.message),
            GRANT,
        ),
        Ok(Err(e)) => Check::warn(NAME, format!("could not read CRDs: {e}"), None),
        Err(_) => Check::warn(NAME, format!("no answer within {CALL_TIMEOUT:?}"), None),
    }
}

/// The fix of a read the API server refused (403: the kubeconfig's user lacks the printed role).
const GRANT: &str = "use the installer's admin kubeconfig, or bind the ClusterRole `bootstrap-agent permissions --kube` prints";

/// Why the controller is not known to serve.
enum NotServing {
    /// What is missing (or could not be read) at each location.
    Missing(String),
    /// The API server refused a read (403): its message.
    Forbidden(String),
}

/// Whether the controller serves now, at any of its known locations (one read each of its
/// Deployment and its webhook's EndpointSlices): Ok(how it is known) or Err(why not).
async fn serving_now(client: &kube::Client) -> Result<String, NotServing> {
    use crate::cluster::lb_controller::{LOCATIONS, judge};
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use kube::api::ListParams;
    let mut missing = Vec::new();
    for at in &LOCATIONS {
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), at.namespace);
        let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), at.namespace);
        let selector = format!(
            "{}={}",
            crate::cluster::gate::SERVICE_NAME_LABEL,
            at.webhook_service
        );
        let read = async {
            let deployment = deployments.get_opt(at.deployment).await?;
            let slices = slices
                .list(&ListParams::default().labels(&selector))
                .await?;
            Ok::<_, kube::Error>((deployment, slices.items))
        };
        match tokio::time::timeout(CALL_TIMEOUT, read).await {
            Ok(Ok((deployment, slices))) => {
                let slices: Vec<&EndpointSlice> = slices.iter().collect();
                match judge(at, deployment.as_ref(), &slices) {
                    Ok(proof) => return Ok(proof),
                    Err(why) => missing.push(why),
                }
            }
            Ok(Err(kube::Error::Api(e))) if e.code == 403 => {
                return Err(NotServing::Forbidden(e.message.clone()));
            }
            Ok(Err(e)) => missing.push(format!("{}: cannot read: {e}", at.namespace)),
            Err(_) => missing.push(format!(
                "{}: no answer within {CALL_TIMEOUT:?}",
                at.namespace
            )),
        }
    }
    Err(NotServing::Missing(missing.join("; ")))
}
