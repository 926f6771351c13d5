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

#[cfg(test)]
mod tests {
    use super::*;
    use bootstrap_cloud::{AddressPool, ReservationKey, ReserveRequest};

    fn reserve(key: &str) -> Change {
        Change::ReserveAddress {
            request: ReserveRequest {
                key: ReservationKey::parse(key).unwrap(),
                name: format!("c-rsvd-{key}"),
                token: key.into(),
            },
        }
    }

    fn observed(free: u32) -> Observed {
        Observed {
            address_pool: Some(AddressPool {
                id: "ipv4pool-ec2-1".into(),
                total: 8,
                free,
            }),
            ..Observed::default()
        }
    }

    /// Only public allocations come from the pool: the private addresses are the subnet's.
    fn changes() -> Vec<Change> {
        vec![
            reserve("public-ipv4@subnet-a"),
            reserve("private-ipv4@subnet-a"),
            reserve("public-ipv4@subnet-b"),
        ]
    }

    #[test]
    fn the_need_counts_the_public_allocations_and_exactly_enough_is_enough() {
        let need = PoolNeed::of(&observed(2), &changes()).unwrap();
        assert_eq!(
            need,
            PoolNeed {
                pool: "ipv4pool-ec2-1".into(),
                needs: 2,
                free: 2,
                total: 8,
                enough: true,
            }
        );
        assert_eq!(need.shortage(), None);
        assert_eq!(
            need.line(),
            "public IPv4 pool ipv4pool-ec2-1: needs 2, has 2 free (of 8)"
        );
        assert_eq!(PoolNeed::of(&Observed::default(), &changes()), None);
    }

    #[test]
    fn one_address_short_is_a_shortage_naming_the_pool_what_it_has_and_what_is_needed() {
        let need = PoolNeed::of(&observed(1), &changes()).unwrap();
        assert!(!need.enough);
        assert_eq!(
            need.shortage().as_deref(),
            Some(
                "public IPv4 pool ipv4pool-ec2-1 has 1 free address(es) (DescribePublicIpv4Pools), the agent needs 2; add addresses to it and run again"
            )
        );
        assert!(need.line().ends_with("TOO FEW, add 1 address(es) to the pool (the agent never falls back to Amazon's pool)"), "{}", need.line());
    }
}
