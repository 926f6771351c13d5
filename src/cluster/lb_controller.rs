//! Is the AWS Load Balancer Controller there to claim the private IPs? The hand-over frees
//! the ENIs that hold them right before the internal Service is applied; from then on any new
//! ENI of the VPC may take them (workers are being created then). So the hand-over waits
//! until the controller serves: its Deployment is available and its webhook Service has a
//! ready endpoint. Its CRD alone (what preflight sees) says it was installed, not that it
//! runs; and with the chart's Service mutating webhook (`mservice.elbv2.k8s.aws`,
//! failurePolicy Fail) a LoadBalancer Service cannot even be applied while the webhook has no
//! endpoint.
//!
//! Where it runs, as each of its two installers deploys it:
//!
//! | installer | namespace | Deployment | webhook Service |
//! | --- | --- | --- | --- |
//! | helm chart `eks/aws-load-balancer-controller` (its README installs it into `kube-system` as release `aws-load-balancer-controller`) | `kube-system` | `aws-load-balancer-controller` (`fullname`) | `aws-load-balancer-webhook-service` (`namePrefix`-webhook-service) |
//! | OpenShift's aws-load-balancer-operator (`AWSLoadBalancerController` named `cluster`) | `aws-load-balancer-operator` | `aws-load-balancer-controller-cluster` | `aws-load-balancer-controller-cluster` |
//!
//! Sources: kubernetes-sigs/aws-load-balancer-controller helm/aws-load-balancer-controller
//! (templates/_helpers.tpl, deployment.yaml, service.yaml, webhook.yaml, values.yaml, README.md);
//! openshift/aws-load-balancer-operator (main.go `--namespace` default,
//! pkg/controllers/awsloadbalancercontroller/controller.go, deployment.go, service.go,
//! webhooks.go).
//!
//! Watched, not polled: one reflector per Deployment (by name) and per webhook Service's
//! EndpointSlices (by `kubernetes.io/service-name`), re-judged on every event.

use super::gate::SERVICE_NAME_LABEL;
use super::watch;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Api, Resource};
use std::time::Duration;

/// Where one installer runs the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub namespace: &'static str,
    pub deployment: &'static str,
    pub webhook_service: &'static str,
}

/// The helm chart's and the OpenShift operator's (see the module table).
pub const LOCATIONS: [Location; 2] = [
    Location {
        namespace: "kube-system",
        deployment: "aws-load-balancer-controller",
        webhook_service: "aws-load-balancer-webhook-service",
    },
    Location {
        namespace: "aws-load-balancer-operator",
        deployment: "aws-load-balancer-controller-cluster",
        webhook_service: "aws-load-balancer-controller-cluster",
    },
];

/// PURE: whether the controller at `at` serves, from its Deployment and its webhook
/// Service's EndpointSlices: Ok(how it is known) or Err(what is missing).
pub fn judge(
    at: &Location,
    deployment: Option<&Deployment>,
    slices: &[&EndpointSlice],
) -> Result<String, String> {
    let name = format!("{}/{}", at.namespace, at.deployment);
    let Some(deployment) = deployment else {
        return Err(format!("{name}: no Deployment"));
    };
    let status = deployment.status.as_ref();
    let wanted = deployment.spec.replicas.unwrap_or(1);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    let condition = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_.as_deref() == Some("Available")))
        .and_then(|c| c.status.as_deref());
    let ready_endpoints: usize = slices
        .iter()
        .flat_map(|s| s.endpoints.iter().flatten())
        .filter(|e| {
            // "nil should be interpreted as true" (discovery.k8s.io/v1 EndpointConditions).
            e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true)
        })
        .count();
    let mut missing = Vec::new();
    if condition != Some("True") || available < 1 {
        missing.push(format!(
            "Deployment {available}/{wanted} available (condition Available={})",
            condition.unwrap_or("unset")
        ));
    }
    if ready_endpoints == 0 {
        missing.push(format!(
            "webhook Service {} has no ready endpoint",
            at.webhook_service
        ));
    }
    if missing.is_empty() {
        Ok(format!(
            "{name}: Deployment {available}/{wanted} available, webhook {} has {ready_endpoints} ready endpoint(s)",
            at.webhook_service
        ))
    } else {
        Err(format!("{name}: {}", missing.join(", ")))
    }
}

/// PURE: the line STATUS= and the log show while the hand-over waits.
pub fn waiting_text(why: &[String]) -> String {
    format!(
        "stage 1: the hand-over waits for the AWS Load Balancer Controller to serve (its Deployment available and its webhook Service with a ready endpoint) before freeing the private IPs: {}",
        why.join("; ")
    )
}

/// The controller did not serve within the deadline.
#[derive(Debug, thiserror::Error)]
#[error(
    "the AWS Load Balancer Controller did not serve within {}: {why}; no private IP was handed over (install it, or see `kubectl -n <namespace> get deployment,endpointslices`), then run again",
    humantime::format_duration(*after)
)]
pub struct ControllerTimeout {
    pub after: Duration,
    pub why: String,
}

/// Names one watch: the location's namespace and deployment, and which of its two watches.
fn streams_index(at: &Location, which: u8) -> (&'static str, &'static str, u8) {
    (at.namespace, at.deployment, which)
}

struct Watched {
    at: Location,
    deployments: Store<Deployment>,
    slices: Store<EndpointSlice>,
}

