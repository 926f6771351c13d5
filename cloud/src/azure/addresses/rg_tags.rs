//! The cluster resource group's tags, where the private IPs are recorded: read, and one tag
//! merged or deleted at a time (the Tags API, or the group itself on Azure Stack Hub).

use super::AzureAddresses;
use crate::CloudError;
use crate::azure::rg_path;
use reqwest::Method;
use serde_json::{Value, json};

impl AzureAddresses {
    pub(super) fn tags_path(&self) -> String {
        format!(
            "{}/providers/Microsoft.Resources/tags/default",
            rg_path(&self.settings, &self.settings.resource_group)
        )
    }

    /// The cluster resource group itself (`ResourceGroups_Get` / `_Update`).
    pub(super) fn resource_group_url(&self) -> Result<url::Url, CloudError> {
        self.arm.url(
            &rg_path(&self.settings, &self.settings.resource_group),
            self.settings.api.resources,
            &[],
        )
    }

    /// The cluster resource group's tags: the Tags API at its scope, or (Azure Stack Hub, which
    /// has no Tags API) the group itself (`ResourceGroups_Get`).
    pub(in crate::azure) async fn rg_tags(
        &self,
    ) -> Result<serde_json::Map<String, Value>, CloudError> {
        let body = match self.settings.api.tags {
            Some(api) => {
                let url = self.arm.url(&self.tags_path(), api, &[])?;
                self.arm
                    .get_optional("GetTagsAtScope", url)
                    .await?
                    .map(|b| b["properties"]["tags"].clone())
            }
            None => {
                let url = self.resource_group_url()?;
                self.arm
                    .get_optional("GetResourceGroup", url)
                    .await?
                    .map(|b| b["tags"].clone())
            }
        };
        Ok(body
            .and_then(|tags| tags.as_object().cloned())
            .unwrap_or_default())
    }

    /// One tag of the cluster resource group: `Merge` (sets it, never touching other tags) or
    /// `Delete` (removes it only while it still has exactly this value).
    ///
    /// With the Tags API that is one `PATCH .../tags/default` of that tag alone. Azure Stack
    /// Hub has no Tags API (Resources 2018-05-01): there the group's tags are read and the
    /// whole map is written back with `ResourceGroups_Update` (`PATCH` of the group, whose
    /// `tags` replaces the group's). Resource groups carry no ETag, so a tag another writer
    /// sets between the read and the write is lost: on Stack the private-IP record is not safe
    /// against a concurrent writer of the same group's tags.
    pub(in crate::azure) async fn patch_tag(
        &self,
        operation: &str,
        name: &str,
        value: &str,
    ) -> Result<(), CloudError> {
        let Some(api) = self.settings.api.tags else {
            return self.rewrite_rg_tags(operation, name, value).await;
        };
        let url = self.arm.url(&self.tags_path(), api, &[])?;
        let body = json!({
            "operation": operation,
            "properties": {"tags": {name: value}},
        });
        self.arm
            .long_running("UpdateTagsAtScope", Method::PATCH, url, Some(&body))
            .await
            .map(|_| ())
    }

    /// `patch_tag` without the Tags API: read the group's tags, change the one, write them all.
    pub(super) async fn rewrite_rg_tags(
        &self,
        operation: &str,
        name: &str,
        value: &str,
    ) -> Result<(), CloudError> {
        const OP: &str = "UpdateResourceGroup";
        let mut tags = self.rg_tags().await?;
        match operation {
            "Merge" if tags.get(name).and_then(Value::as_str) == Some(value) => return Ok(()),
            "Merge" => {
                tags.insert(name.to_string(), json!(value));
            }
            "Delete" if tags.get(name).and_then(Value::as_str) == Some(value) => {
                tags.remove(name);
            }
            "Delete" => return Ok(()),
            other => {
                return Err(CloudError::fatal(
                    OP,
                    format!("unknown tag operation {other}"),
                ));
            }
        }
        let url = self.resource_group_url()?;
        self.arm
            .send(OP, Method::PATCH, url, &[], Some(&json!({"tags": tags})))
            .await
            .map(|_| ())
    }
}
