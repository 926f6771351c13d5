//! `capabilities upgrade`: implicit enablement and the delete annotation across two payloads.

use super::super::{counts, list, manifests, upgrade};
use super::{SelectionArgs, major_version, resolve, unreadable};
use crate::output::Output;
use anyhow::Result;
use serde_json::json;

pub(super) async fn upgrade_cmd(
    args: &SelectionArgs,
    from: &std::path::Path,
    to: &std::path::Path,
    previously_enabled: &[String],
    kubeconfig: Option<&std::path::Path>,
    state_dir: &std::path::Path,
    output: Output,
) -> Result<()> {
    let old_major = major_version(args, from)?;
    let (sel, mut ctx) = resolve(args, major_version(args, to)?)?;
    for (i, c) in previously_enabled.iter().enumerate() {
        if !ctx.known.contains(c) {
            return Err(crate::error::InputError::new(
                "(command line)",
                format!("--previously-enabled[{i}]"),
                format!("unknown capability {c:?}; valid: {}", list(&ctx.known)),
            )
            .into());
        }
        ctx.enabled.insert(c.clone());
    }
    let old = manifests::read_dir(from)?;
    let new = manifests::read_dir(to)?;
    if kubeconfig.is_some() && !(old.unreadable.is_empty() && new.unreadable.is_empty()) {
        // Deleting on a partly read payload could delete what an unread document keeps.
        unreadable(&[&old, &new])?;
    }
    let up = upgrade::upgrade(&old, &new, &ctx, old_major, &sel.enabled);
    let targets = crate::capabilities::delete::targets(&new, &up.decisions);
    let deleted = match kubeconfig {
        Some(kc) => {
            let client = crate::cluster::client(kc).await?;
            Some(crate::capabilities::delete::execute(&client, &targets, state_dir).await?)
        }
        None => None,
    };
    let (included, delete, excluded) = counts(&up.decisions);
    match output {
        Output::Text => {
            println!(
                "enabled ({}): {}",
                up.report.enabled.len(),
                list(&up.report.enabled)
            );
            println!(
                "implicitly enabled: {}",
                list(&up.report.implicitly_enabled)
            );
            let c = &up.report.condition;
            println!("{}={} ({}): {}", c.type_, c.status, c.reason, c.message);
            println!(
                "new payload: {} object(s): {included} included, {delete} to delete, {excluded} excluded",
                up.decisions.len()
            );
            match &deleted {
                None => {
                    for t in &targets {
                        println!("would delete {t}");
                    }
                }
                Some(done) => {
                    for d in done {
                        let re = if d.reappeared {
                            " (WARNING: it had been deleted before and reappeared)"
                        } else {
                            ""
                        };
                        println!("delete {}: {:?}{re}", d.target, d.outcome);
                    }
                    let verified = done
                        .iter()
                        .filter(|d| d.outcome != crate::capabilities::delete::Outcome::Requested)
                        .count();
                    println!("deletes: {} requested, {verified} verified", done.len());
                }
            }
        }
        Output::Json | Output::Yaml => crate::output::data(
            output,
            &json!({
                "upgrade": up, "included": included, "delete": delete, "excluded": excluded,
                "deleteTargets": targets, "deleted": deleted,
                "unreadable": {"from": crate::capabilities::unreadable_json(&old), "to": crate::capabilities::unreadable_json(&new)},
            }),
        )?,
    }
    unreadable(&[&old, &new])
}
