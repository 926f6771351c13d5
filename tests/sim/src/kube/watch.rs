//! Watch streams: newline-delimited JSON events over a chunked HTTP/1.1 body.
//!
//! Faithful: `resourceVersion` N replays the kept events after N; absent or "0" starts with
//! synthetic ADDED events for the current objects; a resourceVersion older than the kept
//! history gives an `ERROR` event holding a 410 `Expired` Status (the watch cache answers 200
//! and sends the error in the stream, as kube-apiserver does); `allowWatchBookmarks` brings
//! periodic BOOKMARK events; `sendInitialEvents=true` ends the initial ADDED events with a
//! bookmark annotated `k8s.io/initial-events-end: "true"`; with a selector, an object that
//! leaves or enters the selection is seen as DELETED or ADDED; `timeoutSeconds` ends the
//! stream; streams can be closed by the server at any time (drop_watches).

use super::meta;
use super::resources::RESOURCES;
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::store::{Event, EventType, Store};
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, interval_at, sleep_until};

pub struct WatchReq {
    pub res: usize,
    pub ns: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    /// None: start with the current objects.
    pub since: Option<u64>,
    pub bookmarks: bool,
    pub send_initial_events: bool,
    pub timeout: Duration,
}

impl WatchReq {
    fn selects(&self, obj: &Value) -> bool {
        self.ns
            .as_deref()
            .is_none_or(|ns| meta::namespace(obj) == ns)
            && self.labels.matches(obj)
            && self.fields.matches(obj)
    }

    /// The event as this watcher sees it, if at all.
    fn line(&self, e: &Event) -> Option<Bytes> {
        let now = self.selects(&e.obj);
        let typ = match e.typ {
            EventType::Added => now.then_some("ADDED"),
            EventType::Deleted => now.then_some("DELETED"),
            EventType::Modified => {
                let before = e.old.as_deref().is_some_and(|o| self.selects(o));
                match (before, now) {
                    (true, true) => Some("MODIFIED"),
                    (false, true) => Some("ADDED"),
                    (true, false) => Some("DELETED"),
                    (false, false) => None,
                }
            }
        }?;
        Some(encode(typ, &e.obj))
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let res = &RESOURCES[self.res];
        let mut m = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            m["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({"kind": res.kind, "apiVersion": res.api_version(), "metadata": m});
        encode("BOOKMARK", &obj)
    }
}

fn encode(typ: &str, obj: &Value) -> Bytes {
    let mut out = format!("{{\"type\":\"{typ}\",\"object\":").into_bytes();
    out.extend(serde_json::to_vec(obj).unwrap_or_default());
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// Starts a watch; the receiver yields the body chunks and ends when the stream closes.
pub fn start(
    store: Arc<Store>,
    req: WatchReq,
    bookmark_every: Duration,
    mut shutdown: watch::Receiver<bool>,
) -> mpsc::Receiver<Bytes> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let since = if req.send_initial_events {
        None
    } else {
        req.since
    };
    let sub = store.lock().subscribe(req.res, since, false);
    tokio::spawn(async move {
        let (backlog, mut events) = match sub {
            Ok(s) => s,
            Err(too_old) => {
                let err = ApiError::expired(format!(
                    "too old resource version: {} ({})",
                    too_old.requested, too_old.oldest
                ));
                let _ = tx.send(encode("ERROR", &err.to_status())).await;
                return;
            }
        };
        let mut last = req.since.unwrap_or(0);
        for e in &backlog {
            last = last.max(e.rv);
            if let Some(line) = req.line(e)
                && tx.send(line).await.is_err()
            {
                return;
            }
        }
        if req.send_initial_events {
            let rv = store.lock().rv().max(last);
            if tx.send(req.bookmark(rv, true)).await.is_err() {
                return;
            }
        }
        let deadline = Instant::now() + req.timeout;
        let mut tick = interval_at(Instant::now() + bookmark_every, bookmark_every);
        loop {
            tokio::select! {
                e = events.recv() => match e {
                    Some(e) => {
                        last = last.max(e.rv);
                        if let Some(line) = req.line(&e)
                            && tx.send(line).await.is_err()
                        {
                            return;
                        }
                    }
                    None => return,
                },
                _ = tick.tick(), if req.bookmarks => {
                    let rv = store.lock().rv();
                    while let Ok(e) = events.try_recv() {
                        if let Some(line) = req.line(&e)
                            && tx.send(line).await.is_err()
                        {
                            return;
                        }
                    }
                    last = last.max(rv);
                    if tx.send(req.bookmark(last, false)).await.is_err() {
                        return;
                    }
                }
                _ = sleep_until(deadline) => return,
                _ = tx.closed() => return,
                _ = super::stopped(&mut shutdown) => return,
            }
        }
    });
    rx
}
