//! Structural OpenAPI schemas of the custom resources, enforced as kube-apiserver enforces a
//! CRD's `openAPIV3Schema`: every write (create, update, patch, server-side apply, and the
//! status subresource) is pruned of unknown fields and then validated against `required`,
//! `type`, `enum` and `nullable`. A failure is 422 Invalid with one cause per field, the field
//! written as the real server writes it (`status.versionHash`, `spec.capabilities.
//! additionalEnabledCapabilities[0]`).
//!
//! Two kinds of schema: ClusterVersion's, written by hand with only the fields that decide
//! whether a write is accepted (`crds/`), so its pruning stays silent; and the CRDs vendored
//! whole from their projects (`tests/fixtures/crds`, sources in its README), whose schema
//! has every field of the real API ([`complete`]), so an unknown field there is the client's
//! mistake and is reported as the real server reports it (see `objects::unknown_fields`).
//!
//! Simplified: no formats, patterns, bounds, CEL rules or defaults; an object schema without
//! `properties` keeps its fields (real `metadata` handling; elsewhere the real server would
//! prune them).

use super::resources::Resource;
use super::status::FieldErr;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

const CLUSTER_VERSION: &str = include_str!("../../crds/clusterversions.config.openshift.io.yaml");

/// The CRDs vendored whole: (group, kind, served version, the CRD's YAML).
const VENDORED: [(&str, &str, &str, &str); 5] = [
    (
        "config.openshift.io",
        "Infrastructure",
        "v1",
        include_str!("../../../fixtures/crds/config.openshift.io_infrastructures-Default.yaml"),
    ),
    (
        "config.openshift.io",
        "DNS",
        "v1",
        include_str!("../../../fixtures/crds/config.openshift.io_dnses-Default.yaml"),
    ),
    (
        "networking.olm.openshift.io",
        "AWSLoadBalancerController",
        "v1",
        include_str!(
            "../../../fixtures/crds/networking.olm.openshift.io_awsloadbalancercontrollers.yaml"
        ),
    ),
    (
        "operators.coreos.com",
        "OperatorGroup",
        "v1",
        include_str!("../../../fixtures/crds/operators.coreos.com_operatorgroups.yaml"),
    ),
    (
        "operators.coreos.com",
        "Subscription",
        "v1alpha1",
        include_str!("../../../fixtures/crds/operators.coreos.com_subscriptions.yaml"),
    ),
];

/// The schema of a custom resource, when the sim has one (others are schemaless).
pub fn of(res: &Resource) -> Option<&'static Value> {
    static CV: OnceLock<Option<Value>> = OnceLock::new();
    static CRDS: [OnceLock<Option<Value>>; VENDORED.len()] =
        [const { OnceLock::new() }; VENDORED.len()];
    if (res.group, res.kind) == ("config.openshift.io", "ClusterVersion") {
        return CV
            .get_or_init(|| serde_saphyr::from_str(CLUSTER_VERSION).ok())
            .as_ref();
    }
    let i = vendored(res)?;
    let (_, _, version, text) = VENDORED[i];
    CRDS[i]
        .get_or_init(|| served_schema(text, version))
        .as_ref()
}

/// Whether [`of`] is the whole schema of the real API (a vendored CRD), not a subset.
pub fn complete(res: &Resource) -> bool {
    vendored(res).is_some()
}

fn vendored(res: &Resource) -> Option<usize> {
    VENDORED.iter().position(|(group, kind, version, _)| {
        (res.group, res.kind, res.version) == (*group, *kind, *version)
    })
}

/// `spec.versions[name == version].schema.openAPIV3Schema` of a CRD.
fn served_schema(crd: &str, version: &str) -> Option<Value> {
    let crd: Value = serde_saphyr::from_str(crd).ok()?;
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == version)?
        .pointer("/schema/openAPIV3Schema")
        .cloned()
}

/// Prunes `obj` to the schema and returns every violation (empty: accepted).
#[cfg(test)]
pub fn check(schema: &Value, obj: &mut Value) -> Vec<FieldErr> {
    check_pruning(schema, obj).0
}

/// [`check`], and the paths of the fields it pruned (`spec.subnetTaging`), in the order met.
pub fn check_pruning(schema: &Value, obj: &mut Value) -> (Vec<FieldErr>, Vec<String>) {
    let mut found = Found::default();
    walk(schema, obj, "", &mut found);
    (found.errs, found.pruned)
}

#[derive(Default)]
struct Found {
    errs: Vec<FieldErr>,
    pruned: Vec<String>,
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(want: &str, v: &Value) -> bool {
    let have = type_name(v);
    have == want || (want == "number" && have == "integer")
}

fn walk(schema: &Value, v: &mut Value, path: &str, found: &mut Found) {
    let nullable = schema.get("nullable") == Some(&Value::Bool(true));
    if v.is_null() && nullable {
        return;
    }
    if let Some(want) = schema.get("type").and_then(Value::as_str)
        && !type_matches(want, v)
    {
        let have = type_name(v);
        // kube-apiserver's wording: `spec.x: Invalid value: "integer": spec.x in body must be of type string: "integer"`.
        found.errs.push(FieldErr::invalid(
            path,
            json!(have),
            format!("{path} in body must be of type {want}: {have:?}"),
        ));
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        found
            .errs
            .push(FieldErr::not_supported(path, v.clone(), &names));
    }
    match v {
        Value::Object(map) => walk_object(schema, map, path, found),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item_schema, item, &format!("{path}[{i}]"), found);
                }
            }
        }
        _ => {}
    }
}

