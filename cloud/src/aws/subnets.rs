//! Reads the subnets the install-config leaves to EC2: by id (the flat, role-less list) or by
//! the cluster tag (installer-made VPC), plus the route table of each listed subnet without a
//! role tag. Only Describe calls: finding subnets never changes anything.

use super::{classify, cluster_tag};
use crate::CloudError;
use crate::subnets::{RouteTableFacts, SubnetFacts, SubnetQuery};
use aws_sdk_ec2::Client;
use aws_sdk_ec2::types::{Filter, RouteTable, Subnet};
use std::collections::BTreeSet;

pub(super) async fn find(
    client: &Client,
    infra_id: &str,
    query: &SubnetQuery,
) -> Result<Vec<SubnetFacts>, CloudError> {
    // A `subnet-id` filter rather than SubnetIds: a missing id is then left out instead of
    // failing the whole call, and the agent can name the install-config entry that is wrong.
    let filter = match query {
        SubnetQuery::Ids(ids) => Filter::builder()
            .name("subnet-id")
            .set_values(Some(ids.clone()))
            .build(),
        SubnetQuery::ClusterTag => Filter::builder()
            .name(format!("tag:{}", cluster_tag(infra_id)))
            .values("owned")
            .values("shared")
            .build(),
    };
    let mut found = Vec::new();
    let mut pages = client
        .describe_subnets()
        .filters(filter)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify("DescribeSubnets", e))?;
        found.extend(page.subnets().iter().filter_map(facts));
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));

    // Only a listed subnet without a role tag is classified by its route table.
    if matches!(query, SubnetQuery::Ids(_)) {
        let vpcs: BTreeSet<&str> = found
            .iter()
            .filter(|s| !s.has_role_tag())
            .map(|s| s.vpc.as_str())
            .collect();
        if !vpcs.is_empty() {
            let tables = route_tables(client, &vpcs).await?;
            for subnet in found.iter_mut().filter(|s| !s.has_role_tag()) {
                subnet.route_table = route_table_for(&subnet.id, &subnet.vpc, &tables);
            }
        }
    }
    Ok(found)
}

fn facts(subnet: &Subnet) -> Option<SubnetFacts> {
    Some(SubnetFacts {
        id: subnet.subnet_id()?.to_string(),
        vpc: subnet.vpc_id().unwrap_or_default().to_string(),
        zone: subnet.availability_zone().unwrap_or_default().to_string(),
        tags: subnet
            .tags()
            .iter()
            .filter_map(|t| {
                Some((
                    t.key()?.to_string(),
                    t.value().unwrap_or_default().to_string(),
                ))
            })
            .collect(),
        route_table: None,
    })
}

async fn route_tables(
    client: &Client,
    vpcs: &BTreeSet<&str>,
) -> Result<Vec<RouteTable>, CloudError> {
    let mut tables = Vec::new();
    let mut pages = client
        .describe_route_tables()
        .filters(
            Filter::builder()
                .name("vpc-id")
                .set_values(Some(vpcs.iter().map(|v| v.to_string()).collect()))
                .build(),
        )
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify("DescribeRouteTables", e))?;
        tables.extend(page.route_tables().iter().cloned());
    }
    Ok(tables)
}

/// The table that routes a subnet: its explicit association, else its VPC's main table. This
/// is the installer's rule (and the AWS cloud provider's) for telling public from private.
fn route_table_for(subnet: &str, vpc: &str, tables: &[RouteTable]) -> Option<RouteTableFacts> {
    let explicit = tables.iter().find(|t| {
        t.associations()
            .iter()
            .any(|a| a.subnet_id() == Some(subnet))
    });
    let (table, main) = match explicit {
        Some(t) => (t, false),
        None => (
            tables.iter().find(|t| {
                t.vpc_id() == Some(vpc) && t.associations().iter().any(|a| a.main() == Some(true))
            })?,
            true,
        ),
    };
    Some(RouteTableFacts {
        id: table.route_table_id()?.to_string(),
        main,
        internet_gateway: table
            .routes()
            .iter()
            .filter(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
            .find_map(|r| r.gateway_id().filter(|g| g.starts_with("igw-")))
            .map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{Route, RouteTableAssociation};

    fn table(
        id: &str,
        vpc: &str,
        main: bool,
        subnets: &[&str],
        routes: &[(&str, &str)],
    ) -> RouteTable {
        let mut t = RouteTable::builder().route_table_id(id).vpc_id(vpc);
        if main {
            t = t.associations(RouteTableAssociation::builder().main(true).build());
        }
        for s in subnets {
            t = t.associations(
                RouteTableAssociation::builder()
                    .main(false)
                    .subnet_id(*s)
                    .build(),
            );
        }
        for (cidr, gateway) in routes {
            t = t.routes(
                Route::builder()
                    .destination_cidr_block(*cidr)
                    .gateway_id(*gateway)
                    .build(),
            );
        }
        t.build()
    }

    fn tables() -> Vec<RouteTable> {
        vec![
            table("rtb-main", "vpc-1", true, &[], &[("10.0.0.0/16", "local")]),
            table(
                "rtb-public",
                "vpc-1",
                false,
                &["subnet-pub"],
                &[("10.0.0.0/16", "local"), ("0.0.0.0/0", "igw-1")],
            ),
            table(
                "rtb-vgw",
                "vpc-1",
                false,
                &["subnet-vpn"],
                &[("0.0.0.0/0", "vgw-1"), ("192.0.2.0/24", "igw-1")],
            ),
            table(
                "rtb-other-main",
                "vpc-2",
                true,
                &[],
                &[("0.0.0.0/0", "igw-2")],
            ),
        ]
    }

    #[test]
    fn an_explicit_association_with_a_default_route_to_an_igw_is_public() {
        let rt = route_table_for("subnet-pub", "vpc-1", &tables()).unwrap();
        assert_eq!(
            rt,
            RouteTableFacts {
                id: "rtb-public".into(),
                main: false,
                internet_gateway: Some("igw-1".into())
            }
        );
    }

    #[test]
    fn without_an_explicit_association_the_vpcs_main_table_applies() {
        let rt = route_table_for("subnet-x", "vpc-1", &tables()).unwrap();
        assert_eq!((rt.id.as_str(), rt.main), ("rtb-main", true));
        assert_eq!(rt.internet_gateway, None);
        // Another VPC's main table never applies.
        let rt = route_table_for("subnet-y", "vpc-2", &tables()).unwrap();
        assert_eq!(rt.id, "rtb-other-main");
        assert_eq!(rt.internet_gateway.as_deref(), Some("igw-2"));
    }

    #[test]
    fn only_the_default_route_to_an_igw_counts() {
        // 0.0.0.0/0 goes to a VPN gateway; an igw route for another prefix is not a way out.
        let rt = route_table_for("subnet-vpn", "vpc-1", &tables()).unwrap();
        assert_eq!(rt.internet_gateway, None);
    }

    #[test]
    fn no_association_and_no_main_table_gives_none() {
        assert_eq!(route_table_for("subnet-z", "vpc-3", &tables()), None);
    }
}
