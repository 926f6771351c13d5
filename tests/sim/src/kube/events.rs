//! core/v1 Events about Services, as client-go's event recorder writes them: named
//! `<object>.<hex>`, `involvedObject` pointing at the Service, `source.component` and
//! `reportingComponent` naming the controller. A repeat of the same event (same object,
//! type, reason, message and component) bumps `count` and `lastTimestamp` of the existing
//! Event instead of creating another, as the recorder's aggregation does.

use super::meta;
use super::ops::{self, WriteCtx};
use super::resources::EVENTS;
use super::store::Inner;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// `Normal` or `Warning`, as `corev1.EventType*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Normal,
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// One event a controller reports about a Service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub component: &'static str,
    pub typ: EventType,
    pub reason: &'static str,
    pub message: String,
}

/// Unique names even within one nanosecond (the recorder uses the time in ns).
fn event_name(object: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    format!(
        "{object}.{:x}",
        nanos.wrapping_add(SEQ.fetch_add(1, Ordering::Relaxed))
    )
}

/// Records `report` about `svc` (a stored Service). Failures are dropped, as the recorder
/// drops them: an event is never worth failing the controller's work.
pub fn record(inner: &mut Inner, svc: &Value, report: &Report) {
    let ns = meta::namespace(svc).to_string();
    let uid = meta::uid(svc);
    let ctx = WriteCtx::internal(report.component, false);
    let now = meta::now();
    let same = inner.list(EVENTS, Some(&ns)).into_iter().find(|(_, e)| {
        meta::get_str(e, &["involvedObject", "uid"]) == Some(uid)
            && e["type"] == report.typ.as_str()
            && e["reason"] == report.reason
            && e["message"] == report.message.as_str()
            && meta::get_str(e, &["source", "component"]) == Some(report.component)
    });
    if let Some((key, existing)) = same {
        let mut event = (*existing).clone();
        event["count"] = json!(existing["count"].as_u64().unwrap_or(1) + 1);
        event["lastTimestamp"] = json!(now);
        let _ = ops::update(inner, &key, event, super::apply::Scope::Main, &ctx);
        return;
    }
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name(meta::name(svc)), "namespace": ns},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Service",
            "namespace": ns,
            "name": meta::name(svc),
            "uid": uid,
            "resourceVersion": meta::get_str(svc, &["metadata", "resourceVersion"]).unwrap_or(""),
        },
        "reason": report.reason,
        "message": report.message,
        "type": report.typ.as_str(),
        "source": {"component": report.component},
        "reportingComponent": report.component,
        "reportingInstance": "",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    let _ = ops::create(inner, EVENTS, &ns, event, &ctx);
}

/// The Events about the Service `ns/name`, in the order they were last written.
pub fn of_service(inner: &Inner, ns: &str, name: &str) -> Vec<Value> {
    let mut events: Vec<Value> = inner
        .list(EVENTS, Some(ns))
        .into_iter()
        .filter(|(_, e)| {
            meta::get_str(e, &["involvedObject", "kind"]) == Some("Service")
                && meta::get_str(e, &["involvedObject", "name"]) == Some(name)
        })
        .map(|(_, e)| (*e).clone())
        .collect();
    events.sort_by_key(meta::rv_of);
    events
}
