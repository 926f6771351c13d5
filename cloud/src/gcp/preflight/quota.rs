//! The region's address quotas against what is still to reserve (`regions.get` `quotas`:
//! `STATIC_ADDRESSES` for the external address, `INTERNAL_ADDRESSES` for the internal one).

use super::GcpPreflight;
use crate::preflight::{Check, Needs, Quota, quota_check};
use google_cloud_compute_v1::model::quota::Metric;

impl GcpPreflight {
    pub(super) async fn quota(&self, needs: &Needs) -> Check {
        const NAME: &str = "quota-addresses";
        let private: u32 = needs.private_addresses.values().sum();
        if needs.public_addresses == 0 && private == 0 {
            return Check::pass(NAME, "no address to reserve");
        }
        let region = match self.region(NAME).await {
            Ok(region) => region,
            Err(failed) => return failed,
        };
        let quotas: Vec<(Metric, f64, f64)> = region
            .quotas
            .iter()
            .filter_map(|q| Some((q.metric.clone()?, q.limit?, q.usage.unwrap_or(0.0))))
            .collect();
        quota_verdict(&self.region, &quotas, needs.public_addresses, private)
    }
}

/// PURE: the region's quotas against what is still to reserve: `STATIC_ADDRESSES` covers
/// regional external static addresses, `INTERNAL_ADDRESSES` regional internal ones.
fn quota_verdict(region: &str, quotas: &[(Metric, f64, f64)], public: u32, private: u32) -> Check {
    const NAME: &str = "quota-addresses";
    let mut wanted = Vec::new();
    for (metric, needed) in [
        (Metric::StaticAddresses, public),
        (Metric::InternalAddresses, private),
    ] {
        if needed == 0 {
            continue;
        }
        let label = metric.name().unwrap_or("?").to_string();
        let Some((_, limit, used)) = quotas.iter().find(|(m, _, _)| m == &metric) else {
            return Check::warn(
                NAME,
                format!("regions.get reported no {label} quota for {region}"),
                None,
            );
        };
        wanted.push(Quota {
            label,
            limit: *limit,
            used: *used,
            needed,
        });
    }
    quota_check(NAME, region, &wanted, |short| {
        format!(
            "release unused addresses in {region} or request more {short} quota (IAM & Admin > Quotas)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::Verdict;

    #[test]
    fn quota_counts_external_and_internal_addresses_separately() {
        let quotas = [
            (Metric::StaticAddresses, 8.0, 7.0),
            (Metric::InternalAddresses, 200.0, 0.0),
            (Metric::InUseAddresses, 8.0, 8.0),
        ];
        let fine = quota_verdict("r", &quotas, 1, 1);
        assert_eq!(fine.verdict, Verdict::Pass, "{fine:?}");
        assert!(
            fine.reason
                .contains("STATIC_ADDRESSES limit 8, used 7, free 1, needed 1")
        );
        let short = quota_verdict("r", &quotas, 2, 1);
        assert_eq!(short.verdict, Verdict::Fail, "{short:?}");
        assert!(short.fix.unwrap().contains("STATIC_ADDRESSES"));
        let internal_short = quota_verdict("r", &[(Metric::InternalAddresses, 1.0, 1.0)], 0, 1);
        assert_eq!(internal_short.verdict, Verdict::Fail);
        let unknown = quota_verdict("r", &[], 1, 0);
        assert_eq!(unknown.verdict, Verdict::Warn);
        assert_eq!(quota_verdict("r", &[], 0, 0).verdict, Verdict::Pass);
    }
}
