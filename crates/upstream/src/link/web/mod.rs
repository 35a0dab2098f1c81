//! What both HTTP links share: the client, the configured headers, reading
//! answers (JSON bodies, SSE streams) and describing what went wrong.

pub(crate) mod body;
pub(crate) mod direct;
pub(crate) mod events;
pub(crate) mod outbound;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Response, Url};
use warden_config::Supervision;

/// How long connecting to a server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many redirects one request may follow.
const MAX_REDIRECTS: usize = 5;

/// How much of an error answer's body is quoted.
const QUOTED_BODY: usize = 300;

/// Everything an HTTP link needs to reach its server.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The configured URL (the MCP endpoint, or the HTTP+SSE endpoint).
    pub url: Url,
    /// The pooled HTTP client (one per link); it sends the configured
    /// headers with every request.
    pub client: reqwest::Client,
    /// POSTs on connections driven by the task that waits for the answer;
    /// `None` when a proxy is configured ([`direct::Direct::fits`]).
    direct: Option<Arc<direct::Direct>>,
    /// The first delay before reconnecting a stream.
    pub backoff_initial: Duration,
    /// The longest delay before reconnecting a stream.
    pub backoff_max: Duration,
    /// How long a goodbye to the server may take.
    pub grace: Duration,
}

impl Settings {
    /// Reads the URL and headers of a transport and builds a client.
    pub fn new<'a>(
        url: &str,
        headers: impl IntoIterator<Item = (&'a String, &'a String)>,
        supervision: &Supervision,
    ) -> Result<Settings, String> {
        let parsed = Url::parse(url).map_err(|err| format!("invalid URL '{url}': {err}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("invalid URL '{url}': only http and https are supported"));
        }
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let header =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid header name '{name}'"))?;
            // The value is not quoted: it usually holds a secret.
            let value = HeaderValue::from_str(value).map_err(|_| format!("invalid value for header '{name}'"))?;
            map.append(header, value);
        }
        let direct = if direct::Direct::fits(&parsed) {
            Some(Arc::new(direct::Direct::new(&parsed, map.clone())?))
        } else {
            None
        };
        Ok(Settings {
            url: parsed,
            client: client(map)?,
            direct,
            backoff_initial: Duration::from_millis(supervision.backoff_initial_ms.max(1)),
            backoff_max: Duration::from_millis(supervision.backoff_max_ms.max(1)),
            grace: Duration::from_millis(supervision.shutdown_grace_ms),
        })
    }

    /// POSTs `body` with `headers` to `url` (on the configured server's
    /// origin), directly or, when a proxy is configured, through reqwest.
    pub async fn post(&self, url: &Url, headers: HeaderMap, body: Bytes) -> Result<Response, SendError> {
        match &self.direct {
            Some(direct) => direct.post(url, headers, body).await,
            None => {
                let request = self.client.post(url.clone()).headers(headers).body(body);
                request.send().await.map_err(|err| SendError::new(&err, "POST", url))
            }
        }
    }

    /// The delay before reconnection attempt number `failures` (0-based):
    /// doubling from the initial backoff up to the maximum.
    pub fn backoff(&self, failures: u32) -> Duration {
        self.backoff_initial.saturating_mul(1u32 << failures.min(20)).min(self.backoff_max)
    }
}

/// A client with keep-alive pooling, TLS by rustls with the ring provider
/// and the platform's trust store ([`tls`]), and `headers` on every request.
pub(crate) fn client(headers: HeaderMap) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls()?)
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .default_headers(headers)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|err| format!("cannot set up an HTTP client: {}", cause(&err)))
}

/// The TLS settings of every link, built once per process: reading the
/// platform's trust store takes milliseconds (150 files on Debian, 2.5–5 ms
/// measured), and a link opened per session would otherwise pay that on the
/// event loop each time. Certificates are checked as reqwest would: by
/// rustls-platform-verifier, TLS 1.2 and 1.3, HTTP/1.1 by ALPN.
fn tls() -> Result<rustls::ClientConfig, String> {
    static TLS: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|err| format!("cannot read the system's trusted certificates: {err}"))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| format!("cannot set up TLS: {err}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    })
    .clone()
}

