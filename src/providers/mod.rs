//! One `match` picks the cloud (afterburn's shape).

#[cfg(feature = "aws")]
mod aws;
#[cfg(feature = "azure")]
mod azure;
#[cfg(feature = "gcp")]
mod gcp;
mod none;

pub use none::NoCloud;

use crate::assets::{ClusterSpec, Platform};
use anyhow::{Result, bail};
use bootstrap_cloud::{AddressProvider, DnsProvider};

pub struct Providers {
    pub addresses: Box<dyn AddressProvider>,
    pub dns: Box<dyn DnsProvider>,
    /// The cloud's own preflight checks (None: this cloud has none yet; `preflight` says so).
    pub preflight: Option<Box<dyn bootstrap_cloud::preflight::Preflight>>,
}

impl Providers {
    /// No cloud: nothing exists, nothing may be written (platform none, `plan --offline`).
    pub fn none() -> Self {
        Self {
            addresses: Box::new(none::NoCloud),
            dns: Box::new(none::NoCloud),
            preflight: None,
        }
    }
}

/// The providers for the spec's platform (platform none: `Providers::none()`).
/// Settles first what the install-config leaves to the cloud (AWS subnets found by tag or
/// classified by route table), so everything planned afterwards works from a complete spec.
/// Finding them only reads.
pub async fn for_spec(spec: &mut ClusterSpec) -> Result<Providers> {
    match &spec.platform {
        Platform::None => Ok(Providers::none()),
        #[cfg(feature = "aws")]
        Platform::Aws(aws) => {
            let (providers, subnets) = aws::providers(spec, aws).await?;
            if let Platform::Aws(aws) = &mut spec.platform {
                aws.subnets = subnets;
            }
            Ok(providers)
        }
        #[cfg(feature = "gcp")]
        Platform::Gcp(gcp) => gcp::providers(spec, gcp).await,
        #[cfg(feature = "azure")]
        Platform::Azure(azure) => azure::providers(spec, azure).await,
        // Reachable only in builds without some cloud feature.
        #[allow(unreachable_patterns)]
        other => bail!(
            "platform {}: this binary has no {} provider (build with --features {}); `plan --offline` works without one",
            other.name(),
            other.name(),
            other.name()
        ),
    }
}
