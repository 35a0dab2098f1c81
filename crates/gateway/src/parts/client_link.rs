//! The client's side of a session: where its messages go, and what it said
//! when it initialized.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::watch;
use warden_jsonrpc::{ErrorCode, Frame, IdText, error_response, notification};

use crate::catalog::ItemKind;
use crate::outlet::{Outbound, Outlet};

/// What the client said in `initialize`.
#[derive(Debug)]
pub(crate) struct ClientInit {
    /// The revision both sides speak.
    pub protocol_version: String,
    /// `clientInfo` as `name/version`, for audit records.
    pub name: Option<String>,
    /// The client declared form-mode elicitation.
    pub elicits_forms: bool,
}

/// The way to the client, and who it is.
pub(crate) struct ClientLink {
    /// Where every message for the client goes.
    outlet: Box<dyn Outlet>,
    /// Set once, by `initialize`.
    pub init: OnceLock<ClientInit>,
    /// The client sent `notifications/initialized`: it may be notified.
    pub initialized: AtomicBool,
    /// The client's `initialize` params (JSON text), which the upstreams'
    /// handshakes wait for.
    pub init_params: watch::Sender<Option<Arc<str>>>,
    /// Who the front let in (an HTTP token's name), for approvals.
    pub principal: OnceLock<Arc<str>>,
    /// How many of the client's requests are being served (see
    /// [`Outbound::alone`]).
    serving: AtomicUsize,
}

/// One request being served, counted while it lives (see
/// [`ClientLink::serving`]).
pub(crate) struct Serving<'a>(&'a AtomicUsize);

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ClientLink {
    /// A link to a client that has not initialized yet.
    pub fn new(outlet: impl Outlet) -> ClientLink {
        ClientLink {
            outlet: Box::new(outlet),
            init: OnceLock::new(),
            initialized: AtomicBool::new(false),
            init_params: watch::channel(None).0,
            principal: OnceLock::new(),
            serving: AtomicUsize::new(0),
        }
    }

    /// Counts a request as being served until the guard drops.
    pub fn serving(&self) -> Serving<'_> {
        self.serving.fetch_add(1, Ordering::Relaxed);
        Serving(&self.serving)
    }

    /// Whether the request answered now is the only one being served.
    fn alone(&self) -> bool {
        self.serving.load(Ordering::Relaxed) <= 1
    }

    /// Queues a message for the client that belongs to no request.
    pub fn send(&self, text: String) {
        self.outlet.deliver(Outbound { text, request: None, is_response: false, result: None, alone: false });
    }

    /// Queues the response to the client's request `frame`.
    pub fn respond(&self, frame: &Frame, text: String) {
        let request = frame.id().map(IdText::from);
        self.outlet.deliver(Outbound { text, request, is_response: true, result: None, alone: self.alone() });
    }

    /// Answers the client's request `frame` with an upstream's `answer`,
    /// under the request's id; a result's place in it goes along.
    pub fn respond_answer(&self, frame: &Frame, answer: &Frame) {
        let Some(id) = frame.id() else { return self.respond(frame, answer.with_id("null")) };
        self.outlet.deliver_answer(answer, id, self.alone());
    }

    /// Answers the client's request `frame` with an error.
    pub fn fail(&self, frame: &Frame, code: ErrorCode, message: &str) {
        crate::served::failed(code.code());
        self.respond(frame, error_response(frame.id(), code, message, None));
    }

    /// Queues a message for the client that belongs to the client request
    /// `request` (its id as JSON text), when known.
    pub fn send_related(&self, text: String, request: Option<&str>) {
        self.outlet.deliver(Outbound {
            text,
            request: request.map(IdText::from),
            is_response: false,
            result: None,
            alone: false,
        });
    }

    /// Tells the front that the client cancelled its request `request` (id
    /// as JSON text): no answer will come for it.
    pub fn cancelled(&self, request: &str) {
        self.outlet.cancelled(request);
    }

    /// Sends one `list_changed` per affected list, once the client is ready
    /// for notifications.
    pub fn list_changed(&self, kinds: &[ItemKind]) {
        if !self.initialized.load(Ordering::Relaxed) {
            return;
        }
        let mut sent: Vec<&str> = Vec::new();
        for kind in kinds {
            let method = kind.list_changed();
            if !sent.contains(&method) {
                sent.push(method);
                self.send(notification(method, None));
            }
        }
    }

    /// The client's name from `initialize`.
    pub fn name(&self) -> Option<&str> {
        self.init.get().and_then(|client| client.name.as_deref())
    }

    /// The protocol revision agreed with the client, once initialized.
    pub fn protocol_version(&self) -> Option<&str> {
        self.init.get().map(|client| client.protocol_version.as_str())
    }
}
