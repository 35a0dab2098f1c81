//! The HTTP+SSE transport (2024-11-05): a GET on `/sse` opens the
//! session and its one stream, whose first event names the URL to POST
//! messages to (`/messages?sessionId=…`). The session ends with the stream.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use warden_jsonrpc::Kind;

use super::Front;
use super::body::{parse, read_body};
use super::reply::Refusal;
use super::request_headers::RequestHeaders;
use super::sessions;
use super::sse::{self, Opening};
use super::tenants::{Share, holding};

/// GET `/sse` or `/sse/<server>` (`scope`): a new session and its stream,
/// whose first event names where to post.
pub(super) async fn open(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Response {
    opened(front, scope, headers).await.unwrap_or_else(IntoResponse::into_response)
}

async fn opened(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Result<Response, Refusal> {
    let headers = RequestHeaders::of(&headers);
    let caller = front.access.check(&headers)?;
    let config = front.endpoint(scope.as_deref(), &caller, &headers)?;
    let stream = front.tenants.take(caller.name.as_ref(), Share::Streams, 1)?;
    let entry = front.open_session(scope, config, &caller, &headers, true).await?;
    let id = entry.id.clone();
    let events =
        entry.streams.attach(None).map_err(|_| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "no stream"))?;
    let endpoint = Event::default().event("endpoint").data(format!("/messages?sessionId={id}"));
    let opening = Opening { endpoint, ending: EndOnDrop { front: front.clone(), id } };
    Ok(holding(sse::event_stream(events, front.keep_alive(), Some(opening)), stream))
}

#[derive(Deserialize)]
pub(super) struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// POST `/messages?sessionId=…`: one message for an HTTP+SSE session; answers
/// go out on its stream.
pub(super) async fn message(front: Arc<Front>, query: &str, headers: HeaderMap, body: Body) -> Response {
    let handled = async {
        let query: SessionQuery = serde_urlencoded::from_str(query)
            .map_err(|_| Refusal::new(StatusCode::BAD_REQUEST, "the query must name the session: ?sessionId=…"))?;
        let caller = front.access.check(&RequestHeaders::of(&headers))?;
        let entry = front
            .sessions
            .get(&query.session_id)
            .filter(|entry| entry.is_sse_transport() && entry.owner == caller.name)
            .ok_or_else(|| Refusal::new(StatusCode::NOT_FOUND, "unknown or expired session"))?;
        let frame = parse(read_body(body, front.max_message_bytes, front.body_timeout()).await?)?;
        // A request counts against its token's calls until its answer goes
        // out on the stream, as on the Streamable HTTP transport.
        if frame.kind() == Kind::Request {
            let call = front.tenants.take(caller.name.as_ref(), Share::Calls, 1).map_err(|r| r.for_id(frame.id()))?;
            if let (Some(call), Some(id)) = (call, frame.id()) {
                entry.streams.hold_call(id, call);
            }
        }
        entry.touch();
        entry.session.handle_frame(frame);
        Ok::<_, Refusal>(StatusCode::ACCEPTED.into_response())
    };
    handled.await.unwrap_or_else(IntoResponse::into_response)
}

/// Ends an HTTP+SSE session when its stream is dropped (the client left).
pub(super) struct EndOnDrop {
    front: Arc<Front>,
    id: String,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(entry) = self.front.sessions.remove(&self.id) {
            tracing::info!(session = %self.id, "HTTP+SSE stream closed; ending the session");
            tokio::spawn(sessions::end(entry));
        }
    }
}
