//! The command line of `bootstrap-sim real-ccm`.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;

pub const USAGE: &str = "usage: bootstrap-sim real-ccm gcp|azure (--ccm PATH | --simulated) \
                         [--kubeconfig FILE [--least-privilege]] [--upi] [--output json|text]";

/// Where each cloud's CCM comes from (the user builds it; nothing here does).
fn source(cloud: &str) -> &'static str {
    match cloud {
        "gcp" => {
            "build ./cmd/cloud-controller-manager of github.com/openshift/cloud-provider-gcp \
             at commit 30cc04797f50e78e91f8e47cc6c36c0da84eee2c (or later) and pass its path"
        }
        _ => {
            "build ./cmd/cloud-controller-manager of github.com/openshift/cloud-provider-azure \
             at commit d04449b95a54a9f41669d701ed63153575cced1e (or later) and pass its path"
        }
    }
}

/// `real-ccm`'s arguments, checked.
#[derive(Debug, PartialEq)]
pub struct Args {
    pub cloud: String,
    /// The CCM binary (None: `--simulated`, the local API server's controller builds).
    pub ccm: Option<PathBuf>,
    /// A real kube-apiserver's kubeconfig (None: the local API server).
    pub kubeconfig: Option<PathBuf>,
    /// The user makes the addresses before the install and the agent adopts them (UPI).
    pub upi: bool,
    /// With `kubeconfig`: the agent holds only its documented ClusterRole.
    pub least_privilege: bool,
    pub json: bool,
}

impl Args {
    pub fn parse(args: &[&str]) -> Result<Self> {
        let Some((cloud, mut rest)) = args.split_first() else {
            bail!("{USAGE}");
        };
        if !matches!(*cloud, "gcp" | "azure") {
            bail!("unknown cloud {cloud:?}: expected gcp or azure\n{USAGE}");
        }
        let (mut ccm, mut kubeconfig, mut json) = (None, None, true);
        let (mut simulated, mut upi, mut least_privilege) = (false, false, false);
        while let Some((flag, tail)) = rest.split_first() {
            let switch = match *flag {
                "--simulated" => Some(&mut simulated),
                "--upi" => Some(&mut upi),
                "--least-privilege" => Some(&mut least_privilege),
                _ => None,
            };
            if let Some(switch) = switch {
                *switch = true;
                rest = tail;
                continue;
            }
            let value = || {
                tail.first()
                    .with_context(|| format!("{flag} needs a value\n{USAGE}"))
            };
            match *flag {
                "--ccm" => ccm = Some(PathBuf::from(value()?)),
                "--kubeconfig" => kubeconfig = Some(PathBuf::from(value()?)),
                "--output" => {
                    json = match *value()? {
                        "json" => true,
                        "text" => false,
                        other => bail!("--output: expected json or text, found {other:?}"),
                    }
                }
                other => bail!("unknown option {other:?}\n{USAGE}"),
            }
            rest = &tail[1..];
        }
        match (&ccm, simulated) {
            (None, false) => bail!("--ccm PATH is required: {}\n{USAGE}", source(cloud)),
            (Some(_), true) => bail!("--ccm and --simulated exclude each other\n{USAGE}"),
            _ if least_privilege && kubeconfig.is_none() => bail!(
                "--least-privilege needs --kubeconfig: the agent's ServiceAccount token comes \
                 from a real kube-apiserver\n{USAGE}"
            ),
            (None, true) if kubeconfig.is_some() => bail!(
                "--kubeconfig needs --ccm: only the local API server has a simulated \
                 load-balancer controller\n{USAGE}"
            ),
            _ => {}
        }
        Ok(Self {
            cloud: cloud.to_string(),
            ccm,
            kubeconfig,
            upi,
            least_privilege,
            json,
        })
    }

    /// Why the named CCM binary cannot be run (with where to get it), if it cannot.
    pub fn missing_ccm(&self) -> Option<String> {
        let ccm = self.ccm.as_ref()?;
        (!ccm.is_file()).then(|| {
            format!(
                "--ccm {}: no such file; {}",
                ccm.display(),
                source(&self.cloud)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_option_of_both_clouds() {
        let a = Args::parse(&["gcp", "--ccm", "/x/ccm", "--output", "text"]).unwrap();
        assert_eq!(
            a,
            Args {
                cloud: "gcp".into(),
                ccm: Some("/x/ccm".into()),
                kubeconfig: None,
                upi: false,
                least_privilege: false,
                json: false,
            }
        );
        let a = Args::parse(&["azure", "--simulated"]).unwrap();
        assert_eq!((a.ccm, a.json, a.upi), (None, true, false));
        let a = Args::parse(&["gcp", "--upi", "--ccm", "c", "--kubeconfig", "/k"]).unwrap();
        assert_eq!(
            (a.upi, a.kubeconfig, a.ccm, a.least_privilege),
            (true, Some("/k".into()), Some("c".into()), false)
        );
        let a = Args::parse(&[
            "azure",
            "--ccm",
            "c",
            "--kubeconfig",
            "/k",
            "--least-privilege",
        ]);
        assert!(a.unwrap().least_privilege);
    }

    #[test]
    fn refuses_a_bad_command_line_with_the_reason() {
        let err = |args: &[&str]| format!("{:#}", Args::parse(args).unwrap_err());
        assert!(err(&["aws", "--ccm", "x"]).contains("unknown cloud \"aws\""));
        assert!(err(&["gcp"]).contains("cloud-provider-gcp"));
        assert!(err(&["azure"]).contains("cloud-provider-azure"));
        assert!(err(&["gcp", "--ccm"]).contains("--ccm needs a value"));
        assert!(err(&["gcp", "--ccm", "x", "--simulated"]).contains("exclude each other"));
        assert!(err(&["gcp", "--ccm", "x", "--output", "yaml"]).contains("\"yaml\""));
        assert!(err(&["gcp", "--ccm", "x", "--upi-please"]).contains("unknown option"));
        assert!(err(&["gcp", "--ccm", "x", "--kubeconfig"]).contains("needs a value"));
        assert!(err(&["gcp", "--simulated", "--kubeconfig", "k"]).contains("needs --ccm"));
        assert!(err(&["gcp", "--ccm", "x", "--least-privilege"]).contains("needs --kubeconfig"));
    }

    #[test]
    fn a_missing_ccm_binary_says_where_to_build_it() {
        let a = Args::parse(&["gcp", "--ccm", "/nonexistent/gcp-ccm"]).unwrap();
        let why = a.missing_ccm().unwrap();
        assert!(why.contains("/nonexistent/gcp-ccm: no such file"), "{why}");
        assert!(why.contains("openshift/cloud-provider-gcp"), "{why}");
        let here = std::env::current_exe().unwrap();
        let a = Args::parse(&["azure", "--ccm", here.to_str().unwrap()]).unwrap();
        assert_eq!(a.missing_ccm(), None);
    }
}
