//! The strategic-merge-patch directives a two-way patch of client-go carries
//! (`strategicpatch.CreateTwoWayMergePatch`, k8s.io/apimachinery `pkg/util/strategicpatch/
//! patch.go`), turned into a plain JSON merge patch against the current object: the
//! cloud-controller-manager's service controller patches a Service's finalizers this way
//! (k8s.io/cloud-provider `service/helpers/helper.go` `PatchService`).
//! - `$setElementOrder/<list>`: the order of a merged list; dropped (the fake keeps the order
//!   it has, new items last).
//! - `$deleteFromPrimitiveList/<list>`: values to take out of a primitive list.
//! - `metadata.finalizers` is a list with `patchStrategy:"merge"` (ObjectMeta): the patch's
//!   items are added to the current ones, not put in their place.
//!
//! Lists of objects merged by key (`spec.ports`, ...) are still replaced whole (see `ops`).

use serde_json::{Map, Value};

const SET_ORDER: &str = "$setElementOrder/";
const DELETE_PRIMITIVES: &str = "$deleteFromPrimitiveList/";

/// The merge patch equivalent to strategic `patch` on `current`.
pub fn to_merge_patch(current: &Value, patch: &Value) -> Value {
    resolve(current, patch, &[])
}

fn resolve(current: &Value, patch: &Value, path: &[&str]) -> Value {
    let Some(fields) = patch.as_object() else {
        return patch.clone();
    };
    let mut out = Map::new();
    let mut deletions: Vec<(&str, &Vec<Value>)> = Vec::new();
    for (key, value) in fields {
        // `$patch: merge` is the default strategy; `$setElementOrder` only orders.
        if key.starts_with(SET_ORDER) || key == "$patch" {
            continue;
        }
        if let Some(list) = key.strip_prefix(DELETE_PRIMITIVES) {
            if let Some(values) = value.as_array() {
                deletions.push((list, values));
            }
            continue;
        }
        let here = &current[key.as_str()];
        let mut child_path = path.to_vec();
        child_path.push(key);
        let merged = match (child_path.as_slice(), value) {
            (["metadata", "finalizers"], Value::Array(added)) => {
                let mut list = here.as_array().cloned().unwrap_or_default();
                for item in added {
                    if !list.contains(item) {
                        list.push(item.clone());
                    }
                }
                Value::Array(list)
            }
            (_, Value::Object(_)) if here.is_object() => resolve(here, value, &child_path),
            _ => value.clone(),
        };
        out.insert(key.clone(), merged);
    }
    for (list, values) in deletions {
        let base = out
            .get(list)
            .or_else(|| current.get(list))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let kept: Vec<Value> = base.into_iter().filter(|v| !values.contains(v)).collect();
        out.insert(list.to_string(), Value::Array(kept));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finalizers_are_merged_and_deleted_as_client_go_patches_them() {
        let svc = json!({"metadata": {"name": "x", "finalizers": ["a"]}, "status": {}});
        let added = json!({"metadata": {
            "$setElementOrder/finalizers": ["a", "service.kubernetes.io/load-balancer-cleanup"],
            "finalizers": ["service.kubernetes.io/load-balancer-cleanup"]}});
        assert_eq!(
            to_merge_patch(&svc, &added),
            json!({"metadata": {"finalizers": ["a", "service.kubernetes.io/load-balancer-cleanup"]}})
        );
        let removed = json!({"metadata": {
            "$deleteFromPrimitiveList/finalizers": ["a"]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.1.20"}]}}});
        assert_eq!(
            to_merge_patch(&svc, &removed),
            json!({"metadata": {"finalizers": []},
                   "status": {"loadBalancer": {"ingress": [{"ip": "10.0.1.20"}]}}})
        );
    }

    /// OpenShift's GCE provider adds its finalizer from a copy that may not hold the service
    /// controller's: a list of the merge strategy is merged, never replaced.
    #[test]
    fn a_second_finalizer_is_merged_in_from_a_stale_copy() {
        let svc = json!({"metadata": {"name": "s", "finalizers": ["service.kubernetes.io/load-balancer-cleanup"]}});
        let stale = json!({"metadata": {"finalizers": ["gke.networking.io/l4-ilb-v1"]}});
        assert_eq!(
            to_merge_patch(&svc, &stale),
            json!({"metadata": {"finalizers": ["service.kubernetes.io/load-balancer-cleanup", "gke.networking.io/l4-ilb-v1"]}}),
        );
        let plain = json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.5"}]}}, "$patch": "merge"});
        assert_eq!(
            to_merge_patch(&svc, &plain),
            json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.5"}]}}})
        );
    }
}
