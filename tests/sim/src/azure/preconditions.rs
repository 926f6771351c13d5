//! ARM's optimistic concurrency, as every resource of the fake that takes a conditional write
//! answers it (NICs, load balancers, security groups; DNS record sets keep their own, with
//! the record-set wording).

use super::arm::{Call, Reply};

/// ARM's optimistic concurrency for a resource whose current etag is `etag` (None: it does
/// not exist): `If-Match` (the etag, or `*`) and `If-None-Match: *`, else 412.
pub(super) fn precondition_on(call: &Call, etag: Option<&str>) -> Option<Reply> {
    let failed = |what: String| {
        Some(Reply::error(
            412,
            "PreconditionFailed",
            format!(
                "The condition '{what}' in the request header was not met: the resource has been modified or does not exist."
            ),
        ))
    };
    if let Some(want) = call.header("if-match") {
        match etag {
            Some(etag) if want == "*" || want == etag => {}
            _ => return failed(format!("If-Match: {want}")),
        }
    }
    if call.header("if-none-match") == Some("*") && etag.is_some() {
        return failed("If-None-Match: *".into());
    }
    None
}
