//! A Streamable HTTP MCP client for the load phases: sessions opened with
//! `initialize`, and one keep-alive HTTP/1.1 connection per in-flight slot.
//!
//! It uses hyper's connection-level client rather than reqwest: each slot owns
//! its connection outright (no pool to check connections out of, no locks, no
//! redirect or proxy layers), so the client spends little CPU per call on a
//! machine where it shares the cores with what it measures, and "one
//! connection per slot" holds by construction.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response, Uri};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::value::RawValue;
use sse_stream::SseStream;
use tokio::net::TcpStream;

use crate::caller::Caller;
use crate::client::{self, Completed, Incoming, RpcOutcome};
use crate::modern;

/// The session header of Streamable HTTP.
const SESSION_HEADER: &str = "mcp-session-id";
/// The header naming the negotiated protocol revision on later requests.
const PROTOCOL_HEADER: &str = "mcp-protocol-version";
/// What a POST accepts in answer.
const ACCEPTS: &str = "application/json, text/event-stream";
/// How much of an unexpected body an error message quotes.
const QUOTED_BYTES: usize = 300;

/// Where the MCP endpoint is, from an `http://host:port/path` URL.
#[derive(Debug)]
struct Endpoint {
    url: String,
    /// `host:port` to connect to.
    connect_to: String,
    /// The `Host` header.
    authority: HeaderValue,
    /// The request target (path and query).
    path: Uri,
}

impl Endpoint {
    fn parse(url: &str) -> anyhow::Result<Self> {
        let rest = url.strip_prefix("http://").ok_or_else(|| anyhow!("--url must start with http:// (got {url})"))?;
        let (authority, path) = rest.find(['/', '?']).map_or((rest, "/"), |at| rest.split_at(at));
        if authority.is_empty() || authority.contains('@') {
            bail!("--url needs a host (and no user info): {url}");
        }
        let path = if path.starts_with('?') { format!("/{path}") } else { path.to_owned() };
        // `[::1]` has colons but no port; `[::1]:80` and `host:80` have one.
        let has_port = authority.rsplit_once(':').is_some_and(|(host, _)| !host.contains(':') || host.ends_with(']'));
        let connect_to = if has_port { authority.to_owned() } else { format!("{authority}:80") };
        Ok(Self {
            url: url.to_owned(),
            connect_to,
            authority: HeaderValue::from_str(authority).with_context(|| format!("bad host in --url {url}"))?,
            path: path.parse().with_context(|| format!("bad path in --url {url}"))?,
        })
    }

    fn request(&self, method: Method, session: Option<&Session>, body: Bytes) -> anyhow::Result<Request<Full<Bytes>>> {
        let mut builder = Request::builder()
            .method(method)
            .uri(self.path.clone())
            .header(HOST, self.authority.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPTS);
        if let Some(session) = session {
            if let Some(id) = &session.id {
                builder = builder.header(SESSION_HEADER, id.clone());
            }
            if let Some(version) = &session.protocol {
                builder = builder.header(PROTOCOL_HEADER, version.clone());
            }
        }
        Ok(builder.body(Full::new(body))?)
    }
}

/// One keep-alive connection, reopened when the server has closed it (an
/// idle timeout between phases, say).
struct Connection {
    endpoint: Arc<Endpoint>,
    sender: Option<SendRequest<Full<Bytes>>>,
    /// Connections opened so far.
    opened: u64,
}

impl Connection {
    fn new(endpoint: Arc<Endpoint>) -> Self {
        Self { endpoint, sender: None, opened: 0 }
    }

    /// Sends a request and returns the response head (the body still to read).
    async fn send(&mut self, method: Method, session: Option<&Session>, body: Bytes) -> anyhow::Result<Response<Body>> {
        self.send_with(method, session, body, &[]).await
    }

    /// [`Connection::send`] with extra headers.
    async fn send_with(
        &mut self,
        method: Method,
        session: Option<&Session>,
        body: Bytes,
        headers: &[(&'static str, HeaderValue)],
    ) -> anyhow::Result<Response<Body>> {
        let mut retried = false;
        loop {
            let mut request = self.endpoint.request(method.clone(), session, body.clone())?;
            for (name, value) in headers {
                request.headers_mut().insert(*name, value.clone());
            }
            let sender = self.ready().await?;
            match sender.send_request(request).await {
                Ok(response) => return Ok(response),
                // The server closed the connection as the request went out: it
                // read nothing of it, so it is sent once more on a new one.
                Err(e) if !retried && (e.is_canceled() || e.is_incomplete_message() || e.is_closed()) => {
                    retried = true;
                    self.sender = None;
                }
                Err(e) => return Err(anyhow!(e).context(format!("{method} {} failed", self.endpoint.url))),
            }
        }
    }

    /// The open connection, ready for a request; opens one if there is none.
    async fn ready(&mut self) -> anyhow::Result<&mut SendRequest<Full<Bytes>>> {
        if let Some(sender) = &mut self.sender
            && sender.ready().await.is_err()
        {
            self.sender = None;
        }
        if self.sender.is_none() {
            self.sender = Some(open(&self.endpoint).await?);
            self.opened += 1;
        }
        self.sender.as_mut().ok_or_else(|| anyhow!("no connection to {}", self.endpoint.url))
    }
}

/// Opens a TCP connection (without Nagle's delay) and starts HTTP/1.1 on it.
async fn open(endpoint: &Endpoint) -> anyhow::Result<SendRequest<Full<Bytes>>> {
    let stream = TcpStream::connect(&endpoint.connect_to)
        .await
        .with_context(|| format!("cannot connect to {}", endpoint.url))?;
    stream.set_nodelay(true)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        // Ends when the server closes the connection or the sender is dropped.
        let _ = connection.await;
    });
    Ok(sender)
}

