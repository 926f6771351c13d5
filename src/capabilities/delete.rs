//! `release.openshift.io/delete: "true"`: at install such objects are simply not created; on
//! an update the agent deletes them in the payload's normal order, the CVO's
//! `0000_<runlevel>_<component>_<file>` order (run level, then file name, documents in file
//! order), then verifies each is gone. The seed (object-removal-manifest-annotation): "The
//! existing CVO ordering scheme defined here will also be used for object removal"; ordering
//! deletions is up to whoever names the manifests. Objects it deleted
//! are remembered in the state dir, and one that comes back is reported with a warning (and
//! deleted again, since the manifest still asks for it).

use super::inclusion::Decision;
use super::manifests::{ObjectId, Payload, run_level};
use anyhow::{Context, Result};
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, GroupVersionKind};
use kube::discovery::{self, Scope};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where deleted objects are remembered, inside the state dir.
pub const RECORD_FILE: &str = "deleted-objects.json";

/// One object to delete, in deletion order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub source: String,
    #[serde(rename = "runLevel", skip_serializing_if = "Option::is_none")]
    pub run_level: Option<u32>,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl Target {
    fn id(&self) -> ObjectId {
        ObjectId {
            group: self.group.clone(),
            version: self.version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

impl Target {
    /// (file name, document index) from `source` (`<file>#<doc>`).
    fn source_order(&self) -> (String, usize) {
        match self.source.rsplit_once('#') {
            Some((file, doc)) => (file.to_string(), doc.parse().unwrap_or(0)),
            None => (self.source.clone(), 0),
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.id(), self.source)
    }
}

/// PURE: the objects decided `Delete`, in the CVO's order: files by name (run-level order for
/// CVO names), documents in file order.
pub fn targets(payload: &Payload, decisions: &[Decision]) -> Vec<Target> {
    let mut out: Vec<Target> = payload
        .manifests
        .iter()
        .zip(decisions)
        .filter(|(_, d)| **d == Decision::Delete)
        .map(|(m, _)| Target {
            source: payload.source(m),
            run_level: run_level(&payload.files[m.file].name).map(|(l, _)| l),
            group: m.id.group.clone(),
            version: m.id.version.clone(),
            kind: m.id.kind.clone(),
            namespace: m.id.namespace.clone(),
            name: m.id.name.clone(),
        })
        .collect();
    // Payload files are read sorted by name; sort again so the order never depends on that.
    out.sort_by_key(|t| t.source_order());
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Delete requested and the object is gone.
    Verified,
    /// Delete requested; the object still exists (finalizers). The next run checks again.
    Requested,
    /// Nothing to do: the object does not exist.
    AlreadyAbsent,
}

#[derive(Debug, Clone, Serialize)]
pub struct Deleted {
    pub target: Target,
    pub outcome: Outcome,
    /// The object had been deleted by an earlier run and came back.
    pub reappeared: bool,
}

fn read_record(state_dir: &Path) -> Result<Vec<Target>> {
    match std::fs::read(state_dir.join(RECORD_FILE)) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not valid", state_dir.join(RECORD_FILE).display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {RECORD_FILE}")),
    }
}

/// Deletes `targets` in order, verifying each, and records them in `state_dir`.
pub async fn execute(
    client: &kube::Client,
    targets: &[Target],
    state_dir: &Path,
) -> Result<Vec<Deleted>> {
    let mut record = read_record(state_dir)?;
    std::fs::create_dir_all(state_dir)
        .with_context(|| format!("cannot create {}", state_dir.display()))?;
    let mut out = Vec::new();
    for t in targets {
        let gvk = GroupVersionKind::gvk(&t.group, &t.version, &t.kind);
        let (ar, caps) = discovery::pinned_kind(client, &gvk)
            .await
            .with_context(|| format!("cannot resolve the API of {t}"))?;
        let api: Api<DynamicObject> = match caps.scope {
            Scope::Namespaced => Api::namespaced_with(client.clone(), &t.namespace, &ar),
            Scope::Cluster => Api::all_with(client.clone(), &ar),
        };
        let live = api
            .get_opt(&t.name)
            .await
            .with_context(|| format!("cannot read {t}"))?;
        let was_deleted = record.contains(t);
        let Some(live) = live else {
            out.push(Deleted {
                target: t.clone(),
                outcome: Outcome::AlreadyAbsent,
                reappeared: false,
            });
            continue;
        };
        let reappeared = was_deleted && live.metadata.deletion_timestamp.is_none();
        if reappeared {
            tracing::warn!(object = %t, "an object deleted earlier has reappeared; deleting it again");
        }
        if live.metadata.deletion_timestamp.is_none() {
            match api.delete(&t.name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e).with_context(|| format!("cannot delete {t}")),
            }
            tracing::info!(object = %t, "delete requested");
        }
        if !was_deleted {
            record.push(t.clone());
            crate::journal::write_atomically(
                state_dir,
                RECORD_FILE,
                serde_json::to_string_pretty(&record)?.as_bytes(),
            )?;
        }
        let gone = api
            .get_opt(&t.name)
            .await
            .with_context(|| format!("cannot verify the deletion of {t}"))?
            .is_none();
        out.push(Deleted {
            target: t.clone(),
            outcome: if gone {
                Outcome::Verified
            } else {
                Outcome::Requested
            },
            reappeared,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::manifests::{ManifestFile, from_files};

    #[test]
    fn deletions_run_in_the_cvo_order_run_level_then_file_then_document() {
        let doc = |n: &str| {
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n  namespace: x\n")
        };
        // Given out of order on purpose: the order must not depend on how files were listed.
        let files = vec![
            ManifestFile {
                name: "0000_50_b_00.yaml".into(),
                text: doc("b"),
            },
            ManifestFile {
                name: "0000_10_a_00.yaml".into(),
                text: format!("{}---\n{}---\n{}", doc("a0"), doc("kept"), doc("a2")),
            },
        ];
        let p = from_files(Path::new("m"), files);
        let mut d = vec![Decision::Delete; p.manifests.len()];
        let kept = p
            .manifests
            .iter()
            .position(|m| m.id.name == "kept")
            .unwrap();
        d[kept] = Decision::Include;
        let t = targets(&p, &d);
        assert_eq!(
            t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["a0", "a2", "b"]
        );
        assert_eq!(t[0].run_level, Some(10));
        assert_eq!(t[2].run_level, Some(50));
        assert_eq!(t[1].source, "0000_10_a_00.yaml#2");
    }
}
