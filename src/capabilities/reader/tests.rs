use super::*;

fn objects(text: &str) -> Vec<Result<Option<Object>, Problem>> {
    documents(text).into_iter().map(|(_, _, o)| o).collect()
}

fn only(text: &str) -> Object {
    match objects(text).into_iter().next() {
        Some(Ok(Some(o))) => o,
        other => panic!("expected one object, got {other:?}"),
    }
}

/// Shaped like the csi-snapshot-controller operator's service account, which names its
/// capability twice: the cluster reads it, the last value wins.
#[test]
fn a_key_given_twice_is_read_and_the_last_value_wins() {
    let o = only(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: csi-snapshot-controller-operator\n  namespace: openshift-cluster-storage-operator\n  annotations:\n    capability.openshift.io/name: Storage\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n    capability.openshift.io/name: CSISnapshot\n",
    );
    assert_eq!(o.annotations["capability.openshift.io/name"], "CSISnapshot");
    assert_eq!(o.namespace, "openshift-cluster-storage-operator");
    let o = only(
        "{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"a\",\"name\":\"b\",\"annotations\":{}}}",
    );
    assert_eq!(o.name, "b");
}

#[test]
fn json_streams_are_read_object_by_object_with_their_ranges() {
    let text = "  {\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"a\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"b\"}} {\"kind\": ";
    let docs = documents(text);
    assert_eq!(docs.len(), 3);
    assert_eq!(
        &text[docs[0].1.clone()],
        "{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"a\"}}"
    );
    assert!(text[docs[1].1.clone()].ends_with("\"b\"}}"));
    let Err(p) = &docs[2].2 else {
        panic!("{:?}", docs[2])
    };
    assert!(p.problem.starts_with("invalid JSON"), "{p:?}");
}

#[test]
fn empty_and_null_documents_are_skipped_and_broken_ones_named() {
    let got = objects("---\n# only a comment\n---\nnull\n---\n- a list\n---\nkind: [\n");
    assert_eq!(got[0], Ok(None));
    assert_eq!(got[1], Ok(None));
    assert_eq!(got[2], Ok(None));
    assert_eq!(
        got[3],
        Err(problem(
            "(document)",
            "expected a Kubernetes object (a mapping), found a list"
        ))
    );
    assert!(matches!(&got[4], Err(p) if p.problem.starts_with("invalid YAML")));
}

#[test]
fn kind_name_and_metadata_are_required_as_the_cluster_requires_them() {
    let field = |text: &str| match objects(text).into_iter().next() {
        Some(Err(p)) => p.field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field("kind: X\nmetadata: {name: a}\n"), "apiVersion");
    assert_eq!(field("apiVersion: v1\nmetadata: {name: a}\n"), "kind");
    assert_eq!(field("apiVersion: v1\nkind: X\n"), "metadata");
    assert_eq!(field("apiVersion: v1\nkind: X\nmetadata: []\n"), "metadata");
    assert_eq!(
        field("apiVersion: v1\nkind: X\nmetadata: {name: \"\"}\n"),
        "metadata.name"
    );
    assert_eq!(
        field("apiVersion: v1\nkind: X\nmetadata: {name: [a]}\n"),
        "metadata.name"
    );
    assert_eq!(
        field("apiVersion: v1\nkind: X\nmetadata: {name: a, namespace: [b]}\n"),
        "metadata.namespace"
    );
}

#[test]
fn annotations_the_cluster_cannot_read_are_named() {
    let why = |annotations: &str| {
        only(&format!(
            "apiVersion: v1\nkind: X\nmetadata:\n  name: a\n{annotations}"
        ))
        .unreadable_annotations
    };
    assert_eq!(why(""), Some("none".into()));
    assert_eq!(why("  annotations: null\n"), Some("none".into()));
    assert_eq!(
        why("  annotations: [a]\n"),
        Some("metadata.annotations is a list, not a mapping".into())
    );
    assert_eq!(
        why("  annotations:\n    a: \"x\"\n    b: true\n"),
        Some("the value of b is a boolean, not a string (quote it)".into())
    );
    assert_eq!(why("  annotations: {}\n"), None);
    let o = only("apiVersion: v1\nkind: X\nmetadata:\n  name: a\n  annotations: {a: x}\n");
    assert_eq!(o.annotations["a"], "x");
}
