//! Where every message from an upstream goes, whatever carried it (a stdout
//! line, an SSE event, a JSON body): responses resolve the requests waiting on
//! the connection, requests and notifications become events, anything else is
//! dropped and logged (never forwarded).

use std::sync::Arc;

use warden_jsonrpc::{Frame, Kind, guess_id};

use crate::connection::Connection;
use crate::error::UpstreamError;
use crate::event::{Event, EventKind, EventSink};

/// How many bytes of an oversized message are kept to find its id.
const EDGE: usize = 256;

/// Delivers the messages of one connection, in the order they are handed in.
#[derive(Clone)]
pub(crate) struct Dispatch {
    connection: Arc<Connection>,
    events: Arc<dyn EventSink>,
    index: usize,
    limit: usize,
}

impl Dispatch {
    /// Delivers to `connection` and `events`, refusing messages over `limit` bytes.
    pub fn new(connection: Arc<Connection>, events: Arc<dyn EventSink>, index: usize, limit: usize) -> Self {
        Dispatch { connection, events, index, limit }
    }

    /// The connection messages are delivered for.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// The size limit of one message.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Delivers one message given as text.
    pub fn text(&self, text: String) {
        if let Some(frame) = self.parse(text) {
            self.frame(frame);
        }
    }

    /// Reads one message, for a caller that looks at it before delivering it
    /// with [`Dispatch::frame`]. A message over the limit or not JSON-RPC is
    /// handled here (logged; an oversized response fails its request) and
    /// gives `None`.
    pub fn parse(&self, text: String) -> Option<Frame> {
        if text.len() > self.limit {
            self.oversized(text.len(), prefix(&text, EDGE), suffix(&text, EDGE));
            return None;
        }
        match Frame::parse(text) {
            Ok(frame) => Some(frame),
            Err(err) => {
                tracing::warn!(server = %self.connection.name(), %err, "dropped a message from upstream that is not JSON-RPC");
                None
            }
        }
    }

    /// Tells the owner the connection is ready (again: after a remote
    /// upstream's session was re-established, what the old session held,
    /// such as subscriptions, must be set up anew).
    pub fn ready(&self) {
        self.events.deliver(Event::new(self.index, EventKind::Ready(self.connection.clone())));
    }

    /// Delivers one parsed message.
    pub fn frame(&self, frame: Frame) {
        self.frame_on(frame, None);
    }

    /// Delivers one parsed message that came on the answer stream of
    /// Warden's request `related`, if it did.
    pub fn frame_on(&self, frame: Frame, related: Option<u64>) {
        match frame.kind() {
            Kind::Response | Kind::ErrorResponse => {
                let id = frame.id().and_then(|id| id.parse::<u64>().ok());
                if !self.connection.resolve(id, Ok(frame)) {
                    tracing::warn!(server = %self.connection.name(), ?id, "dropped a response to an id Warden did not send (or a cancelled request)");
                }
            }
            Kind::Request | Kind::Notification => {
                let kind = EventKind::message(&self.connection, frame);
                self.events.deliver(Event { upstream: self.index, kind, related });
            }
        }
    }

    /// Handles a message over the limit, known by its size and its first and
    /// last bytes: when its id can be read, the request it answers fails with
    /// [`UpstreamError::TooLarge`] at once instead of waiting forever.
    pub fn oversized(&self, bytes: usize, head: &str, tail: &str) {
        let name = self.connection.name();
        tracing::warn!(server = %name, bytes, limit = self.limit, "dropped an oversized message from upstream (limits.maxMessageBytes)");
        if let Some(id) = guess_id(head, tail).and_then(|id| id.parse::<u64>().ok()) {
            self.fail(id, UpstreamError::TooLarge { name: name.to_owned(), bytes, limit: self.limit });
        }
    }

    /// Fails request `id` with `error`, if it is still waiting.
    pub fn fail(&self, id: u64, error: UpstreamError) {
        let _ = self.connection.resolve(Some(id), Err(error));
    }
}

/// At most the first `max` bytes of `text`, cut at a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// At most the last `max` bytes of `text`, cut at a character boundary.
fn suffix(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::sync::mpsc;

    use super::{Dispatch, prefix, suffix};
    use crate::connection::Connection;
    use crate::error::UpstreamError;
    use crate::event::{Event, EventKind, EventSink};
    use crate::stderr::StderrTail;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl EventSink for Recorder {
        fn deliver(&self, event: Event) {
            if let EventKind::Message(_, frame) = event.kind {
                self.0.lock().unwrap().push(frame.into_text());
            }
        }
    }

    fn dispatch(limit: usize) -> (Dispatch, Arc<Recorder>, mpsc::UnboundedReceiver<crate::connection::Outgoing>) {
        let (outbox, outbox_rx) = mpsc::unbounded_channel();
        let connection = Arc::new(Connection::new("s".into(), outbox, Arc::new(StderrTail::new(0))));
        let recorder = Arc::new(Recorder::default());
        (Dispatch::new(connection, recorder.clone(), 0, limit), recorder, outbox_rx)
    }

    #[tokio::test]
    async fn responses_resolve_and_the_rest_are_events() {
        let (dispatch, recorder, _outbox) = dispatch(1024);
        let (id, answer) = dispatch.connection().send_request(|id| format!("{{\"id\":{id}}}")).unwrap();
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        dispatch.text(progress.into());
        dispatch.text("not json".into());
        let response = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        dispatch.text(response.clone());
        assert_eq!(answer.await.unwrap().text(), response);
        assert_eq!(recorder.0.lock().unwrap().as_slice(), [progress.to_owned()]);
    }

    #[tokio::test]
    async fn an_oversized_response_fails_its_request() {
        let (dispatch, _recorder, _outbox) = dispatch(64);
        let (id, answer) = dispatch.connection().send_request(|id| format!("{{\"id\":{id}}}")).unwrap();
        let big = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"{}"}}}}"#, "é".repeat(100));
        dispatch.text(big);
        assert!(matches!(answer.await, Err(UpstreamError::TooLarge { limit: 64, .. })));
    }

    #[test]
    fn edges_respect_character_boundaries() {
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(suffix("éa", 2), "a");
        assert_eq!(prefix("ab", 8), "ab");
    }
}
