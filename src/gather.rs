//! `gather`: one support bundle (`.tar.gz`) for whoever picks up a stuck install: the journal,
//! `status`, the plan, the rendered Services, the gate report, what the cloud shows of ours, and
//! (with a kubeconfig) our Services, their EndpointSlices and Events. Every part is collected on
//! its own under a deadline; what cannot be collected is written down in `errors.txt` instead,
//! so an unreachable cloud or cluster still yields a bundle. Nothing secret goes in: the spec
//! is serialized without its credentials, and no input file is copied.

use crate::assets::ClusterSpec;
use crate::context::{Cloud, Common, Inputs, Reading};
use crate::providers::Providers;
use anyhow::Result;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct GatherArgs {
    #[command(flatten)]
    pub common: Common,
    /// Kubeconfig of the cluster (optional: without it the cluster part is left out).
    #[arg(long, env = "BOOTSTRAP_AGENT_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    #[arg(long, env = "BOOTSTRAP_AGENT_TEMPLATES")]
    pub templates: Option<PathBuf>,
    /// Where to write the bundle.
    #[arg(long, default_value = "bootstrap-agent-gather.tar.gz")]
    pub out: PathBuf,
}

/// `gather`: reads only (no lock, no journal write), collects what it can, says what it could not.
/// Its inputs come from the asset dir, else (with `--kubeconfig`) from the cluster, with what
/// `run` left there (`day2`).
pub async fn command(args: &GatherArgs) -> Result<()> {
    let from_cluster = match (args.common.asset_dir_if_any(), &args.kubeconfig) {
        (Some(_), _) => None,
        (None, Some(kubeconfig)) => {
            Some(crate::day2::read(kubeconfig, args.common.state.state_dir.as_deref()).await?)
        }
        (None, None) => {
            return Err(crate::error::InputError::new(
                args.common.assets(),
                "(dir)",
                "asset dir does not exist; expected --assets, or --kubeconfig to read the inputs from the cluster",
            )
            .into());
        }
    };
    let dir = crate::assets::AssetDir(args.common.assets());
    let started = from_cluster
        .as_ref()
        .map(|c| c.record.journal(c.spec.publish.api()));
    let inputs = match &from_cluster {
        Some(c) => Inputs {
            source: &c.docs,
            state_dir: &c.state_dir,
            fallback: started.as_ref(),
        },
        None => Inputs {
            source: &dir,
            state_dir: args.common.state.dir(),
            fallback: None,
        },
    };
    let reading = Reading::from_inputs(&args.common, &inputs, Cloud::BestEffort).await?;
    if let Some(why) = &reading.no_cloud {
        eprintln!("gather: no cloud view: {why}");
    }
    let providers = reading.no_cloud.is_none().then_some(&reading.providers);
    let mut bundle = collect(
        &reading.spec,
        &inputs,
        providers,
        args.kubeconfig.as_deref(),
        args.templates.as_deref(),
    )
    .await;
    if let Some(c) = &from_cluster {
        // What `run` left in the cluster: ids, names and IPs, nothing secret.
        bundle.json("record.json", &c.record);
    }
    for e in &bundle.errors {
        eprintln!("gather: not collected: {e}");
    }
    let files = bundle.files.len() + 1;
    bundle.write(&args.out)?;
    println!("wrote {} ({files} files)", args.out.display());
    Ok(())
}

/// How long one part may take before it is given up.
const PART_DEADLINE: Duration = Duration::from_secs(20);

/// The files of the bundle, in order, and what could not be collected.
#[derive(Default)]
pub struct Bundle {
    pub files: Vec<(String, Vec<u8>)>,
    pub errors: Vec<String>,
}

impl Bundle {
    pub fn json(&mut self, name: &str, value: &impl serde::Serialize) {
        match serde_json::to_vec_pretty(value) {
            Ok(bytes) => self.files.push((name.to_string(), bytes)),
            Err(e) => self.errors.push(format!("{name}: {e}")),
        }
    }

    fn part<T: serde::Serialize>(&mut self, name: &str, result: Result<T>) {
        match result {
            Ok(v) => self.json(name, &v),
            Err(e) => self
                .errors
                .push(format!("{name}: {}", crate::error::render_chain(&e))),
        }
    }

