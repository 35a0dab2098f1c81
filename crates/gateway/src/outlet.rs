//! Where a session's messages for the client go.

use tokio::sync::mpsc;
use warden_jsonrpc::{Frame, IdText, Kind};

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

    /// Takes an upstream's `answer` to the client's request `request` (its
    /// id as JSON text), to go out under that id; `alone` as in
    /// [`Outbound::alone`]. By default the id is written in and the answer
    /// delivered, with its result's place. A front that writes an answer of
    /// its own around the result anyway (the 2026-07-28 lane) takes the
    /// upstream's frame as it is: the answer is copied once, not twice.
    fn deliver_answer(&self, answer: &Frame, request: &str, alone: bool) {
        let answered = answer.with_id_frame(request);
        let result = answered.payload_span().filter(|_| answered.kind() == Kind::Response);
        let request = Some(IdText::from(request));
        self.deliver(Outbound { text: answered.into_text(), request, is_response: true, result, alone });
    }

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
