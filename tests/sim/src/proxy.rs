//! A counting, fault-injecting HTTP/1.1 proxy. Tests put it between the agent and an emulator
//! to count the agent's mutating calls, and to freeze the agent between two mutations (hold
//! the n-th mutation before or after the emulator saw it) so it can be SIGKILLed right there.

use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// One request the proxy saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// EC2 Query `Action`, or `METHOD /path` for REST APIs (Route53).
    pub action: String,
    pub mutating: bool,
}

/// Where to freeze the n-th mutating call (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The emulator never sees it.
    Before(usize),
    /// The emulator did it; the client never hears back.
    After(usize),
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    hold: Option<Hold>,
    held: bool,
}

pub struct Proxy {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    held: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::default()));
        let held = Arc::new(Notify::new());
        let (st, hn) = (state.clone(), held.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let (st, hn) = (st.clone(), hn.clone());
                tokio::spawn(async move {
                    let service =
                        service_fn(move |req| handle(req, upstream, st.clone(), hn.clone()));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self {
            addr,
            state,
            held,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    pub fn mutating_calls(&self) -> Vec<String> {
        self.lock()
            .calls
            .iter()
            .filter(|c| c.mutating)
            .map(|c| c.action.clone())
            .collect()
    }

    pub fn reset(&self) {
        let mut s = self.lock();
        s.calls.clear();
        s.hold = None;
        s.held = false;
    }

    pub fn hold(&self, hold: Hold) {
        let mut s = self.lock();
        s.hold = Some(hold);
        s.held = false;
    }

    /// Resolves once a held call is frozen.
    pub async fn wait_held(&self) {
        loop {
            let notified = self.held.notified();
            if self.lock().held {
                return;
            }
            notified.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Classifies a request: EC2's Query API names the action in the form body; REST APIs by
/// method (anything but GET/HEAD mutates).
pub fn classify(method: &hyper::Method, path: &str, body: &[u8]) -> Call {
    let body = String::from_utf8_lossy(body);
    if let Some(action) = body.split('&').find_map(|kv| kv.strip_prefix("Action=")) {
        let read_only = ["Describe", "Get", "List"]
            .iter()
            .any(|p| action.starts_with(p));
        return Call {
            action: action.to_string(),
            mutating: !read_only,
        };
    }
    let mutating = !matches!(*method, hyper::Method::GET | hyper::Method::HEAD);
    let path = path.split('?').next().unwrap_or(path);
    Call {
        action: format!("{method} {path}"),
        mutating,
    }
}

async fn handle(
    req: Request<Incoming>,
    upstream: SocketAddr,
    state: Arc<Mutex<State>>,
    held: Arc<Notify>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let call = classify(&parts.method, parts.uri.path(), &body);
    let hold = {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        s.calls.push(call.clone());
        let nth = s.calls.iter().filter(|c| c.mutating).count();
        match s.hold {
            Some(h @ (Hold::Before(n) | Hold::After(n))) if call.mutating && n == nth => Some(h),
            _ => None,
        }
    };
    let freeze = || {
        state.lock().unwrap_or_else(|p| p.into_inner()).held = true;
        held.notify_waiters();
        std::future::pending::<()>()
    };
    if let Some(Hold::Before(_)) = hold {
        freeze().await;
    }
    let response = forward(Request::from_parts(parts, Full::new(body)), upstream).await;
    if let Some(Hold::After(_)) = hold {
        freeze().await;
    }
    Ok(response.unwrap_or_else(|e| {
        let mut r = Response::new(Full::new(Bytes::from(format!(
            "proxy: upstream failed: {e}"
        ))));
        *r.status_mut() = hyper::StatusCode::BAD_GATEWAY;
        r
    }))
}

async fn forward(req: Request<Full<Bytes>>, upstream: SocketAddr) -> Result<Response<Full<Bytes>>> {
    let stream = TcpStream::connect(upstream).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let response = sender.send_request(req).await?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(Response::from_parts(parts, Full::new(body)))
}