    /// Writes the bundle as a gzipped tar, atomically (temp file + rename).
    pub fn write(mut self, out: &Path) -> Result<()> {
        let errors = if self.errors.is_empty() {
            "everything was collected\n".to_string()
        } else {
            self.errors.join("\n") + "\n"
        };
        self.files.push(("errors.txt".into(), errors.into_bytes()));
        let (dir, name) = crate::journal::dir_and_name(out, "--out")?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        {
            let mut tar = tar::Builder::new(&mut gz);
            for (file, bytes) in &self.files {
                let mut header = tar::Header::new_gnu();
                header.set_size(bytes.len() as u64);
                header.set_mode(0o600);
                header.set_cksum();
                tar.append_data(
                    &mut header,
                    format!("bootstrap-agent-gather/{file}"),
                    bytes.as_slice(),
                )?;
            }
            tar.finish()?;
        }
        crate::journal::write_atomically(dir, name, &gz.finish()?)
    }
}

async fn within<T>(what: &str, fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(PART_DEADLINE, fut)
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{what} did not answer within {}",
                humantime::format_duration(PART_DEADLINE)
            )
        })?
}

/// Collects everything it can.
pub async fn collect(
    spec: &ClusterSpec,
    inputs: &Inputs<'_>,
    providers: Option<&Providers>,
    kubeconfig: Option<&Path>,
    templates: Option<&Path>,
) -> Bundle {
    let state_dir = inputs.state_dir;
    let mut b = Bundle::default();
    b.json(
        "versions.json",
        &json!({
            "bootstrap-agent": env!("CARGO_PKG_VERSION"),
            "collected_at": crate::journal::now(),
            "state_dir": state_dir,
            "kubeconfig": kubeconfig,
            "templates": templates,
        }),
    );
    // The spec as the agent read it; its credentials are never serialized.
    b.json("spec.json", spec);
    let state = crate::journal::read_state(state_dir);
    let state = match state {
        Ok(s) => s.or_else(|| inputs.fallback.cloned()),
        Err(e) => {
            b.errors
                .push(format!("journal.json: {}", crate::error::render_chain(&e)));
            None
        }
    };
    if let Some(state) = &state {
        b.json("journal.json", state);
        b.json("gate.json", &state.gate);
    }
    let observed = match providers {
        Some(providers) => {
            let recorded = state.clone().unwrap_or_default();
            within(
                "the cloud",
                crate::runner::observe(spec, providers, &recorded),
            )
            .await
        }
        None => Err(anyhow::anyhow!("no cloud view")),
    };
    match observed {
        Ok(o) => {
            let observed = o.observed;
            let stages = crate::machine::remaining_steps(state.as_ref().and_then(|s| s.run_step));
            let generation = state.as_ref().map_or(1, |s| s.generation);
            // The Services `run` would apply are in the plan too (a template that does not
            // render is reported in services.json below).
            let kube = crate::runner::kube_wants(spec, &observed, None, templates)
                .map(|(wants, _)| wants)
                .unwrap_or_default();
            let plan =
                crate::plan::Plan::calculate_with(spec, &observed, &kube, &stages, generation);
            b.json("cloud.json", &observed);
            b.json("plan.json", &plan);
            let reservations: Vec<_> = observed.kept().into_values().collect();
            b.part(
                "services.json",
                crate::render::services(spec, &reservations, templates)
                    .map(|r| r.into_iter().map(|r| r.service).collect::<Vec<_>>()),
            );
        }
        Err(e) => b.errors.push(format!(
            "cloud.json, plan.json, services.json: {}",
            crate::error::render_chain(&e)
        )),
    }
    if let Some(kubeconfig) = kubeconfig {
        let targets = state.map(|s| s.services).unwrap_or_default();
        let cluster = within("the API server", cluster_view(kubeconfig, &targets)).await;
        b.part("cluster.json", cluster);
    }
    b
}

/// Our Services, their EndpointSlices and their Events.
async fn cluster_view(kubeconfig: &Path, targets: &[crate::render::ServiceClaim]) -> Result<Value> {
    use k8s_openapi::api::core::v1::{Event, Service};
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use kube::Api;
    use kube::api::ListParams;
    let client = crate::cluster::client(kubeconfig).await?;
    let mut out = Vec::new();
    for t in targets {
        let services: Api<Service> = Api::namespaced(client.clone(), &t.namespace);
        let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), &t.namespace);
        let events: Api<Event> = Api::namespaced(client.clone(), &t.namespace);
        let service = services.get_opt(&t.name).await?;
        let slices = slices
            .list(&ListParams::default().labels(&format!(
                "{}={}",
                crate::cluster::gate::SERVICE_NAME_LABEL,
                t.name
            )))
            .await?;
        let events = events
            .list(&ListParams::default().fields(&format!(
                "involvedObject.kind=Service,involvedObject.name={}",
                t.name
            )))
            .await?
            .items;
        out.push(json!({
            "namespace": t.namespace, "name": t.name,
            "service": service, "endpointSlices": slices.items, "events": events,
        }));
    }
    Ok(Value::Array(out))
}
