//! Each service's own error answers (EC2, Route53, ARM, Google), written as the real service
//! writes them: the proxy's injected faults and the limits' refusals answer with these.

use super::{Call, Service};
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;

fn response(status: u16, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    r
}

fn request_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(crate) fn ec2_error(status: u16, code: &str, message: &str) -> Response<Full<Bytes>> {
    response(
        status,
        "text/xml;charset=UTF-8",
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors><RequestID>{}</RequestID></Response>",
            request_id()
        ),
    )
}

pub(crate) fn route53_error(
    status: u16,
    kind: &str,
    code: &str,
    message: &str,
) -> Response<Full<Bytes>> {
    response(
        status,
        "text/xml",
        format!(
            "<?xml version=\"1.0\"?>\n<ErrorResponse xmlns=\"https://route53.amazonaws.com/doc/2013-04-01/\"><Error><Type>{kind}</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>{}</RequestId></ErrorResponse>",
            request_id()
        ),
    )
}

pub(crate) fn arm_error(status: u16, code: &str, message: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    let mut r = response(status, "application/json; charset=utf-8", body.to_string());
    if let Ok(id) = hyper::header::HeaderValue::from_str(&request_id()) {
        r.headers_mut().insert("x-ms-request-id", id);
    }
    r
}

pub(crate) fn google_error(
    code: u16,
    status: &str,
    reason: &str,
    message: &str,
) -> Response<Full<Bytes>> {
    let domain = if reason == "rateLimitExceeded" {
        "usageLimits"
    } else {
        "global"
    };
    let body = serde_json::json!({"error": {
        "code": code,
        "message": message,
        "status": status,
        "errors": [{"message": message, "domain": domain, "reason": reason}],
    }});
    response(code, "application/json; charset=UTF-8", body.to_string())
}

/// The service's own "slow down".
pub(super) fn throttled(service: Service, call: &Call, pick: u64) -> Response<Full<Bytes>> {
    match service {
        Service::Ec2 => ec2_error(503, "RequestLimitExceeded", "Request limit exceeded."),
        Service::Route53 => route53_error(400, "Sender", "Throttling", "Rate exceeded"),
        Service::Arm => {
            let kind = if call.mutating { "write" } else { "read" };
            let mut r = arm_error(
                429,
                "SubscriptionRequestsThrottled",
                &format!(
                    "Number of '{kind}' requests for subscription '00000000-0000-0000-0000-000000000001' actor 'bootstrap-agent' exceeded. Please try again after '1' seconds after the last request."
                ),
            );
            r.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("1"),
            );
            r
        }
        // Both answers Google gives for a rate limit, picked by the fault's other roll.
        Service::Google if (pick >> 32).is_multiple_of(2) => {
            let api = if call.action.contains("/dns/") {
                "dns.googleapis.com"
            } else {
                "compute.googleapis.com"
            };
            google_error(
                429,
                "RESOURCE_EXHAUSTED",
                "rateLimitExceeded",
                &format!(
                    "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service '{api}'."
                ),
            )
        }
        Service::Google => google_error(
            503,
            "UNAVAILABLE",
            "rateLimitExceeded",
            "Rate Limit Exceeded",
        ),
    }
}

/// A fault's answer in each service's own words: EC2 and ARM give (code, message), Route53
/// (type, code, message), Google (status, reason, message).
pub(super) struct Words {
    status: u16,
    ec2: [&'static str; 2],
    route53: [&'static str; 3],
    arm: [&'static str; 2],
    google: [&'static str; 3],
}

/// The service's own HTTP 503.
pub(super) const UNAVAILABLE: Words = Words {
    status: 503,
    ec2: [
        "Unavailable",
        "The server is overloaded and can't handle the request.",
    ],
    route53: [
        "Receiver",
        "ServiceUnavailable",
        "The service is unavailable. Please try again later.",
    ],
    arm: [
        "ServiceUnavailable",
        "The service is currently unavailable. Please try again later.",
    ],
    google: [
        "UNAVAILABLE",
        "backendError",
        "The service is currently unavailable.",
    ],
};

/// The service's own HTTP 500.
pub(super) const SERVER_ERROR: Words = Words {
    status: 500,
    ec2: [
        "InternalError",
        "An internal error has occurred. Retry your request, but if the problem persists, contact us.",
    ],
    route53: [
        "Receiver",
        "InternalFailure",
        "The request processing has failed because of an unknown error, exception or failure.",
    ],
    arm: [
        "InternalServerError",
        "Encountered internal server error. Diagnostic information: timestamp '20240101T000000Z'.",
    ],
    google: [
        "INTERNAL",
        "backendError",
        "Internal error. Please try again or contact Google Support.",
    ],
};

pub(super) fn answer_in_words(service: Service, words: &Words) -> Response<Full<Bytes>> {
    let status = words.status;
    match service {
        Service::Ec2 => ec2_error(status, words.ec2[0], words.ec2[1]),
        Service::Route53 => {
            let [kind, code, message] = words.route53;
            route53_error(status, kind, code, message)
        }
        Service::Arm => arm_error(status, words.arm[0], words.arm[1]),
        Service::Google => {
            let [code, reason, message] = words.google;
            google_error(status, code, reason, message)
        }
    }
}
