//! `bootstrap-agent capabilities validate|apply|filter|upgrade`.

mod upgrade_cmd;

use super::{counts, list, manifests};
use crate::output::Output;
use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::PathBuf;
use upgrade_cmd::upgrade_cmd;

// ---- the arguments of `capabilities ...` and of the registry options `run` shares ----------

/// The capability registry and the cluster's feature set / gates.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// Capability registry file replacing the embedded templates/capabilities.yaml.
    #[arg(long, env = "BOOTSTRAP_AGENT_CAPABILITY_REGISTRY")]
    pub registry: Option<PathBuf>,
    /// The cluster's feature set (default: Default, or what --feature-gates-file says).
    #[arg(long, env = "BOOTSTRAP_AGENT_FEATURE_SET")]
    pub feature_set: Option<String>,
    /// Enabled feature gates, comma separated (default: those of the feature set in the
    /// table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b).
    #[arg(
        long,
        env = "BOOTSTRAP_AGENT_FEATURE_GATES",
        value_delimiter = ',',
        conflicts_with = "feature_gates_file"
    )]
    pub feature_gates: Option<Vec<String>>,
    /// The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and
    /// the enabled gates: the installer's rendered one, or a running cluster's.
    #[arg(long, env = "BOOTSTRAP_AGENT_FEATURE_GATES_FILE")]
    pub feature_gates_file: Option<PathBuf>,
    /// With a FeatureGate listing several versions: the release version whose gates count.
    #[arg(long)]
    pub release_version: Option<String>,
    /// The release's ClusterVersion CRD: the baseline and additional capabilities must be in
    /// its enums (an unknown one is an error naming the valid ones for that release).
    #[arg(long, env = "BOOTSTRAP_AGENT_CLUSTER_VERSION_CRD")]
    pub cluster_version_crd: Option<PathBuf>,
}

impl RegistryArgs {
    /// The registry and the gates for the default profile and major version.
    pub fn load(
        &self,
    ) -> Result<(
        crate::capabilities::registry::Registry,
        crate::capabilities::selection::Gates,
    )> {
        self.load_for(None, None)
    }

    /// The registry and the gates for a cluster profile and a release major version.
    pub fn load_for(
        &self,
        profile: Option<&str>,
        major: Option<u64>,
    ) -> Result<(
        crate::capabilities::registry::Registry,
        crate::capabilities::selection::Gates,
    )> {
        let mut registry = crate::capabilities::registry::Registry::load(self.registry.as_deref())?;
        if let Some(crd) = &self.cluster_version_crd {
            registry.release = Some(crate::capabilities::release::crd_enums(crd)?);
        }
        let gates = crate::capabilities::selection::Gates::resolve(
            &crate::capabilities::selection::GateInputs {
                feature_set: self.feature_set.as_deref(),
                explicit: self.feature_gates.as_deref(),
                file: self.feature_gates_file.as_deref(),
                release_version: self.release_version.as_deref(),
                profile,
                major,
            },
        )?;
        Ok((registry, gates))
    }
}

/// Where the enabled set comes from, and which objects the cluster takes.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Installer asset dir whose install-config `capabilities` block gives the enabled set.
    #[arg(long, conflicts_with_all = ["baseline", "additional"])]
    pub assets: Option<PathBuf>,
    /// Without --assets: the baseline capability set (default vCurrent).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Without --assets: additional enabled capabilities, comma separated.
    #[arg(long, value_delimiter = ',')]
    pub additional: Vec<String>,
    /// Cluster profile: objects need include.release.openshift.io/<profile>: "true".
    #[arg(long, default_value = crate::capabilities::inclusion::DEFAULT_PROFILE)]
    pub profile: String,
    /// Identifiers in force for exclude.release.openshift.io/<id> (e.g. internal-openshift-hosted).
    #[arg(long, value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// The release's major version, for release.openshift.io/major-version (default: the
    /// `version` of release-metadata in the manifests dir, as the CVO reads it; else unchecked).
    #[arg(long)]
    pub major_version: Option<u64>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Subcommand)]
