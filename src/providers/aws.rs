//! AWS: EC2 (EIPs, ENIs) and Route53 from one SDK configuration, and the subnets the
//! install-config leaves to EC2.

use super::Providers;
use crate::assets::{AwsSpec, AwsSubnets, ClusterSpec, Credentials};
use anyhow::Result;
use bootstrap_cloud::aws;
use bootstrap_cloud::patient_dns::PatientDns;

/// The providers, and the spec's subnets settled: as given with roles, else found in EC2
/// (DescribeSubnets, and DescribeRouteTables for listed subnets without a role tag).
pub async fn providers(spec: &ClusterSpec, platform: &AwsSpec) -> Result<(Providers, AwsSubnets)> {
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
        public_ipv4_pool: platform.public_ipv4_pool.clone(),
    };
    let config = aws::load_config(&settings).await;
    // serviceEndpoints (install-config or Infrastructure manifest) per client.
    let endpoint = |service: &str| platform.service_endpoints.get(service).map(String::as_str);
    let route53_config = aws::with_endpoint(&config, endpoint("route53"));
    let ec2_config = aws::with_endpoint(&config, endpoint("ec2"));
    let sts_config = aws::with_endpoint(&config, endpoint("sts"));
    let mut addresses = aws::Ec2Addresses::new(&ec2_config, &settings);
    let subnets = match &platform.subnets {
        AwsSubnets::Known { .. } => platform.subnets.clone(),
        AwsSubnets::Pending(lookup) => {
            let found = addresses.find_subnets(&lookup.query()).await?;
            let subnets = lookup.resolve(&spec.infra_id, &platform.region, spec.publish, &found)?;
            tracing::info!(?subnets, "aws subnets settled");
            subnets
        }
    };
    if let AwsSubnets::Known { subnets: known, .. } = &subnets {
        let mut ids: Vec<String> = known.iter().map(|s| s.id.clone()).collect();
        ids.sort();
        ids.dedup();
        addresses.set_cluster_subnets(ids);
    }
    let dns = match &spec.zones.private_zone_role {
        Some(role) => {
            tracing::info!(
                role,
                "private zone records are written through sts:AssumeRole of the hosted zone role; the public zone with the cluster's credentials"
            );
            aws::Route53Dns::with_private_zone_role(&route53_config, &sts_config, role).await
        }
        None => aws::Route53Dns::new(&route53_config),
    };
    let providers = Providers {
        addresses: Box::new(addresses),
        dns: Box::new(PatientDns::new(dns)),
        preflight: Some(Box::new(aws::AwsPreflight::new(
            &ec2_config,
            &route53_config,
            &sts_config,
            &settings,
            spec.zones.private_zone_role.is_some(),
        ))),
    };
    Ok((providers, subnets))
}
