//! The handlers of the commands that work on the Services: `render`, `apply`, `wait`.

use super::{Common, GateArgs, KubeArgs, Output};
use crate::context::{Cloud, Context, Reading};
use crate::output;
use anyhow::Result;

pub async fn render(common: &Common, templates: Option<&std::path::Path>) -> Result<()> {
    let reading = Reading::new(common, Cloud::Observe).await?;
    let rendered = reading.rendered(templates).await?;
    match common.output {
        Output::Json => output::data(
            common.output,
            &rendered.iter().map(|r| &r.service).collect::<Vec<_>>(),
        ),
        Output::Text | Output::Yaml => output::write_stdout(&crate::render::to_yaml(&rendered)?),
    }
}

pub async fn apply(common: &Common, kube: &KubeArgs) -> Result<()> {
    let reading = Reading::new(common, Cloud::Observe).await?;
    let observed = reading.observe().await?;
    let (rendered, reservations) =
        crate::context::rendered_for(&reading.spec, &observed, kube.templates.as_deref())?;
    let client = crate::cluster::client(&kube.kubeconfig).await?;
    // A load balancer never changes the addresses it was built with (AWS): replaced first.
    for replaced in crate::runner::replace_where_fixed(
        &client,
        &reading.providers,
        &reading.spec,
        &rendered,
        &reservations,
        common.step_timeout,
    )
    .await?
    {
        println!(
            "{replaced}: replaced (its load balancer never changes its addresses: deleted, waited out, applied anew)"
        );
    }
    let applied = crate::cluster::apply::apply_services(&client, &rendered).await?;
    match common.output {
        Output::Text => {
            for a in &applied {
                println!(
                    "{}/{}: {:?} (template {})",
                    a.namespace, a.name, a.outcome, a.template
                );
            }
            Ok(())
        }
        other => output::data(other, &applied),
    }
}

pub async fn wait(common: &Common, kube: &KubeArgs, gate: &GateArgs) -> Result<()> {
    // Locked: the result goes into the journal, and waiting 30 min to learn that another
    // agent holds it would be no use.
    let mut ctx = Context::open(common, &[]).await?;
    let report = crate::daemon::wait_for_gate(&mut ctx, kube, gate).await?;
    match common.output {
        Output::Text => output::write_stdout(&format!("gate passed in {} ms\n", report.elapsed_ms)),
        other => output::data(other, &report),
    }
}
