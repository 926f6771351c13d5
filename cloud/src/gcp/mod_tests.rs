//! The GCP provider: its retry policy and error classes, request ids, labels, the Shared VPC
//! subnetwork URL, and a Debug that never shows the key.

use super::*;
use google_cloud_gax::error::rpc::{Code, Status};
use google_cloud_gax::retry_policy::RetryPolicy;
use google_cloud_gax::retry_state::RetryState;

fn http_error(http: u16, code: Code) -> GaxError {
    GaxError::service_with_http_metadata(
        Status::default().set_code(code).set_message("m"),
        Some(http),
        None,
    )
}

/// The clients retry as the one per-call policy says: its attempts, its budget.
#[test]
fn the_retry_policy_is_the_one_per_call_policy() {
    let (policy, per_call) = (retry_policy(), crate::retry::PER_CALL);
    let remaining = policy.remaining_time(&RetryState::new(true));
    assert!(
        remaining.is_some_and(|r| r <= per_call.budget && r > per_call.budget / 2),
        "{remaining:?}"
    );
    let failed = |attempts: u32| {
        policy.on_error(
            &RetryState::new(true).set_attempt_count(attempts),
            http_error(503, Code::Unavailable),
        )
    };
    assert!(failed(per_call.max_attempts - 1).is_continue());
    assert!(failed(per_call.max_attempts).is_exhausted());
}

/// A retry loop out of time wraps the last answer: a throttled call that ran out of its
/// budget is still throttling (transient, retried by the step), not a fatal "request failed".
#[test]
fn a_retry_loop_out_of_time_is_classified_by_the_last_answer() {
    let exhausted = GaxError::exhausted(http_error(429, Code::ResourceExhausted));
    let err = classify("managedZones.list", exhausted);
    assert_eq!(err.kind, ErrorKind::Transient, "{err}");
    assert!(err.to_string().contains("RESOURCE_EXHAUSTED"), "{err}");
    let exhausted = GaxError::exhausted(http_error(403, Code::PermissionDenied));
    assert_eq!(
        classify("managedZones.list", exhausted).kind,
        ErrorKind::Fatal
    );
}

#[test]
fn throttling_and_5xx_are_transient_and_retried_only_when_safe_to_repeat() {
    let transient = [
        (429, Code::ResourceExhausted),
        (503, Code::Unavailable),
        (500, Code::Internal),
        (502, Code::Unknown),
    ];
    for (http, code) in transient {
        assert_eq!(
            classify("op", http_error(http, code)).kind,
            ErrorKind::Transient,
            "{http}"
        );
        let policy = TransientErrors;
        assert!(
            policy
                .on_error(&RetryState::new(true), http_error(http, code))
                .is_continue(),
            "{http} retried when idempotent"
        );
        assert!(
            policy
                .on_error(&RetryState::new(false), http_error(http, code))
                .is_permanent(),
            "{http} never repeated blindly when not idempotent"
        );
    }
    for (http, code, kind) in [
        (400, Code::InvalidArgument, ErrorKind::Fatal),
        (403, Code::PermissionDenied, ErrorKind::Fatal),
        (404, Code::NotFound, ErrorKind::NotFound),
        (412, Code::FailedPrecondition, ErrorKind::Conflict),
        (409, Code::AlreadyExists, ErrorKind::Conflict),
    ] {
        assert_eq!(classify("op", http_error(http, code)).kind, kind, "{http}");
        assert!(
            TransientErrors
                .on_error(&RetryState::new(true), http_error(http, code))
                .is_permanent(),
            "{http}"
        );
    }
}

#[test]
fn request_ids_are_uuids_stable_per_token_and_distinct_per_token() {
    let a = request_id("mycluster-7xk2p-pub4-g1");
    assert_eq!(a, request_id("mycluster-7xk2p-pub4-g1"));
    assert_ne!(a, request_id("mycluster-7xk2p-pub4-g2"));
    assert_ne!(a, request_id("mycluster-7xk2p-prv4-g1"));
    let parsed = uuid::Uuid::parse_str(&a).unwrap();
    assert_eq!(parsed.get_version_num(), 5);
}

#[test]
fn labels_are_valid_gcp_labels() {
    assert_eq!(
        cluster_label("mycluster-7xk2p"),
        "kubernetes-io-cluster-mycluster-7xk2p"
    );
    let long = cluster_label(&"A.b".repeat(40));
    assert_eq!(long.len(), 63);
    assert!(
        long.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    );
}

#[test]
fn the_subnetwork_url_names_the_shared_vpc_host_project_when_there_is_one() {
    let mut settings = GcpSettings {
        project: "svc".into(),
        region: "us-central1".into(),
        subnetwork: "ocp-compute".into(),
        network_project: None,
        infra_id: "mycluster-7xk2p".into(),
        credentials: GcpCredentials::Default,
        compute_endpoint: None,
        dns_endpoint: None,
        resource_manager_endpoint: None,
        second_address_host: None,
    };
    assert_eq!(
        settings.subnetwork_url(),
        "projects/svc/regions/us-central1/subnetworks/ocp-compute"
    );
    settings.network_project = Some("host".into());
    assert_eq!(
        settings.subnetwork_url(),
        "projects/host/regions/us-central1/subnetworks/ocp-compute"
    );
}

#[test]
fn debug_never_shows_the_key() {
    let creds = GcpCredentials::ServiceAccount("{\"private_key\":\"s3cret\"}".into());
    assert!(!format!("{creds:?}").contains("s3cret"));
}

/// A refusal names what the call needs from the table (Cloud DNS says only "Forbidden");
/// other errors are left as the API said them.
#[test]
fn a_refusal_names_the_permissions_of_the_call() {
    let refused = classify("changes.create", http_error(403, Code::PermissionDenied));
    assert!(
        refused.message.contains(
            "changes.create needs dns.changes.create, dns.resourceRecordSets.create, dns.resourceRecordSets.update, dns.resourceRecordSets.delete"
        ),
        "{}",
        refused.message
    );
    let missing = classify("changes.create", http_error(404, Code::NotFound));
    assert!(!missing.message.contains("needs"), "{}", missing.message);
    let unknown = classify("frobnicate", http_error(403, Code::PermissionDenied));
    assert!(!unknown.message.contains("needs"), "{}", unknown.message);
}

/// Compute Engine's spent rate quota is a 403 with the reason `rateLimitExceeded` (its quota
/// page): throttling, retried, not a permission refusal; a 403 without it stays fatal.
#[test]
fn a_403_rate_limit_exceeded_is_throttling_not_a_refusal() {
    let answer = |reason: &str| {
        // As the client makes it of the envelope's `errors[]`: an ErrorInfo per entry.
        let details = serde_json::json!({
            "message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com'.",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                         "domain": "usageLimits", "reason": reason}],
        });
        let status: Status = serde_json::from_value(details).unwrap();
        let status = status.set_code(Code::PermissionDenied);
        GaxError::service_with_http_metadata(status, Some(403), None)
    };
    let throttled = classify("addresses.insert", answer("rateLimitExceeded"));
    assert_eq!(throttled.kind, ErrorKind::Transient, "{throttled}");
    assert!(
        TransientErrors
            .on_error(&RetryState::new(true), answer("rateLimitExceeded"))
            .is_continue()
    );
    assert_eq!(
        classify("addresses.insert", answer("forbidden")).kind,
        ErrorKind::Fatal
    );
    assert!(super::is_throttling(
        403,
        &serde_json::json!({"error": {"errors": [{"reason": "rateLimitExceeded"}]}})
    ));
    assert!(!super::is_throttling(
        403,
        &serde_json::json!({"error": {}})
    ));
}
