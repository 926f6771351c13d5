//! The user's own addresses (`adopt`): a public IP by resource id, unless absent or ours; a
//! private IP of the purpose's family, inside the compute subnet and free there.

use super::AzureAddresses;
use crate::azure::subnet::{parse_v4_prefix, parse_v6_prefix};
use crate::{CloudError, IpFamily, Reservation};
use std::net::IpAddr;

impl AzureAddresses {
    /// The user's public IP at `path` (a resource id), unless absent or ours.
    pub(super) async fn user_public_ip(
        &self,
        query: &crate::UserReservationQuery,
        path: &str,
    ) -> Result<Option<crate::UserMade>, CloudError> {
        if !path
            .to_ascii_lowercase()
            .contains("/providers/microsoft.network/publicipaddresses/")
        {
            return Ok(Some(crate::UserMade::Misfit {
                resource: path.to_string(),
                problem: "is not a public IP resource id (…/providers/Microsoft.Network/publicIPAddresses/<name>)".into(),
            }));
        }
        let url = self.arm.url(path, self.settings.api.network, &[])?;
        Ok(
            match self.arm.get_optional("GetPublicIPAddress", url).await? {
                Some(resource) if !self.is_ours(&resource) => Some(
                    crate::azure::adopt::check_public(&resource, query, &self.settings.region),
                ),
                _ => None,
            },
        )
    }

    /// A private IP the user chose: of the purpose's family, inside the compute subnet, and
    /// (IPv4, until adopted) free there per CheckIPAddressAvailability.
    pub(super) async fn user_private_ip(
        &self,
        query: &crate::UserReservationQuery,
        ip: IpAddr,
    ) -> Result<crate::UserMade, CloudError> {
        let misfit = |problem: String| crate::UserMade::Misfit {
            resource: format!("private IP {ip}"),
            problem,
        };
        if IpFamily::of(&ip) != query.key.family {
            return Ok(misfit(format!("is not an {} address", query.key.family)));
        }
        let prefix = self.compute_subnet_prefix(query.key.family).await?;
        let inside = match ip {
            IpAddr::V4(v4) => parse_v4_prefix(&prefix).is_some_and(|(net, len)| {
                let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
                u32::from(v4) & mask == u32::from(net)
            }),
            IpAddr::V6(v6) => parse_v6_prefix(&prefix).is_some_and(|(net, len)| {
                let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
                u128::from(v6) & mask == u128::from(net)
            }),
        };
        if !inside {
            return Ok(misfit(format!(
                "is outside the compute subnet {} ({prefix}), where the internal load balancer takes its address",
                self.settings.compute_subnet
            )));
        }
        if let IpAddr::V4(v4) = ip
            && query.adopted_before != Some(ip)
        {
            if !self.still_free(v4).await? {
                return Ok(misfit(format!(
                    "is not free in the compute subnet {} (CheckIPAddressAvailability); pick a free one",
                    self.settings.compute_subnet
                )));
            }
            // Another cluster's choice is invisible to CheckIPAddressAvailability until its
            // load balancer holds it.
            if let Some(other) = self
                .private_records()
                .await?
                .into_iter()
                .find(|r| r.recorded.ip() == ip && !self.is_own(r))
            {
                return Ok(misfit(format!(
                    "is recorded by another cluster (tag {} on resource group {}); pick another",
                    other.tag, other.rg
                )));
            }
        }
        Ok(crate::UserMade::Fits(Reservation {
            key: query.key.clone(),
            id: format!("ip {ip}"),
            name: format!("{} (yours, in {})", ip, self.settings.compute_subnet),
            ip,
        }))
    }
}
