//! Ids and tokens Warden substitutes, and what they stand for.

use foldhash::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

use warden_jsonrpc::IdText;
use warden_sync::lock;
use warden_upstream::Connection;

/// A client request that is being served by an upstream.
#[derive(Debug, Clone)]
pub(crate) struct InFlight {
    /// The upstream's index.
    pub upstream: usize,
    /// The connection the request went out on.
    pub connection: Arc<Connection>,
    /// The id Warden gave it upstream.
    pub upstream_id: u64,
    /// The progress token Warden substituted, if the request had one.
    pub token: Option<String>,
    /// Issued to this request alone: a client that reuses the id after a
    /// cancellation gets a new entry, which the old request's task, ending
    /// late, must not take for its own.
    pub serial: u64,
}

/// A request from an upstream that is waiting for the client's answer.
#[derive(Debug, Clone)]
pub(crate) struct ServerRequest {
    /// The upstream's index.
    pub upstream: usize,
    /// The connection to answer on.
    pub connection: Arc<Connection>,
    /// The upstream's own id, as JSON text.
    pub upstream_id: String,
    /// The progress token Warden substituted, if the request had one.
    pub token: Option<String>,
    /// The client request (its id as JSON text) it was asked during, when known.
    pub during: Option<String>,
}

/// Where progress for a Warden-issued token goes.
#[derive(Debug, Clone)]
pub(crate) enum TokenTarget {
    /// To the client, as its own token (JSON text), for the client request
    /// `request` (its id as JSON text).
    Client {
        /// The client's token.
        token: String,
        /// The request that carried it.
        request: String,
    },
    /// To an upstream, as its own token (JSON text), on that connection.
    Upstream(Arc<Connection>, String),
}

/// The id and token maps of one session, behind one lock each.
#[derive(Debug, Default)]
pub(crate) struct IdMaps {
    /// Client request id (JSON text) → the upstream request serving it.
    pub in_flight: Mutex<HashMap<IdText, InFlight>>,
    /// Client-facing id → request from an upstream.
    pub server_requests: Mutex<HashMap<u64, ServerRequest>>,
    /// Warden-issued progress token (JSON text) → where progress goes.
    pub tokens: Mutex<HashMap<String, TokenTarget>>,
    /// Client request id (JSON text) → the serial of the request waiting for
    /// approval under that id, and the handle that withdraws it (with why).
    pub waiting: Mutex<HashMap<String, (u64, tokio::sync::oneshot::Sender<&'static str>)>>,
    /// Requests Warden itself sent the client (its id) → who waits for the answer.
    pub own_requests: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<warden_jsonrpc::Frame>>>,
    /// Warden's requests to the client made for a modern upstream's input
    /// request: id → the upstream's key for it.
    pub input_keys: Mutex<HashMap<u64, String>>,
}

impl IdMaps {
    /// Takes the in-flight entry of `client_id` if it is still the one
    /// issued `serial` (none: the request was cancelled).
    pub fn take_in_flight(&self, client_id: &str, serial: u64) -> Option<InFlight> {
        let mut in_flight = lock(&self.in_flight);
        // One lookup when it is (nearly always): a later request's entry
        // under the same id goes back.
        let (id, entry) = in_flight.remove_entry(client_id)?;
        if entry.serial == serial {
            return Some(entry);
        }
        in_flight.insert(id, entry);
        None
    }

    /// Forgets the approval-withdrawal handle of `client_id` if it is still
    /// the one issued `serial` (not a later request's under the same id).
    pub fn forget_waiting(&self, client_id: &str, serial: u64) {
        let mut waiting = lock(&self.waiting);
        if waiting.get(client_id).is_some_and(|(own, _)| *own == serial) {
            waiting.remove(client_id);
        }
    }

    /// Whether the in-flight entry of `client_id` is still the one issued
    /// `serial` (not cancelled).
    pub fn still_in_flight(&self, client_id: &str, serial: u64) -> bool {
        lock(&self.in_flight).get(client_id).is_some_and(|entry| entry.serial == serial)
    }

    /// The client request a message from `connection` belongs to: the one
    /// Warden sent as `related` when the message came on that request's own
    /// stream, else the one request `connection` serves, if it serves
    /// exactly one.
    pub fn request_of(&self, connection: &Arc<Connection>, related: Option<u64>) -> Option<String> {
        if let Some(related) = related {
            let in_flight = lock(&self.in_flight);
            let found = in_flight
                .iter()
                .find(|(_, entry)| entry.upstream_id == related && Arc::ptr_eq(&entry.connection, connection));
            if let Some((id, _)) = found {
                return Some(id.to_string());
            }
        }
        self.sole_request_on(connection)
    }

    /// The one client request `connection` is serving, if it serves exactly
    /// one: what a request or notification from that upstream belongs to.
    /// Requests blocked on a question of theirs that the client has not
    /// answered yet (a 2026-07-28 request parked for its retry) are not
    /// counted when another is served: one waiting request never keeps
    /// another's questions from reaching it.
    pub fn sole_request_on(&self, connection: &Arc<Connection>) -> Option<String> {
        let waiting: Vec<String> = lock(&self.server_requests)
            .values()
            .filter(|request| Arc::ptr_eq(&request.connection, connection))
            .filter_map(|request| request.during.clone())
            .collect();
        let in_flight = lock(&self.in_flight);
        let serving: Vec<&IdText> = in_flight
            .iter()
            .filter(|(_, entry)| Arc::ptr_eq(&entry.connection, connection))
            .map(|(id, _)| id)
            .collect();
        if let [only] = serving.as_slice() {
            return Some(only.to_string());
        }
        let mut asking = serving.into_iter().filter(|id| !waiting.iter().any(|during| during == id.as_str()));
        match (asking.next(), asking.next()) {
            (Some(id), None) => Some(id.to_string()),
            _ => None,
        }
    }
}

/// The byte range of `_meta.progressToken` in `frame`, given how to get the
/// `_meta` of its params (asked only when the parse did not find the token's
/// place; callers that read the params already hand it over, so they are
/// scanned once). None for a `null` token, or one named twice.
pub(crate) fn progress_token<'a>(
    frame: &'a warden_jsonrpc::Frame,
    meta: impl FnOnce() -> Option<&'a str>,
) -> Option<std::ops::Range<usize>> {
    // A `_meta` (valid JSON, as a frame's are) whose text has neither the
    // key nor an escape cannot name it: a 2026-07-28 request's envelope is
    // not read again for nothing.
    static KEY: warden_jsonrpc::Needle = warden_jsonrpc::Needle::new("progressToken");
    // As the parse found it, where it could.
    if let Some(found) = frame.noted_progress_token() {
        return found.filter(|token| &frame.text()[token.clone()] != "null");
    }
    let meta = meta().filter(|meta| KEY.is_in(meta) || warden_jsonrpc::has_escape(meta))?;
    let meta = warden_jsonrpc::Members::parse(meta).ok()?;
    let token = meta.optional("progressToken").ok()??;
    Some(frame.span_of(token))
}
