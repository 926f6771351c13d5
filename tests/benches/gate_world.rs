//! What the gate benches share: a local API server whose nodes run `app: bench` pods (where
//! endpoints come from), and the LoadBalancer Services they apply. Included with `#[path]`.

use bootstrap_sim::kube::{ControllerKnobs, KubeSim, KubeSimOptions, PodSet};
use k8s_openapi::api::core::v1::Service;

/// A LoadBalancer Service `name` in `default` selecting the bench pods on 6443.
pub fn service(name: &str) -> Service {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"type": "LoadBalancer", "selector": {"app": "bench"}, "ports": [{"port": 6443}]}
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The local API server with `knobs`, and a client of it built as the agent builds its own.
pub async fn bench_cluster(knobs: ControllerKnobs) -> (KubeSim, kube::Client) {
    let sim = KubeSim::start(KubeSimOptions {
        controller: knobs,
        control_plane_pods: vec![PodSet::new(
            "default",
            "bench",
            &[("app", "bench")],
            &[6443],
        )],
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let client = bootstrap_agent::cluster::client(sim.kubeconfig_path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (sim, client)
}
