//! Posting without hand-offs: HTTP/1.1 connections that the task waiting
//! for an answer drives itself.
//!
//! reqwest gives each connection a task of its own, so a POST crosses from
//! the task that sends it to the connection's task and back for the
//! answer, and on a multi-threaded runtime each crossing can wake another
//! worker thread. Here the sender polls the connection's I/O alongside its
//! request and its answer's body (the body is handed on with the
//! connection inside it), and an idle connection waits in a small pool,
//! driven by no one, until the next POST takes it.
//!
//! What reqwest did for these POSTs is kept: the configured headers fill in
//! whatever the request does not set, TLS uses the same settings
//! ([`super::tls`]), and a `307`/`308` is followed within the configured
//! origin only. A connection refused, a TLS handshake refused or a connect
//! timeout counts as not reaching the server. When a proxy is configured in
//! the environment, links post through reqwest instead ([`Direct::fits`]).

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use reqwest::header::{AUTHORIZATION, HOST, HeaderMap, HeaderValue, InvalidHeaderValue, LOCATION};
use reqwest::{Response, ResponseBuilderExt, StatusCode, Url};
use tokio::net::TcpStream;
use url::Position;

use super::{CONNECT_TIMEOUT, MAX_REDIRECTS, SendError, cause};
use warden_sync::lock;

/// How many idle connections a link keeps.
const MAX_IDLE: usize = 16;

/// How long an idle connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The environment variables that name a proxy (reqwest reads them too).
const PROXY_VARIABLES: [&str; 6] = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"];

/// One link's connections to its server, for POSTs.
pub(crate) struct Direct {
    /// The headers configured for the server.
    headers: HeaderMap,
    /// TLS for `https` servers.
    tls: Option<tokio_rustls::TlsConnector>,
    /// Connections waiting for the next POST, the newest last.
    idle: Mutex<Vec<Idle>>,
}

/// A connection in the pool, and since when.
#[derive(Debug)]
struct Idle {
    connection: Http1Connection,
    since: Instant,
}

/// One HTTP/1.1 connection: where requests go in, and its I/O, which
/// whoever uses the connection polls.
struct Http1Connection {
    sender: SendRequest<Full<Bytes>>,
    io: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// The I/O is over: the connection closed.
    closed: bool,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct").field("tls", &self.tls.is_some()).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Http1Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http1Connection").field("closed", &self.closed).finish_non_exhaustive()
    }
}

impl Http1Connection {
    /// Does whatever I/O the connection has to do now.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if !self.closed && self.io.as_mut().poll(cx).is_ready() {
            self.closed = true;
        }
    }

    /// Whether the connection can take a request, driving it meanwhile.
    async fn ready(&mut self) -> bool {
        poll_fn(|cx| {
            self.drive(cx);
            self.sender.poll_ready(cx)
        })
        .await
        .is_ok()
    }
}

impl Direct {
    /// Whether links to `url` can post directly: no proxy is configured in
    /// the environment (reqwest would use it).
    pub fn fits(url: &Url) -> bool {
        fits_with(url, |name| std::env::var_os(name))
    }

    /// A pool for a server whose requests carry `headers`.
    pub fn new(url: &Url, headers: HeaderMap) -> Result<Direct, String> {
        let tls = match url.scheme() {
            "https" => Some(tokio_rustls::TlsConnector::from(Arc::new(super::tls()?))),
            _ => None,
        };
        Ok(Direct { headers, tls, idle: Mutex::new(Vec::new()) })
    }

