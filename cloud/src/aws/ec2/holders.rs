//! Who holds a reserved IP (the gate's proof that a load balancer took it): the interface
//! an Elastic IP is associated with, the interface that has a private IP, looked up in the
//! cluster's VPC only (a private IP is unique only within a VPC).

use super::Ec2Addresses;
use crate::aws::classify;
use crate::{CloudError, Holder};
use aws_sdk_ec2::types::{Address, Filter};
use std::collections::BTreeMap;
use std::net::IpAddr;

impl Ec2Addresses {
    pub(super) async fn find_holders(
        &self,
        ips: &[IpAddr],
    ) -> Result<BTreeMap<IpAddr, Holder>, CloudError> {
        let mut held = BTreeMap::new();
        if ips.is_empty() {
            return Ok(held);
        }
        let values: Vec<String> = ips.iter().map(IpAddr::to_string).collect();
        let vpc_filter = Filter::builder()
            .name("vpc-id")
            .set_values(Some(self.cluster_vpcs().await?))
            .build();
        let eips = self
            .client
            .describe_addresses()
            .filters(
                Filter::builder()
                    .name("public-ip")
                    .set_values(Some(values.clone()))
                    .build(),
            )
            .send()
            .await
            .map_err(|e| classify("DescribeAddresses", e))?;
        let behind_eips = interfaces_behind_eips(eips.addresses());
        let mut pages = self
            .client
            .describe_network_interfaces()
            .filters(
                Filter::builder()
                    .name("addresses.private-ip-address")
                    .set_values(Some(values))
                    .build(),
            )
            .filters(vpc_filter.clone())
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| classify("DescribeNetworkInterfaces", e))?;
            for n in page.network_interfaces() {
                let holder = Holder {
                    id: n.network_interface_id().unwrap_or_default().to_string(),
                    description: n.description().unwrap_or_default().to_string(),
                };
                for ip in n
                    .private_ip_addresses()
                    .iter()
                    .filter_map(|p| p.private_ip_address()?.parse::<IpAddr>().ok())
                    .filter(|ip| ips.contains(ip))
                {
                    held.insert(ip, holder.clone());
                }
            }
        }
        if !behind_eips.is_empty() {
            let out = self
                .client
                .describe_network_interfaces()
                .set_network_interface_ids(Some(behind_eips.keys().cloned().collect()))
                .filters(vpc_filter)
                .send()
                .await
                .map_err(|e| classify("DescribeNetworkInterfaces", e))?;
            for n in out.network_interfaces() {
                let id = n.network_interface_id().unwrap_or_default();
                if let Some(ip) = behind_eips.get(id) {
                    held.insert(
                        *ip,
                        Holder {
                            id: id.to_string(),
                            description: n.description().unwrap_or_default().to_string(),
                        },
                    );
                }
            }
        }
        Ok(held)
    }

    /// The VPC(s) of the cluster's subnets (one, as preflight checks), read once.
    async fn cluster_vpcs(&self) -> Result<Vec<String>, CloudError> {
        if let Some(vpcs) = self.vpcs.get() {
            return Ok(vpcs.clone());
        }
        if self.cluster_subnets.is_empty() {
            return Err(CloudError::fatal(
                "DescribeSubnets",
                "the cluster's subnets are not known, so neither is its VPC",
            ));
        }
        let out = self
            .client
            .describe_subnets()
            .set_subnet_ids(Some(self.cluster_subnets.clone()))
            .send()
            .await
            .map_err(|e| classify("DescribeSubnets", e))?;
        let mut vpcs: Vec<String> = out
            .subnets()
            .iter()
            .filter_map(|s| s.vpc_id().map(str::to_string))
            .collect();
        vpcs.sort();
        vpcs.dedup();
        if vpcs.is_empty() {
            return Err(CloudError::new(
                crate::ErrorKind::NotFound,
                "DescribeSubnets",
                format!(
                    "no VPC for the cluster's subnets {}",
                    self.cluster_subnets.join(", ")
                ),
            ));
        }
        Ok(self.vpcs.get_or_init(|| vpcs).clone())
    }
}

/// Interface id -> the EIP associated with it. An EIP not associated has no interface: EC2
/// omits the id, moto answers it empty; neither is ever asked for (DescribeNetworkInterfaces
/// with an empty id fails the whole lookup).
fn interfaces_behind_eips(addresses: &[Address]) -> BTreeMap<String, IpAddr> {
    addresses
        .iter()
        .filter_map(|a| {
            let ip = a.public_ip()?.parse().ok()?;
            let eni = a.network_interface_id().filter(|id| !id.is_empty())?;
            Some((eni.to_string(), ip))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eip_without_an_interface_is_never_looked_up_by_an_empty_id() {
        let eip = |ip: &str, eni: Option<&str>| {
            Address::builder()
                .public_ip(ip)
                .set_network_interface_id(eni.map(str::to_string))
                .build()
        };
        let found = interfaces_behind_eips(&[
            eip("198.51.100.1", Some("eni-1")),
            eip("198.51.100.2", Some("")),
            eip("198.51.100.3", None),
        ]);
        assert_eq!(
            found,
            BTreeMap::from([("eni-1".to_string(), "198.51.100.1".parse().unwrap())])
        );
    }
}
