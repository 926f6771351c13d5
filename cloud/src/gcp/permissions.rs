//! The GCP `permissions` preflight line. GCP has no dry run, but Cloud Resource Manager answers
//! "which of these does the caller hold on this project": `projects.testIamPermissions` (v1,
//! `POST {endpoint}/v1/projects/{project}:testIamPermissions` with `{"permissions": [..]}`),
//! answering `{"permissions": [..]}` with the subset held (the field is left out when none is).
//! Asking needs no permission. One small REST call per project: no Resource Manager client is
//! in the tree, and the token comes from the same credentials as the other GCP clients.
//!
//! The permissions asked are exactly those of the calls the plan makes, per project: the
//! addresses' project, the network's (a Shared VPC host: `compute.subnetworks.use` for the
//! internal address) and each written zone's; none for DNS when DNS is the user's. A grant on
//! the subnetwork or the zone alone (not on the project; a Shared VPC admin often grants
//! `roles/compute.networkUser` per subnetwork) is not seen by this call: so only a missing
//! address permission fails the line, and `compute.subnetworks.use` or a Cloud DNS permission
//! missing at project level is a warning (`run` would work with a resource-level grant).

use super::GcpSettings;
use crate::preflight::Check;
use crate::{CloudError, ErrorKind, Scope};
use std::collections::{BTreeMap, BTreeSet};

/// Overrides the Cloud Resource Manager endpoint (default [`DEFAULT_ENDPOINT`]).
pub const RESOURCE_MANAGER_ENDPOINT_ENV: &str = "BOOTSTRAP_AGENT_GCP_RESOURCE_MANAGER_ENDPOINT";
pub const DEFAULT_ENDPOINT: &str = "https://cloudresourcemanager.googleapis.com";

const NAME: &str = "permissions";
const OPERATION: &str = "projects.testIamPermissions";

/// In the project holding the subnetwork the internal address is taken from.
const SUBNETWORK_USE: &str = "compute.subnetworks.use";

/// PURE: per project, the permissions `run`'s calls need: the table's
/// ([`crate::permissions::GCP`]), so preflight and `bootstrap-agent permissions` cannot drift.
pub(crate) fn wanted(
    project: &str,
    network_project: &str,
    scopes: &BTreeSet<Scope>,
    zone_projects: &[&str],
) -> BTreeMap<String, BTreeSet<&'static str>> {
    // Only the calls testIamPermissions is asked about: whether a zone was looked up matters
    // to preflight's own reads alone (its `dns-zones` line).
    let zones: Vec<(&str, bool)> = zone_projects.iter().map(|p| (*p, false)).collect();
    crate::permissions::gcp_wanted(
        project,
        network_project,
        scopes,
        &zones,
        &[crate::permissions::Command::Run],
        false,
    )
}

/// Permissions a resource-level grant can give (on the subnetwork, on the zone), which
/// `projects.testIamPermissions` cannot see: missing at project level, they only warn.
fn grantable_on_the_resource(permission: &str) -> bool {
    permission == SUBNETWORK_USE || permission.starts_with("dns.")
}