    /// POSTs `body` with `headers` to `url`, following same-origin `307` and
    /// `308` redirects. The answer's body carries its connection along.
    pub async fn post(self: &Arc<Self>, url: &Url, headers: HeaderMap, body: Bytes) -> Result<Response, SendError> {
        let mut target = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let response = self.send(&target, &headers, body.clone()).await?;
            let status = response.status();
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT {
                return Ok(response);
            }
            let next = response.headers().get(LOCATION).and_then(|location| location.to_str().ok());
            match next.and_then(|location| target.join(location).ok()) {
                Some(next) if next.origin() == url.origin() => target = next,
                // Elsewhere: answered as the redirect, which fails clearly.
                _ => return Ok(response),
            }
        }
        Err(SendError { connect: false, reason: format!("POST {url} failed: too many redirects") })
    }

    /// One request on a pooled or new connection. A pooled connection the
    /// server closed before taking the request is replaced once.
    async fn send(self: &Arc<Self>, url: &Url, headers: &HeaderMap, body: Bytes) -> Result<Response, SendError> {
        let mut pooled = self.take().await;
        loop {
            let reused = pooled.is_some();
            let mut connection = match pooled.take() {
                Some(connection) => connection,
                None => self.connect(url).await?,
            };
            let request = self.request(url, headers, body.clone())?;
            match Self::exchange(&mut connection, request).await {
                Ok(response) => return Ok(self.answer(response, connection, url)),
                Err(err) if reused && err.is_canceled() => continue,
                Err(err) => {
                    let reason = format!("POST {url} failed: {}", cause(&err));
                    return Err(SendError { connect: false, reason });
                }
            }
        }
    }

    /// Sends `request` and waits for the answer's head, driving the
    /// connection meanwhile.
    async fn exchange(
        connection: &mut Http1Connection,
        request: hyper::Request<Full<Bytes>>,
    ) -> hyper::Result<hyper::Response<Incoming>> {
        let mut answer = pin!(connection.sender.send_request(request));
        poll_fn(|cx| {
            connection.drive(cx);
            answer.as_mut().poll(cx)
        })
        .await
    }

    /// The request: origin-form target, `Host`, credentials written in the
    /// URL as Basic authorization (as reqwest sends them), the request's
    /// headers, then the configured ones it does not set.
    fn request(&self, url: &Url, headers: &HeaderMap, body: Bytes) -> Result<hyper::Request<Full<Bytes>>, SendError> {
        let invalid = |what: &str| SendError { connect: false, reason: format!("POST {url} failed: {what}") };
        let mut request = hyper::Request::post(&url[Position::BeforePath..Position::AfterQuery])
            .body(Full::new(body))
            .map_err(|_| invalid("an invalid path"))?;
        let host = HeaderValue::from_str(&url[Position::BeforeHost..Position::AfterPort])
            .map_err(|_| invalid("an invalid host"))?;
        let all = request.headers_mut();
        all.insert(HOST, host);
        if let Some(credentials) = basic_authorization(url) {
            all.insert(AUTHORIZATION, credentials.map_err(|_| invalid("invalid credentials"))?);
        }
        all.extend(headers.iter().map(|(name, value)| (name.clone(), value.clone())));
        for name in self.headers.keys() {
            if !all.contains_key(name) {
                for value in self.headers.get_all(name) {
                    all.append(name.clone(), value.clone());
                }
            }
        }
        Ok(request)
    }

    /// An answer whose body drives its connection, and gives it back to the
    /// pool once read to the end; an empty body (`202 Accepted`), which
    /// nobody reads, gives it back at once.
    fn answer(
        self: &Arc<Self>,
        response: hyper::Response<Incoming>,
        connection: Http1Connection,
        url: &Url,
    ) -> Response {
        let lent = if response.body().is_end_stream() {
            self.give_back(connection);
            None
        } else {
            Some((connection, Arc::clone(self)))
        };
        let mut response = response.map(|body| reqwest::Body::wrap(Driven { body, lent: Mutex::new(lent) }));
        // The URL it answers for: without one, reqwest parses a placeholder
        // for every response (a copy is cheaper, and is the truth).
        if let Some(extensions) = hyper::Response::builder().url(url.clone()).extensions_mut() {
            response.extensions_mut().extend(std::mem::take(extensions));
        }
        Response::from(response)
    }

    /// The newest idle connection that is still open and ready.
    async fn take(&self) -> Option<Http1Connection> {
        loop {
            let Idle { mut connection, since } = lock(&self.idle).pop()?;
            if since.elapsed() < IDLE_TIMEOUT && connection.ready().await {
                return Some(connection);
            }
        }
    }

    /// Puts a connection whose answer was read back in the pool.
    fn give_back(&self, connection: Http1Connection) {
        if connection.closed || connection.sender.is_closed() {
            return;
        }
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(Idle { connection, since: Instant::now() });
        }
    }

    /// Opens a connection: TCP (and TLS for `https`), then HTTP/1.1.
    async fn connect(&self, url: &Url) -> Result<Http1Connection, SendError> {
        let unreachable =
            |reason: String| SendError { connect: true, reason: format!("cannot connect to {url}: {reason}") };
        let opened = tokio::time::timeout(CONNECT_TIMEOUT, self.open(url)).await;
        match opened {
            Ok(Ok(connection)) => Ok(connection),
            Ok(Err(err)) => Err(unreachable(cause(&err))),
            Err(_) => Err(unreachable("timed out".into())),
        }
    }

    /// [`Direct::connect`]'s work, without the time limit.
    async fn open(&self, url: &Url) -> std::io::Result<Http1Connection> {
        let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_owned());
        let port = url.port_or_known_default().ok_or_else(|| invalid("no port"))?;
        let host = url.host().ok_or_else(|| invalid("no host"))?;
        let tcp = match &host {
            url::Host::Domain(name) => TcpStream::connect((*name, port)).await?,
            url::Host::Ipv4(address) => TcpStream::connect((*address, port)).await?,
            url::Host::Ipv6(address) => TcpStream::connect((*address, port)).await?,
        };
        tcp.set_nodelay(true)?;
        match &self.tls {
            None => handshake(tcp).await,
            Some(tls) => {
                let name = match host {
                    url::Host::Domain(name) => rustls::pki_types::ServerName::try_from(name.to_owned())
                        .map_err(|_| invalid("an invalid host name"))?,
                    url::Host::Ipv4(address) => std::net::IpAddr::from(address).into(),
                    url::Host::Ipv6(address) => std::net::IpAddr::from(address).into(),
                };
                handshake(tls.connect(name, tcp).await?).await
            }
        }
    }
}

