//! What an upstream reports to its owner.

use std::sync::Arc;

use warden_jsonrpc::Frame;

use crate::connection::Connection;

/// Something that happened on upstream number `upstream`.
#[derive(Debug)]
pub struct Event {
    /// The index the owner gave the upstream when spawning it.
    pub upstream: usize,
    /// What happened.
    pub kind: EventKind,
    /// For a message: the id Warden gave the request on whose own stream it
    /// came (a Streamable HTTP POST's answer stream), when it did: the
    /// request it belongs to. Over stdio nothing tells.
    pub related: Option<u64>,
}

impl Event {
    /// An event of upstream `upstream`, related to no request.
    pub fn new(upstream: usize, kind: EventKind) -> Event {
        Event { upstream, kind, related: None }
    }
}

/// What happened on an upstream.
#[derive(Debug)]
pub enum EventKind {
    /// The handshake completed; requests can be sent on `Connection`.
    ///
    /// Also sent again for the same connection when a remote server forgot
    /// its session (it restarted) and Warden initialized a new one: what the
    /// old session held (subscriptions, log level) must be set up again, and
    /// the server's lists may have changed.
    Ready(Arc<Connection>),
    /// The connection ended (exit, crash, failed start, unreachable server). Its pending requests
    /// have already been answered with errors.
    Down {
        /// Why, with the tail of its stderr.
        reason: String,
    },
    /// A request or notification from the server. Answers to a request go back
    /// on the connection it came from.
    Message(Arc<Connection>, warden_jsonrpc::Frame),
}

/// Receives an upstream's events, in the order the upstream sent them.
///
/// Called from the tasks that read the upstream, so that a notification is
/// handled before any response that follows it (progress before the result it
/// leads to). Implementations must not block; spawn for anything slow.
pub trait EventSink: Send + Sync + 'static {
    /// Handles one event.
    fn deliver(&self, event: Event);
}

impl EventKind {
    /// A message event.
    pub fn message(connection: &Arc<Connection>, frame: Frame) -> Self {
        EventKind::Message(connection.clone(), frame)
    }
}
