//! The simulated GCE provider's calls (`kube::lb::gce_build`), applied to the world as the
//! compute API applies the real provider's: each insert, delete and `addInstances` goes
//! through the same checks and side effects as its REST call (`lb_store::store`,
//! `lb_store::unstore`, `lb_rules`), and answers whether GCE started an Operation the provider
//! then waits for (openshift/cloud-provider-gcp 30cc0479: every mutation is waited,
//! `vendor/github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/op.go:68-116`). The
//! provider's "ensure" reads come first, as in its code: a resource that exists is not
//! inserted again, one that is gone or still used is not deleted (`ignoreNotFound`,
//! `isInUsedByError`), and neither starts an Operation.
//!
//! Nothing here shows in the request log or the proxies' counts (the simulated provider is
//! no HTTP client).

use super::GcpLbView;
use super::compute::BASE;
use super::http::ApiError;
use serde_json::Value;
use std::time::Duration;

/// One call of the provider, with the existence check before it.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// `<collection>.insert` in `scope` (`global` or `regions/<region>`), unless a resource of
    /// the body's name exists.
    Insert {
        scope: String,
        collection: &'static str,
        body: Value,
    },
    /// `<collection>.delete` of `name` in `scope`, unless absent or used by another resource.
    Delete {
        scope: String,
        collection: &'static str,
        name: String,
    },
    /// `instanceGroups.insert` of an unmanaged group, unless it exists.
    InsertGroup { zone: String, name: String },
    /// `instanceGroups.addInstances` of the VMs not yet members.
    AddInstances {
        zone: String,
        name: String,
        members: Vec<String>,
    },
    /// `targetPools.addInstance` of the VMs (`/zones/<zone>/instances/<name>`) not yet in
    /// the pool `name` of `scope` (`updateTargetPool`, gce_loadbalancer_external.go:656-706).
    AddToPool {
        scope: String,
        name: String,
        instances: Vec<String>,
    },
    /// `instanceGroups.delete`, unless absent or used by a backend service.
    DeleteGroup { zone: String, name: String },
    /// A health check's delete (`collection`: `healthChecks` or `httpHealthChecks`, global),
    /// then its `firewall`'s: the firewall goes only once the check is gone (deleted now or
    /// absent); a check still used is kept with its firewall
    /// (`teardownInternalHealthCheckAndFirewall`, gce_loadbalancer_internal.go:479-510;
    /// `DeleteExternalTargetPoolAndChecks`, gce_loadbalancer_external.go:434-499).
    DeleteCheck {
        collection: &'static str,
        name: String,
        firewall: String,
    },
}

impl GcpLbView {
    /// How long an Operation of the fake runs (what each of the provider's waits takes).
    pub fn operation_delay(&self) -> Duration {
        self.lock().options.operation_delay
    }

    /// `(network URL, the cloud config's subnetwork URL)`, as the provider builds them.
    pub fn network_links(&self) -> (String, String) {
        let w = self.lock();
        let seed = w.seed();
        (
            format!(
                "{BASE}/projects/{}/global/networks/{}",
                seed.project, seed.network
            ),
            format!(
                "{BASE}/projects/{}/regions/{}/subnetworks/{}",
                seed.project, seed.region, seed.cloud_config_subnetwork
            ),
        )
    }

    /// A link to a resource of this project (`global/...`, `regions/...`, `zones/...`).
    pub fn link(&self, tail: &str) -> String {
        format!("{BASE}/projects/{}/{tail}", self.lock().seed().project)
    }

    /// The resource (as GET shows it) at `tail` (`global/firewalls/x`, ...), if any.
    pub fn resource(&self, tail: &str) -> Option<Value> {
        let w = self.lock();
        let path = format!("projects/{}/{tail}", w.seed().project);
        w.lb.get(&path).cloned()
    }