/// [`Direct::fits`], reading the environment with `variable`.
fn fits_with(url: &Url, variable: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    matches!(url.scheme(), "http" | "https")
        && PROXY_VARIABLES.iter().all(|name| variable(name).is_none_or(|value| value.is_empty()))
}

/// HTTP/1.1 over an open stream.
async fn handshake<S>(stream: S) -> std::io::Result<Http1Connection>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, io) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(std::io::Error::other)?;
    let io = Box::pin(async move {
        let _ = io.await;
    });
    Ok(Http1Connection { sender, io, closed: false })
}

/// `Basic` authorization for the user name and password written in `url`,
/// if any, percent-decoded (what reqwest sends for such a URL).
fn basic_authorization(url: &Url) -> Option<Result<HeaderValue, InvalidHeaderValue>> {
    use base64::Engine;
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |text: &str| percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned();
    let pair = format!("{}:{}", decode(url.username()), url.password().map(decode).unwrap_or_default());
    let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
    Some(HeaderValue::from_str(&format!("Basic {encoded}")).map(|mut value| {
        value.set_sensitive(true);
        value
    }))
}

/// An answer's body with its connection: reading the body drives the
/// connection, and the end of the body gives the connection back.
struct Driven {
    body: Incoming,
    /// The connection and the pool it goes back to, until the body's end.
    /// Locked only to be `Sync`, as reqwest's bodies must be; polling has
    /// `&mut` access and takes no lock.
    lent: Mutex<Option<(Http1Connection, Arc<Direct>)>>,
}

impl Body for Driven {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let lent = this.lent.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((connection, _)) = lent.as_mut() {
            connection.drive(cx);
        }
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = frame
            && let Some((connection, pool)) = lent.take()
        {
            pool.give_back(connection);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::{Direct, HeaderMap, Url, fits_with};

    #[tokio::test]
    async fn an_answer_names_the_url_it_came_from_after_a_redirect() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let answers = [
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved\r\nContent-Length: 0\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
            ];
            let mut buffer = vec![0; 4096];
            for answer in answers {
                // Each request is small: one read holds it whole.
                let _ = stream.read(&mut buffer).await.unwrap();
                stream.write_all(answer.as_bytes()).await.unwrap();
            }
        });
        let url: Url = format!("{base}/mcp").parse().unwrap();
        let direct = Arc::new(Direct::new(&url, HeaderMap::new()).unwrap());
        let response = direct.post(&url, HeaderMap::new(), "{}".into()).await.unwrap();
        assert_eq!(response.url().as_str(), format!("{base}/moved"));
        assert_eq!(response.text().await.unwrap(), "{}");
    }

    #[test]
    fn a_proxy_in_the_environment_leaves_posting_to_reqwest() {
        let url = "https://mcp.example.com/mcp".parse().unwrap();
        assert!(fits_with(&url, |_| None));
        assert!(fits_with(&url, |name| (name == "HTTPS_PROXY").then(Default::default)), "set but empty");
        for name in ["HTTP_PROXY", "https_proxy", "ALL_PROXY"] {
            assert!(!fits_with(&url, |asked| (asked == name).then(|| "http://proxy:3128".into())), "{name}");
        }
    }
}
