//! The legacy HTTP+SSE transport (2024-11-05): a GET on `/sse` opens the
//! session and its one stream, whose first event names the URL to POST
//! messages to (`/messages?sessionId=…`). The session ends with the stream.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio::sync::mpsc;

use super::Front;
use super::mcp::{parse, read_body};
use super::reply::Refusal;
use super::sessions::{self, Entry};
use super::streams::{SseEvent, Streams};
use crate::session::Session;

/// GET `/sse`.
pub(super) async fn open_hub(State(front): State<Arc<Front>>, headers: HeaderMap) -> Response {
    open(front, None, headers).unwrap_or_else(IntoResponse::into_response)
}

/// GET `/sse/<server>`.
pub(super) async fn open_server(
    State(front): State<Arc<Front>>,
    Path(server): Path<String>,
    headers: HeaderMap,
) -> Response {
    open(front, Some(server), headers).unwrap_or_else(IntoResponse::into_response)
}

fn open(front: Arc<Front>, scope: Option<String>, headers: HeaderMap) -> Result<Response, Refusal> {
    let Some(config) = front.config_for(scope.as_deref()) else {
        return Err(Refusal::new(StatusCode::NOT_FOUND, "no MCP endpoint here"));
    };
    let caller = front.access.check(&headers)?;
    let profile = front.access.profile(&caller, &headers)?;
    if front.sessions.len() >= front.settings.max_sessions {
        let message = format!("Warden serves at most {} sessions (http.maxSessions)", front.settings.max_sessions);
        return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, &message));
    }
    let hooks =
        front.hooks.hooks(profile.as_deref()).map_err(|err| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, &err))?;
    let id = sessions::new_id().map_err(|err| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()))?;
    let streams = Streams::new(front.settings.replay_events, true);
    let session = Session::start_in(config, hooks, streams.clone(), Some(front.pool.clone()));
    session.set_patient_lists(true);
    let entry = Arc::new(Entry::new(id.clone(), session, streams, scope, caller.name.clone(), profile, true));
    if let Err(entry) = front.sessions.insert(entry.clone(), front.settings.max_sessions) {
        tokio::spawn(sessions::end(entry));
        return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, "too many sessions (http.maxSessions)"));
    }
    let events =
        entry.streams.attach(None).map_err(|_| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "no stream"))?;
    tracing::info!(session = %id, "legacy SSE session started");
    let ending = EndOnDrop { front: front.clone(), id: id.clone() };
    let endpoint = Event::default().event("endpoint").data(format!("/messages?sessionId={id}"));
    Ok(event_stream(events, front.keep_alive(), Some((endpoint, ending))))
}

#[derive(Deserialize)]
pub(super) struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// POST `/messages?sessionId=…`: one message for a legacy session; answers
/// go out on its stream.
pub(super) async fn message(
    State(front): State<Arc<Front>>,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let handled = async {
        let caller = front.access.check(&headers)?;
        let entry = front
            .sessions
            .get(&query.session_id)
            .filter(|entry| entry.legacy && entry.owner == caller.name)
            .ok_or_else(|| Refusal::new(StatusCode::NOT_FOUND, "unknown or expired session"))?;
        let frame = parse(read_body(body, front.max_message_bytes).await?)?;
        entry.touch();
        entry.session.handle_frame(frame);
        Ok::<_, Refusal>(StatusCode::ACCEPTED.into_response())
    };
    handled.await.unwrap_or_else(IntoResponse::into_response)
}

/// Ends a legacy session when its stream is dropped (the client left).
pub(super) struct EndOnDrop {
    front: Arc<Front>,
    id: String,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(entry) = self.front.sessions.remove(&self.id) {
            tracing::info!(session = %self.id, "legacy SSE stream closed; ending the session");
            tokio::spawn(sessions::end(entry));
        }
    }
}

/// An SSE response carrying `events`, with keep-alive comments; `first` is
/// an event sent before them (legacy's `endpoint`), with what to do when the
/// stream is dropped.
pub(super) fn event_stream(
    mut events: mpsc::UnboundedReceiver<SseEvent>,
    keep_alive: Duration,
    first: Option<(Event, EndOnDrop)>,
) -> Response {
    let legacy = first.is_some();
    let (mut first, guard) = match first {
        Some((event, guard)) => (Some(event), Some(guard)),
        None => (None, None),
    };
    let stream = futures_util::stream::poll_fn(move |cx| {
        let _held = &guard;
        if let Some(event) = first.take() {
            return std::task::Poll::Ready(Some(Ok::<_, Infallible>(event)));
        }
        events.poll_recv(cx).map(|next| {
            next.map(|event| {
                let sse = Event::default().id(event.id).data(&*event.data);
                Ok(if legacy { sse.event("message") } else { sse })
            })
        })
    });
    let mut response = Sse::new(stream).keep_alive(KeepAlive::new().interval(keep_alive)).into_response();
    // Proxies such as nginx must pass events on at once.
    response.headers_mut().insert("x-accel-buffering", axum::http::HeaderValue::from_static("no"));
    response
}