pub enum CapabilitiesCommand {
    /// Validate the install-config `capabilities` block; print the enabled and known sets.
    Validate {
        #[arg(long, env = "BOOTSTRAP_AGENT_ASSETS", default_value = "/opt/openshift")]
        assets: PathBuf,
        #[command(flatten)]
        registry: RegistryArgs,
        #[arg(long, default_value = "text", value_parser = crate::options::one_of(Output::Text))]
        output: Output,
    },
    /// Write spec.capabilities into ClusterVersion `version` (server-side apply; never its
    /// status, which the cluster-version operator owns).
    Apply {
        #[arg(long, env = "BOOTSTRAP_AGENT_ASSETS", default_value = "/opt/openshift")]
        assets: PathBuf,
        #[arg(
            long,
            env = "BOOTSTRAP_AGENT_KUBECONFIG",
            default_value = "/opt/openshift/auth/kubeconfig"
        )]
        kubeconfig: PathBuf,
        #[command(flatten)]
        registry: RegistryArgs,
        /// How long to wait for ClusterVersion `version` when it does not exist and the asset
        /// dir has no manifests/cvo-overrides.yaml to create it from.
        #[arg(long, default_value = "10m", allow_hyphen_values = true,
              value_parser = crate::options::checked(crate::options::duration, std::time::Duration::ZERO))]
        wait: std::time::Duration,
        #[arg(long, default_value = "text", value_parser = crate::options::one_of(Output::Text))]
        output: Output,
    },
    /// Decide, per object of a manifests dir, included or excluded (and why).
    Filter {
        #[command(flatten)]
        selection: SelectionArgs,
        /// The manifests dir (multi-document YAML files).
        #[arg(long)]
        manifests: PathBuf,
        /// Write the included objects here, byte-for-byte.
        #[arg(long)]
        out: Option<PathBuf>,
        /// One line per object with the reason.
        #[arg(long)]
        explain: bool,
        #[arg(long, default_value = "text", value_parser = crate::options::one_of(Output::Text))]
        output: Output,
    },
    /// An update from one payload to another: implicitly enabled capabilities, deletions.
    Upgrade {
        #[command(flatten)]
        selection: SelectionArgs,
        /// The payload the cluster runs now.
        #[arg(long)]
        from: PathBuf,
        /// The payload it updates to.
        #[arg(long)]
        to: PathBuf,
        /// Capabilities the cluster has enabled now besides the configured ones, comma separated.
        #[arg(long, value_delimiter = ',')]
        previously_enabled: Vec<String>,
        /// Delete the objects annotated release.openshift.io/delete in this cluster
        /// (without it they are only listed).
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        /// Where deleted objects are remembered (to warn when one reappears).
        #[arg(
            long,
            env = "BOOTSTRAP_AGENT_STATE_DIR",
            default_value = "/var/lib/bootstrap-agent"
        )]
        state_dir: PathBuf,
        #[arg(long, default_value = "text", value_parser = crate::options::one_of(Output::Text))]
        output: Output,
    },
}

// ---- the commands --------------------------------------------------------------------------

pub async fn run(command: CapabilitiesCommand) -> Result<()> {
    match command {
        CapabilitiesCommand::Validate {
            assets,
            registry,
            output,
        } => validate(&assets, &registry, output),
        CapabilitiesCommand::Apply {
            assets,
            kubeconfig,
            registry,
            wait,
            output,
        } => {
            let (reg, gates) = registry.load()?;
            let sel = super::selection_from_assets(&reg, &gates, &assets)?;
            let overrides = super::cluster_version::overrides_from_assets(&assets)?;
            let client = crate::cluster::client(&kubeconfig).await?;
            let request = super::cluster_version::Request {
                selection: &sel,
                overrides: overrides.as_ref(),
                wait,
            };
            let applied =
                super::cluster_version::apply(&client, &request, |line| eprintln!("{line}"))
                    .await?;
            match output {
                Output::Text => {
                    let what = if applied.created {
                        "created from manifests/cvo-overrides.yaml"
                    } else if applied.spec_patched {
                        "spec.capabilities applied"
                    } else {
                        "spec.capabilities unchanged"
                    };
                    println!("ClusterVersion version: {what}");
                    println!(
                        "baseline: {}; additional: {}",
                        sel.baseline,
                        applied.additional.join(", ")
                    );
                    if !applied.kept.is_empty() {
                        println!(
                            "kept (listed in the live spec; capabilities cannot be uninstalled): {}",
                            list(&applied.kept)
                        );
                    }
                    let report = &applied.cvo_will_report;
                    println!(
                        "the cluster-version operator will report (the agent never writes status):"
                    );
                    println!("  enabled: {}", list(&report.enabled));
                    let c = &report.condition;
                    println!("  {}={} ({}): {}", c.type_, c.status, c.reason, c.message);
                    println!("{} mutating call(s)", applied.mutations);
                }
                Output::Json | Output::Yaml => crate::output::data(output, &applied)?,
            }
            Ok(())
        }
        CapabilitiesCommand::Filter {
            selection,
            manifests,
            out,
            explain,
            output,
        } => filter(&selection, &manifests, out.as_deref(), explain, output),
        CapabilitiesCommand::Upgrade {
            selection,
            from,
            to,
            previously_enabled,
            kubeconfig,
            state_dir,
            output,
        } => {
            upgrade_cmd(
                &selection,
                &from,
                &to,
                &previously_enabled,
                kubeconfig.as_deref(),
                &state_dir,
                output,
            )
            .await
        }
    }
}