impl Watched {
    fn judge(&self) -> Result<String, String> {
        let deployments = self.deployments.state();
        let deployment = deployments
            .iter()
            .find(|d| d.meta().name.as_deref() == Some(self.at.deployment));
        let slices = self.slices.state();
        let slices: Vec<&EndpointSlice> = slices.iter().map(|s| s.as_ref()).collect();
        judge(&self.at, deployment.map(|d| d.as_ref()), &slices)
    }
}

/// Waits until the controller serves at one of `locations`, calling `progress` with the
/// waiting text whenever what is missing changes. Ok(how it is known); after `deadline`,
/// [`ControllerTimeout`]; a watch the API server refuses stops it at once
/// ([`crate::cluster::WatchRefused`]).
pub async fn wait_serving(
    client: &kube::Client,
    locations: &[Location],
    deadline: Duration,
    mut progress: impl FnMut(&str),
) -> anyhow::Result<String> {
    let mut streams = Vec::new();
    let mut watched = Vec::new();
    for at in locations {
        let (deployments, s) = watch(
            Api::<Deployment>::namespaced(client.clone(), at.namespace),
            watcher::Config::default().fields(&format!("metadata.name={}", at.deployment)),
        );
        let key = streams_index(at, 0);
        streams.push(s.map(move |e| (key, e)).boxed());
        let (slices, s) = watch(
            Api::<EndpointSlice>::namespaced(client.clone(), at.namespace),
            watcher::Config::default()
                .labels(&format!("{SERVICE_NAME_LABEL}={}", at.webhook_service)),
        );
        let key = streams_index(at, 1);
        streams.push(s.map(move |e| (key, e)).boxed());
        watched.push(Watched {
            at: *at,
            deployments,
            slices,
        });
    }
    let expected = streams.len();
    let mut events = futures::stream::select_all(streams);
    let mut listed = std::collections::BTreeSet::new();
    let mut last: Vec<String> = Vec::new();
    let outcome = tokio::time::timeout(deadline, async {
        loop {
            // Judged only once every watch has listed what exists (an empty store before
            // that is no answer yet).
            if listed.len() == expected {
                let verdicts: Vec<Result<String, String>> =
                    watched.iter().map(Watched::judge).collect();
                if let Some(Ok(proof)) = verdicts.iter().find(|v| v.is_ok()) {
                    return Ok(Some(proof.clone()));
                }
                let why: Vec<String> = verdicts.into_iter().filter_map(Result::err).collect();
                if why != last {
                    progress(&waiting_text(&why));
                    last = why;
                }
            }
            match events.next().await {
                None => return Ok(None),
                Some((_, Err(e))) => {
                    if let Some(refused) = crate::cluster::WatchRefused::of(&e) {
                        return Err(refused);
                    }
                    tracing::warn!(error = %e, "watch interrupted; kube-runtime re-lists with backoff");
                }
                Some((which, Ok(init_done))) => {
                    if init_done {
                        listed.insert(which);
                    }
                }
            }
        }
    })
    .await;
    match outcome {
        Ok(Ok(Some(proof))) => Ok(proof),
        Ok(Err(refused)) => Err(refused.into()),
        Ok(Ok(None)) | Err(_) => Err(ControllerTimeout {
            after: deadline,
            why: last.join("; "),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentSpec, DeploymentStatus};
    use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions};

    fn deployment(available: i32, condition: &str) -> Deployment {
        Deployment {
            spec: DeploymentSpec {
                replicas: Some(2),
                ..Default::default()
            },
            status: Some(DeploymentStatus {
                available_replicas: Some(available),
                conditions: Some(vec![DeploymentCondition {
                    type_: Some("Available".into()),
                    status: Some(condition.into()),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn slice(ready: Option<bool>) -> EndpointSlice {
        EndpointSlice {
            endpoints: Some(vec![Endpoint {
                addresses: vec!["10.128.0.7".into()],
                conditions: Some(EndpointConditions {
                    ready,
                    ..Default::default()
                }),
                ..Default::default()
            }]),
            ..Default::default()
        }
    }

    #[test]
    fn the_controller_serves_only_with_an_available_deployment_and_a_ready_webhook_endpoint() {
        let at = &LOCATIONS[0];
        assert_eq!(
            judge(at, None, &[]).unwrap_err(),
            "kube-system/aws-load-balancer-controller: no Deployment"
        );
        let not_ready = slice(Some(false));
        assert_eq!(
            judge(at, Some(&deployment(0, "False")), &[&not_ready]).unwrap_err(),
            "kube-system/aws-load-balancer-controller: Deployment 0/2 available (condition Available=False), webhook Service aws-load-balancer-webhook-service has no ready endpoint"
        );
        // Available, but the webhook has no endpoint yet: still not serving.
        assert!(
            judge(at, Some(&deployment(2, "True")), &[&not_ready])
                .unwrap_err()
                .ends_with(
                    "webhook Service aws-load-balancer-webhook-service has no ready endpoint"
                )
        );
        let ready = slice(None);
        assert_eq!(
            judge(at, Some(&deployment(1, "True")), &[&ready]).unwrap(),
            "kube-system/aws-load-balancer-controller: Deployment 1/2 available, webhook aws-load-balancer-webhook-service has 1 ready endpoint(s)"
        );
        assert!(waiting_text(&["x".into(), "y".into()]).ends_with("private IPs: x; y"));
    }
}
