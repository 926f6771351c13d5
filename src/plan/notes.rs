//! The facts a person should know when reading a plan (what a platform does not do, where a
//! value came from).

use crate::assets::ClusterSpec;
use bootstrap_cloud::ZoneRef;

/// Where each zone named by id or tags came from (a zone found by domain and visibility says
/// nothing). The public zone only matters when the API is public.
fn zone_notes(spec: &ClusterSpec) -> Vec<String> {
    let zones = &spec.zones;
    let mut notes = Vec::new();
    let mut note = |zone: &ZoneRef, source: &Option<String>| {
        let Some(source) = source else { return };
        let which = match (&zone.id, zone.tags.is_empty()) {
            (Some(id), _) => id.clone(),
            (None, false) => {
                let tags: Vec<String> = zone.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("the one tagged {}", tags.join(", "))
            }
            (None, true) => return,
        };
        notes.push(format!("dns: {zone} is {which} ({source})"));
    };
    note(&zones.private, &zones.private_source);
    if spec.publish.public_api() {
        note(&zones.public, &zones.public_source);
    }
    if let Some(role) = &zones.private_zone_role {
        notes.push(format!(
            "aws: the private zone is another account's: its records are written through sts:AssumeRole of {role}; the public zone with the cluster's own credentials"
        ));
    }
    notes
}

/// Which endpoints a cloud other than public Azure means (public Azure says nothing).
fn azure_cloud_note(azure: &crate::assets::AzureSpec, base_domain: &str) -> Option<String> {
    use bootstrap_cloud::azure_cloud::AzureCloud;
    match (&azure.cloud, azure.cloud.known_endpoints()) {
        (AzureCloud::AzurePublicCloud, _) => None,
        (AzureCloud::AzureStackCloud { arm_endpoint }, _) => Some(format!(
            "azure: cloud AzureStackCloud: ARM {arm_endpoint}, its authority and token audience from {arm_endpoint}metadata/endpoints; no private DNS there: api-int (and api when the API is internal) go into the base-domain zone {base_domain}"
        )),
        (cloud, Some(e)) => Some(format!(
            "azure: cloud {}: ARM {}, authority {}, token scope {}",
            cloud.name(),
            e.resource_manager,
            e.authority_host,
            e.scope()
        )),
        (cloud, None) => Some(format!("azure: cloud {}", cloud.name())),
    }
}

pub(super) fn notes(spec: &ClusterSpec) -> Vec<String> {
    use crate::assets::Platform;
    let mut notes = Vec::new();
    match &spec.platform {
        Platform::None => notes.push(
            "platform none: load balancers and DNS are user-provisioned; nothing to reserve or write".into(),
        ),
        Platform::Aws(_) if spec.ip_families.len() > 1 => notes.push(
            "aws dual stack: EIPs and NLB private addresses are IPv4; no IPv6 is reserved and no AAAA record is seeded".into(),
        ),
        Platform::Gcp(gcp) => {
            notes.push(format!(
                "gcp: the internal address comes from the compute subnetwork {}, where the cloud provider creates internal forwarding rules",
                gcp.compute_subnetwork_url()
            ));
            if let Some(host) = &gcp.network_project {
                notes.push(format!(
                    "gcp shared VPC: the subnetworks are the host project {host}'s; both addresses are reserved in the service project {}",
                    gcp.project
                ));
            }
        }
        Platform::Azure(azure) => notes.extend(azure_cloud_note(azure, &spec.base_domain)),
        _ => {}
    }
    // Per cloud, what dual stack gets (docs/clouds.md "Dual stack per cloud" has the sources).
    if spec.ip_families.contains(&bootstrap_cloud::IpFamily::Ipv6) {
        match &spec.platform {
            Platform::Gcp(_) => notes.push(
                "gcp dual stack: the cloud provider's Service load balancers take one IPv4 each (spec.loadBalancerIP); no IPv6 is reserved and no AAAA record is seeded".into(),
            ),
            Platform::Azure(_) => notes.push(
                "azure dual stack: the private IPv6 is derived from the infra id within the compute subnet's IPv6 prefix, without an availability check (Azure documents none for IPv6)".into(),
            ),
            _ => {}
        }
    }
    if let crate::assets::Publish::Mixed { apiserver, ingress } = spec.publish {
        notes.push(if spec.publish.public_api() {
            format!(
                "publish Mixed (apiserver {apiserver:?}, ingress {ingress:?}): the API is public, so its public IP is reserved and api is written into the base domain's public zone {}, whatever the DNS manifest's publicZone (it follows ingress)",
                spec.base_domain
            )
        } else {
            format!(
                "publish Mixed (apiserver {apiserver:?}, ingress {ingress:?}): the API is internal: no public IP and no public api record (a publicZone in the DNS manifest is there for ingress)"
            )
        });
    }
    if super::cloud::cloud_dns(spec) {
        notes.extend(zone_notes(spec));
    }
    if let Platform::Aws(aws) = &spec.platform
        && let Some(pool) = &aws.public_ipv4_pool
    {
        notes.push(format!(
            "aws: every EIP is allocated from public IPv4 pool {pool} (platform.aws.publicIpv4Pool); `plan` (not --offline) and preflight compare its free addresses with those needed, and each allocation first checks the pool has a free address (DescribePublicIpv4Pools) and stops if not, without falling back to Amazon's pool"
        ));
    }
    if let Platform::Aws(aws) = &spec.platform {
        match &aws.subnets {
            crate::assets::AwsSubnets::Known { ignored, .. } => {
                notes.extend(ignored.iter().map(|id| format!(
                    "aws subnet {id} is tagged for the cluster but has neither role tag (kubernetes.io/role/elb, kubernetes.io/role/internal-elb): not used"
                )));
            }
            // The runner and `plan` settle the subnets first; this shows if one did not.
            crate::assets::AwsSubnets::Pending(_) => notes.push(
                "aws subnets not discovered yet: no subnet reservation and no DNS record is planned".into(),
            ),
        }
    }
    if spec.bootstrap_ip.is_none() && !matches!(spec.platform, Platform::None) {
        notes.push("bootstrap IP unknown (pass --bootstrap-ip): the private records will hold only the reserved IPs".into());
    }
    notes
}

/// What a person must know about the user's reservations the plan uses.
pub(super) fn adoption_notes(spec: &ClusterSpec, observed: &super::Observed) -> Vec<String> {
    let mut notes = Vec::new();
    if spec.adoption.adopt_only {
        notes.push(
            "--adopt-only: the agent reserves nothing; it uses the reservations you made".into(),
        );
    }
    let enis: Vec<String> = observed
        .adopted
        .iter()
        .filter(|r| {
            matches!(spec.platform, crate::assets::Platform::Aws(_))
                && r.key.scope == bootstrap_cloud::Scope::Private
        })
        .map(|r| format!("{} ({})", r.id, r.ip))
        .collect();
    if !enis.is_empty() {
        notes.push(format!(
            "aws: your ENIs {} hold the internal load balancer's IPs; delete them right before the Services are applied (the agent never deletes what is yours, and the AWS Load Balancer Controller cannot claim an IP an ENI holds)",
            enis.join(", ")
        ));
    }
    notes
}
