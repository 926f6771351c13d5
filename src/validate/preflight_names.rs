//! The names of the preflight checklist's lines per cloud, known before anything runs:
//! `--skip-preflight` names are checked in the one validation pass, with every other input,
//! instead of after the lock and the cloud's reads. `preflight` uses the same list.

use crate::assets::Platform;
use bootstrap_cloud::preflight::{AWS_CHECKS, AZURE_CHECKS, GCP_CHECKS, SHARED_CHECKS as SHARED};
/// The lines a kubeconfig adds.
const KUBE: &[&str] = &[
    "kube-api",
    "kube-services-apply",
    "kube-clusterversion-write",
];

/// Every line the checklist may show on `platform` (some only when they apply: a kubeconfig,
/// an AWS public IPv4 pool).
pub fn check_names(platform: &Platform) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = match platform {
        Platform::Aws(_) => [AWS_CHECKS, SHARED, KUBE, &["aws-lb-controller"]].concat(),
        Platform::Gcp(_) => [GCP_CHECKS, SHARED, KUBE].concat(),
        Platform::Azure(_) => [AZURE_CHECKS, SHARED, KUBE].concat(),
        Platform::None => [&["cloud", "bootstrap-ip"], KUBE].concat(),
    };
    names.dedup();
    names
}

/// `--skip-preflight` names that are no line of `platform`'s checklist, each as an input
/// error naming the flag, its variable and the valid names.
pub fn unknown_skips(platform: &Platform, skips: &[String]) -> Vec<crate::error::InputError> {
    let known = check_names(platform);
    skips
        .iter()
        .filter(|name| !known.contains(&name.as_str()))
        .map(|name| unknown(platform.name(), name, &known))
        .collect()
}

pub fn unknown(cloud: &str, name: &str, known: &[&str]) -> crate::error::InputError {
    crate::error::InputError::new(
        super::flag("skip-preflight", "BOOTSTRAP_AGENT_SKIP_PREFLIGHT"),
        format!("check name {name:?}"),
        format!(
            "no such preflight check on {cloud}; expected one of {}",
            known.join(", ")
        ),
    )
}
