//! A Streamable HTTP session (MCP 2025-06-18 and 2025-11-25).
//!
//! Every outgoing message is its own POST, so requests never wait for one
//! another ([`post`]): a request in its requester's own task (see
//! [`Poster`]), anything else in a task of its own. Answers come back as
//! JSON bodies or SSE streams ([`exchange`]). After the handshake a GET
//! stream carries what the server sends on its own ([`listen`]). When the
//! server forgets the session (404, typically after a restart) Warden
//! initializes a new one with the client's parameters and retries
//! ([`renew`]). Closing deletes the session.

mod exchange;
mod listen;
mod post;
mod renew;
mod session;

use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};

use warden_repoll::repoll;

use super::web::Settings;
use super::web::outbound::Outbound;
use crate::connection::{Connection, Outgoing, Post, Poster};
use crate::dispatch::Dispatch;
use crate::error::UpstreamError;
use session::Session;

/// What the tasks of one Streamable HTTP link share.
pub(crate) struct Remote {
    settings: Settings,
    dispatch: Dispatch,
    session: Session,
    /// The client's `initialize` as first sent, replayed to re-initialize.
    init: OnceLock<String>,
    /// Why the link failed for good (it could not start).
    failed: watch::Sender<Option<String>>,
    /// The task reading the GET stream.
    listener: Mutex<Option<AbortHandle>>,
    /// A modern server's tools whose schemas ask for `Mcp-Param-*` headers,
    /// from the `tools/list` answers that passed: name → inputSchema.
    schemas: Mutex<std::collections::HashMap<String, String>>,
    /// The ids of `tools/list` requests to a modern server, whose answers
    /// fill `schemas`.
    listing: Mutex<std::collections::HashSet<String>>,
}

impl Remote {
    /// The server's name.
    fn name(&self) -> &str {
        self.dispatch.connection().name()
    }

    /// Marks the link failed: the supervisor ends this run with `reason`.
    fn fail(&self, reason: String) {
        self.failed.send_if_modified(|failed| {
            let first = failed.is_none();
            if first {
                *failed = Some(reason);
            }
            first
        });
    }

    /// Stops reading the GET stream.
    fn stop_listening(&self) {
        if let Some(listener) = warden_sync::lock(&self.listener).take() {
            listener.abort();
        }
    }

    /// Ends the session on the server (`DELETE`), ignoring errors: the server
    /// also expires it on its own.
    async fn delete_session(&self) {
        let session = self.session.current_now();
        if session.id.is_none() {
            return;
        }
        let url = &self.settings.url;
        let request = session.apply(self.settings.client.delete(url.clone()));
        match request.timeout(self.settings.grace).send().await {
            Ok(response) => {
                tracing::debug!(server = %self.name(), status = %response.status(), "deleted the upstream session")
            }
            Err(err) => tracing::debug!(server = %self.name(), %err, "deleting the upstream session failed"),
        }
    }
}

/// A Streamable HTTP link: the task posting the outbox and the shared state.
pub(crate) struct HttpLink {
    remote: Arc<Remote>,
    poster: JoinHandle<()>,
    failed: watch::Receiver<Option<String>>,
}

impl HttpLink {
    /// Starts posting what is sent on the dispatch's connection to `settings.url`.
    pub fn open(settings: Settings, dispatch: Dispatch, outbox: mpsc::UnboundedReceiver<Outgoing>) -> HttpLink {
        let (failed_tx, failed) = watch::channel(None);
        let remote = Arc::new(Remote {
            settings,
            dispatch,
            session: Session::new(),
            init: OnceLock::new(),
            failed: failed_tx,
            listener: Mutex::new(None),
            schemas: Mutex::default(),
            listing: Mutex::default(),
        });
        let weak: std::sync::Weak<Remote> = Arc::downgrade(&remote);
        remote.dispatch.connection().set_poster(weak);
        let poster = tokio::spawn(drain(remote.clone(), outbox));
        HttpLink { remote, poster, failed }
    }

    /// The connection requests are sent on.
    pub fn connection(&self) -> &Arc<Connection> {
        self.remote.dispatch.connection()
    }

    /// Resolves when the link failed for good: the server could not be
    /// reached or refused `initialize`. (A server that forgets the session
    /// later is re-initialized instead.)
    pub async fn ended(&mut self) -> String {
        match self.failed.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the link closed".into(),
        }
    }

    /// Fails what is waiting, deletes the session and stops every task.
    pub async fn close(mut self, reason: &str) -> String {
        let name = self.remote.name().to_owned();
        self.connection().close(UpstreamError::Lost { name, reason: reason.to_owned() });
        // The poster deletes the session when it reads the close.
        let grace = self.remote.settings.grace + std::time::Duration::from_millis(100);
        if tokio::time::timeout(grace, &mut self.poster).await.is_err() {
            self.poster.abort();
        }
        self.remote.stop_listening();
        reason.to_owned()
    }
}

/// A request after the handshake is posted in the requester's own task
/// (see [`Poster`]); the rest goes through [`drain`]. Such a request is
/// cancelled by dropping its exchange, which closes its stream.
impl Poster for Remote {
    fn post(self: Arc<Self>, text: String) -> Post {
        let outbound = Outbound::read(&text);
        Box::pin(post::post(self, text, outbound))
    }
}

/// Posts every other outgoing message (the handshake, notifications, the
/// answers to the server's requests) in its own task until the connection
/// closes; then deletes the session. Posts still in flight are dropped.
async fn drain(remote: Arc<Remote>, mut outbox: mpsc::UnboundedReceiver<Outgoing>) {
    let mut posts = JoinSet::new();
    while let Some(Outgoing::Line(text)) = outbox.recv().await {
        // Finished posts are reaped here rather than awaited: awaiting them
        // woke this task, and often another worker thread, after every answer.
        while posts.try_join_next().is_some() {}
        let outbound = Outbound::read(&text);
        // A modern server is told of a cancellation by the end of the
        // request's stream, closed when its exchange was dropped (see
        // `Poster`), not by a notification.
        if outbound.cancels.is_some() && remote.dispatch.connection().is_modern() {
            continue;
        }
        // The task drives the POST's connection and awaits its answer, which
        // wake it in turn: it is polled again at once rather than
        // rescheduled ([`repoll`]).
        posts.spawn(repoll(post::post(remote.clone(), text, outbound)));
    }
    remote.stop_listening();
    remote.delete_session().await;
}
