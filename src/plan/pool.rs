//! AWS `publicIpv4Pool`: how many addresses the plan takes from the user's BYO-IP pool
//! against how many it has free, as observed. Too few is bad input, as the installer treats
//! it (`pkg/asset/installconfig/aws/validation.go` counts the pool's free addresses too).

use super::{Change, Observed};
use bootstrap_cloud::Scope;
use serde::{Deserialize, Serialize};

/// The pool, what the plan needs from it and what it has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolNeed {
    pub pool: String,
    /// Public addresses this plan allocates (each from the pool).
    pub needs: u32,
    /// DescribePublicIpv4Pools `TotalAvailableAddressCount`.
    pub free: u32,
    /// DescribePublicIpv4Pools `TotalAddressCount`.
    pub total: u32,
    /// `free >= needs`: false means `reserve` would stop once the pool runs out.
    pub enough: bool,
}

impl PoolNeed {
    /// None when no pool was observed (no `publicIpv4Pool`, or `plan --offline`).
    pub(super) fn of(observed: &Observed, changes: &[Change]) -> Option<Self> {
        let pool = observed.address_pool.as_ref()?;
        let needs = changes
            .iter()
            .filter(|c| {
                matches!(c, Change::ReserveAddress { request } if request.key.scope == Scope::Public)
            })
            .count();
        let needs = u32::try_from(needs).unwrap_or(u32::MAX);
        Some(Self {
            pool: pool.id.clone(),
            needs,
            free: pool.free,
            total: pool.total,
            enough: pool.free >= needs,
        })
    }

    /// `public IPv4 pool <id>: needs N, has M free (of T)`, and what to do when too few.
    pub fn line(&self) -> String {
        let line = format!(
            "public IPv4 pool {}: needs {}, has {} free (of {})",
            self.pool, self.needs, self.free, self.total
        );
        if self.enough {
            line
        } else {
            format!(
                "{line}: TOO FEW, add {} address(es) to the pool (the agent never falls back to Amazon's pool)",
                self.needs - self.free
            )
        }
    }

    /// The problem when the pool has too few (`plan` exits 2 with it, after printing the plan).
    pub fn shortage(&self) -> Option<String> {
        (!self.enough).then(|| {
            format!(
                "public IPv4 pool {} has {} free address(es) (DescribePublicIpv4Pools), the agent needs {}; add addresses to it and run again",
                self.pool, self.free, self.needs
            )
        })
    }
}
