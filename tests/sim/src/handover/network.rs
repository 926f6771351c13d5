//! The network the simulated clients reach, on loopback only: every IP a DNS answer can hold
//! maps to a local listener (never to the address itself, which the cloud handed out and which
//! may exist somewhere else). A listener answers `ok` while its IP is alive; otherwise it
//! accepts and never answers, as an address that drops packets does: the client waits for its
//! timeout.

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What answers now: the bootstrap host's addresses (its IP and, on GCP and Azure, the second
/// address the agent gave it) until it is destroyed, and each load-balancer IP once its load
/// balancer serves it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Alive {
    pub bootstrap: BTreeSet<IpAddr>,
    pub load_balancers: BTreeSet<IpAddr>,
}

impl Alive {
    pub fn answers(&self, ip: IpAddr) -> bool {
        self.bootstrap.contains(&ip) || self.load_balancers.contains(&ip)
    }
}

pub struct Network {
    alive: watch::Sender<Alive>,
    listeners: Mutex<HashMap<IpAddr, SocketAddr>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Network {
    pub fn new() -> Arc<Network> {
        Arc::new(Network {
            alive: watch::channel(Alive::default()).0,
            listeners: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
        })
    }

    pub fn set_alive(&self, alive: Alive) {
        self.alive.send_if_modified(|a| {
            let changed = *a != alive;
            *a = alive;
            changed
        });
    }

    pub fn alive(&self) -> Alive {
        self.alive.borrow().clone()
    }

    /// The local address standing in for `ip` (a listener is started the first time).
    pub async fn endpoint(&self, ip: IpAddr) -> std::io::Result<SocketAddr> {
        if let Some(addr) = lock(&self.listeners).get(&ip) {
            return Ok(*addr);
        }
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let mut listeners = lock(&self.listeners);
        if let Some(existing) = listeners.get(&ip) {
            return Ok(*existing);
        }
        listeners.insert(ip, addr);
        let alive = self.alive.subscribe();
        lock(&self.tasks).push(tokio::spawn(serve(listener, ip, alive)));
        Ok(addr)
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn serve(listener: TcpListener, ip: IpAddr, alive: watch::Receiver<Alive>) {
    loop {
        let Ok((mut conn, _)) = listener.accept().await else {
            continue;
        };
        if alive.borrow().answers(ip) {
            tokio::spawn(async move {
                let _ = conn.write_all(b"ok\n").await;
                let _ = conn.shutdown().await;
            });
        } else {
            // Dropped packets: the connection is held open and silent until the client gives
            // up (its timeout is far shorter than this).
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(60)).await;
                drop(conn);
            });
        }
    }
}