fn validate(assets: &std::path::Path, registry: &RegistryArgs, output: Output) -> Result<()> {
    let (reg, gates) = registry.load()?;
    let sel = super::selection_from_assets(&reg, &gates, assets)?;
    match output {
        Output::Text => {
            println!("baseline: {}", sel.baseline);
            println!(
                "additional: {}",
                if sel.additional.is_empty() {
                    "none".to_string()
                } else {
                    sel.additional.join(", ")
                }
            );
            println!(
                "feature set: {} ({} gate(s) from {}): {}",
                gates.feature_set,
                gates.gates.len(),
                gates.source,
                list(&gates.gates)
            );
            println!("enabled ({}): {}", sel.enabled.len(), list(&sel.enabled));
            println!("known ({}): {}", sel.known.len(), list(&sel.known));
        }
        Output::Json | Output::Yaml => {
            crate::output::data(output, &json!({"selection": sel, "gates": gates}))?
        }
    }
    Ok(())
}

type Resolved = (super::selection::Selection, super::inclusion::Context);

/// The selection and the decision context for a release of major version `major`.
fn resolve(args: &SelectionArgs, major: Option<u64>) -> Result<Resolved> {
    let (reg, gates) = args.registry.load_for(Some(&args.profile), major)?;
    let sel = match &args.assets {
        Some(dir) => super::selection_from_assets(&reg, &gates, dir)?,
        None => {
            super::selection_from_flags(&reg, &gates, args.baseline.as_deref(), &args.additional)?
        }
    };
    let mut ctx = super::context(&sel, &gates, &args.profile, &args.exclude);
    ctx.major_version = major;
    Ok((sel, ctx))
}

/// `--major-version`, else the major version of the release-metadata in `dir`, if any.
fn major_version(args: &SelectionArgs, dir: &std::path::Path) -> Result<Option<u64>> {
    match args.major_version {
        Some(m) => Ok(Some(m)),
        None => Ok(super::release::major_version(dir)?),
    }
}

/// Prints the documents that could not be read, and fails with the exit code that says so.
fn unreadable(payloads: &[&manifests::Payload]) -> Result<()> {
    let all: Vec<_> = payloads.iter().flat_map(|p| &p.unreadable).collect();
    for e in &all {
        eprintln!("unreadable: {e}");
    }
    if all.is_empty() {
        Ok(())
    } else {
        Err(super::UnreadableManifests { count: all.len() }.into())
    }
}

fn filter(
    args: &SelectionArgs,
    dir: &std::path::Path,
    out: Option<&std::path::Path>,
    explain: bool,
    output: Output,
) -> Result<()> {
    let (_, ctx) = resolve(args, major_version(args, dir)?)?;
    let payload = manifests::read_dir(dir)?;
    let decisions = super::decide_all(&payload, &ctx);
    let written = match out {
        Some(out) => Some(super::write_included(&payload, &decisions, out)?),
        None => None,
    };
    let (included, delete, excluded) = counts(&decisions);
    match output {
        Output::Text => {
            if explain {
                print!("{}", super::explain(&payload, &decisions));
            }
            println!(
                "{} object(s) in {} file(s): {included} included, {delete} to delete (not created at install), {excluded} excluded{}",
                decisions.len(),
                payload.files.len(),
                match payload.unreadable.len() {
                    0 => String::new(),
                    n => format!("; {n} document(s) unreadable"),
                }
            );
            if let (Some(n), Some(out)) = (written, out) {
                println!("wrote {n} file(s) to {}", out.display());
            }
        }
        Output::Json | Output::Yaml => {
            let objects: Vec<_> = payload
                .manifests
                .iter()
                .zip(&decisions)
                .map(|(m, d)| json!({"source": payload.source(m), "object": m.id, "decision": d, "explanation": d.to_string()}))
                .collect();
            crate::output::data(
                output,
                &json!({
                    "context": ctx, "included": included, "delete": delete,
                    "excluded": excluded, "objects": objects,
                    "unreadable": super::unreadable_json(&payload),
                }),
            )?;
        }
    }
    unreadable(&[&payload])
}
