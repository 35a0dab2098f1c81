//! `/metrics`: where Prometheus scrapes Warden, on the HTTP front's port or
//! on a listener of its own (for `wrap` and `serve` over stdio, which have
//! no HTTP port).
//!
//! It answers only a caller with the metrics token, unless it was
//! configured open; and, like every Warden page, only requests whose `Host`
//! is this listener's (a DNS-rebinding page reads nothing).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::handler::HandlerWithoutStateExt;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;

use super::{constant_time_eq, host_name, is_loopback_name};

/// Renders the metrics' text.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// The `/metrics` endpoint: what it serves, and to whom.
pub struct MetricsEndpoint {
    render: Render,
    content_type: HeaderValue,
    /// The bearer token a scrape must present; `None`: open.
    token: Option<Vec<u8>>,
}

impl MetricsEndpoint {
    /// Serves what `render` returns, as `content_type`, to callers with
    /// `token` (`None`: to anyone who reaches it).
    pub fn new(render: Render, content_type: &'static str, token: Option<String>) -> MetricsEndpoint {
        MetricsEndpoint {
            render,
            content_type: HeaderValue::from_static(content_type),
            token: token.map(String::into_bytes),
        }
    }

    /// Answers one scrape, whose `Host` and `Origin` were checked.
    pub(crate) fn answer(&self, headers: &HeaderMap) -> Response {
        if let Some(token) = &self.token {
            let presented = headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim_start().split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token.trim());
            if !presented.is_some_and(|presented| constant_time_eq(presented.as_bytes(), token)) {
                let mut refused =
                    (StatusCode::UNAUTHORIZED, "the metrics need the metrics token (Authorization: Bearer <token>)\n")
                        .into_response();
                refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return refused;
            }
        }
        let mut response = (self.render)().into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, self.content_type.clone());
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// Serves `endpoint` at `/metrics` on `listener` (bound to `bound`), until
/// the task is dropped.
pub async fn serve_metrics(listener: TcpListener, endpoint: Arc<MetricsEndpoint>) -> std::io::Result<()> {
    let bound = listener.local_addr()?;
    let handler = move |request: Request<Body>| {
        let endpoint = endpoint.clone();
        async move { own_listener(&endpoint, bound, request) }
    };
    axum::serve(listener, handler.into_make_service()).await
}

/// One request to the metrics' own listener.
fn own_listener(endpoint: &MetricsEndpoint, bound: SocketAddr, request: Request<Body>) -> Response {
    if request.uri().path() != "/metrics" {
        return StatusCode::NOT_FOUND.into_response();
    }
    if request.method() != Method::GET {
        let mut refused = StatusCode::METHOD_NOT_ALLOWED.into_response();
        refused.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET"));
        return refused;
    }
    if let Err(why) = check_host_and_origin(request.headers(), bound) {
        return (StatusCode::FORBIDDEN, why).into_response();
    }
    endpoint.answer(request.headers())
}

/// The own listener's DNS-rebinding check: `Host` names this listener (a
/// loopback name when it is bound to loopback, or its address), and an
/// `Origin`, if any, is a loopback one.
fn check_host_and_origin(headers: &HeaderMap, bound: SocketAddr) -> Result<(), String> {
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    let name = host_name(&host);
    let host_ok = (bound.ip().is_loopback() && is_loopback_name(name))
        || name.parse::<IpAddr>().is_ok_and(|ip| ip == bound.ip())
        || bound.ip().is_unspecified();
    if !host_ok {
        return Err(format!("Host {host:?} is not this listener's (DNS rebinding protection)\n"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
        let loopback = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| is_loopback_name(host_name(rest)));
        if !loopback {
            return Err(format!("Origin {origin:?} is not allowed (DNS rebinding protection)\n"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(token: Option<&str>) -> MetricsEndpoint {
        MetricsEndpoint::new(Arc::new(|| "up 1\n".to_owned()), "text/plain", token.map(str::to_owned))
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn a_scrape_needs_the_token_unless_open() {
        let closed = endpoint(Some("s3cret"));
        assert_eq!(closed.answer(&headers(&[])).status(), StatusCode::UNAUTHORIZED);
        let wrong = headers(&[(header::AUTHORIZATION, "Bearer s3cre")]);
        assert_eq!(closed.answer(&wrong).status(), StatusCode::UNAUTHORIZED);
        let right = headers(&[(header::AUTHORIZATION, "bearer s3cret")]);
        assert_eq!(closed.answer(&right).status(), StatusCode::OK);
        assert_eq!(endpoint(None).answer(&headers(&[])).status(), StatusCode::OK);
    }

    #[test]
    fn the_own_listener_answers_its_own_host_only() {
        let loopback: SocketAddr = "127.0.0.1:9464".parse().unwrap();
        for host in ["localhost:9464", "127.0.0.1:9464", "[::1]:9464"] {
            assert!(check_host_and_origin(&headers(&[(header::HOST, host)]), loopback).is_ok(), "{host}");
        }
        for host in ["evil.example:9464", "10.0.0.1:9464", ""] {
            assert!(check_host_and_origin(&headers(&[(header::HOST, host)]), loopback).is_err(), "{host:?}");
        }
        let page = headers(&[(header::HOST, "localhost:9464"), (header::ORIGIN, "http://evil.example")]);
        assert!(check_host_and_origin(&page, loopback).is_err());
    }
}
