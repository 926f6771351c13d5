//! `bootstrap-agent manifests aws-load-balancer-controller` (issue 35): what it prints is
//! created, as is, by a local API server that serves OperatorGroup, Subscription and
//! AWSLoadBalancerController from their projects' own CRDs (`tests/fixtures/crds`, vendored
//! from operator-framework/api and openshift/aws-load-balancer-operator). Every document is
//! created with `fieldValidation=Strict`, so a field the real API does not have fails the
//! test instead of being pruned; the stored objects are read back field for field. And the
//! server answers a misspelt field as kube-apiserver does: refused under Strict (what `oc
//! apply` and `kubectl` send), dropped with a warning by default (what cluster-bootstrap's
//! create of the installer's manifests gets), refused by server-side apply.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bootstrap_sim::kube::{KubeSim, KubeSimOptions};
use serde_json::{Value, json};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_bootstrap-agent");
const OPERATOR_ROLE: &str = "arn:aws:iam::123456789012:role/albo-operator";
const CONTROLLER_ROLE: &str = "arn:aws:iam::123456789012:role/albo-controller";

fn agent(args: &[&str]) -> Output {
    std::process::Command::new(BIN).args(args).output().unwrap()
}

/// The documents `manifests aws-load-balancer-controller <extra>` prints.
fn documents(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["manifests", "aws-load-balancer-controller"];
    args.extend_from_slice(extra);
    let out = agent(&args);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect()
}

fn of_kind(docs: &[Value], kind: &str) -> Value {
    docs.iter().find(|d| d["kind"] == kind).unwrap().clone()
}

/// A client of the local API server, built as the agent builds its own.
async fn client(k: &KubeSim) -> kube::Client {
    bootstrap_agent::cluster::client(k.kubeconfig_path())
        .await
        .unwrap()
}

/// The collection URL of `obj`: `/api/v1/namespaces` or `/apis/<group>/<version>/...`.
fn collection(obj: &Value) -> String {
    let api_version = obj["apiVersion"].as_str().unwrap();
    let plural = format!("{}s", obj["kind"].as_str().unwrap().to_lowercase());
    let base = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    match obj["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{base}/namespaces/{ns}/{plural}"),
        None => format!("{base}/{plural}"),
    }
}

/// An answer: HTTP status, `Warning` header values, body.
struct Answer {
    code: u16,
    warnings: Vec<String>,
    body: Value,
}

