//! Where client connections enter: the accept loop, each connection's
//! admission (see [`connections`](super::connections)), and HTTP/1.1 on it
//! with a header timeout that also ends idle keep-alive connections.
//!
//! Accept errors never end the loop: when descriptors run out (EMFILE), the
//! longest-idle connection is closed to free one and the loop pauses
//! briefly instead of spinning.

use std::convert::Infallible;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName};
use axum::response::IntoResponse;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};

use super::connections::{Activity, Connections, Place};
use super::{Front, routes};

/// How long the loop pauses after an accept error.
const PAUSE_AFTER_ERROR: Duration = Duration::from_millis(20);

/// The token a request's headers authenticate, with the most connections
/// that token may hold; `None` for a request without a valid token.
pub(super) type Owner = Arc<dyn Fn(&HeaderMap) -> Option<(Arc<str>, usize)> + Send + Sync>;

/// Accepts connections on `listener` for ever, serving `front` on each; a
/// connection belongs to the token `owner` finds in its first authenticated
/// request.
pub(super) async fn accept_loop(
    listener: TcpListener,
    front: Arc<Front>,
    connections: Arc<Connections>,
    owner: Owner,
    timeout: Duration,
) {
    let mut last_warning: Option<Instant> = None;
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                if out_of_descriptors(&err) {
                    connections.close_longest_idle();
                }
                // At most one warning a second: an attack must not flood the log.
                if !is_per_connection(&err) && last_warning.is_none_or(|at| at.elapsed() > Duration::from_secs(1)) {
                    tracing::warn!("accepting a connection failed: {err} ({} open)", connections.len());
                    last_warning = Some(Instant::now());
                }
                tokio::time::sleep(PAUSE_AFTER_ERROR).await;
                continue;
            }
        };
        // Small answers must leave at once, not wait for an ACK (Nagle).
        let _ = tcp.set_nodelay(true);
        let (front, connections, owner) = (front.clone(), connections.clone(), owner.clone());
        // The connection and the request it serves share a task, and wake it
        // when one hands the other something: polled again at once.
        tokio::spawn(warden_repoll::repoll(async move {
            // A connection that finds no place within its header timeout is closed.
            if let Some(place) = connections.admit(peer.ip(), timeout).await {
                let client = Client { address: peer.ip(), place, connections, owner };
                serve(tcp, front, client, timeout).await;
            }
        }));
    }
}

/// Keeps a timer due within half a header timeout, for ever.
///
/// Tokio signals its event loop (a write to its wake-up `eventfd`, then one
/// more pass through `epoll_wait`) whenever a timer is set to expire before
/// every other one. Each request arms a header timeout when its head starts
/// to arrive; with no nearer timer, that cost two system calls per request
/// (counted with `strace`), for nothing.
pub(super) async fn keep_a_timer_due(timeout: Duration) {
    let mut ticks = tokio::time::interval((timeout / 2).max(Duration::from_millis(100)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
    }
}

/// One admitted client connection.
struct Client {
    address: IpAddr,
    place: Place,
    connections: Arc<Connections>,
    owner: Owner,
}

/// Serves HTTP/1.1 on one connection until the client closes it, its
/// header timeout runs out, or it must give way to a new connection.
async fn serve(tcp: TcpStream, front: Arc<Front>, client: Client, timeout: Duration) {
    let Client { address, place, connections, owner } = client;
    let connection = place.connection.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let activity = connection.request();
        let front = front.clone();
        // The first authenticated request gives the connection to its token,
        // within that token's share of connections.
        let refused = (!connection.is_claimed())
            .then(|| owner(request.headers()))
            .flatten()
            .filter(|(token, limit)| !connections.claim(&connection, token, *limit))
            .map(|(token, limit)| too_many_connections(&token, limit));
        // Made in its box: hyper keeps the request's future while it runs,
        // and a future of kilobytes would be copied whole into its place.
        crate::in_place::boxed(move || async move {
            if let Some(refused) = refused {
                return Ok::<_, Infallible>(refused);
            }
            // Busy once the body has arrived, or once there is an answer,
            // until the answer's body is done (an event stream included).
            let request = request.map(|body| Body::new(Arrival { body, activity: Some(activity.clone()) }));
            // What the request starts knows the client's address (for audit
            // records) and the trace context its headers name (for its span).
            let origin = crate::origin::Origin { address: Some(address), trace: trace_headers(request.headers()) };
            let response = crate::origin::scope(origin, routes::route(front, request)).await;
            activity.working();
            Ok::<_, Infallible>(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _ = &activity;
                    frame
                }))
            }))
        })
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(timeout).keep_alive(true);
    let served = builder.serve_connection(TokioIo::new(tcp), service);
    tokio::select! {
        result = served => {
            if let Err(err) = result {
                tracing::debug!("connection ended: {err}");
            }
        }
        () = place.connection.closed() => tracing::debug!("an idle connection gave way to a new one"),
    }
    drop(place);
}

/// The answer to a request whose token holds all the connections it may,
/// every one busy: 429, and this connection closes.
fn too_many_connections(token: &str, limit: usize) -> hyper::Response<Body> {
    let message = format!(
        "token {token:?} holds {limit} of its {limit} connections, all busy (auth.tokens[].limits.connections, \
         http.tokenLimits): end some, or retry shortly"
    );
    let mut response = super::reply::Refusal::new(axum::http::StatusCode::TOO_MANY_REQUESTS, &message)
        .retry_after(super::tenants::RETRY_AFTER_SECS)
        .into_response();
    response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    response
}

/// A request's body: once it has all arrived, the connection is busy.
struct Arrival {
    body: Incoming,
    activity: Option<Arc<Activity>>,
}

impl http_body::Body for Arrival {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(activity) = self.activity.take()
        {
            activity.working();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// EMFILE, ENFILE and their kin: no descriptor for the new connection.
fn out_of_descriptors(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM))
}

/// Errors about one connection that the client already gave up on.
fn is_per_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// The `traceparent` and `tracestate` headers, when `traceparent` is there
/// (as text; whether it is a valid context is read where it is used).
fn trace_headers(headers: &axum::http::HeaderMap) -> Option<Arc<(String, Option<String>)>> {
    // Names made once: a `&str` name is parsed and checked at every lookup.
    const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
    const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");
    let text = |name: HeaderName| headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let parent = text(TRACEPARENT)?;
    Some(Arc::new((parent, text(TRACESTATE))))
}