/// PURE: the line from what was asked and what each project answered.
pub(crate) fn verdict(
    asked: &BTreeMap<String, BTreeSet<&'static str>>,
    answers: &BTreeMap<String, Result<BTreeSet<String>, CloudError>>,
) -> Check {
    if asked.is_empty() {
        return Check::pass(
            NAME,
            "nothing to ask: no address to hold and no zone to write",
        );
    }
    let mut missing: Vec<(String, Vec<&str>)> = Vec::new();
    let mut unanswered = Vec::new();
    let mut held = 0;
    for (project, permissions) in asked {
        match answers.get(project) {
            Some(Ok(granted)) => {
                let lacking: Vec<&str> = permissions
                    .iter()
                    .copied()
                    .filter(|p| !granted.contains(*p))
                    .collect();
                held += permissions.len() - lacking.len();
                if !lacking.is_empty() {
                    missing.push((project.clone(), lacking));
                }
            }
            Some(Err(e)) => unanswered.push(format!("project {project}: {e}")),
            None => unanswered.push(format!("project {project}: not asked")),
        }
    }
    let fails = missing
        .iter()
        .flat_map(|(_, lacking)| lacking)
        .any(|p| !grantable_on_the_resource(p));
    if !missing.is_empty() {
        let reason = missing
            .iter()
            .map(|(project, lacking)| format!("project {project} lacks {}", lacking.join(", ")))
            .collect::<Vec<_>>()
            .join("; ");
        let fix = missing
            .iter()
            .map(|(project, lacking)| {
                format!(
                    "grant the agent's service account a role with {} on project {project} (gcloud projects add-iam-policy-binding {project} --member serviceAccount:<email> --role <role>)",
                    lacking.join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let no_answer = if unanswered.is_empty() {
            String::new()
        } else {
            format!("; no answer for {}", unanswered.join("; "))
        };
        if fails {
            return Check::fail(
                NAME,
                format!(
                    "testIamPermissions: {reason} (a grant on the subnetwork or the zone alone is not seen here){no_answer}"
                ),
                fix,
            );
        }
        return Check::warn(
            NAME,
            format!(
                "testIamPermissions: {reason} at project level; a grant on the subnetwork or the zone itself is not seen here, and `run` needs one of the two{no_answer}"
            ),
            Some(fix),
        );
    }
    let projects = asked.keys().cloned().collect::<Vec<_>>().join(", ");
    if !unanswered.is_empty() {
        return Check::warn(
            NAME,
            format!(
                "not checked: testIamPermissions did not answer for {}",
                unanswered.join("; ")
            ),
            Some(
                "enable the Cloud Resource Manager API (gcloud services enable cloudresourcemanager.googleapis.com) in the service account's project; `run` proves the permissions when it calls"
                    .to_string(),
            ),
        );
    }
    Check::pass(
        NAME,
        format!("testIamPermissions: all {held} held (projects {projects})"),
    )
}

/// `projects.testIamPermissions` over plain REST ([`super::rest`]).
pub(crate) struct ResourceManager {
    rest: super::rest::GoogleRest,
}

impl ResourceManager {
    pub(crate) fn new(settings: &GcpSettings) -> Result<Self, CloudError> {
        Ok(Self {
            rest: super::rest::GoogleRest::new(
                settings,
                settings.resource_manager_endpoint.as_deref(),
                DEFAULT_ENDPOINT,
                OPERATION,
                error,
            )?,
        })
    }

    /// The subset of `permissions` the caller holds on `project`; transient failures retried
    /// as every call is (`retry::PER_CALL`).
    pub(crate) async fn test(
        &self,
        project: &str,
        permissions: &BTreeSet<&str>,
    ) -> Result<BTreeSet<String>, CloudError> {
        let body = serde_json::json!({ "permissions": permissions });
        let path = format!("/v1/projects/{project}:testIamPermissions");
        let answer = self
            .rest
            .call(reqwest::Method::POST, &path, &[], &body)
            .await?;
        granted(&answer)
    }
}

/// PURE: the answer's `permissions` (absent: none held).
fn granted(json: &serde_json::Value) -> Result<BTreeSet<String>, CloudError> {
    match json.get("permissions") {
        None => Ok(BTreeSet::new()),
        Some(serde_json::Value::Array(list)) => list
            .iter()
            .map(|p| {
                p.as_str().map(str::to_string).ok_or_else(|| {
                    CloudError::fatal(OPERATION, "the answer's permissions are not strings")
                })
            })
            .collect(),
        Some(_) => Err(CloudError::fatal(
            OPERATION,
            "the answer's permissions are not a list",
        )),
    }
}

/// PURE: Google's error envelope as ours: its status and message, never the request.
fn error(http: u16, json: &serde_json::Value) -> CloudError {
    let kind = match http {
        _ if super::is_throttling(http, json) => ErrorKind::Transient,
        500..=599 => ErrorKind::Transient,
        404 => ErrorKind::NotFound,
        _ => ErrorKind::Fatal,
    };
    let status = json["error"]["status"].as_str().unwrap_or("");
    let message = json["error"]["message"].as_str().unwrap_or("");
    let text = match (status, message) {
        ("", "") => format!("HTTP {http}"),
        (status, message) => format!("HTTP {http} {status}: {message}"),
    };
    CloudError::new(kind, OPERATION, text)
}

#[cfg(test)]
#[path = "permissions_tests.rs"]
mod tests;