async fn send(client: &kube::Client, req: http::Request<Vec<u8>>) -> Answer {
    let (parts, body) = req.into_parts();
    let res = client
        .send(http::Request::from_parts(parts, body.into()))
        .await
        .unwrap();
    let code = res.status().as_u16();
    let warnings = res
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let bytes = res.into_body().collect_bytes().await.unwrap();
    Answer {
        code,
        warnings,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

/// POST `obj`, with `fieldValidation=<v>` when given (none: the server's default, Warn).
async fn create(client: &kube::Client, obj: &Value, validation: Option<&str>) -> Answer {
    let mut url = collection(obj);
    if let Some(v) = validation {
        url.push_str(&format!("?fieldValidation={v}"));
    }
    let req = http::Request::post(url)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(obj).unwrap())
        .unwrap();
    send(client, req).await
}

/// Server-side apply of `obj` (field manager `installer`).
async fn apply(client: &kube::Client, obj: &Value, validation: &str) -> Answer {
    let name = obj["metadata"]["name"].as_str().unwrap();
    let url = format!(
        "{}/{name}?fieldManager=installer&fieldValidation={validation}",
        collection(obj)
    );
    let req = http::Request::patch(url)
        .header("content-type", "application/apply-patch+yaml")
        .body(serde_json::to_vec(obj).unwrap())
        .unwrap();
    send(client, req).await
}

async fn get(client: &kube::Client, obj: &Value) -> Value {
    let name = obj["metadata"]["name"].as_str().unwrap();
    let req = http::Request::get(format!("{}/{name}", collection(obj)))
        .body(Vec::new())
        .unwrap();
    let answer = send(client, req).await;
    assert_eq!(answer.code, 200, "{}", answer.body);
    answer.body
}

/// Creates `docs` in order, each under Strict field validation, and checks that the server
/// stored every field as printed.
async fn create_all_strictly(docs: &[Value]) {
    let k = KubeSim::start(KubeSimOptions::default()).await.unwrap();
    let c = client(&k).await;
    for doc in docs {
        let answer = create(&c, doc, Some("Strict")).await;
        assert_eq!(answer.code, 201, "{}: {}", doc["kind"], answer.body);
        assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
        if doc["kind"] != "Namespace" {
            // Namespace's spec is the server's (finalizers); the others must be kept whole.
            assert_eq!(get(&c, doc).await["spec"], doc["spec"], "{}", doc["kind"]);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_manifest_is_created_under_strict_field_validation_and_stored_whole() {
    let docs = documents(&[]);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "OperatorGroup",
            "Subscription",
            "AWSLoadBalancerController"
        ]
    );
    assert_eq!(
        of_kind(&docs, "Subscription")["spec"],
        json!({"channel": "stable-v1", "installPlanApproval": "Automatic",
               "name": "aws-load-balancer-operator", "source": "redhat-operators",
               "sourceNamespace": "openshift-marketplace"})
    );
    assert_eq!(
        of_kind(&docs, "AWSLoadBalancerController")["metadata"]["name"],
        "cluster"
    );
    create_all_strictly(&docs).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sts_roles_land_in_fields_the_crds_have() {
    let docs = documents(&[
        "--sts-operator-role-arn",
        OPERATOR_ROLE,
        "--sts-controller-role-arn",
        CONTROLLER_ROLE,
        "--source",
        "cs-redhat-operator-index",
        "--subnet-tagging",
        "auto",
    ]);
    assert_eq!(
        of_kind(&docs, "Subscription")["spec"]["config"],
        json!({"env": [{"name": "ROLEARN", "value": OPERATOR_ROLE}]})
    );
    assert_eq!(
        of_kind(&docs, "AWSLoadBalancerController")["spec"],
        json!({"subnetTagging": "Auto",
               "credentialsRequestConfig": {"stsIAMRoleARN": CONTROLLER_ROLE}})
    );
    create_all_strictly(&docs).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_field_is_refused_under_strict_and_silently_lost_by_default() {
    let k = KubeSim::start(KubeSimOptions::default()).await.unwrap();
    let c = client(&k).await;
    let mut controller = of_kind(&documents(&[]), "AWSLoadBalancerController");
    controller["spec"] = json!({"subnetTaging": "Manual"});

    let strict = create(&c, &controller, Some("Strict")).await;
    assert_eq!(strict.code, 400, "{}", strict.body);
    assert_eq!(strict.body["reason"], "BadRequest");
    assert_eq!(
        strict.body["message"],
        "strict decoding error: unknown field \"spec.subnetTaging\""
    );

    // cluster-bootstrap creates the installer's manifests without fieldValidation: the
    // server's default (Warn) stores the object without the field, so the operator would
    // fall back to its default (Auto) and tag the subnets.
    let default = create(&c, &controller, None).await;
    assert_eq!(default.code, 201, "{}", default.body);
    assert_eq!(
        default.warnings,
        [r#"299 - "unknown field \"spec.subnetTaging\"""#]
    );
    assert_eq!(get(&c, &controller).await["spec"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_required_field_is_invalid_and_a_wrong_enum_value_unsupported() {
    let k = KubeSim::start(KubeSimOptions::default()).await.unwrap();
    let c = client(&k).await;
    let docs = documents(&[]);
    assert_eq!(create(&c, &docs[0], Some("Strict")).await.code, 201);

    let mut subscription = of_kind(&docs, "Subscription");
    let spec = subscription["spec"].as_object_mut().unwrap();
    let namespace = spec.remove("sourceNamespace").unwrap();
    spec.insert("sourceNamespce".into(), namespace);
    let warned = create(&c, &subscription, None).await;
    assert_eq!(warned.code, 422, "{}", warned.body);
    assert_eq!(
        warned.body["details"]["causes"][0]["field"],
        "spec.sourceNamespace"
    );

    let mut controller = of_kind(&docs, "AWSLoadBalancerController");
    controller["spec"]["subnetTagging"] = json!("Automatic");
    let invalid = create(&c, &controller, Some("Strict")).await;
    assert_eq!(invalid.code, 422, "{}", invalid.body);
    let message = invalid.body["message"].as_str().unwrap();
    assert!(
        message.contains("spec.subnetTagging: Unsupported value: \"Automatic\""),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_side_apply_refuses_a_misspelt_field_whatever_the_field_validation() {
    let k = KubeSim::start(KubeSimOptions::default()).await.unwrap();
    let c = client(&k).await;
    let mut controller = of_kind(&documents(&[]), "AWSLoadBalancerController");
    assert_eq!(apply(&c, &controller, "Strict").await.code, 201);
    controller["spec"]["subnetTaging"] = json!("Auto");
    for validation in ["Ignore", "Warn", "Strict"] {
        let answer = apply(&c, &controller, validation).await;
        assert_eq!(answer.code, 500, "{validation}: {}", answer.body);
        assert_eq!(
            answer.body["message"],
            "failed to create typed patch object (/cluster; networking.olm.openshift.io/v1, \
             Kind=AWSLoadBalancerController): .spec.subnetTaging: field not declared in schema"
        );
    }
    assert_eq!(
        get(&c, &controller).await["spec"]["subnetTagging"],
        "Manual"
    );
}

#[test]
fn dir_writes_the_streams_documents_one_file_each_in_creation_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = agent(&[
        "manifests",
        "aws-load-balancer-controller",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "99_aws-load-balancer-operator_00_namespace.yaml",
            "99_aws-load-balancer-operator_01_operatorgroup.yaml",
            "99_aws-load-balancer-operator_02_subscription.yaml",
            "99_aws-load-balancer-operator_03_awsloadbalancercontroller.yaml"
        ]
    );
    let from_files: Vec<Value> = files
        .iter()
        .map(|p| serde_saphyr::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    assert_eq!(from_files, documents(&[]));
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    for (args, flag) in [
        (
            vec![
                "--sts-operator-role-arn",
                "arn:aws:iam::123:role/x",
                "--sts-controller-role-arn",
                CONTROLLER_ROLE,
            ],
            "--sts-operator-role-arn",
        ),
        (
            vec!["--source-namespace", "Open_Shift"],
            "--source-namespace",
        ),
        (vec!["--subnet-tagging", "sometimes"], "--subnet-tagging"),
        // One STS role without the other would leave one of them minted by nobody.
        (
            vec!["--sts-controller-role-arn", CONTROLLER_ROLE],
            "--sts-operator-role-arn",
        ),
        (vec!["--dir", "/nonexistent/openshift"], "--dir"),
    ] {
        let mut all = vec!["manifests", "aws-load-balancer-controller"];
        all.extend_from_slice(&args);
        let out = agent(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing printed");
    }
}

#[test]
fn permissions_prints_the_controllers_policy_beside_ours_and_only_for_aws() {
    let out = agent(&["permissions", "--for", "aws-load-balancer-controller"]);
    assert!(out.status.success(), "{out:?}");
    let policy: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(policy["Version"], "2012-10-17");
    let actions: Vec<&str> = policy["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["Action"].as_array().unwrap())
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(actions.contains(&"elasticloadbalancing:CreateLoadBalancer"));
    let gcp = agent(&[
        "permissions",
        "--cloud",
        "gcp",
        "--for",
        "aws-load-balancer-operator",
    ]);
    assert_eq!(gcp.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&gcp.stderr).contains("--for"));
}
