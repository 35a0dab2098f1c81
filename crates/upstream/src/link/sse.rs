//! An HTTP+SSE session (MCP 2024-11-05): one long GET stream whose
//! first `endpoint` event says where to POST messages, and whose `message`
//! events carry everything the server sends, responses included. The link is
//! down when the stream ends; the supervisor starts a new one.

use std::sync::Arc;

use bytes::Bytes;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};
use warden_repoll::repoll;

use super::web::events::{Cursor, Events, Next};
use super::web::outbound::Outbound;
use super::web::{self, SendError, Settings, body};
use crate::connection::{Connection, Outgoing};
use crate::dispatch::Dispatch;
use crate::error::UpstreamError;

/// An HTTP+SSE link: the task reading the stream and the task posting.
pub(crate) struct SseLink {
    connection: Arc<Connection>,
    reader: JoinHandle<()>,
    poster: JoinHandle<()>,
    ended: watch::Receiver<Option<String>>,
    grace: std::time::Duration,
}

impl SseLink {
    /// Opens the stream at `settings.url`; messages sent on the dispatch's
    /// connection are posted once the server named its endpoint.
    pub fn open(settings: Settings, dispatch: Dispatch, outbox: mpsc::UnboundedReceiver<Outgoing>) -> SseLink {
        let settings = Arc::new(settings);
        let (endpoint_tx, endpoint) = watch::channel(None);
        let (ended_tx, ended) = watch::channel(None);
        let connection = dispatch.connection().clone();
        let grace = settings.grace;
        let reader = tokio::spawn({
            let (settings, dispatch) = (settings.clone(), dispatch.clone());
            async move {
                let reason = read(&settings, &dispatch, &endpoint_tx).await;
                ended_tx.send_replace(Some(reason));
            }
        });
        let poster = tokio::spawn(drain(settings, dispatch, outbox, endpoint));
        SseLink { connection, reader, poster, ended, grace }
    }

    /// The connection requests are sent on.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// Resolves when the stream is over, with why.
    pub async fn ended(&mut self) -> String {
        match self.ended.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "its SSE stream stopped".into(),
        }
    }

    /// Fails what is waiting and stops both tasks.
    pub async fn close(mut self, reason: &str) -> String {
        let name = self.connection.name().to_owned();
        self.connection.close(UpstreamError::Lost { name, reason: reason.to_owned() });
        self.reader.abort();
        if tokio::time::timeout(self.grace, &mut self.poster).await.is_err() {
            self.poster.abort();
        }
        reason.to_owned()
    }
}

/// Reads the stream until it ends; returns why it ended.
async fn read(settings: &Settings, dispatch: &Dispatch, endpoint: &watch::Sender<Option<Url>>) -> String {
    let url = &settings.url;
    let request = settings.client.get(url.clone()).header(ACCEPT, "text/event-stream");
    let response = match request.send().await {
        Ok(response) => response,
        Err(err) => return SendError::new(&err, "GET", url).reason,
    };
    if !response.status().is_success() {
        return web::status_error("GET", url, response).await;
    }
    if !web::is_event_stream(&response) {
        return format!("GET {url} answered with content type '{}', not an event stream", web::media_type(&response));
    }
    let limit = dispatch.limit();
    let mut events = Events::new(response, limit);
    let mut cursor = Cursor::default();
    loop {
        match events.next(&mut cursor).await {
            Next::Event { kind, data } => match kind.as_deref() {
                Some("endpoint") => match resolve_endpoint(url, &data) {
                    Ok(resolved) => {
                        tracing::debug!(server = %dispatch.connection().name(), endpoint = %resolved, "HTTP+SSE endpoint");
                        endpoint.send_replace(Some(resolved));
                    }
                    Err(reason) => return reason,
                },
                None | Some("message") => {
                    dispatch.text(data);
                }
                Some(_) => {}
            },
            Next::End => return "it closed its SSE stream".into(),
            Next::Failed(reason) => return format!("its SSE stream broke: {reason}"),
            Next::TooLarge(bytes) => {
                return format!(
                    "it sent an event of over {bytes} bytes, over the limit of {limit} (limits.maxMessageBytes)"
                );
            }
        }
    }
}

