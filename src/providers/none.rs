//! A cloud in which nothing of ours exists and nothing may be written: platform `none` (load
//! balancers and DNS are the user's) and `plan --offline` (assume nothing exists, call nothing).
//! A value rather than an `Option`, so every command takes the same path; the planner plans
//! no cloud change for platform none, and a write reaching here is refused, never dropped.

use async_trait::async_trait;
use bootstrap_cloud::{
    AddressProvider, CloudError, DnsProvider, RecordKey, RecordSet, RecordWrite, Reservation,
    ReserveRequest, Zone, ZoneRef,
};

pub struct NoCloud;

fn refused(operation: &str) -> CloudError {
    CloudError::fatal(
        operation,
        "no cloud to change (platform none, or planning offline): nothing is reserved or written",
    )
}

#[async_trait]
impl AddressProvider for NoCloud {
    async fn observe(&self) -> Result<Vec<Reservation>, CloudError> {
        Ok(Vec::new())
    }

    async fn reserve(&self, _: &ReserveRequest) -> Result<Reservation, CloudError> {
        Err(refused("reserve"))
    }

    async fn release(&self, _: &Reservation) -> Result<(), CloudError> {
        Err(refused("release"))
    }
}

#[async_trait]
impl DnsProvider for NoCloud {
    async fn find_zone(&self, zone: &ZoneRef) -> Result<Zone, CloudError> {
        Ok(zone.with_id(String::new()))
    }

    async fn read(&self, _: &Zone, _: &RecordKey) -> Result<Option<RecordSet>, CloudError> {
        Ok(None)
    }

    async fn write(&self, _: &RecordWrite<'_>) -> Result<(), CloudError> {
        Err(refused("dns write"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[tokio::test]
    async fn nothing_exists_and_every_write_is_refused() {
        let zone = ZoneRef {
            domain: "c.example.com".into(),
            private: true,
            ..ZoneRef::default()
        };
        assert!(NoCloud.observe().await.unwrap().is_empty());
        let found = NoCloud.find_zone(&zone).await.unwrap();
        let key = RecordKey {
            name: "api.c.example.com".into(),
            rtype: bootstrap_cloud::RecordType::A,
        };
        assert_eq!(NoCloud.read(&found, &key).await.unwrap(), None);
        let no_values = BTreeSet::new();
        let write = RecordWrite {
            zone: &found,
            key: &key,
            current: None,
            values: &no_values,
            ttl: 60,
        };
        let refused = NoCloud.write(&write).await;
        assert!(!refused.unwrap_err().is_transient());
    }
}
