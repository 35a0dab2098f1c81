//! Event-stream responses: SSE events with ids, keep-alive comments, and
//! headers that keep proxies from buffering.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::streams::SseEvent;

/// How an HTTP+SSE stream starts, and what ends with it.
pub(super) struct Opening<Ending> {
    /// The event naming the URL to POST messages to.
    pub endpoint: Event,
    /// Dropped with the stream (it ends the session).
    pub ending: Ending,
}

/// A Streamable HTTP stream: no opening, nothing ended with it.
pub(super) const STREAMABLE: Option<Opening<()>> = None;

/// An SSE response carrying `events`, with keep-alive comments. An HTTP+SSE
/// stream (`sse_transport`) starts with its `endpoint` event, names its
/// events `message`, and drops its `ending` when dropped.
pub(super) fn event_stream<Ending: Send + 'static>(
    mut events: mpsc::UnboundedReceiver<SseEvent>,
    keep_alive: Duration,
    sse_transport: Option<Opening<Ending>>,
) -> Response {
    let named = sse_transport.is_some();
    let (mut endpoint, ending) = match sse_transport {
        Some(Opening { endpoint, ending }) => (Some(endpoint), Some(ending)),
        None => (None, None),
    };
    let stream = futures_util::stream::poll_fn(move |cx| {
        // Owned by the stream, so that dropping the stream drops it.
        let _ending = &ending;
        if let Some(event) = endpoint.take() {
            return std::task::Poll::Ready(Some(Ok::<_, Infallible>(event)));
        }
        events.poll_recv(cx).map(|next| {
            next.map(|event| {
                let sse = Event::default().id(event.id).data(&*event.data);
                Ok(if named { sse.event("message") } else { sse })
            })
        })
    });
    let mut response = Sse::new(stream).keep_alive(KeepAlive::new().interval(keep_alive)).into_response();
    // Proxies such as nginx must pass events on at once.
    response.headers_mut().insert("x-accel-buffering", axum::http::HeaderValue::from_static("no"));
    response
}
