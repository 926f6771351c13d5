//! The object store: one global resourceVersion counter (like etcd's revision), objects keyed by
//! (resource, namespace, name) in key order, a bounded per-resource event history for watch
//! resume, and the registry of open watches.
//!
//! Every write happens under one mutex and is pushed to the watchers while that mutex is held,
//! so a watcher that reads the current resourceVersion under the lock knows every event up to
//! it is already in its channel (that is what makes bookmarks correct).

use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// (resource index in [`super::resources::RESOURCES`], namespace or "", name).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub res: usize,
    pub ns: String,
    pub name: String,
}

impl Key {
    pub fn new(res: usize, ns: &str, name: &str) -> Self {
        Self {
            res,
            ns: ns.to_string(),
            name: name.to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

/// One committed change. `old` is the previous state (for MODIFIED/DELETED), which lets a
/// selector-filtered watch turn a MODIFIED that leaves the selection into a DELETED.
#[derive(Debug)]
pub struct Event {
    pub rv: u64,
    pub typ: EventType,
    pub key: Key,
    pub old: Option<Arc<Value>>,
    pub obj: Arc<Value>,
}

struct Watcher {
    res: usize,
    internal: bool,
    tx: mpsc::UnboundedSender<Arc<Event>>,
}

pub struct Inner {
    rv: u64,
    objects: BTreeMap<Key, Arc<Value>>,
    history: Vec<VecDeque<Arc<Event>>>,
    /// Per resource: the highest resourceVersion whose event was evicted from the history.
    compacted: Vec<u64>,
    limit: usize,
    watchers: Vec<Watcher>,
}

/// The events to replay first, then the live ones.
pub type Subscription = (Vec<Arc<Event>>, mpsc::UnboundedReceiver<Arc<Event>>);

/// A watch that starts from a resourceVersion older than the kept history.
#[derive(Debug)]
pub struct TooOld {
    pub requested: u64,
    pub oldest: u64,
}

impl Inner {
    pub fn rv(&self) -> u64 {
        self.rv
    }

    pub fn get(&self, key: &Key) -> Option<Arc<Value>> {
        self.objects.get(key).cloned()
    }

    /// Objects of one resource, optionally in one namespace, in key order.
    pub fn list(&self, res: usize, ns: Option<&str>) -> Vec<(Key, Arc<Value>)> {
        let start = Key::new(res, ns.unwrap_or(""), "");
        self.objects
            .range(start..)
            .take_while(|(k, _)| k.res == res && ns.is_none_or(|n| k.ns == n))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Stores `obj` under a new resourceVersion and emits ADDED or MODIFIED.
    pub fn put(&mut self, key: Key, mut obj: Value) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        super::meta::set_str(&mut obj, &["metadata", "resourceVersion"], &rv.to_string());
        let obj = Arc::new(obj);
        let old = self.objects.insert(key.clone(), obj.clone());
        let typ = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.emit(Event {
            rv,
            typ,
            key,
            old,
            obj: obj.clone(),
        });
        obj
    }

    /// Removes an object; the DELETED event carries it with the deletion's resourceVersion.
    pub fn remove(&mut self, key: &Key) -> Option<Arc<Value>> {
        let old = self.objects.remove(key)?;
        self.rv += 1;
        let rv = self.rv;
        let mut last = (*old).clone();
        super::meta::set_str(&mut last, &["metadata", "resourceVersion"], &rv.to_string());
        let obj = Arc::new(last);
        self.emit(Event {
            rv,
            typ: EventType::Deleted,
            key: key.clone(),
            old: Some(old),
            obj: obj.clone(),
        });
        Some(obj)
    }

    fn emit(&mut self, event: Event) {
        let event = Arc::new(event);
        let res = event.key.res;
        let history = &mut self.history[res];
        history.push_back(event.clone());
        while history.len() > self.limit {
            if let Some(evicted) = history.pop_front() {
                self.compacted[res] = evicted.rv;
            }
        }
        self.watchers
            .retain(|w| w.res != res || w.tx.send(event.clone()).is_ok());
    }

    /// Registers a watcher of one resource. `since: None` starts with synthetic ADDED events
    /// for the current objects; `Some(rv)` replays the kept events after `rv`.
    pub fn subscribe(
        &mut self,
        res: usize,
        since: Option<u64>,
        internal: bool,
    ) -> Result<Subscription, TooOld> {
        let backlog = match since {
            None => self
                .list(res, None)
                .into_iter()
                .map(|(key, obj)| {
                    Arc::new(Event {
                        rv: super::meta::rv_of(&obj),
                        typ: EventType::Added,
                        key,
                        old: None,
                        obj,
                    })
                })
                .collect(),
            Some(rv) if rv < self.compacted[res] => {
                return Err(TooOld {
                    requested: rv,
                    oldest: self.compacted[res],
                });
            }
            Some(rv) => self.history[res]
                .iter()
                .filter(|e| e.rv > rv)
                .cloned()
                .collect(),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        self.watchers.push(Watcher { res, internal, tx });
        Ok((backlog, rx))
    }

    /// Closes every watch stream opened by a client (the controller's own watch stays).
    pub fn drop_watches(&mut self) {
        self.watchers.retain(|w| w.internal);
    }

    /// The oldest resourceVersion a watch of `res` can still start from.
    pub fn compacted(&self, res: usize) -> u64 {
        self.compacted[res]
    }
}

pub struct Store {
    inner: Mutex<Inner>,
}

impl Store {
    pub fn new(resources: usize, limit: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                rv: 0,
                objects: BTreeMap::new(),
                history: (0..resources).map(|_| VecDeque::new()).collect(),
                compacted: vec![0; resources],
                limit: limit.max(1),
                watchers: Vec::new(),
            }),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}