/// Where to post, from an `endpoint` event: a URL relative to the stream's.
/// It must stay on the stream's origin, since the configured headers
/// (often credentials) go with every post.
pub(crate) fn resolve_endpoint(stream: &Url, endpoint: &str) -> Result<Url, String> {
    let resolved =
        stream.join(endpoint.trim()).map_err(|err| format!("its endpoint event '{endpoint}' is not a URL: {err}"))?;
    if resolved.origin() != stream.origin() {
        return Err(format!("its endpoint {resolved} is not on the origin of {stream}; Warden does not post there"));
    }
    Ok(resolved)
}

/// Posts every outgoing message, each in its own task, once the endpoint is
/// known, until the connection closes.
async fn drain(
    settings: Arc<Settings>,
    dispatch: Dispatch,
    mut outbox: mpsc::UnboundedReceiver<Outgoing>,
    mut endpoint: watch::Receiver<Option<Url>>,
) {
    let endpoint = match endpoint.wait_for(Option::is_some).await {
        Ok(endpoint) => endpoint.clone(),
        Err(_) => return,
    };
    let Some(endpoint) = endpoint else { return };
    let mut posts = JoinSet::new();
    while let Some(Outgoing::Line(text)) = outbox.recv().await {
        // Reaped, not awaited: awaiting woke this task after every post.
        while posts.try_join_next().is_some() {}
        // Driving the connection and awaiting the answer wake the task in
        // turn: polled again at once rather than rescheduled.
        posts.spawn(repoll(post(settings.clone(), dispatch.clone(), endpoint.clone(), text)));
    }
}

/// Posts one message; its answer comes on the stream.
async fn post(settings: Arc<Settings>, dispatch: Dispatch, endpoint: Url, text: String) {
    let outbound = Outbound::read(&text);
    let name = dispatch.connection().name().to_owned();
    let limit = dispatch.limit();
    if text.len() > limit {
        outbound.fail(&dispatch, UpstreamError::RequestTooLarge { name, bytes: text.len(), limit });
        return;
    }
    let headers = HeaderMap::from_iter([(CONTENT_TYPE, HeaderValue::from_static("application/json"))]);
    match settings.post(&endpoint, headers, Bytes::from(text)).await {
        Ok(response) if response.status().is_success() => {
            // Usually "Accepted": read it so the connection can be reused.
            let _ = body::read_start(response, 4096).await;
        }
        Ok(response) => {
            let reason = web::status_error("POST", &endpoint, response).await;
            outbound.fail(&dispatch, UpstreamError::Http { name, reason });
        }
        Err(err) => outbound.fail(&dispatch, UpstreamError::Http { name, reason: err.reason }),
    }
}

#[cfg(test)]
mod tests {
    use reqwest::Url;

    use super::resolve_endpoint;

    #[test]
    fn endpoints_resolve_against_the_stream_url_and_stay_on_its_origin() {
        let stream = Url::parse("http://127.0.0.1:8931/app/sse?x=1").unwrap();
        let resolve = |endpoint: &str| resolve_endpoint(&stream, endpoint).map(String::from);
        assert_eq!(resolve("/messages?sessionId=abc"), Ok("http://127.0.0.1:8931/messages?sessionId=abc".into()));
        assert_eq!(resolve("messages?sessionId=abc"), Ok("http://127.0.0.1:8931/app/messages?sessionId=abc".into()));
        assert_eq!(resolve(" http://127.0.0.1:8931/m \n"), Ok("http://127.0.0.1:8931/m".into()));
        assert!(resolve("http://evil.example/m").unwrap_err().contains("not on the origin"));
        assert!(resolve("//evil.example/m").unwrap_err().contains("not on the origin"));
        assert!(resolve("http://127.0.0.1:8932/m").is_err());
    }
}
