//! Where a session's messages for the client go.

use tokio::sync::mpsc;
use warden_jsonrpc::IdText;

/// One message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outbound {
    /// The JSON-RPC message.
    pub text: String,
    /// The id (as JSON text) of the client request this message answers or
    /// belongs to, when Warden knows it: besides responses, progress for that
    /// request, and requests or notifications from the upstream serving it
    /// while that upstream serves nothing else of this session. The HTTP
    /// front sends such messages on that request's stream.
    pub request: Option<IdText>,
    /// Whether this is the response to `request`: the last message for it.
    pub is_response: bool,
    /// Where the `result` is in `text`, when this is an upstream's result
    /// passed on: a front that rewrites it (the 2026-07-28 lane) need not
    /// parse the message again to find it.
    pub result: Option<std::ops::Range<usize>>,
    /// This response answers the only request of the session being served:
    /// nothing else is about to follow it, and a front that gathers writes
    /// may write it at once.
    pub alone: bool,
}

/// Takes every message a session has for its client, in order. Called from
/// the session's tasks: it must not block.
pub trait Outlet: Send + Sync + 'static {
    /// Takes one message. When the client is gone, it is dropped.
    fn deliver(&self, message: Outbound);

    /// The client cancelled its request `request` (id as JSON text), and the
    /// session no longer waits for its answer: no response will come. A
    /// front that holds something open for that answer (an HTTP POST) ends
    /// it here.
    fn cancelled(&self, request: &str) {
        let _ = request;
    }
}

/// A channel of message texts: fronts with one ordered stream (stdio, an
/// in-process client) need nothing else.
impl Outlet for mpsc::UnboundedSender<String> {
    fn deliver(&self, message: Outbound) {
        // The front is gone when this fails; the session ends with it.
        let _ = self.send(message.text);
    }
}
