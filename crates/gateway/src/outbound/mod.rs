//! Upstream → client: what happens to everything an upstream sends that is not
//! an answer to a forwarded request (those return through
//! the inbound forwarding).
//!
//! Events are handled in the task that read them, so they keep the order the
//! upstream sent them in: state changes update the catalog and tell the client
//! its lists changed; requests get a client-facing id; notifications get
//! their ids and tokens mapped back.

mod notifications;
mod requests;

use notifications::upstream_notification;
use requests::upstream_request;

use std::sync::{Arc, Weak};

use warden_jsonrpc::Kind;
use warden_upstream::{Connection, Event, EventKind, EventSink};

use crate::parts::SessionParts;
use crate::pipeline::Observer;
use crate::pool::Member;
use crate::surfaces::load_surface;
use warden_sync::lock;

/// Receives every upstream's events for one session; holds the session
/// weakly, so dropping the session ends it.
pub(crate) struct Sink(pub Weak<SessionParts>);

impl EventSink for Sink {
    fn deliver(&self, event: Event) {
        if let Some(session) = self.0.upgrade() {
            upstream_event(session, event);
        }
    }
}

/// A session as a member of the pool's shared upstreams.
impl Member for SessionParts {
    fn deliver(self: Arc<Self>, event: Event) {
        upstream_event(self, event);
    }

    fn holds_token(&self, token: &str) -> bool {
        lock(&self.maps.tokens).contains_key(token)
    }

    fn holds_server_request(&self, connection: &Arc<Connection>, id: &str) -> bool {
        lock(&self.maps.server_requests)
            .values()
            .any(|request| Arc::ptr_eq(&request.connection, connection) && request.upstream_id == id)
    }

    fn subscribed(&self, index: usize, uri: &str) -> bool {
        self.replay.subscribed(index, uri)
    }

    fn has_in_flight(&self, connection: &Arc<Connection>, upstream_id: u64) -> bool {
        lock(&self.maps.in_flight)
            .values()
            .any(|entry| entry.upstream_id == upstream_id && Arc::ptr_eq(&entry.connection, connection))
    }

    fn created_task(&self, index: usize, task: &str) -> bool {
        self.replay.created_task(index, task)
    }

    fn log_level(&self) -> Option<String> {
        self.replay.level()
    }

    fn observer(&self) -> Arc<dyn Observer> {
        self.surface.hooks.load().observer.clone()
    }
}

/// Handles one event of one of this session's upstreams (its own, or a
/// shared one's, passed on by the [`Pool`](crate::Pool)).
pub(crate) fn upstream_event(session: Arc<SessionParts>, event: Event) {
    match event.kind {
        EventKind::Ready(connection) => {
            // Listing takes round trips: not in the reading task.
            tokio::spawn(async move { upstream_ready(session, event.upstream, connection).await });
        }
        EventKind::Down { .. } => upstream_down(&session, event.upstream),
        EventKind::Message(connection, frame) => match frame.kind() {
            Kind::Request => upstream_request(&session, event.upstream, &connection, frame, event.related),
            _ => upstream_notification(&session, event.upstream, &connection, frame, event.related),
        },
    }
}

/// An upstream finished its handshake: load what it offers, replay the
/// session's log level and subscriptions, and tell the client.
pub(crate) async fn upstream_ready(session: Arc<SessionParts>, index: usize, connection: Arc<Connection>) {
    let changed = load_surface(&session, index, &connection).await;
    if connection.is_modern() {
        if let Some(level) = session.log_level_for(&connection) {
            connection.set_log_level(level);
        }
        session.replay.relisten(&session.id, index, &connection);
        session.link.list_changed(&changed);
        return;
    }
    let level = match session.shared_log_level(connection.name()) {
        Some(shared) => Some(format!(r#"{{"level":{shared}}}"#)),
        None => lock(&session.replay.log_level).clone(),
    };
    if let Some(params) = level
        && connection.handshake().has("logging")
    {
        let _ = connection.request("logging/setLevel", Some(&params)).await;
    }
    for (_, params) in session.replay.subscriptions_on(index) {
        let _ = connection.request("resources/subscribe", Some(&params)).await;
    }
    session.link.list_changed(&changed);
}

/// An upstream went down: its items disappear until it is back.
fn upstream_down(session: &SessionParts, index: usize) {
    // An upstream is Down before it says so; one still ready in this
    // slot replaced the upstream that ended (a reload), and keeps its lists.
    if session.upstreams.slots.load().get(index).is_some_and(|upstream| upstream.connection().is_some()) {
        return;
    }
    // A shared upstream's end is counted once, by the pool.
    if let Some(upstream) = session.upstreams.slots.load().get(index)
        && !session.upstreams.is_shared(upstream.name())
    {
        session.surface.hooks.load().observer.upstream_down(upstream.name());
    }
    let gone = session.surface.write_catalog().clear(index);
    session.link.list_changed(&gone);
}
