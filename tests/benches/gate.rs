//! `cargo bench --bench gate`: latency from the moment the local API server makes the last
//! readiness condition true to the gate reporting Ready. Target: p99 <= 100 ms. The gate is
//! watch-driven, so this measures watch delivery + re-evaluation, not a poll interval.

#[path = "gate_world.rs"]
mod gate_world;
#[path = "report.rs"]
mod report;

use bootstrap_agent::cluster::gate;
use bootstrap_agent::render::ServiceClaim;
use bootstrap_sim::kube::ControllerKnobs;
use gate_world::{bench_cluster, service};
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{Patch, PatchParams};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let knobs = ControllerKnobs {
        never_ready: true,
        ..Default::default()
    };
    let (sim, client) = bench_cluster(knobs).await;
    let api: Api<Service> = Api::namespaced(client.clone(), "default");
    let mut samples = Vec::new();
    for i in 0..200 {
        let names: Vec<String> = (0..3).map(|j| format!("svc-{i}-{j}")).collect();
        for n in &names {
            api.patch(n, &PatchParams::apply("bench"), &Patch::Apply(service(n)))
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let targets: Vec<ServiceClaim> = names
            .iter()
            .map(|n| ServiceClaim {
                namespace: "default".into(),
                name: n.clone(),
                claims: Vec::new(),
                needs_aws_lb_controller: false,
                ports: Vec::new(),
            })
            .collect();
        // The gate reports its first evaluation once its watches are up; then the test acts.
        let (watching_tx, watching_rx) = tokio::sync::oneshot::channel::<()>();
        let mut watching_tx = Some(watching_tx);
        let client2 = client.clone();
        let waiter = tokio::spawn(async move {
            let report =
                gate::wait_ready(&client2, &targets, None, Duration::from_secs(30), |_| {
                    if let Some(tx) = watching_tx.take() {
                        let _ = tx.send(());
                    }
                })
                .await;
            (Instant::now(), report.is_ok())
        });
        let _ = watching_rx.await;
        // Let every watch of the gate finish its initial list (a bench may wait; the gate may not).
        tokio::time::sleep(Duration::from_millis(100)).await;
        sim.make_ready("default", &names[0]);
        sim.make_ready("default", &names[1]);
        let last_condition = Instant::now();
        sim.make_ready("default", &names[2]);
        let (reported, ok) = waiter.await.unwrap_or_else(|e| panic!("{e}"));
        assert!(ok, "gate did not pass");
        samples.push(reported.duration_since(last_condition));
    }
    let n = samples.len();
    let mut p = |q: f64| report::percentile(&mut samples, q);
    let (p50, p99, max) = (p(0.5), p(0.99), p(1.0));
    println!(
        "gate latency (last condition true -> Ready): n={n} p50={p50:?} p99={p99:?} max={max:?}"
    );
}
