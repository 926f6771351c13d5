use super::evaluate::*;
use super::*;
use bootstrap_cloud::Holder;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::core::v1::{LoadBalancerIngress, LoadBalancerStatus, ServiceStatus};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions};
use std::collections::BTreeMap;
use std::net::IpAddr;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn target(claims: &[&str]) -> ServiceClaim {
    ServiceClaim {
        namespace: "ns".into(),
        name: "lb".into(),
        claims: claims.iter().map(|s| ip(s)).collect(),
        needs_aws_lb_controller: false,
        ports: Vec::new(),
    }
}

fn service(ingress: &[(&str, bool)]) -> Service {
    Service {
        status: Some(ServiceStatus {
            load_balancer: Some(LoadBalancerStatus {
                ingress: Some(
                    ingress
                        .iter()
                        .map(|(v, is_ip)| LoadBalancerIngress {
                            ip: is_ip.then(|| v.to_string()),
                            hostname: (!is_ip).then(|| v.to_string()),
                            ..Default::default()
                        })
                        .collect(),
                ),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn ready_slice() -> EndpointSlice {
    EndpointSlice {
        endpoints: Some(vec![Endpoint {
            addresses: vec!["10.0.0.5".into()],
            conditions: Some(EndpointConditions {
                ready: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn gate(
    t: &ServiceClaim,
    svc: &Service,
    holders: Option<&BTreeMap<IpAddr, Holder>>,
) -> ServiceGate {
    evaluate(t, Some(svc), &[&ready_slice()], None, holders)
}

#[test]
fn an_ingress_ip_other_than_the_reserved_one_is_not_ready_and_names_both() {
    let g = gate(
        &target(&["10.0.1.5"]),
        &service(&[("10.0.9.9", true)]),
        None,
    );
    assert!(!g.ready);
    assert_eq!(
        g.reason,
        "the load balancer holds 10.0.9.9 but DNS points at the reserved 10.0.1.5"
    );
}

#[test]
fn an_ingress_with_an_extra_or_a_missing_ip_is_not_ready() {
    let t = target(&["10.0.1.5", "10.0.2.5"]);
    let extra = gate(
        &target(&["10.0.1.5"]),
        &service(&[("10.0.1.5", true), ("10.0.9.9", true)]),
        None,
    );
    assert!(!extra.ready, "{extra:?}");
    let missing = gate(&t, &service(&[("10.0.1.5", true)]), None);
    assert!(!missing.ready, "{missing:?}");
    let both = gate(
        &t,
        &service(&[("10.0.2.5", true), ("10.0.1.5", true)]),
        None,
    );
    assert!(both.ready, "{both:?}");
    assert_eq!(both.proof, "ingress holds 10.0.1.5, 10.0.2.5");
}

#[test]
fn a_hostname_ingress_needs_the_cloud_to_show_a_load_balancer_holding_every_claim() {
    let t = target(&["10.0.1.5", "10.0.2.5"]);
    let svc = service(&[(
        "k8s-openshif-internal-5d1b75f4f1-0123456789abcdef.elb.us-east-1.amazonaws.com",
        false,
    )]);
    let unasked = gate(&t, &svc, None);
    assert!(!unasked.ready && unasked.needs_cloud_proof, "{unasked:?}");
    assert!(
        unasked.reason.contains("asking the cloud"),
        "{}",
        unasked.reason
    );

    let elb = |id: &str| Holder {
        id: id.into(),
        description: "ELB net/k8s-openshif-internal-5d1b75f4f1/0123456789abcdef".into(),
    };
    let placeholder = Holder {
        id: "eni-ours".into(),
        description: "".into(),
    };
    let half = BTreeMap::from([
        (ip("10.0.1.5"), elb("eni-1")),
        (ip("10.0.2.5"), placeholder),
    ]);
    let g = gate(&t, &svc, Some(&half));
    assert!(!g.ready);
    assert!(
        g.reason
            .contains("10.0.2.5 is held by eni-ours (\"\"), not a load balancer"),
        "{}",
        g.reason
    );
    let one = BTreeMap::from([(ip("10.0.1.5"), elb("eni-1"))]);
    let g = gate(&t, &svc, Some(&one));
    assert!(
        g.reason.contains("10.0.2.5 is held by nothing yet"),
        "{}",
        g.reason
    );

    // Another NLB's interface (same IP in the same VPC is impossible, but a stale or
    // foreign NLB may hold a claimed IP): not this Service's load balancer.
    let other_nlb = Holder {
        id: "eni-other".into(),
        description: "ELB net/k8s-other-lb/fedcba9876543210".into(),
    };
    let foreign = BTreeMap::from([(ip("10.0.1.5"), elb("eni-1")), (ip("10.0.2.5"), other_nlb)]);
    let g = gate(&t, &svc, Some(&foreign));
    assert!(!g.ready, "{g:?}");
    assert!(
        g.reason.contains(
            "10.0.2.5 is held by eni-other (\"ELB net/k8s-other-lb/fedcba9876543210\"), another load balancer than k8s-openshif-internal-5d1b75f4f1-0123456789abcdef.elb.us-east-1.amazonaws.com"
        ),
        "{}",
        g.reason
    );

    let all = BTreeMap::from([
        (ip("10.0.1.5"), elb("eni-1")),
        (ip("10.0.2.5"), elb("eni-2")),
    ]);
    let g = gate(&t, &svc, Some(&all));
    assert!(g.ready, "{g:?}");
    assert!(
        g.proof.starts_with(
            "cloud: load-balancer interfaces hold 10.0.1.5 by eni-1, 10.0.2.5 by eni-2"
        ),
        "{}",
        g.proof
    );
}

#[test]
fn an_nlb_hostname_names_the_description_of_its_interfaces() {
    use bootstrap_cloud::nlb_interface_description as d;
    assert_eq!(
        d("k8s-openshif-internal-5d1b75f4f1-0123456789abcdef.elb.us-east-1.amazonaws.com")
            .as_deref(),
        Some("ELB net/k8s-openshif-internal-5d1b75f4f1/0123456789abcdef")
    );
    assert_eq!(
        d("internal-my-nlb-0123456789abcdef.elb.eu-west-1.amazonaws.com").as_deref(),
        Some("ELB net/my-nlb/0123456789abcdef")
    );
    for not_an_nlb in [
        "lb.example.com",
        "nohyphen.elb.us-east-1.amazonaws.com",
        "name-nothex.elb.us-east-1.amazonaws.com",
        "-0123.elb.us-east-1.amazonaws.com",
    ] {
        assert_eq!(d(not_an_nlb), None, "{not_an_nlb}");
    }
}

#[test]
fn without_claims_ingress_and_an_endpoint_are_enough_and_endpoints_still_count() {
    let g = gate(&target(&[]), &service(&[("lb.example", false)]), None);
    assert!(g.ready && !g.needs_cloud_proof, "{g:?}");
    let no_endpoints = evaluate(
        &target(&["10.0.1.5"]),
        Some(&service(&[("10.0.1.5", true)])),
        &[],
        None,
        None,
    );
    assert!(!no_endpoints.ready);
    assert_eq!(no_endpoints.reason, "0 of 0 endpoints ready");
    let none = evaluate(
        &target(&[]),
        Some(&service(&[])),
        &[&ready_slice()],
        None,
        None,
    );
    assert_eq!(none.reason, "no ingress yet");
}

#[test]
fn after_a_long_wait_without_ingress_the_reason_asks_for_the_aws_lb_controller() {
    let mut t = target(&["10.0.1.5"]);
    t.needs_aws_lb_controller = true;
    let g = evaluate(&t, Some(&service(&[])), &[], None, None);
    let early = with_controller_hint(
        g.clone(),
        &t,
        NO_CONTROLLER_HINT_AFTER - Duration::from_secs(1),
    );
    assert_eq!(early.reason, "no ingress yet");
    let late = with_controller_hint(g, &t, NO_CONTROLLER_HINT_AFTER);
    assert!(
        late.reason
            .contains("is the AWS Load Balancer Controller running?"),
        "{}",
        late.reason
    );
    t.needs_aws_lb_controller = false;
    let other = with_controller_hint(late.clone(), &t, NO_CONTROLLER_HINT_AFTER);
    assert_eq!(
        other.reason, late.reason,
        "only AWS external Services get the hint"
    );
}

#[test]
fn only_aws_external_services_wait_for_the_aws_lb_controller() {
    let svc = |annotation: Option<&str>| Service {
        metadata: kube::api::ObjectMeta {
            name: Some("internal-lb".into()),
            namespace: Some("openshift-kube-apiserver".into()),
            annotations: annotation.map(|v| {
                [(
                    "service.beta.kubernetes.io/aws-load-balancer-type".to_string(),
                    v.to_string(),
                )]
                .into()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let t = ServiceClaim::for_service(&svc(Some("external")), vec![ip("10.0.1.5")]);
    assert!(t.needs_aws_lb_controller);
    assert_eq!(
        (t.namespace.as_str(), t.name.as_str()),
        ("openshift-kube-apiserver", "internal-lb")
    );
    assert_eq!(t.claims, [ip("10.0.1.5")]);
    assert!(!ServiceClaim::for_service(&svc(Some("nlb")), vec![]).needs_aws_lb_controller);
    assert!(!ServiceClaim::for_service(&svc(None), vec![]).needs_aws_lb_controller);
}

/// The gate's first verdict comes only once every watch has listed: a Service that exists
/// when the gate starts is never reported "service not found" (before, the first watch event,
/// another watch's initial list, was judged against an empty Service store).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_exists_is_never_judged_before_the_watches_listed() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let kube = bootstrap_sim::kube::KubeSim::start(Default::default())
        .await
        .unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(kube.kubeconfig_path()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let svc: Service = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "lb", "namespace": "default"},
        "spec": {"type": "ClusterIP", "ports": [{"port": 6443}]}
    }))
    .unwrap();
    kube::Api::<Service>::namespaced(client.clone(), "default")
        .create(&Default::default(), &svc)
        .await
        .unwrap();
    let mut claim = target(&["10.0.1.5"]);
    claim.namespace = "default".into();
    let mut verdicts: Vec<String> = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        run_gate(&client, &[claim], None, |s| {
            verdicts.extend(s.iter().map(|g| g.reason.clone()))
        }),
    )
    .await;
    assert!(!verdicts.is_empty(), "the gate judged the Service");
    assert!(
        verdicts.iter().all(|r| r != "service not found"),
        "{verdicts:?}"
    );
}
