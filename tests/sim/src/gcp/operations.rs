//! compute.v1 Operations as the fake keeps them: made RUNNING until its `operation_delay` has
//! passed, stored (by requestId too, so that a retried request replays its operation), read
//! and waited for (`regionOperations.get` and `.wait`). Every compute resource of the fake
//! starts its changes through these.

use super::compute::{BASE, check_project, region_path};
use super::http::{ApiError, Reply, Req};
use super::{Effect, Operation, World, now_rfc3339};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn is_uuid(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    lens == [8, 4, 4, 4, 12]
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// An Operation of `scope` (`projects/p/regions/r`: a region's, or `projects/p/zones/z`: a
/// zone's), RUNNING until the fake's `operation_delay` has passed.
pub(super) fn operation(
    w: &mut World,
    scope: &str,
    kind: &str,
    target_link: String,
    target_id: String,
    effect: Option<Effect>,
) -> Operation {
    // A global operation names neither.
    let scope_key = if scope.contains("/zones/") {
        Some("zone")
    } else if scope.contains("/regions/") {
        Some("region")
    } else {
        None
    };
    let id = w.id();
    let name = format!(
        "operation-{}-{}",
        id,
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let now = now_rfc3339();
    let mut json = json!({
            "kind": "compute#operation",
            "id": id,
            "name": name,
            "operationType": kind,
            "targetLink": target_link,
            "targetId": target_id,
            "status": "RUNNING",
            "user": "anonymous@example-project.iam.gserviceaccount.com",
            "progress": 0,
            "insertTime": now,
            "startTime": now,
            "selfLink": format!("{BASE}/{scope}/operations/{name}"),
    });
    if let Some(key) = scope_key {
        json[key] = json!(format!("{BASE}/{scope}"));
    }
    Operation {
        json,
        done_at: Instant::now() + w.options.operation_delay,
        effect,
    }
}

/// Stores an operation and completes it at once when there is no delay.
pub(super) fn start_operation(w: &mut World, op: Operation, request_id: Option<&str>) -> Reply {
    let name = op.json["name"].as_str().unwrap_or_default().to_string();
    if let Some(id) = request_id {
        w.request_ids.insert(id.to_string(), name.clone());
    }
    w.operations.insert(name.clone(), op);
    w.tick();
    Ok(w.operations[&name].json.clone())
}

/// The operation an earlier request with this requestId started (idempotent retry).
pub(super) fn replay(w: &mut World, req: &Req) -> Result<Option<Value>, ApiError> {
    let Some(id) = req.param("requestId") else {
        return Ok(None);
    };
    if !is_uuid(id) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'requestId': '{id}'. The requestId must be a valid UUID"
        )));
    }
    Ok(w.request_ids
        .get(id)
        .and_then(|name| w.operations.get(name))
        .map(|op| op.json.clone()))
}

pub(super) fn get_operation(w: &World, op: &str) -> Reply {
    let region = format!("{BASE}/{}", region_path(w));
    let op_json = w
        .operations
        .get(op)
        .filter(|o| o.json["region"] == region.as_str());
    op_json.map(|o| o.json.clone()).ok_or_else(|| {
        ApiError::not_found(format!(
            "The resource '{}/operations/{op}' was not found",
            region_path(w)
        ))
    })
}

/// regionOperations.wait: returns when DONE or after 2 minutes, whichever is first.
pub async fn wait_operation(
    world: &Arc<Mutex<World>>,
    project: &str,
    region: &str,
    op: &str,
) -> Reply {
    wait_until_done(world, op, |w| {
        check_project(w, project)?;
        if region != w.seed().region {
            return Err(ApiError::not_found(format!(
                "The resource 'projects/{project}/regions/{region}' was not found"
            )));
        }
        super::authz::compute(
            w,
            project,
            "compute.regionOperations.get",
            &format!("projects/{project}/regions/{region}/operations/{op}"),
        )?;
        get_operation(w, op)
    })
    .await
}

/// An operation's `wait`: `read` (the checks and the operation as the caller may see it) until
/// the operation `op` is DONE, or for 2 minutes at most (compute v1's `wait` returns then).
pub(super) async fn wait_until_done(
    world: &Arc<Mutex<World>>,
    op: &str,
    read: impl Fn(&World) -> Reply,
) -> Reply {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (reply, done_at) = {
            let mut w = world.lock().unwrap_or_else(|p| p.into_inner());
            w.tick();
            let reply = read(&w)?;
            let done_at = w.operations.get(op).map(|o| o.done_at);
            (reply, done_at)
        };
        if reply["status"] == "DONE" || Instant::now() >= deadline {
            return Ok(reply);
        }
        let until = done_at.unwrap_or(deadline).min(deadline);
        tokio::time::sleep(
            until.saturating_duration_since(Instant::now()) + Duration::from_millis(1),
        )
        .await;
    }
}
