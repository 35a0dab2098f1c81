//! Reading a server-sent event stream: the events with data, and where the
//! stream can be resumed from (the last event id) and how soon (`retry:`).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sse_stream::SseByteStream;

/// How far one event may run past the message limit (field names, `data:`
/// prefixes, ids) before the stream is abandoned.
const FRAMING_ALLOWANCE: usize = 64 * 1024;

/// Where an event stream can be resumed from, and how soon.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// The id of the last event that had one.
    pub last_id: Option<String>,
    /// The reconnection delay the server asked for.
    pub retry: Option<Duration>,
}

/// What came next on a stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// An event with data (events with no data, such as the one that only
    /// primes an id, are skipped).
    Event {
        /// Its `event:` type, when given (`None` means `message`).
        kind: Option<String>,
        /// Its data, lines joined with `\n`.
        data: String,
    },
    /// The stream ended.
    End,
    /// Reading failed; the stream is over.
    Failed(String),
    /// An event grew past the limit (at least this many bytes); the stream is over.
    TooLarge(usize),
}

/// Why the bytes of a stream stopped.
#[derive(Debug, thiserror::Error)]
enum ChunkError {
    #[error("{0}")]
    Body(String),
    #[error("an event of over {0} bytes")]
    TooLarge(usize),
}

type Chunks = Pin<Box<dyn Stream<Item = Result<Bytes, ChunkError>> + Send>>;

/// The events of one SSE stream.
pub(crate) struct Events {
    inner: SseByteStream<Chunks>,
    /// Bytes received since the last event was returned.
    pending: Arc<AtomicUsize>,
}

impl Events {
    /// Reads the events of an answer's body, refusing events over `limit` bytes.
    pub fn new(response: reqwest::Response, limit: usize) -> Events {
        Events::from_stream(response.bytes_stream(), limit)
    }

    /// Reads events from a stream of byte chunks.
    pub fn from_stream<E: std::error::Error + 'static>(
        stream: impl Stream<Item = Result<Bytes, E>> + Send + 'static,
        limit: usize,
    ) -> Events {
        let pending = Arc::new(AtomicUsize::new(0));
        let counter = pending.clone();
        let cap = limit.saturating_add(FRAMING_ALLOWANCE);
        let chunks = stream.map(move |chunk| {
            let chunk = chunk.map_err(|err| ChunkError::Body(super::cause(&err)))?;
            // A memory guard, not the exact limit (the dispatch checks each
            // message): it is off by at most one chunk.
            let total = counter.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len();
            if total > cap { Err(ChunkError::TooLarge(total)) } else { Ok(chunk) }
        });
        Events { inner: SseByteStream::new(Box::pin(chunks) as Chunks), pending }
    }

    /// The next event with data, updating `cursor` with every id and retry
    /// seen on the way.
    ///
    /// Cancel safety: not cancel safe; call it from one task that owns the stream.
    pub async fn next(&mut self, cursor: &mut Cursor) -> Next {
        loop {
            let event = match self.inner.next().await {
                None => return Next::End,
                Some(Ok(event)) => event,
                Some(Err(sse_stream::Error::Body(err))) => {
                    return match err.downcast_ref::<ChunkError>() {
                        Some(ChunkError::TooLarge(bytes)) => Next::TooLarge(*bytes),
                        _ => Next::Failed(super::cause(err.as_ref())),
                    };
                }
                Some(Err(err)) => return Next::Failed(err.to_string()),
            };
            self.pending.store(0, Ordering::Relaxed);
            if let Some(id) = event.id {
                // An empty id resets it: nothing to resume from.
                cursor.last_id = Some(id).filter(|id| !id.is_empty());
            }
            if let Some(retry) = event.retry {
                cursor.retry = Some(Duration::from_millis(retry));
            }
            match event.data {
                Some(data) if !data.is_empty() => return Next::Event { kind: event.event, data },
                _ => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::time::Duration;

    use bytes::Bytes;

    use super::{Cursor, Events, Next};

    fn chunked(text: &str, width: usize) -> Events {
        let chunks: Vec<Result<Bytes, Infallible>> =
            text.as_bytes().chunks(width).map(|chunk| Ok(Bytes::copy_from_slice(chunk))).collect();
        Events::from_stream(futures_util::stream::iter(chunks), 100)
    }

    fn event(kind: Option<&str>, data: &str) -> Next {
        Next::Event { kind: kind.map(str::to_owned), data: data.to_owned() }
    }

    #[tokio::test]
    async fn reads_events_ids_and_retry_across_chunk_boundaries() {
        let text = "id: p1\ndata:\n\n: a comment\nretry: 1500\n\nid: 7\ndata: {\"a\":\ndata: 1}\n\nevent: endpoint\ndata: /messages?sessionId=x\r\n\r\nid:\ndata: tail\n\n";
        for width in [1, 3, 7, text.len()] {
            let mut events = chunked(text, width);
            let mut cursor = Cursor::default();
            assert_eq!(events.next(&mut cursor).await, event(None, "{\"a\":\n1}"));
            assert_eq!(cursor, Cursor { last_id: Some("7".into()), retry: Some(Duration::from_millis(1500)) });
            assert_eq!(events.next(&mut cursor).await, event(Some("endpoint"), "/messages?sessionId=x"));
            assert_eq!(cursor.last_id.as_deref(), Some("7"));
            assert_eq!(events.next(&mut cursor).await, event(None, "tail"));
            assert_eq!(cursor.last_id, None);
            assert_eq!(events.next(&mut cursor).await, Next::End);
        }
    }

    #[tokio::test]
    async fn an_endless_event_is_cut_off() {
        let huge = format!("data: {}", "x".repeat(200 * 1024));
        let mut events = chunked(&huge, 4096);
        assert!(matches!(events.next(&mut Cursor::default()).await, Next::TooLarge(bytes) if bytes > 64 * 1024));
    }

    #[tokio::test]
    async fn a_broken_body_is_a_failure() {
        let chunks = vec![Ok(Bytes::from_static(b"data: 1\n\n")), Err(std::io::Error::other("Reset by peer"))];
        let mut events = Events::from_stream(futures_util::stream::iter(chunks), 100);
        let mut cursor = Cursor::default();
        assert_eq!(events.next(&mut cursor).await, event(None, "1"));
        assert_eq!(events.next(&mut cursor).await, Next::Failed("reset by peer".into()));
    }
}
