//! The GET stream: what the server sends on its own (list changes, log
//! messages, requests outside any call). Reconnected with backoff, resuming
//! after the last event id, at the pace the server's `retry:` asks for.

use std::sync::Arc;

use reqwest::StatusCode;
use reqwest::header::ACCEPT;

use super::Remote;
use crate::link::web::events::{Cursor, Events, Next};
use crate::link::web::{self, SendError};

/// How long a stream must stay open to reset the backoff without events.
const STEADY: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether to open the stream again.
enum Again {
    /// Yes, after a pause; `progress` when events came since the last pause.
    Yes { progress: bool },
    /// No: the server offers no stream, or the session is gone.
    No,
}

/// Reads the GET stream of session `generation` in the background,
/// replacing any earlier reader.
pub(crate) fn listen(remote: &Arc<Remote>, generation: u64) {
    let task = tokio::spawn(listen_loop(remote.clone(), generation));
    let mut listener = warden_sync::lock(&remote.listener);
    if let Some(old) = listener.replace(task.abort_handle()) {
        old.abort();
    }
}

async fn listen_loop(remote: Arc<Remote>, generation: u64) {
    let mut cursor = Cursor::default();
    let mut failures: u32 = 0;
    loop {
        match listen_once(&remote, generation, &mut cursor).await {
            Again::No => return,
            Again::Yes { progress } => {
                failures = if progress { 0 } else { failures.saturating_add(1) };
            }
        }
        let backoff = remote.settings.backoff(failures.saturating_sub(1));
        let delay = cursor.retry.map_or(backoff, |retry| retry.min(remote.settings.backoff_max));
        tokio::time::sleep(delay).await;
    }
}

/// Opens the stream once and reads it to its end.
async fn listen_once(remote: &Arc<Remote>, generation: u64, cursor: &mut Cursor) -> Again {
    let session = remote.session.current().await;
    if session.generation != generation {
        return Again::No;
    }
    let url = &remote.settings.url;
    let mut request = remote.settings.client.get(url.clone()).header(ACCEPT, "text/event-stream");
    if let Some(last_id) = &cursor.last_id {
        request = request.header("last-event-id", last_id.as_str());
    }
    let response = match session.apply(request).send().await {
        Ok(response) => response,
        Err(err) => {
            tracing::debug!(server = %remote.name(), "GET stream: {}", SendError::new(&err, "GET", url).reason);
            return Again::Yes { progress: false };
        }
    };
    match response.status() {
        StatusCode::METHOD_NOT_ALLOWED => {
            tracing::debug!(server = %remote.name(), "the upstream offers no GET stream");
            return Again::No;
        }
        StatusCode::NOT_FOUND if session.id.is_some() => {
            // The server forgot the session: renew it now rather than at
            // the next call; renewing starts a new stream.
            let remote = remote.clone();
            tokio::spawn(async move { super::renew::renew(&remote, generation).await });
            return Again::No;
        }
        status if !status.is_success() || !web::is_event_stream(&response) => {
            let reason = web::status_error("GET", url, response).await;
            tracing::debug!(server = %remote.name(), "GET stream: {reason}");
            return Again::Yes { progress: false };
        }
        _ => {}
    }
    let opened = std::time::Instant::now();
    let mut events = Events::new(response, remote.dispatch.limit());
    let mut progress = false;
    loop {
        match events.next(cursor).await {
            Next::Event { kind, data } => {
                progress = true;
                if kind.as_deref().is_none_or(|kind| kind == "message") {
                    remote.dispatch.text(data);
                }
            }
            Next::End => break,
            Next::Failed(reason) => {
                tracing::debug!(server = %remote.name(), "GET stream broke: {reason}");
                break;
            }
            Next::TooLarge(bytes) => {
                let limit = remote.dispatch.limit();
                tracing::warn!(server = %remote.name(), bytes, limit, "GET stream: an event over the limit (limits.maxMessageBytes); reconnecting");
                break;
            }
        }
    }
    // A stream that stayed open a while counts as working, even if idle.
    Again::Yes { progress: progress || opened.elapsed() >= STEADY }
}