/// An MCP session on the server (or, in 2026-07-28, none: each request
/// carries what a session held).
pub struct Session {
    /// The `Mcp-Session-Id` the server gave, if any.
    id: Option<HeaderValue>,
    /// The negotiated protocol revision.
    protocol: Option<HeaderValue>,
    /// 2026-07-28: requests carry the envelope and its headers.
    modern: bool,
    /// Request ids, unique within the session (0 is `initialize`).
    next_id: AtomicU64,
}

/// One in-flight slot: a connection of its own, on one of the sessions.
pub struct HttpCaller {
    connection: Connection,
    session: Arc<Session>,
    timeout: Duration,
}

impl HttpCaller {
    /// How many times this slot's connection was reopened after the server closed it.
    pub fn reopened(&self) -> u64 {
        self.connection.opened.saturating_sub(1)
    }
}

impl Caller for HttpCaller {
    async fn request(&mut self, method: &str, params: &RawValue) -> anyhow::Result<Completed> {
        let id = self.session.next_id.fetch_add(1, Ordering::Relaxed);
        let (body, mirrored) = if self.session.modern {
            let (params, mirrored) = modern::envelope(method, params)?;
            (Bytes::from(client::encode_request(id, method, &params)?), mirrored)
        } else {
            (Bytes::from(client::encode_request(id, method, params)?), Vec::new())
        };
        let start = Instant::now();
        let exchange = async {
            let response = self.connection.send_with(Method::POST, Some(&self.session), body, &mirrored).await?;
            read_answer(response, id).await
        };
        let (received, outcome) =
            within(self.timeout, exchange).await.with_context(|| format!("{method} (id {id}) over HTTP"))?;
        Ok(Completed { outcome, latency: received.saturating_duration_since(start) })
    }
}

/// The sessions opened on an endpoint, for closing them at the end.
pub struct HttpSessions {
    sessions: Vec<Arc<Session>>,
    timeout: Duration,
}

impl HttpSessions {
    /// Opens `slots` connections to `url` and `sessions` sessions on them
    /// (`initialize`, then `notifications/initialized`); slot `i` calls on
    /// session `i % sessions`. Needs `1 <= sessions <= slots`. With
    /// `modern`, no session is opened: every slot speaks 2026-07-28.
    pub async fn open(
        url: &str,
        sessions: u64,
        slots: u64,
        timeout: Duration,
        modern: bool,
    ) -> anyhow::Result<(Self, Vec<HttpCaller>)> {
        if sessions == 0 || sessions > slots {
            bail!("cannot spread {sessions} session(s) over {slots} connection(s)");
        }
        let endpoint = Arc::new(Endpoint::parse(url)?);
        let mut connections: Vec<Connection> = (0..slots).map(|_| Connection::new(Arc::clone(&endpoint))).collect();
        let mut opened = Vec::new();
        for connection in connections.iter_mut().take(usize::try_from(sessions)?) {
            let session = if modern {
                Session {
                    id: None,
                    protocol: Some(HeaderValue::from_static(modern::VERSION)),
                    modern,
                    next_id: AtomicU64::new(1),
                }
            } else {
                within(timeout, initialize(connection)).await.context("opening a session")?
            };
            opened.push(Arc::new(session));
        }
        let callers = connections
            .into_iter()
            .zip(opened.iter().cycle())
            .map(|(connection, session)| HttpCaller { connection, session: Arc::clone(session), timeout })
            .collect();
        Ok((Self { sessions: opened, timeout }, callers))
    }

    /// Ends every session with a DELETE sent through `caller`'s connection;
    /// failures are reported on stderr (a server may refuse with 405).
    pub async fn close(self, caller: &mut HttpCaller) {
        for session in &self.sessions {
            if session.id.is_none() {
                continue;
            }
            let delete = async {
                let response = caller.connection.send(Method::DELETE, Some(session), Bytes::new()).await?;
                let status = response.status();
                response.into_body().collect().await?;
                anyhow::Ok(status)
            };
            match within(self.timeout, delete).await {
                Ok(status) if status.is_success() || status.as_u16() == 405 => {}
                Ok(status) => eprintln!("warden-bench: DELETE of a session answered {status}"),
                Err(e) => eprintln!("warden-bench: DELETE of a session failed: {e:#}"),
            }
        }
    }
}

