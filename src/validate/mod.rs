//! One pass over every input of a command, before any lock, journal write, cloud or cluster
//! call: the asset dir (kinds, names, domains, cloud ids, URI, duplicates, family, publish vs
//! subnets, capabilities, the creds secret), the kubeconfig (loaded, and a client config
//! built from it), the templates (rendered against stand-in reservations), the capability
//! registry and feature gates, manifest dirs, the done-file and the state dir's lock file
//! (`state_dir`). Every problem is reported, not only the first, each naming the file (or the
//! flag and its environment variable), the field and what was expected; the exit code is 2.

mod assets;
mod files;
pub mod names;
pub mod preflight_names;
mod state_dir;

use crate::assets::ClusterSpec;
use crate::capabilities::cli::RegistryArgs;
use crate::error::InputError;
use crate::options;
pub use crate::options::flag;
use std::fmt;
use std::path::{Path, PathBuf};

pub use files::{MAX_INPUT_BYTES, MAX_MANIFEST_BYTES};

/// Everything wrong with a command's input. Nothing has been written.
#[derive(Debug)]
pub struct InputErrors {
    pub errors: Vec<InputError>,
}

impl fmt::Display for InputErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.errors.as_slice() {
            [one] => write!(f, "{one}"),
            all => {
                write!(f, "{} problems in the input (nothing was done):", all.len())?;
                for e in all {
                    write!(f, "\n  - {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for InputErrors {}

/// The inputs one command reads. What a command does not read stays None / false.
#[derive(Default)]
pub struct Inputs<'a> {
    /// Malformed option values, found while parsing (`options`).
    pub options: &'a [InputError],
    pub assets: Option<&'a Path>,
    /// A kubeconfig the command connects with: read, and a client config built from it.
    pub kubeconfig: Option<&'a Path>,
    /// The command renders Services: the templates (embedded, or this override dir) must
    /// render for the cluster.
    pub renders: bool,
    pub templates: Option<&'a Path>,
    /// Registry and feature gates; the install-config's capabilities are resolved with them.
    pub registry: Option<&'a RegistryArgs>,
    /// `run` reads manifests/cvo-overrides.yaml.
    pub cvo_overrides: bool,
    /// Manifest dirs (`capabilities filter|upgrade`), read in full.
    pub manifest_dirs: Vec<&'a Path>,
    pub done_file: Option<&'a Path>,
    /// The state dir whose journal the command reads or writes: a corrupt journal stops it
    /// (exit 5) before the lock file is made or anything else happens.
    pub state_dir: Option<&'a Path>,
    /// The command takes the state dir's lock: the lock file must be one it can open (or
    /// absent), so that it does not stop once it has started.
    pub locks_state_dir: bool,
    /// `--skip-preflight` names (`run`, `preflight`): each must be a line of the cloud's
    /// checklist.
    pub skip_preflight: &'a [String],
}

/// Checks all of `inputs`: Err is every input problem found ([`InputErrors`], exit 2), else
/// a journal that cannot be read (`journal::CorruptJournal`, exit 5).
pub async fn check(inputs: &Inputs<'_>) -> anyhow::Result<()> {
    check_inputs(inputs).await?;
    if let Some(dir) = inputs.state_dir {
        crate::journal::read_state(dir)?;
    }
    Ok(())
}

/// Every input problem of `inputs`.
pub async fn check_inputs(inputs: &Inputs<'_>) -> Result<(), InputErrors> {
    let mut errors = inputs.options.to_vec();
    let gates = inputs.registry.and_then(|r| registry(r, &mut errors));
    let spec = inputs.assets.and_then(|dir| {
        assets::check(dir, &mut errors);
        // The loader's own checks (types, required fields, platform rules): every problem
        // it found, but those of a field this pass already named.
        match crate::assets::load_all(dir) {
            Ok(spec) => Some(spec),
            Err(found) => {
                for e in found {
                    add_unless_named(&mut errors, e);
                }
                None
            }
        }
    });
    if let Some(spec) = &spec {
        errors.extend(preflight_names::unknown_skips(
            &spec.platform,
            inputs.skip_preflight,
        ));
    }
    if let (Some(dir), Some(spec)) = (inputs.assets, &spec) {
        capabilities(dir, spec, gates.as_ref(), &mut errors);
        if inputs.cvo_overrides
            && let Err(e) = crate::capabilities::cluster_version::overrides_from_assets(dir)
        {
            errors.push(e);
        }
        if inputs.renders {
            templates(spec, inputs.templates, &mut errors);
        }
    }
    if let Some(path) = inputs.kubeconfig {
        kubeconfig(path, &mut errors).await;
    }
    for dir in &inputs.manifest_dirs {
        manifest_dir(dir, &mut errors);
    }
    if let Some(done) = inputs.done_file {
        done_file(done, &mut errors);
    }
    if inputs.locks_state_dir
        && let Some(dir) = inputs.state_dir
    {
        errors.extend(state_dir::lock_problem(dir));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(InputErrors { errors })
    }
}

fn add_unless_named(errors: &mut Vec<InputError>, e: InputError) {
    let named = errors
        .iter()
        .any(|seen| seen.file == e.file && (seen.field == e.field || seen.field == "(file)"));
    if !named {
        errors.push(e);
    }
}

fn registry(
    args: &RegistryArgs,
    errors: &mut Vec<InputError>,
) -> Option<(
    crate::capabilities::registry::Registry,
    crate::capabilities::selection::Gates,
)> {
    if let Some(gates) = &args.feature_gates
        && let Err(p) = options::feature_gates(gates)
    {
        errors.push(InputError::new(
            flag("feature-gates", "BOOTSTRAP_AGENT_FEATURE_GATES"),
            "feature gates",
            p,
        ));
    }
    if let Some(path) = &args.registry
        && let Err(e) = files::read_required(path, MAX_INPUT_BYTES)
    {
        errors.push(e);
        return None;
    }
    match args.load() {
        Ok(loaded) => Some(loaded),
        Err(e) => {
            match e.downcast::<InputError>() {
                Ok(mut e) if e.field == "--feature-set" => {
                    e.file = flag("feature-set", "BOOTSTRAP_AGENT_FEATURE_SET");
                    errors.push(e);
                }
                Ok(e) => errors.push(e),
                Err(other) => errors.push(InputError::new(
                    "(capability registry)",
                    "(document)",
                    format!("{other:#}"),
                )),
            }
            None
        }
    }
}

/// The install-config's capabilities against the registry: with the command's registry and
/// gates when it has them, else (`plan`, the stage commands) the embedded registry's set names,
/// so a baselineCapabilitySet no OpenShift knows is refused by every command.
fn capabilities(
    dir: &Path,
    spec: &ClusterSpec,
    gates: Option<&(
        crate::capabilities::registry::Registry,
        crate::capabilities::selection::Gates,
    )>,
    errors: &mut Vec<InputError>,
) {
    match gates {
        Some((registry, gates)) => {
            if let Err(e) = crate::capabilities::selection_for_spec(
                registry,
                gates,
                dir,
                spec.capabilities.as_ref(),
            ) {
                errors.push(e);
            }
        }
        None => {
            let Some(baseline) = spec.capabilities.as_ref().and_then(|c| c.baseline.as_ref())
            else {
                return;
            };
            let Ok(registry) = crate::capabilities::registry::Registry::load(None) else {
                return;
            };
            let names = registry.set_names();
            if !names.contains(baseline) {
                errors.push(InputError::new(
                    dir.join(crate::assets::CLUSTER_CONFIG),
                    format!(
                        "{}.baselineCapabilitySet",
                        crate::capabilities::selection::IC_FIELD
                    ),
                    format!(
                        "unknown capability set {baseline:?}; valid: {}",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
}

/// The templates render for this cluster. AWS subnets found at run time are stood in for by
/// the listed ones (or one of each role), so the check runs before EC2 is asked; `run`
/// checks again once the subnets are settled.
fn templates(spec: &ClusterSpec, templates: Option<&Path>, errors: &mut Vec<InputError>) {
    if let Some(dir) = templates
        && !dir.is_dir()
    {
        errors.push(InputError::new(
            dir,
            "(dir)",
            "templates dir does not exist or is not a directory (flag --templates, environment variable BOOTSTRAP_AGENT_TEMPLATES)",
        ));
        return;
    }
    let stand_in = stand_in_subnets(spec);
    if let Err(e) = templates_render(&stand_in, templates) {
        match e.downcast::<InputError>() {
            Ok(e) => errors.push(e),
            Err(other) => errors.push(InputError::new(
                templates.unwrap_or(Path::new("(embedded templates)")),
                "services",
                format!("{other:#}"),
            )),
        }
    }
}

/// Renders the templates with stand-in addresses and checks their annotations, so a broken
/// `--templates` dir stops `run` with exit 2 before anything is reserved or released.
pub fn templates_render(spec: &ClusterSpec, templates: Option<&Path>) -> anyhow::Result<()> {
    let source = templates.map_or_else(|| PathBuf::from("(embedded templates)"), Path::to_path_buf);
    let invalid =
        |e: anyhow::Error| crate::error::InputError::new(&source, "services", format!("{e:#}"));
    let stand_ins = crate::runner::stand_ins(spec, &crate::plan::Observed::default());
    let rendered = crate::render::services(spec, &stand_ins, templates).map_err(invalid)?;
    for r in &rendered {
        crate::cluster::apply::wants_delete(r.service.metadata.annotations.as_ref(), &r.template)
            .map_err(invalid)?;
    }
    Ok(())
}

fn stand_in_subnets(spec: &ClusterSpec) -> ClusterSpec {
    use crate::assets::{
        AwsSubnet, AwsSubnets, Classification, LookupKind, Platform, Source, SubnetRole,
    };
    let mut spec = spec.clone();
    if let Platform::Aws(aws) = &mut spec.platform
        && let AwsSubnets::Pending(lookup) = &aws.subnets
    {
        let ids: Vec<String> = match &lookup.how {
            LookupKind::Listed(listed) => listed.iter().map(|s| s.id.clone()).collect(),
            LookupKind::ClusterTag => vec!["subnet-00000000".to_string()],
        };
        let subnets = ids
            .iter()
            .flat_map(|id| {
                [SubnetRole::Public, SubnetRole::Private].map(|role| AwsSubnet {
                    id: id.clone(),
                    role,
                    source: Source::DefaultName {
                        rule: "stand-in for the template check".into(),
                    },
                    classified_by: Classification::Tag {
                        tag: "stand-in".into(),
                    },
                })
            })
            .collect();
        aws.subnets = AwsSubnets::Known {
            subnets,
            ignored: Vec::new(),
        };
    }
    spec
}

/// Read, and a client config built from it (no connection): an empty or context-less
/// kubeconfig is refused here, not after Reserve.
async fn kubeconfig(path: &Path, errors: &mut Vec<InputError>) {
    let named = |e: InputError| InputError {
        field: "(kubeconfig: flag --kubeconfig, environment variable BOOTSTRAP_AGENT_KUBECONFIG)"
            .to_string(),
        ..e
    };
    if let Err(e) = files::read_required(path, MAX_INPUT_BYTES) {
        errors.push(named(e));
        return;
    }
    let kc = match crate::cluster::read_kubeconfig(path) {
        Ok(kc) => kc,
        Err(e) => {
            errors.push(named(e));
            return;
        }
    };
    let options = kube::config::KubeConfigOptions::default();
    if let Err(e) = kube::Config::from_custom_kubeconfig(kc, &options).await {
        // kube's messages name contexts, clusters and files, never token or key bytes.
        errors.push(named(InputError::new(
            path,
            "",
            format!("cannot build a client config from it: {e}"),
        )));
    }
}

/// Every manifest a `capabilities` command would read: no link to nothing or in a loop
/// (which would be skipped, silently changing the output), none over the size bound.
fn manifest_dir(dir: &Path, errors: &mut Vec<InputError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(InputError::new(
                dir,
                "(dir)",
                format!("cannot read manifests dir: {e}"),
            ));
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if ![".yaml", ".yml", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            continue;
        }
        let path = entry.path();
        match files::stat(&path) {
            Err(e) => errors.push(e),
            Ok(files::Found::File(meta)) if meta.len() > MAX_MANIFEST_BYTES => {
                errors.push(InputError::new(
                    &path,
                    "(file)",
                    format!(
                        "is {} bytes, more than the {} MiB a manifest may have",
                        meta.len(),
                        MAX_MANIFEST_BYTES / (1024 * 1024)
                    ),
                ));
            }
            Ok(_) => {}
        }
    }
}

fn done_file(path: &Path, errors: &mut Vec<InputError>) {
    let file = flag("done-file", "BOOTSTRAP_AGENT_DONE_FILE");
    if path.file_name().is_none() {
        errors.push(InputError::new(
            file,
            path.display().to_string(),
            "expected a file path",
        ));
        return;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        errors.push(InputError::new(
            file,
            path.display().to_string(),
            format!(
                "its directory {} does not exist; expected a file in an existing directory",
                parent.display()
            ),
        ));
    }
}

#[cfg(test)]
mod tests;
