//! PURE: the `quota-public-ips` verdict from the region's network usages.

use crate::preflight::{Check, Quota, quota_check};
use serde_json::Value;

/// PURE: the region's network usages against the public IPs still to create. Names compare
/// case-insensitively (ARM spells `StandardSkuPublicIpAddresses`; quota tools other ways).
pub fn quota_verdict(region: &str, usages: &[Value], needed: u32) -> Check {
    const NAME: &str = "quota-public-ips";
    let mut quotas = Vec::new();
    for name in ["PublicIPAddresses", "StandardSkuPublicIpAddresses"] {
        let usage = usages.iter().find(|u| {
            u["name"]["value"]
                .as_str()
                .is_some_and(|v| v.eq_ignore_ascii_case(name))
        });
        let (Some(limit), Some(used)) = (
            usage.and_then(|u| u["limit"].as_f64()),
            usage.and_then(|u| u["currentValue"].as_f64()),
        ) else {
            return Check::warn(
                NAME,
                format!("the network usages of {region} report no {name}"),
                None,
            );
        };
        quotas.push(Quota {
            label: name.to_string(),
            limit,
            used,
            needed,
        });
    }
    quota_check(NAME, region, &quotas, |short| {
        format!(
            "delete unused public IPs in {region} or request more {short} quota (Azure portal > Quotas > Networking)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::Verdict;
    use serde_json::json;

    fn usage(name: &str, limit: i64, current: i64) -> Value {
        json!({"name": {"value": name, "localizedValue": name}, "limit": limit, "currentValue": current, "unit": "Count"})
    }

    #[test]
    fn quota_needs_room_in_both_public_ip_usages() {
        let usages = [
            usage("PublicIPAddresses", 1000, 10),
            usage("StandardSkuPublicIpAddresses", 10, 9),
            usage("VirtualNetworks", 50, 1),
        ];
        let fine = quota_verdict("eastus", &usages, 1);
        assert_eq!(fine.verdict, Verdict::Pass, "{fine:?}");
        assert!(
            fine.reason
                .contains("StandardSkuPublicIpAddresses limit 10, used 9, free 1, needed 1"),
            "{fine:?}"
        );
        let short = quota_verdict("eastus", &usages, 2);
        assert_eq!(short.verdict, Verdict::Fail, "{short:?}");
        let fix = short.fix.unwrap();
        assert!(fix.contains("StandardSkuPublicIpAddresses"), "{fix}");
        assert!(!fix.contains("PublicIPAddresses and"), "{fix}");
        let other_spelling = [
            usage("publicipaddresses", 5, 0),
            usage("StandardSKUPublicIPAddresses", 5, 0),
        ];
        assert_eq!(
            quota_verdict("eastus", &other_spelling, 1).verdict,
            Verdict::Pass
        );
        assert_eq!(
            quota_verdict("eastus", &usages[..1], 1).verdict,
            Verdict::Warn
        );
    }
}
