//! JSON bodies: a message as the answer to a POST, and refusals by the
//! front itself, with a JSON-RPC error body so that clients show the reason.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use warden_jsonrpc::{ErrorCode, error_response};

/// A JSON body with `status`, its one header set directly (through a
/// `(headers, body)` pair, the body's own type is set, then replaced).
pub(super) fn json(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A request refused by the front itself.
#[derive(Debug, Clone)]
pub(super) struct Refusal {
    status: StatusCode,
    id: Option<String>,
    code: Option<ErrorCode>,
    message: String,
    /// `Retry-After`, in seconds.
    retry_after: Option<u64>,
}

impl Refusal {
    /// A refusal with `status` and a reason.
    pub fn new(status: StatusCode, message: &str) -> Refusal {
        Refusal { status, id: None, code: None, message: message.to_owned(), retry_after: None }
    }

    /// 401, asking for a bearer token.
    pub fn unauthorized(message: &str) -> Refusal {
        Refusal::new(StatusCode::UNAUTHORIZED, message)
    }

    /// The same refusal, answering request `id` (JSON text).
    pub fn for_id(mut self, id: Option<&str>) -> Refusal {
        self.id = id.map(str::to_owned);
        self
    }

    /// The same refusal, telling the client to retry after `secs` seconds.
    pub fn retry_after(mut self, secs: u64) -> Refusal {
        self.retry_after = Some(secs);
        self
    }

    /// The same refusal, with a JSON-RPC error code other than the status's.
    pub fn with_code(mut self, code: ErrorCode) -> Refusal {
        self.code = Some(code);
        self
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let code = self.code.unwrap_or(match self.status {
            StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE | StatusCode::NOT_FOUND => {
                ErrorCode::InvalidRequest
            }
            _ => ErrorCode::Refused,
        });
        let body = error_response(self.id.as_deref(), code, &self.message, None);
        let mut response = json(self.status, body);
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
