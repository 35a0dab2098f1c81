//! Upstream → client: what happens to everything an upstream sends that is not
//! an answer to a forwarded request (those return through
//! [`inbound`](crate::inbound)'s forwarding).
//!
//! Events are handled in the task that read them, so they keep the order the
//! upstream sent them in: state changes update the catalog and tell the client
//! its lists changed; requests get a client-facing id; notifications get
//! their ids and tokens mapped back.

mod listen;
mod notifications;
mod requests;

use std::sync::{Arc, Weak};

use warden_jsonrpc::{Kind, notification};
use warden_upstream::{Connection, Event, EventKind, EventSink};

use crate::catalog::ItemKind;
use crate::session::Shared;
use warden_sync::lock;

/// Receives every upstream's events for one session.
pub(crate) struct Sink(pub Weak<Shared>);

impl EventSink for Sink {
    fn deliver(&self, event: Event) {
        if let Some(shared) = self.0.upgrade() {
            shared.upstream_event(event);
        }
    }
}

impl Shared {
    /// Handles one event of one of this session's upstreams (its own, or a
    /// shared one's, passed on by the [`Pool`](crate::Pool)).
    pub(crate) fn upstream_event(self: Arc<Self>, event: Event) {
        match event.kind {
            EventKind::Ready(connection) => {
                // Listing takes round trips: not in the reading task.
                tokio::spawn(async move { self.upstream_ready(event.upstream, connection).await });
            }
            EventKind::Down { .. } => self.upstream_down(event.upstream),
            EventKind::Message(connection, frame) => match frame.kind() {
                Kind::Request => self.upstream_request(event.upstream, &connection, frame, event.related),
                _ => self.upstream_notification(event.upstream, &connection, frame, event.related),
            },
        }
    }

    /// An upstream finished its handshake: load what it offers, replay the
    /// session's log level and subscriptions, and tell the client.
    pub(crate) async fn upstream_ready(self: Arc<Self>, index: usize, connection: Arc<Connection>) {
        let changed = self.load_surface(index, &connection).await;
        let shared_level = self.shared_log_level(connection.name());
        if connection.is_modern() {
            let own = || lock(&self.log_level).as_deref().and_then(crate::inbound::level_of);
            if let Some(level) = shared_level.or_else(own) {
                connection.set_log_level(level);
            }
            self.relisten(index, &connection);
            self.list_changed(&changed);
            return;
        }
        let level = match shared_level {
            Some(shared) => Some(format!(r#"{{"level":{shared}}}"#)),
            None => lock(&self.log_level).clone(),
        };
        if let Some(params) = level
            && connection.handshake().has("logging")
        {
            let _ = connection.request("logging/setLevel", Some(&params)).await;
        }
        let subscriptions: Vec<String> =
            lock(&self.subscriptions).values().filter(|(owner, _)| *owner == index).map(|(_, p)| p.clone()).collect();
        for params in subscriptions {
            let _ = connection.request("resources/subscribe", Some(&params)).await;
        }
        self.list_changed(&changed);
    }

    /// An upstream went down: its items disappear until it is back.
    fn upstream_down(&self, index: usize) {
        // An upstream is Down before it says so; one still ready in this
        // slot replaced the upstream that ended (a reload), and keeps its lists.
        if self.upstreams.load().get(index).is_some_and(|upstream| upstream.connection().is_some()) {
            return;
        }
        let gone = self.write_catalog().clear(index);
        self.list_changed(&gone);
    }

    /// Sends one `list_changed` per affected list, once the client is ready
    /// for notifications.
    pub(crate) fn list_changed(&self, kinds: &[ItemKind]) {
        if !self.initialized.load(std::sync::atomic::Ordering::Relaxed) {
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
}
