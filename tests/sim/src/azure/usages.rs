//! `GET /subscriptions/{s}/providers/Microsoft.Network/locations/{location}/usages` in the
//! fake: the region's network usages, `{value: [{id, currentValue, limit, name: {value,
//! localizedValue}, unit}]}`, spelled as ARM spells them (`PublicIPAddresses`,
//! `StaticPublicIPAddresses`, `StandardSkuPublicIpAddresses`). `currentValue` counts the public
//! IPs the fake holds in that location; the limits come from [`PublicIpQuota`], and a PUT of a
//! new public IP beyond one is refused as ARM refuses it (400 `PublicIPCountLimitReached`).

use super::arm::Reply;
use super::world::{SUBSCRIPTION, World};
use serde_json::json;

/// The public IP limits of a region (Azure's defaults are 1000 of each for a pay-as-you-go
/// subscription; a free trial has far fewer).
#[derive(Debug, Clone, Copy)]
pub struct PublicIpQuota {
    /// `PublicIPAddresses`: every public IP, any SKU.
    pub total: i64,
    /// `StandardSkuPublicIpAddresses`.
    pub standard: i64,
}

impl Default for PublicIpQuota {
    fn default() -> Self {
        Self {
            total: 1000,
            standard: 1000,
        }
    }
}

impl World {
    fn public_ips_in(&self, location: &str, standard: bool) -> i64 {
        self.public_ips
            .values()
            .filter(|p| p.location.eq_ignore_ascii_case(location))
            .filter(|p| !standard || p.sku == "Standard")
            .count() as i64
    }

    /// A new public IP of `sku` in `location` would exceed a limit: ARM's refusal.
    pub(super) fn quota_refusal(&self, location: &str, sku: &str) -> Option<Reply> {
        let standard = sku == "Standard";
        let (limit, used) = if self.public_ips_in(location, false) >= self.quota.total {
            (self.quota.total, "public IP addresses")
        } else if standard && self.public_ips_in(location, true) >= self.quota.standard {
            (self.quota.standard, "Standard SKU public IP addresses")
        } else {
            return None;
        };
        Some(Reply::error(
            400,
            "PublicIPCountLimitReached",
            format!("Cannot create more than {limit} {used} for this subscription in this region."),
        ))
    }

    pub(super) fn usages(&self, location: &str) -> Reply {
        let statics = self
            .public_ips
            .values()
            .filter(|p| p.location.eq_ignore_ascii_case(location) && p.allocation == "Static")
            .count() as i64;
        let rows = [
            ("VirtualNetworks", "Virtual Networks", 1, 1000),
            (
                "StaticPublicIPAddresses",
                "Static Public IP Addresses",
                statics,
                1000,
            ),
            (
                "PublicIPAddresses",
                "Public IP Addresses",
                self.public_ips_in(location, false),
                self.quota.total,
            ),
            (
                "StandardSkuPublicIpAddresses",
                "Public IP Addresses - Standard",
                self.public_ips_in(location, true),
                self.quota.standard,
            ),
        ];
        let value: Vec<_> = rows
            .iter()
            .map(|(name, localized, current, limit)| {
                json!({
                    "id": format!("/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Network/locations/{location}/usages/{name}"),
                    "currentValue": current,
                    "limit": limit,
                    "name": {"value": name, "localizedValue": localized},
                    "unit": "Count",
                })
            })
            .collect();
        Reply::json(200, json!({ "value": value }))
    }
}
