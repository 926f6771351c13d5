//! The directives of a strategic merge patch that a Go client's `CreateTwoWayMergePatch` writes
//! for a primitive list with the `merge` strategy (metadata `finalizers`), turned into the plain
//! list a JSON merge patch then sets (apimachinery `pkg/util/strategicpatch/patch.go`):
//! - `$setElementOrder/<list>`: the whole list in its final order (the patch's `<list>` holds
//!   only the added items, which are merged in, not replacing the others);
//! - `$deleteFromPrimitiveList/<list>`: items to take out of the current list.
//!
//! Without them a real cloud-controller-manager adding its second finalizer (OpenShift's GCE
//! provider adds `gke.networking.io/l4-ilb-v1` after the service controller's
//! `service.kubernetes.io/load-balancer-cleanup`, both with `servicehelper.PatchService`)
//! would drop the first, and its removal would leave the finalizer on for good. Other
//! directives (`$patch`, `$retainKeys`) are dropped: lists stay replaced, as before.

use serde_json::{Map, Value};

/// `patch` (an object) with its directives resolved against `current`.
pub fn resolve(current: &Value, patch: &Value) -> Value {
    let Some(fields) = patch.as_object() else {
        return patch.clone();
    };
    let mut out = Map::new();
    for (key, value) in fields {
        if key.starts_with('$') {
            continue;
        }
        let here = current.get(key).unwrap_or(&Value::Null);
        out.insert(
            key.clone(),
            if value.is_object() && here.is_object() {
                resolve(here, value)
            } else {
                value.clone()
            },
        );
    }
    let strings = |v: &Value| -> Option<Vec<Value>> {
        let items = v.as_array()?;
        items.iter().all(Value::is_string).then(|| items.clone())
    };
    // `finalizers` has the `merge` strategy: without `$setElementOrder` the patch's items are
    // added to the current ones (a client whose copy was stale adds its own, keeping others').
    if let (Some(added), Some(existing)) = (
        fields.get("finalizers").and_then(strings),
        current.get("finalizers").and_then(strings),
    ) && !fields.contains_key("$setElementOrder/finalizers")
    {
        let mut merged = existing;
        merged.extend(
            added
                .into_iter()
                .filter(|v| !merged.contains(v))
                .collect::<Vec<_>>(),
        );
        out.insert("finalizers".into(), Value::Array(merged));
    }
    for (key, value) in fields {
        let Some((directive, list)) = key.split_once('/') else {
            continue;
        };
        let existing = strings(current.get(list).unwrap_or(&Value::Null)).unwrap_or_default();
        match directive {
            "$setElementOrder" => {
                if let Some(order) = strings(value) {
                    out.insert(list.to_string(), Value::Array(order));
                }
            }
            "$deleteFromPrimitiveList" => {
                let gone = strings(value).unwrap_or_default();
                let base = out.get(list).and_then(strings).unwrap_or(existing);
                let kept: Vec<Value> = base.into_iter().filter(|v| !gone.contains(v)).collect();
                out.insert(list.to_string(), Value::Array(kept));
            }
            _ => {}
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use serde_json::json;

    #[test]
    fn a_second_finalizer_is_merged_in_and_a_deleted_one_taken_out() {
        let svc = json!({"metadata": {"name": "s", "finalizers": ["service.kubernetes.io/load-balancer-cleanup"]}});
        let add = json!({"metadata": {
            "$setElementOrder/finalizers": ["service.kubernetes.io/load-balancer-cleanup", "gke.networking.io/l4-ilb-v1"],
            "finalizers": ["gke.networking.io/l4-ilb-v1"]}});
        assert_eq!(
            resolve(&svc, &add),
            json!({"metadata": {"finalizers": ["service.kubernetes.io/load-balancer-cleanup", "gke.networking.io/l4-ilb-v1"]}})
        );
        let stale = json!({"metadata": {"finalizers": ["gke.networking.io/l4-ilb-v1"]}});
        assert_eq!(
            resolve(&svc, &stale),
            json!({"metadata": {"finalizers": ["service.kubernetes.io/load-balancer-cleanup", "gke.networking.io/l4-ilb-v1"]}}),
            "a list of the merge strategy is merged, not replaced"
        );
        let both = json!({"metadata": {"finalizers": ["a", "b"]}});
        let remove = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}});
        assert_eq!(
            resolve(&both, &remove),
            json!({"metadata": {"finalizers": ["a"]}})
        );
        let plain = json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.5"}]}}, "$patch": "merge"});
        assert_eq!(
            resolve(&both, &plain),
            json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.5"}]}}})
        );
    }
}