/// Redirects are followed only within the configured origin: the configured
/// headers (often credentials) must not reach another host. A redirect
/// elsewhere is answered as the redirect status, which fails clearly.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if same {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Why a request could not be made; `connect` tells whether the server could
/// not be reached at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SendError {
    /// The server could not be reached (refused, unresolvable, timed out).
    pub connect: bool,
    /// What happened, naming the URL.
    pub reason: String,
}

impl SendError {
    /// Describes `err` from `method` to `url`.
    pub fn new(err: &reqwest::Error, method: &str, url: &Url) -> SendError {
        if err.is_connect() {
            SendError { connect: true, reason: format!("cannot connect to {url}: {}", cause(err)) }
        } else if err.is_timeout() {
            SendError { connect: false, reason: format!("{method} {url} timed out") }
        } else {
            SendError { connect: false, reason: format!("{method} {url} failed: {}", cause(err)) }
        }
    }
}

/// The innermost cause of `err`, in lower case: "connection refused" rather
/// than "error sending request".
pub(crate) fn cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost: &(dyn std::error::Error + 'static) = err;
    let mut current = Some(err);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return "connection refused".into();
        }
        innermost = error;
        current = error.source();
    }
    let text = innermost.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// Describes an error status: `POST <url> answered 500 Internal Server Error:
/// <start of the body>`.
pub(crate) async fn status_error(method: &str, url: &Url, response: Response) -> String {
    let status = response.status();
    let body = body::read_start(response, QUOTED_BODY).await;
    let body = body.trim();
    if body.is_empty() {
        format!("{method} {url} answered {status}")
    } else {
        format!("{method} {url} answered {status}: {body}")
    }
}

/// The media type of an answer, as written, without parameters.
fn media_type_of(response: &Response) -> Option<&str> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    value.split(';').next().map(str::trim)
}

/// The media type of an answer, lower case, without parameters (for
/// messages).
pub(crate) fn media_type(response: &Response) -> String {
    media_type_of(response).map(str::to_ascii_lowercase).unwrap_or_default()
}

/// Whether an answer's media type is `expected` (lower case), asked of
/// every answer: compared in place, nothing copied.
pub(crate) fn is_media_type(response: &Response, expected: &str) -> bool {
    media_type_of(response).is_some_and(|media| media.eq_ignore_ascii_case(expected))
}

/// Whether an answer is an SSE stream.
pub(crate) fn is_event_stream(response: &Response) -> bool {
    is_media_type(response, "text/event-stream")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use warden_config::Supervision;

    use super::{SendError, Settings};

    fn settings(url: &str, headers: &[(&str, &str)]) -> Result<Settings, String> {
        let headers: Vec<(String, String)> = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::new(url, headers.iter().map(|(k, v)| (k, v)), &Supervision::default())
    }

    #[test]
    fn reads_url_and_headers() {
        let ok = settings("http://127.0.0.1:9/mcp", &[("Authorization", "Bearer x")]).unwrap();
        assert_eq!(ok.url.as_str(), "http://127.0.0.1:9/mcp");
        assert!(settings("ftp://host/x", &[]).unwrap_err().contains("only http and https"));
        assert!(settings("not a url", &[]).unwrap_err().starts_with("invalid URL 'not a url'"));
        let secret = settings("http://h/", &[("X-Key", "bad\nsecret")]).unwrap_err();
        assert_eq!(secret, "invalid value for header 'X-Key'");
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let s = settings("http://h/", &[]).unwrap();
        let initial = s.backoff_initial;
        assert_eq!(s.backoff(0), initial);
        assert_eq!(s.backoff(1), initial * 2);
        assert_eq!(s.backoff(40), s.backoff_max);
        assert!(s.backoff_max >= Duration::from_millis(1));
    }

    #[tokio::test]
    async fn a_refused_connection_says_so() {
        // Bind and drop: nothing listens on this port any more.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let s = settings(&format!("http://127.0.0.1:{port}/mcp"), &[]).unwrap();
        let err = s.client.post(s.url.clone()).send().await.unwrap_err();
        let described = SendError::new(&err, "POST", &s.url);
        assert!(described.connect);
        assert_eq!(described.reason, format!("cannot connect to http://127.0.0.1:{port}/mcp: connection refused"));
    }
}
