//! Our public IPs (Standard SKU, static): created by name (PUT is create-or-update, the name
//! the idempotency key, never one of that name that is not ours), read back as reservations
//! once provisioned.

use super::AzureAddresses;
use crate::azure::{RESERVATION_TAG, cluster_tag};
use crate::poll::Poll;
use crate::{CloudError, ErrorKind, IpFamily, Reservation, ReservationKey, ReserveRequest};
use reqwest::Method;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::time::Duration;

impl AzureAddresses {
    /// A public IP of ours as a Reservation; waits while it is still being provisioned.
    pub(super) async fn public_reservation(
        &self,
        resource: &Value,
    ) -> Result<Option<Reservation>, CloudError> {
        let mut resource = resource.clone();
        let mut poll = Poll::change("GetPublicIPAddress", Duration::from_millis(250));
        loop {
            match resource["properties"]["provisioningState"].as_str() {
                Some("Updating" | "Creating") => {
                    poll.wait(None).await?;
                    let Some(id) = resource["id"].as_str() else {
                        return Ok(None);
                    };
                    let url = self.arm.url(id, self.settings.api.network, &[])?;
                    match self.arm.get_optional("GetPublicIPAddress", url).await? {
                        Some(r) => resource = r,
                        None => return Ok(None),
                    }
                }
                Some("Deleting") => return Ok(None),
                _ => break,
            }
        }
        let key = resource["tags"][RESERVATION_TAG]
            .as_str()
            .and_then(ReservationKey::parse);
        let ip = resource["properties"]["ipAddress"]
            .as_str()
            .and_then(|s| s.parse::<IpAddr>().ok());
        let id = resource["id"].as_str().unwrap_or_default().to_string();
        match (
            key,
            ip,
            resource["properties"]["provisioningState"].as_str(),
        ) {
            (Some(key), Some(ip), Some("Succeeded") | None) => Ok(Some(Reservation {
                key,
                id,
                name: resource["name"].as_str().unwrap_or_default().to_string(),
                ip,
            })),
            (_, _, state) => {
                // Failed, or tagged by hand without an address: not a usable reservation. The
                // planner reserves again, and the PUT by name re-provisions this very resource.
                tracing::warn!(%id, ?state, "owned public IP without a usable address; ignored");
                Ok(None)
            }
        }
    }

    pub(super) async fn reserve_public(
        &self,
        request: &ReserveRequest,
    ) -> Result<Reservation, CloudError> {
        let path = format!("{}/{}", self.public_ips_path(), request.name);
        let url = self.arm.url(&path, self.settings.api.network, &[])?;
        // The name is the idempotency key (PUT is create-or-update). Never take over a public
        // IP of that name that is not ours.
        if let Some(existing) = self
            .arm
            .get_optional("GetPublicIPAddress", url.clone())
            .await?
            && !self.is_ours(&existing)
        {
            return Err(CloudError::fatal(
                "CreateOrUpdatePublicIPAddress",
                format!(
                    "public IP {} exists and is not tagged as this cluster's; refusing to change it",
                    request.name
                ),
            ));
        }
        let version = match request.key.family {
            IpFamily::Ipv4 => "IPv4",
            IpFamily::Ipv6 => "IPv6",
        };
        let body = json!({
            "location": self.settings.region,
            "sku": {"name": "Standard", "tier": "Regional"},
            "tags": {
                cluster_tag(&self.settings.infra_id): "owned",
                RESERVATION_TAG: request.key.to_string(),
            },
            "properties": {
                "publicIPAllocationMethod": "Static",
                "publicIPAddressVersion": version,
            },
        });
        let resource = self
            .arm
            .long_running(
                "CreateOrUpdatePublicIPAddress",
                Method::PUT,
                url,
                Some(&body),
            )
            .await?
            .ok_or_else(|| {
                CloudError::fatal("CreateOrUpdatePublicIPAddress", "no resource after the PUT")
            })?;
        self.public_reservation(&resource).await?.ok_or_else(|| {
            CloudError::new(
                ErrorKind::Transient,
                "CreateOrUpdatePublicIPAddress",
                format!("{} has no address yet", request.name),
            )
        })
    }
}
