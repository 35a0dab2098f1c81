//! Event-stream responses: SSE events with ids, keep-alive comments, and
//! headers that keep proxies from buffering.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::legacy::EndOnDrop;
use super::streams::SseEvent;

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
