//! Which handler serves a request: the front's endpoints, by method and
//! path, in one match. The request's parts are moved to the handler, so its
//! header map is never copied.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;

use super::request_headers::RequestHeaders;
use super::{Front, health, mcp, sse_transport};

/// The front's endpoints.
#[derive(Debug, PartialEq, Eq)]
enum Endpoint {
    /// `/mcp` (`None`: every server) or `/mcp/<server>`: Streamable HTTP.
    Mcp(Option<String>),
    /// `/sse` or `/sse/<server>`: the HTTP+SSE transport's stream.
    Sse(Option<String>),
    /// `/messages?sessionId=…`: the HTTP+SSE transport's messages.
    Messages,
    /// `/healthz`.
    Health,
    /// `/status`.
    Status,
    /// `/metrics`, when metrics are on.
    Metrics,
}

impl Endpoint {
    /// The endpoint at `path`, if there is one (a server's name is
    /// percent-decoded, and has no `/`).
    fn of(path: &str) -> Option<Endpoint> {
        let scoped = |rest: &str| -> Option<Option<String>> {
            match rest {
                "" => Some(None),
                _ => {
                    let name = rest.strip_prefix('/').filter(|name| !name.is_empty() && !name.contains('/'))?;
                    Some(Some(percent_decode_str(name).decode_utf8().ok()?.into_owned()))
                }
            }
        };
        match path {
            "/messages" => Some(Endpoint::Messages),
            "/healthz" => Some(Endpoint::Health),
            "/status" => Some(Endpoint::Status),
            "/metrics" => Some(Endpoint::Metrics),
            _ => {
                if let Some(rest) = path.strip_prefix("/mcp") {
                    scoped(rest).map(Endpoint::Mcp)
                } else if let Some(rest) = path.strip_prefix("/sse") {
                    scoped(rest).map(Endpoint::Sse)
                } else {
                    None
                }
            }
        }
    }

    /// The methods it answers, for `Allow`.
    fn allowed(&self) -> &'static str {
        match self {
            Endpoint::Mcp(_) => "GET,POST,DELETE",
            Endpoint::Sse(_) | Endpoint::Health | Endpoint::Status | Endpoint::Metrics => "GET",
            Endpoint::Messages => "POST",
        }
    }
}

/// Serves one request with the handler of its endpoint: 404 for a path
/// that is none, 405 (with `Allow`) for a method it does not answer.
pub(super) async fn route(front: Arc<Front>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let Some(endpoint) = Endpoint::of(parts.uri.path()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let headers = parts.headers;
    match (endpoint, parts.method) {
        (Endpoint::Mcp(scope), Method::POST) => mcp::post(front, scope, headers, body).await,
        (Endpoint::Mcp(scope), Method::GET) => mcp::open_stream(front, scope, headers),
        (Endpoint::Mcp(scope), Method::DELETE) => mcp::delete(front, scope, headers),
        (Endpoint::Sse(scope), Method::GET) => sse_transport::open(front, scope, headers).await,
        (Endpoint::Messages, Method::POST) => {
            sse_transport::message(front, parts.uri.query().unwrap_or(""), headers, body).await
        }
        (Endpoint::Health, Method::GET) => health::healthz(front, headers),
        (Endpoint::Status, Method::GET) => health::status(front, headers),
        (Endpoint::Metrics, Method::GET) => match front.metrics.get() {
            Some(metrics) => match front.access.check_origin_and_host(&RequestHeaders::of(&headers)) {
                Ok(()) => metrics.answer(&headers),
                Err(refusal) => refusal.into_response(),
            },
            None => StatusCode::NOT_FOUND.into_response(),
        },
        (endpoint, _) => {
            let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
            response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(endpoint.allowed()));
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Endpoint;

    #[test]
    fn paths_name_their_endpoint_and_server() {
        assert_eq!(Endpoint::of("/mcp"), Some(Endpoint::Mcp(None)));
        assert_eq!(Endpoint::of("/mcp/files"), Some(Endpoint::Mcp(Some("files".into()))));
        assert_eq!(Endpoint::of("/mcp/my%20files"), Some(Endpoint::Mcp(Some("my files".into()))));
        assert_eq!(Endpoint::of("/sse"), Some(Endpoint::Sse(None)));
        assert_eq!(Endpoint::of("/sse/git"), Some(Endpoint::Sse(Some("git".into()))));
        assert_eq!(Endpoint::of("/messages"), Some(Endpoint::Messages));
        assert_eq!(Endpoint::of("/healthz"), Some(Endpoint::Health));
        assert_eq!(Endpoint::of("/status"), Some(Endpoint::Status));
        assert_eq!(Endpoint::of("/metrics"), Some(Endpoint::Metrics));
        for none in ["/", "/mcp/", "/mcp/a/b", "/mcpx", "/mcp%2F", "/sse/", "/status/", "/other", "/mcp/%FF"] {
            assert_eq!(Endpoint::of(none), None, "{none}");
        }
    }
}
