//! AWS: EC2 (EIPs, ENIs) and Route53 from one SDK configuration.

use super::Providers;
use crate::assets::{AwsSpec, ClusterSpec, Credentials};
use anyhow::Result;
use bootstrap_cloud::aws;

pub async fn providers(spec: &ClusterSpec, platform: &AwsSpec) -> Result<Providers> {
    let settings = aws::AwsSettings {
        region: platform.region.clone(),
        infra_id: spec.infra_id.clone(),
        keys: match &spec.credentials {
            Credentials::AwsKeys {
                access_key_id,
                secret_access_key,
            } => Some(aws::StaticKeys {
                access_key_id: access_key_id.clone(),
                secret_access_key: secret_access_key.clone(),
            }),
            _ => None,
        },
    };
    let config = aws::load_config(&settings).await;
    Ok(Providers {
        addresses: Box::new(aws::Ec2Addresses::new(&config, &settings)),
        dns: Box::new(aws::Route53Dns::new(&config)),
    })
}
