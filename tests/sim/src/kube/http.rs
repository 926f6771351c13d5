//! The HTTPS server: TLS, HTTP/1.1 with chunked streaming bodies, the request log,
//! bearer-token auth, RBAC (see `rbac`), query parsing, discovery routes; resource paths go to `rest`.

use super::request_info::Attributes;
use super::status::ApiError;
use super::{Shared, discovery, meta, rbac, rest};
use crate::percent;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;

/// A whole body, or a stream of chunks (watch).
pub enum Body {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Body::Full(None) => SizeHint::with_exact(0),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

pub async fn serve(listener: TcpListener, acceptor: TlsAcceptor, shared: Arc<Shared>) {
    while let Ok((tcp, _)) = listener.accept().await {
        // Go's net package (kube-apiserver) disables Nagle on every TCP connection; so do we,
        // or small watch events wait for delayed ACKs.
        let _ = tcp.set_nodelay(true);
        let (acceptor, shared) = (acceptor.clone(), shared.clone());
        tokio::spawn(async move {
            let mut shutdown = shared.shutdown.clone();
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let sh = shared.clone();
            let service = service_fn(move |req: Request<Incoming>| {
                let sh = sh.clone();
                async move {
                    let arrived = std::time::Instant::now();
                    let watching = query_pairs(req.uri().query())
                        .iter()
                        .any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
                    let answer = handle(req, sh.clone()).await;
                    if !watching {
                        sh.busy(arrived);
                    }
                    Ok::<_, Infallible>(answer)
                }
            });
            let conn = http1::Builder::new().serve_connection(TokioIo::new(tls), service);
            tokio::select! {
                _ = conn => {}
                _ = super::stopped(&mut shutdown) => {}
            }
        });
    }
}

pub(super) fn respond(code: u16, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut r = Response::new(Body::Full(Some(Bytes::from(bytes))));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    json_headers(h);
    if let Ok(v) = hyper::header::HeaderValue::from_str(&meta::new_uid()) {
        h.insert("audit-id", v);
    }
    r
}

/// The headers of every JSON answer, watch streams included.
pub(super) fn json_headers(h: &mut hyper::HeaderMap) {
    h.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    h.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-cache, private"),
    );
}

pub(super) fn error(e: &ApiError) -> Response<Body> {
    respond(e.code, &e.to_status())
}

pub(super) fn is_true(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

pub fn query_pairs(q: Option<&str>) -> Vec<(String, String)> {
    q.unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent::decode(k), percent::decode(v)),
            None => (percent::decode(p), String::new()),
        })
        .collect()
}

pub(super) struct Req {
    pub method: Method,
    pub query: Vec<(String, String)>,
    pub content_type: String,
    pub user_agent: String,
    pub body: Bytes,
    /// `Warning:` header values of the response (`fieldValidation=Warn`).
    pub warnings: std::cell::RefCell<Vec<String>>,
}

impl Req {
    pub(super) fn q(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean query parameter, parsed like Go's strconv.ParseBool (Python sends `True`).
    pub(super) fn flag(&self, name: &str) -> bool {
        self.q(name).is_some_and(is_true)
    }

    pub(super) fn dry_run(&self) -> bool {
        self.query.iter().any(|(k, v)| k == "dryRun" && v == "All")
    }

    /// The field manager: `fieldManager`, else the User-Agent up to its first `/`.
    pub(super) fn manager(&self) -> String {
        match self.q("fieldManager") {
            Some(m) => m.to_string(),
            None => self
                .user_agent
                .split('/')
                .next()
                .unwrap_or("")
                .chars()
                .take(128)
                .collect(),
        }
    }
}

async fn handle(req: Request<Incoming>, shared: Arc<Shared>) -> Response<Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let pq = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| path.clone());
    shared.log(method.as_str(), &pq);
    shared.saw_user_agent(
        req.headers()
            .get(hyper::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
    );
    let header = |n: &str| {
        req.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let auth = header("authorization");
    let authorized = auth
        .strip_prefix("Bearer ")
        .is_some_and(|t| t.trim() == shared.token);
    let content_type = header("content-type");
    let user_agent = header("user-agent");
    let query = query_pairs(req.uri().query());
    // kube-apiserver's system:public-info-viewer lets anyone (system:unauthenticated) read
    // the health endpoints and /version; everything else needs the token.
    let public = matches!(
        path.trim_end_matches('/'),
        "/healthz" | "/livez" | "/readyz" | "/version"
    );
    if !authorized && !public {
        return error(&ApiError::unauthorized());
    }
    // The authorization filter runs before the body is read (endpoints/filters/authorization.go).
    if authorized {
        let attributes = Attributes::of_request(&method, &path, &query);
        let decision = rbac::authorize(&shared.store.lock(), &shared.user, &attributes);
        if let Err(reason) = decision {
            return error(&attributes.forbidden(&shared.user.name, &reason));
        }
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return error(&ApiError::bad_request(format!("cannot read body: {e}"))),
    };
    let r = Req {
        method,
        query,
        content_type,
        user_agent,
        body,
        warnings: Default::default(),
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let discovery = |v: Option<Value>| match (&r.method, v) {
        (&Method::GET, Some(v)) => respond(200, &v),
        (&Method::GET, None) => error(&ApiError::no_route()),
        (m, _) => error(&ApiError::method_not_allowed(m.as_str())),
    };
    match segs.as_slice() {
        ["version"] => discovery(Some(discovery::version())),
        ["healthz" | "livez" | "readyz"] => {
            let mut resp = Response::new(Body::Full(Some(Bytes::from_static(b"ok"))));
            resp.headers_mut().insert(
                "content-type",
                hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            resp
        }
        ["api"] => discovery(Some(discovery::api_versions(&shared.server))),
        ["apis"] => discovery(Some(discovery::group_list())),
        ["apis", g] => discovery(discovery::group(g)),
        ["api", "v1"] => discovery(discovery::resource_list("", "v1")),
        ["apis", g, v] => discovery(discovery::resource_list(g, v)),
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
        ] => super::access::self_subject_access_review(&shared.store.lock(), &shared.user, &r),
        ["api", "v1", rest @ ..] => rest::resource(&shared, "", "v1", rest, &r),
        ["apis", g, v, rest @ ..] => rest::resource(&shared, g, v, rest, &r),
        _ => error(&ApiError::no_route()),
    }
}