    /// Applies `call`: Ok(n) when GCE started n Operations (the provider waits for each), 0
    /// when the check before it made it unnecessary; Err: GCE's refusal.
    pub fn apply(&self, call: &Call) -> Result<usize, String> {
        if let Call::DeleteCheck {
            collection,
            name,
            firewall,
        } = call
        {
            let path = |c: &str, n: &str| {
                format!("projects/{}/global/{c}/{n}", self.lock().seed().project)
            };
            let check = path(collection, name);
            let used = super::lb_rules::user_of(&self.lock(), &check).is_some();
            if used {
                return Ok(0);
            }
            let delete = |collection: &'static str, name: &str| Call::Delete {
                scope: "global".into(),
                collection,
                name: name.to_string(),
            };
            return Ok(self.apply(&delete(collection, name))?
                + self.apply(&delete("firewalls", firewall))?);
        }
        self.apply_one(call).map(usize::from)
    }

    fn apply_one(&self, call: &Call) -> Result<bool, String> {
        let mut w = self.lock();
        w.tick();
        let project = w.seed().project.clone();
        let words =
            |e: ApiError| format!("googleapi: Error {}: {}, {}", e.code, e.message, e.reason);
        match call {
            Call::Insert {
                scope,
                collection,
                body,
            } => {
                let scope = format!("projects/{project}/{scope}");
                let name = body["name"].as_str().unwrap_or_default();
                if w.lb
                    .contains_key(&super::lb_store::key(&scope, collection, name))
                {
                    return Ok(false);
                }
                let kind = super::lb_store::kind_in(&scope, collection)
                    .ok_or_else(|| format!("no such collection: {collection}"))?;
                super::lb_store::store(&mut w, &scope, collection, kind, body).map_err(words)?;
                Ok(true)
            }
            Call::Delete {
                scope,
                collection,
                name,
            } => {
                let path = format!("projects/{project}/{scope}/{collection}/{name}");
                if !w.lb.contains_key(&path) || super::lb_rules::user_of(&w, &path).is_some() {
                    return Ok(false);
                }
                super::lb_store::unstore(&mut w, &path).map_err(words)?;
                Ok(true)
            }
            Call::InsertGroup { zone, name } => {
                let groups = &mut w.options.seed.instance_groups;
                if groups.iter().any(|(z, n, _)| z == zone && n == name) {
                    return Ok(false);
                }
                groups.push((zone.clone(), name.clone(), Vec::new()));
                Ok(true)
            }
            Call::AddInstances {
                zone,
                name,
                members,
            } => {
                let known = |vm: &String| w.instances.get(vm).is_some_and(|i| i.zone == *zone);
                if let Some(stray) = members.iter().find(|vm| !known(vm)) {
                    return Err(format!(
                        "googleapi: Error 400: Invalid value for field 'resource.instances[0].instance': '{stray}'. The instance must exist and be in the instance group's zone., invalid"
                    ));
                }
                let Some(group) = w
                    .options
                    .seed
                    .instance_groups
                    .iter_mut()
                    .find(|(z, n, _)| z == zone && n == name)
                else {
                    return Err(format!(
                        "googleapi: Error 404: The resource 'projects/{project}/zones/{zone}/instanceGroups/{name}' was not found, notFound"
                    ));
                };
                let new: Vec<String> = members
                    .iter()
                    .filter(|m| !group.2.contains(m))
                    .cloned()
                    .collect();
                group.2.extend(new.iter().cloned());
                Ok(!new.is_empty())
            }
            Call::AddToPool {
                scope,
                name,
                instances,
            } => {
                let path = format!("projects/{project}/{scope}/targetPools/{name}");
                let Some(pool) = w.lb.get(&path) else {
                    return Err(format!(
                        "googleapi: Error 404: The resource '{path}' was not found, notFound"
                    ));
                };
                let members: Vec<String> = pool["instances"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect();
                let new: Vec<Value> = instances
                    .iter()
                    .filter(|vm| !members.iter().any(|m| m.ends_with(vm.as_str())))
                    .map(|vm| serde_json::json!({"instance": vm}))
                    .collect();
                if new.is_empty() {
                    return Ok(false);
                }
                let body = serde_json::json!({"instances": new});
                super::lb_rules::pool_members(&mut w, &path, &body, true).map_err(words)?;
                Ok(true)
            }
            Call::DeleteCheck { .. } => Ok(false),
            Call::DeleteGroup { zone, name } => {
                let path = format!("projects/{project}/zones/{zone}/instanceGroups/{name}");
                let exists = w
                    .seed()
                    .instance_groups
                    .iter()
                    .any(|(z, n, _)| z == zone && n == name);
                if !exists || super::lb_rules::user_of(&w, &path).is_some() {
                    return Ok(false);
                }
                w.options
                    .seed
                    .instance_groups
                    .retain(|(z, n, _)| !(z == zone && n == name));
                Ok(true)
            }
        }
    }
}
