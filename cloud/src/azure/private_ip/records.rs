//! Reading every cluster's private-IPv4 record: `ResourceGroups_List` of the whole subscription
//! (see the parent module's docs for what a record is and why all are read).

use super::super::addresses::AzureAddresses;
use super::super::claims::{Record, records_of};
use super::{SETTLE_PAUSE, SETTLE_PAUSE_MAX};
use crate::CloudError;
use std::time::Duration;

/// Resource groups per page of `ResourceGroups_List` (`$top`, ARM's page size; 1000 at most).
/// A subscription holds at most 980 groups, so one request lists them all: each page is one
/// read of the subscription's bucket, and ARM's own default page is not documented.
const LIST_PAGE: &str = "1000";
/// How long one read of the records waits out ARM's throttling, beyond the per-call retries.
const THROTTLED_PATIENCE: Duration = Duration::from_secs(180);

/// PURE: whether ResourceGroups_List's `groups` show the group `rg`.
pub(super) fn lists_group(groups: &[serde_json::Value], rg: &str) -> bool {
    groups.iter().any(|g| {
        g["name"]
            .as_str()
            .is_some_and(|n| n.eq_ignore_ascii_case(rg))
    })
}

impl AzureAddresses {
    /// Every cluster's private-IPv4 record in the subscription; a throttled read is made again
    /// after ARM's `Retry-After` (with jitter) for up to [`THROTTLED_PATIENCE`] in all.
    pub(in crate::azure) async fn private_records(&self) -> Result<Vec<Record>, CloudError> {
        let (mut waited, mut attempt) = (Duration::ZERO, 0);
        let started = std::time::Instant::now();
        loop {
            attempt += 1;
            match self.read_private_records().await {
                Ok(records) => {
                    // What one list cost under ARM throttling, for whoever reads the debug log.
                    tracing::debug!(elapsed = ?started.elapsed(), attempt, records = records.len(), "resource groups listed");
                    return Ok(records);
                }
                Err(e) if e.is_throttled() && waited < THROTTLED_PATIENCE => {
                    let wait = match e.retry_after {
                        Some(asked) => crate::retry::after(asked, THROTTLED_PATIENCE),
                        None => crate::retry::backoff(attempt, SETTLE_PAUSE, SETTLE_PAUSE_MAX),
                    };
                    tracing::debug!(?wait, error = %e, "resource-group list throttled; waiting");
                    tokio::time::sleep(wait).await;
                    waited += wait;
                }
                other => return other,
            }
        }
    }

    async fn read_private_records(&self) -> Result<Vec<Record>, CloudError> {
        let op = "ListResourceGroups";
        let url = self.arm.url(
            &format!(
                "subscriptions/{}/resourcegroups",
                self.settings.subscription_id
            ),
            self.settings.api.resources,
            &[("$top", LIST_PAGE)],
        )?;
        let needs = "choosing the private IP needs Microsoft.Resources/subscriptions/resourceGroups/read on the subscription, to see what the other clusters of the vnet chose";
        let groups = self.arm.list(op, url).await.map_err(|e| {
            if e.message.starts_with("AuthorizationFailed") {
                CloudError::fatal(op, format!("{}; {needs}", e.message))
            } else {
                e
            }
        })?;
        // ARM lists only the groups the caller may read, without an error: a list without the
        // cluster's own group (which exists: its tags hold our record) means that read is not
        // granted, and our claim would never show.
        if !lists_group(&groups, &self.settings.resource_group) {
            return Err(CloudError::fatal(
                op,
                format!(
                    "the list does not show the cluster's resource group {}; {needs}",
                    self.settings.resource_group
                ),
            ));
        }
        Ok(records_of(&groups))
    }
}
