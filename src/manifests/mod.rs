//! `bootstrap-agent manifests`: manifests an installer adds to its asset dir's `openshift/`
//! so that the cluster brings what the agent relies on. Today one: the AWS Load Balancer
//! Controller, through OLM and OpenShift's aws-load-balancer-operator (`albc`), which the
//! hand-over on AWS waits for (`cluster::lb_controller`) and which is not in the release
//! payload.
//!
//! Printed as one multi-document YAML stream (what `oc apply -f -` and a reader take), or with
//! `--dir` one file per document, named and ordered as the installer's own manifests
//! (`99_<namespace>_<nn>_<kind>.yaml`), each written atomically.

pub mod albc;

use crate::error::InputError;
use crate::options;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub enum ManifestsCommand {
    /// Namespace, OperatorGroup, Subscription and the AWSLoadBalancerController `cluster`:
    /// OLM installs OpenShift's aws-load-balancer-operator, which runs the AWS Load Balancer
    /// Controller the hand-over waits for. Credentials: minted by the cloud-credential
    /// operator from the operator's own CredentialsRequests, or with --sts-operator-role-arn
    /// and --sts-controller-role-arn the roles of an STS (manual mode) install.
    AwsLoadBalancerController(AlbcArgs),
}

/// `manifests aws-load-balancer-controller` arguments.
#[derive(Debug, clap::Args)]
pub struct AlbcArgs {
    /// Write one file per document into this directory (the installer's `openshift/`),
    /// instead of a YAML stream on stdout.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The OLM channel of the aws-load-balancer-operator package.
    #[arg(long, default_value = albc::DEFAULT_CHANNEL,
          value_parser = options::checked(albc::channel, String::new()))]
    pub channel: String,
    /// The CatalogSource serving the package (a disconnected install: the mirrored catalog's,
    /// e.g. the one oc-mirror wrote).
    #[arg(long, default_value = albc::DEFAULT_SOURCE,
          value_parser = options::checked(albc::catalog_source, String::new()))]
    pub source: String,
    /// The CatalogSource's namespace.
    #[arg(long, default_value = albc::DEFAULT_SOURCE_NAMESPACE,
          value_parser = options::checked(albc::namespace, String::new()))]
    pub source_namespace: String,
    /// spec.subnetTagging. manual: the operator writes no tags on the subnets (the agent's
    /// Services name their subnets); auto: it tags every untagged cluster subnet as public.
    #[arg(long, default_value = "manual",
          value_parser = options::one_of(albc::SubnetTagging::Manual))]
    pub subnet_tagging: albc::SubnetTagging,
    /// STS: the IAM role of the operator itself (Subscription config.env ROLEARN).
    #[arg(long, requires = "sts_controller_role_arn",
          value_parser = options::checked(albc::role_arn, String::new()))]
    pub sts_operator_role_arn: Option<String>,
    /// STS: the IAM role of the controller (spec.credentialsRequestConfig.stsIAMRoleARN).
    #[arg(long, requires = "sts_operator_role_arn",
          value_parser = options::checked(albc::role_arn, String::new()))]
    pub sts_controller_role_arn: Option<String>,
}

impl AlbcArgs {
    pub fn choices(&self) -> albc::Choices {
        albc::Choices {
            channel: self.channel.clone(),
            source: self.source.clone(),
            source_namespace: self.source_namespace.clone(),
            subnet_tagging: self.subnet_tagging,
            sts: match (&self.sts_operator_role_arn, &self.sts_controller_role_arn) {
                (Some(operator), Some(controller)) => Some(albc::StsRoles {
                    operator: operator.clone(),
                    controller: controller.clone(),
                }),
                _ => None,
            },
        }
    }
}

/// The handler.
pub fn command(command: &ManifestsCommand) -> Result<()> {
    match command {
        ManifestsCommand::AwsLoadBalancerController(args) => {
            let docs = albc::documents(&args.choices());
            match &args.dir {
                Some(dir) => write_dir(dir, &docs),
                None => crate::output::write_stdout(&stream(&docs)?),
            }
        }
    }
}

/// PURE: the documents as one YAML stream, `---` before each.
pub fn stream(docs: &[albc::Manifest]) -> Result<String> {
    let mut out = String::new();
    for d in docs {
        out.push_str("---\n");
        out.push_str(&yaml(d)?);
    }
    Ok(out)
}

fn yaml(d: &albc::Manifest) -> Result<String> {
    serde_saphyr::to_string(&d.object).with_context(|| format!("cannot encode {}", d.file))
}

/// Every file, each atomically; the directory must exist (the installer made it), so a typo
/// does not scatter manifests where no installer looks.
fn write_dir(dir: &Path, docs: &[albc::Manifest]) -> Result<()> {
    if !dir.is_dir() {
        return Err(InputError::new(
            "--dir (no environment variable)",
            dir.display().to_string(),
            "no such directory; expected the installer's openshift/ dir (run `openshift-install create manifests` first)",
        )
        .into());
    }
    for d in docs {
        crate::journal::write_atomically(dir, &d.file, yaml(d)?.as_bytes())?;
        println!("{}", dir.join(&d.file).display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_holds_every_document_and_reads_back_as_written() {
        let docs = albc::documents(&albc::Choices::default());
        let text = stream(&docs).unwrap();
        assert_eq!(text.matches("---\n").count(), 4);
        let parsed: Vec<serde_json::Value> = text
            .split("---\n")
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_saphyr::from_str(d).unwrap())
            .collect();
        let objects: Vec<serde_json::Value> = docs.into_iter().map(|d| d.object).collect();
        assert_eq!(parsed, objects);
    }

    #[test]
    fn dir_writes_one_file_per_document_and_refuses_a_missing_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let docs = albc::documents(&albc::Choices::default());
        write_dir(tmp.path(), &docs).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let wanted: Vec<String> = docs.iter().map(|d| d.file.clone()).collect();
        assert_eq!(names, wanted, "no temp file left behind");
        let missing = tmp.path().join("openshfit");
        let err = write_dir(&missing, &docs).unwrap_err();
        assert_eq!(crate::exit::code(&err), crate::exit::INVALID_INPUT);
        assert!(err.to_string().contains("--dir"), "{err}");
    }
}
