//! `gen-feature-gates --api DIR --commit SHA`: writes `templates/feature-gates.yaml` from the
//! rendered FeatureGate objects of an openshift/api checkout at SHA
//! (`DIR/payload-manifests/featuregates/*.yaml`). The table is data the agent embeds; the
//! generator is `bootstrap_agent::capabilities::feature_gates::generate`.

use anyhow::{Context, Result, bail};
use bootstrap_agent::capabilities::feature_gates::{Source, generate};
use std::path::Path;

const RENDERED: &str = "payload-manifests/featuregates";
pub const TABLE: &str = "templates/feature-gates.yaml";

pub fn gen_feature_gates(root: &Path, api: &Path, commit: &str) -> Result<()> {
    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!(
            "--commit {commit:?}: expected the 40-hex-digit commit of the openshift/api checkout"
        );
    }
    let dir = api.join(RENDERED);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("listing {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.push((path.display().to_string(), text));
        }
    }
    if files.is_empty() {
        bail!("{} holds no rendered FeatureGate (*.yaml)", dir.display());
    }
    let source = Source {
        repository: "openshift/api".into(),
        commit: commit.to_string(),
        path: RENDERED.into(),
    };
    let text = generate(source, &files)?;
    let out = root.join(TABLE);
    std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} entries from {})",
        out.display(),
        files.len(),
        dir.display()
    );
    Ok(())
}
