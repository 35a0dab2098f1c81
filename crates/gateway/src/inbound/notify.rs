//! Notifications from the client, and its answers to upstreams' requests.

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{Frame, Method, Splice};

use crate::parts::SessionParts;
use crate::parts::TokenTarget;
use warden_sync::lock;

#[derive(Deserialize)]
struct CancelledParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: &'a RawValue,
}

#[derive(Deserialize)]
struct ProgressParams<'a> {
    #[serde(borrow, rename = "progressToken")]
    progress_token: &'a RawValue,
}

/// Handles a notification from the client.
pub(crate) fn notification(session: &SessionParts, frame: Frame) {
    match frame.method() {
        Some(Method::Initialized) => {
            session.link.initialized.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Some(Method::Cancelled) => client_cancelled(session, &frame),
        Some(Method::Progress) => client_progress(session, &frame),
        // Roots changes and anything unknown concern every upstream.
        _ => broadcast(session, &frame),
    }
}

/// The client cancels one of its requests: tell the one upstream serving
/// it, under the id Warden gave it there, stop waiting for it, and let
/// the front end whatever it holds open for the answer.
fn client_cancelled(session: &SessionParts, frame: &Frame) {
    let Some(params) = frame.named_params().and_then(|p| serde_json::from_str::<CancelledParams>(p).ok()) else {
        tracing::warn!(session = %session.id, "ignored notifications/cancelled without a requestId");
        return;
    };
    stop_waiting(session, frame, params.request_id.get());
    session.link.cancelled(params.request_id.get());
}

/// Withdraws request `id` from approval, or cancels it upstream.
fn stop_waiting(session: &SessionParts, frame: &Frame, id: &str) {
    if let Some((_, waiting)) = lock(&session.maps.waiting).remove(id) {
        // Waiting for approval, not yet forwarded: withdraw it.
        let _ = waiting.send("notifications/cancelled");
        return;
    }
    let Some(entry) = lock(&session.maps.in_flight).remove(id) else {
        tracing::debug!(session = %session.id, id = id, "cancellation for a request not in flight");
        return;
    };
    if let Some(token) = &entry.token {
        lock(&session.maps.tokens).remove(token);
    }
    entry.connection.forget(entry.upstream_id);
    let mut splice = Splice::new();
    splice.replace(frame.span_of(id), entry.upstream_id.to_string());
    let _ = entry.connection.send(splice.apply(frame.text()));
    tracing::debug!(session = %session.id, upstream = entry.upstream, "forwarded a cancellation");
}

/// Progress the client reports on an upstream's request: back to that
/// upstream, under its own token.
fn client_progress(session: &SessionParts, frame: &Frame) {
    let Some(params) = frame.named_params().and_then(|p| serde_json::from_str::<ProgressParams>(p).ok()) else {
        return;
    };
    let target = lock(&session.maps.tokens).get(params.progress_token.get()).cloned();
    if let Some(TokenTarget::Upstream(connection, original)) = target {
        let mut splice = Splice::new();
        splice.replace(frame.span_of(params.progress_token.get()), original);
        let _ = connection.send(splice.apply(frame.text()));
    }
}

/// Sends a client notification to every ready upstream.
fn broadcast(session: &SessionParts, frame: &Frame) {
    for (_, upstream) in session.live_upstreams() {
        if let Some(connection) = upstream.connection() {
            let _ = connection.send(frame.text().to_owned());
        }
    }
}

/// The client answers a request an upstream made (sampling, elicitation,
/// roots): back to that upstream under its own id.
pub(crate) fn client_response(session: &SessionParts, frame: Frame) {
    let own = frame.id().and_then(|id| id.parse::<u64>().ok()).and_then(|id| {
        lock(&session.maps.input_keys).remove(&id);
        lock(&session.maps.own_requests).remove(&id)
    });
    if let Some(waiting) = own {
        let _ = waiting.send(frame);
        return;
    }
    let request =
        frame.id().and_then(|id| id.parse::<u64>().ok()).and_then(|id| lock(&session.maps.server_requests).remove(&id));
    let Some(request) = request else {
        tracing::warn!(session = %session.id, id = frame.id().unwrap_or("null"), "dropped a response from the client to an id Warden never sent");
        return;
    };
    if let Some(token) = &request.token {
        lock(&session.maps.tokens).remove(token);
    }
    if request.connection.send(frame.with_id(&request.upstream_id)).is_err() {
        tracing::warn!(session = %session.id, upstream = request.upstream, "the upstream that asked is gone; its answer was dropped");
    }
}