fn walk_object(schema: &Value, map: &mut Map<String, Value>, path: &str, found: &mut Found) {
    let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    if !preserve {
        map.retain(|k, _| {
            let known = properties.contains_key(k);
            if !known {
                found.pruned.push(join(path, k));
            }
            known
        });
    }
    for field in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(field) {
            found.errs.push(FieldErr::required(join(path, field), ""));
        }
    }
    for (k, sub) in properties {
        if let Some(child) = map.get_mut(k) {
            walk(sub, child, &join(path, k), found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::resources::RESOURCES;

    fn cluster_version() -> &'static Value {
        let res = RESOURCES
            .iter()
            .find(|r| r.kind == "ClusterVersion")
            .unwrap();
        of(res).unwrap()
    }

    fn fields(errs: &[FieldErr]) -> Vec<String> {
        let mut f: Vec<String> = errs.iter().map(|e| e.field.clone()).collect();
        f.sort();
        f
    }

    #[test]
    fn a_spec_without_cluster_id_is_refused() {
        let mut obj = json!({"spec": {"capabilities": {"baselineCapabilitySet": "v4.14"}}});
        assert_eq!(
            fields(&check(cluster_version(), &mut obj)),
            ["spec.clusterID"]
        );
    }

    #[test]
    fn a_status_without_the_cvo_fields_is_refused_field_by_field() {
        let mut obj = json!({"spec": {"clusterID": "c"}, "status": {"capabilities": {}}});
        assert_eq!(
            fields(&check(cluster_version(), &mut obj)),
            [
                "status.availableUpdates",
                "status.desired",
                "status.observedGeneration",
                "status.versionHash"
            ]
        );
    }

    #[test]
    fn available_updates_may_be_null_but_not_missing() {
        let full = json!({"spec": {"clusterID": "c"}, "status": {
            "availableUpdates": null, "desired": {"version": "4.18.0"},
            "observedGeneration": 1, "versionHash": "h"}});
        assert!(check(cluster_version(), &mut full.clone()).is_empty());
        let mut missing = full;
        missing["status"]
            .as_object_mut()
            .unwrap()
            .remove("availableUpdates");
        assert_eq!(
            fields(&check(cluster_version(), &mut missing)),
            ["status.availableUpdates"]
        );
    }

    #[test]
    fn enums_and_types_are_enforced_and_unknown_fields_pruned() {
        let mut obj = json!({"spec": {"clusterID": 7, "surprise": true, "capabilities": {
            "baselineCapabilitySet": "v9.99",
            "additionalEnabledCapabilities": ["Console", "Nope"]}}});
        let errs = check(cluster_version(), &mut obj);
        assert_eq!(
            fields(&errs),
            [
                "spec.capabilities.additionalEnabledCapabilities[1]",
                "spec.capabilities.baselineCapabilitySet",
                "spec.clusterID"
            ]
        );
        assert!(obj["spec"].get("surprise").is_none(), "pruned: {obj}");
    }

    fn vendored_schema(kind: &str) -> &'static Value {
        let res = RESOURCES.iter().find(|r| r.kind == kind).unwrap();
        assert!(complete(res), "{kind}");
        of(res).unwrap()
    }

    #[test]
    fn every_vendored_crd_yields_the_schema_of_its_served_version() {
        for (_, kind, version, _) in VENDORED {
            let schema = vendored_schema(kind);
            assert_eq!(schema["type"], "object", "{kind} {version}");
            assert!(schema["properties"]["spec"].is_object(), "{kind}");
        }
        // v1 of AWSLoadBalancerController has credentialsRequestConfig; v1alpha1 has not.
        let spec = &vendored_schema("AWSLoadBalancerController")["properties"]["spec"];
        assert!(spec["properties"]["credentialsRequestConfig"].is_object());
    }

    #[test]
    fn a_misspelt_controller_field_is_pruned_and_reported_and_a_wrong_enum_refused() {
        let schema = vendored_schema("AWSLoadBalancerController");
        let mut obj = json!({"spec": {"subnetTaging": "Manual"}});
        let (errs, pruned) = check_pruning(schema, &mut obj);
        assert!(errs.is_empty());
        assert_eq!(pruned, ["spec.subnetTaging"]);
        assert_eq!(obj, json!({"spec": {}}));
        let mut obj = json!({"spec": {"subnetTagging": "Automatic"}});
        assert_eq!(fields(&check(schema, &mut obj)), ["spec.subnetTagging"]);
    }

    #[test]
    fn a_subscription_needs_its_package_and_catalog() {
        let schema = vendored_schema("Subscription");
        let mut obj = json!({"metadata": {"name": "s"}, "spec": {"channel": "stable-v1"}});
        assert_eq!(
            fields(&check(schema, &mut obj)),
            ["spec.name", "spec.source", "spec.sourceNamespace"]
        );
    }
}
