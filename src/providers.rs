//! One `match` picks the cloud (afterburn's shape).

use crate::assets::{ClusterSpec, Platform};
use anyhow::{Result, bail};
use bootstrap_cloud::{AddressProvider, DnsProvider};

pub struct Providers {
    pub addresses: Box<dyn AddressProvider>,
    pub dns: Box<dyn DnsProvider>,
}

/// The providers for the spec's platform; None for platform none (nothing to reserve or write).
pub async fn for_spec(spec: &ClusterSpec) -> Result<Option<Providers>> {
    match &spec.platform {
        Platform::None => Ok(None),
        #[cfg(feature = "aws")]
        Platform::Aws(aws) => {
            use bootstrap_cloud::aws;
            let settings = aws::AwsSettings {
                region: aws.region.clone(),
                infra_id: spec.infra_id.clone(),
                keys: match &spec.credentials {
                    crate::assets::Credentials::AwsKeys {
                        access_key_id,
                        secret_access_key,
                    } => Some(aws::StaticKeys {
                        access_key_id: access_key_id.clone(),
                        secret_access_key: secret_access_key.clone(),
                    }),
                    crate::assets::Credentials::Environment => None,
                },
            };
            let config = aws::load_config(&settings).await;
            Ok(Some(Providers {
                addresses: Box::new(aws::Ec2Addresses::new(&config, &settings)),
                dns: Box::new(aws::Route53Dns::new(&config)),
            }))
        }
        other => bail!(
            "platform {}: this binary has no {} provider (build with --features {}); `plan --offline` works without one",
            other.name(),
            other.name(),
            other.name()
        ),
    }
}
