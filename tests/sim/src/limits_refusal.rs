//! The refusal each cloud writes when one of its published limits is spent.

use super::Refusal;
use crate::proxy::Service;
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;

/// The cloud's own refusal for a spent quota.
pub fn refusal(service: Service, refusal: &Refusal) -> Response<Full<Bytes>> {
    let name = refusal.quota.name;
    match service {
        Service::Ec2 => {
            crate::proxy::ec2_error(503, "RequestLimitExceeded", "Request limit exceeded.")
        }
        Service::Route53 => {
            crate::proxy::route53_error(400, "Sender", "Throttling", "Rate exceeded")
        }
        Service::Google if !["Queries", "Read requests"].contains(&name) => {
            crate::proxy::google_error(
                429,
                "RESOURCE_EXHAUSTED",
                "rateLimitExceeded",
                "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'dns.googleapis.com'.",
            )
        }
        Service::Google => crate::proxy::google_error(
            403,
            "PERMISSION_DENIED",
            "rateLimitExceeded",
            &format!(
                "Quota exceeded for quota metric '{name}' and limit '{name} per minute' of service 'compute.googleapis.com' for consumer 'project_number:000000000001'."
            ),
        ),
        Service::Arm => {
            let provider = name.starts_with("Microsoft.Network") || name == "DNS reads";
            let (code, message) = if !provider {
                (
                    "SubscriptionRequestsThrottled",
                    format!(
                        "Number of '{}' requests for subscription '00000000-0000-0000-0000-000000000001' actor 'bootstrap-agent' exceeded. Please try again after '{}' seconds after the last request.",
                        name.trim_end_matches('s'),
                        refusal.retry_after.as_secs()
                    ),
                )
            } else {
                (
                    "TooManyRequests",
                    format!(
                        "The request is being throttled as the limit of '{name}' per 5 minutes has been reached. Please try again after '{}' seconds.",
                        refusal.retry_after.as_secs()
                    ),
                )
            };
            let mut r = crate::proxy::arm_error(429, code, &message);
            if let Ok(v) =
                hyper::header::HeaderValue::from_str(&refusal.retry_after.as_secs().to_string())
            {
                r.headers_mut().insert(hyper::header::RETRY_AFTER, v);
            }
            r
        }
    }
}