/// `initialize` and `notifications/initialized` on a new session.
async fn initialize(connection: &mut Connection) -> anyhow::Result<Session> {
    #[derive(Deserialize)]
    struct InitializeResult {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    let params = client::initialize_params()?;
    let body = Bytes::from(client::encode_request(0, "initialize", &params)?);
    let response = connection.send(Method::POST, None, body).await?;
    let id = response.headers().get(SESSION_HEADER).cloned();
    let (_, outcome) = read_answer(response, 0).await?;
    let result = outcome.map_err(|e| anyhow!("initialize failed: {e}"))?;
    let result: InitializeResult =
        serde_json::from_str(result.get()).context("the initialize result has no protocolVersion")?;
    let protocol = HeaderValue::from_str(&result.protocol_version).ok();
    let session = Session { id, protocol, modern: false, next_id: AtomicU64::new(1) };

    let body = Bytes::from(client::encode_notification("notifications/initialized")?);
    let response = connection.send(Method::POST, Some(&session), body).await?;
    let status = response.status();
    let text = response.into_body().collect().await?.to_bytes();
    if !status.is_success() {
        bail!("notifications/initialized answered {status}: {}", quote(&text));
    }
    Ok(session)
}

/// Reads the answer to request `id`: a JSON body, or the event carrying it in
/// an event stream (read to its end, so the connection can be used again).
/// Returns when the answer was complete, and the outcome; an HTTP error
/// status is an `Err` outcome.
async fn read_answer(response: Response<Body>, id: u64) -> anyhow::Result<(Instant, RpcOutcome)> {
    let status = response.status();
    let stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok())
        .is_some_and(|kind| kind.trim_start().starts_with("text/event-stream"));
    let body = response.into_body();
    if !status.is_success() || !stream {
        let bytes = body.collect().await.context("reading the answer")?.to_bytes();
        let received = Instant::now();
        let outcome = if status.is_success() { outcome_in(&bytes, id) } else { None };
        let outcome = outcome.unwrap_or_else(|| Err(format!("HTTP {status} without the response: {}", quote(&bytes))));
        return Ok((received, outcome));
    }
    let mut events = SseStream::new(body);
    let mut answer = None;
    while let Some(event) = events.next().await {
        let event = event.context("reading the event stream")?;
        if answer.is_none()
            && let Some(data) = &event.data
        {
            answer = outcome_in(data.as_bytes(), id).map(|outcome| (Instant::now(), outcome));
        }
    }
    answer.ok_or_else(|| anyhow!("the event stream ended without the response to request {id}"))
}

/// The outcome, if `message` is the response to request `id`.
fn outcome_in(message: &[u8], id: u64) -> Option<RpcOutcome> {
    let message = Incoming::parse(message)?;
    if message.response_id() == Some(id) { Some(message.into_outcome()) } else { None }
}

/// The start of a body, for error messages.
fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTED_BYTES)]);
    if bytes.len() > QUOTED_BYTES { format!("{text}…") } else { text.into_owned() }
}

/// `work`, or an error once `timeout` has passed.
async fn within<T>(timeout: Duration, work: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::time::timeout(timeout, work).await.map_err(|_| anyhow!("no answer within {timeout:?}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://127.0.0.1:8210/mcp").expect("parses");
        assert_eq!(
            (e.connect_to.as_str(), e.authority.to_str().ok(), e.path.to_string()),
            ("127.0.0.1:8210", Some("127.0.0.1:8210"), "/mcp".to_owned())
        );
        let e = Endpoint::parse("http://localhost").expect("parses");
        assert_eq!((e.connect_to.as_str(), e.path.to_string()), ("localhost:80", "/".to_owned()));
        let e = Endpoint::parse("http://[::1]:9/mcp/a?x=1").expect("parses");
        assert_eq!((e.connect_to.as_str(), e.path.to_string()), ("[::1]:9", "/mcp/a?x=1".to_owned()));
        assert_eq!(Endpoint::parse("http://[::1]/").expect("parses").connect_to, "[::1]:80");
        assert!(Endpoint::parse("https://example.invalid/mcp").is_err());
        assert!(Endpoint::parse("http:///mcp").is_err());
    }

    #[test]
    fn responses_by_id() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert_eq!(
            outcome_in(ok, 7).and_then(Result::ok).map(|r| r.get().to_owned()),
            Some(r#"{"content":[]}"#.into())
        );
        assert!(outcome_in(ok, 8).is_none());
        let err = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool"}}"#;
        assert!(matches!(outcome_in(err, 7), Some(Err(e)) if e == "JSON-RPC error -32602: Unknown tool"));
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage"}"#;
        assert!(outcome_in(request, 7).is_none());
        assert!(outcome_in(b"", 7).is_none());
    }
}
