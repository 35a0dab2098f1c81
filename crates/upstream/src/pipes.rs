//! The tasks that move bytes between Warden and an upstream process.

use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::process::ChildStdout;
use tokio::sync::mpsc;
use warden_jsonrpc::{Frame, Kind, Line, LineReader, guess_id};

use crate::connection::{Connection, Outgoing};
use crate::error::UpstreamError;
use crate::event::{Event, EventKind, EventSink};

/// Writes queued messages to the process, one per line, flushing whenever the
/// queue runs empty so that bursts cost one system call.
pub(crate) async fn write_all(mut outbox: mpsc::UnboundedReceiver<Outgoing>, stdin: impl AsyncWrite + Unpin) {
    let mut stdin = BufWriter::with_capacity(64 * 1024, stdin);
    while let Some(first) = outbox.recv().await {
        let mut next = Some(first);
        while let Some(item) = next {
            match item {
                Outgoing::Line(text) => {
                    if stdin.write_all(text.as_bytes()).await.is_err() || stdin.write_all(b"\n").await.is_err() {
                        return;
                    }
                }
                Outgoing::Close => {
                    let _ = stdin.flush().await;
                    let _ = stdin.shutdown().await;
                    return;
                }
            }
            next = outbox.try_recv().ok();
        }
        if stdin.flush().await.is_err() {
            return;
        }
    }
}

/// Reads the process's stdout until it ends: responses resolve waiting
/// requests, requests and notifications become events, anything else is
/// dropped and logged (never forwarded).
pub(crate) async fn read_all(
    stdout: ChildStdout,
    connection: Arc<Connection>,
    limit: usize,
    index: usize,
    events: Arc<dyn EventSink>,
) {
    let name = connection.name().to_owned();
    let mut lines = LineReader::new(stdout, limit);
    loop {
        let line = match lines.next().await {
            Ok(Line::Text(line)) => line,
            Ok(Line::TooLong { bytes, head, tail }) => {
                tracing::warn!(server = %name, bytes, limit, "dropped an oversized message from upstream (limits.maxMessageBytes)");
                if let Some(id) = guess_id(&head, &tail).and_then(|id| id.parse::<u64>().ok()) {
                    let error = UpstreamError::TooLarge { name: name.clone(), bytes, limit };
                    let _ = connection.resolve(Some(id), Err(error));
                }
                continue;
            }
            Ok(Line::NotUtf8) => {
                tracing::warn!(server = %name, "dropped a line that is not UTF-8 from upstream stdout");
                continue;
            }
            Ok(Line::Eof) => return,
            Err(err) => {
                tracing::warn!(server = %name, %err, "reading upstream stdout failed");
                return;
            }
        };
        let frame = match Frame::parse(line) {
            Ok(frame) => frame,
            Err(err) => {
                tracing::warn!(server = %name, %err, "dropped a line from upstream stdout that is not JSON-RPC");
                continue;
            }
        };
        match frame.kind() {
            Kind::Response | Kind::ErrorResponse => {
                let id = frame.id().and_then(|id| id.parse::<u64>().ok());
                if !connection.resolve(id, Ok(frame)) {
                    tracing::warn!(server = %name, ?id, "dropped a response to an id Warden did not send (or a cancelled request)");
                }
            }
            Kind::Request | Kind::Notification => {
                events.deliver(Event { upstream: index, kind: EventKind::message(&connection, frame) });
            }
        }
    }
}
