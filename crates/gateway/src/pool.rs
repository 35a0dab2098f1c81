//! Upstreams that outlive a session: servers marked `share: true` run once
//! for every session, and `maxProcesses` caps how many processes of the
//! others the sessions of a front may start.
//!
//! A shared upstream's events reach the session they belong to: progress by
//! the Warden-issued token (unique across sessions), requests from the server
//! by the session with a request in flight on it, cancellations by the
//! session that holds the cancelled request, list changes to every session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use warden_config::Config;
use warden_jsonrpc::{Frame, Kind, Method};
use warden_upstream::{Connection, Event, EventKind, EventSink, Upstream, UpstreamSpec};

use crate::session::Shared;
use crate::tokens::lock;

/// The shared upstreams and process caps of one front.
#[derive(Default)]
pub struct Pool {
    shared: Mutex<HashMap<String, Common>>,
    caps: Mutex<HashMap<String, (usize, Arc<Semaphore>)>>,
    /// The first client's `initialize` params, for shared upstreams added later.
    first_init: Mutex<Option<Arc<str>>>,
}

/// One upstream shared by many sessions.
struct Common {
    upstream: Upstream,
    fanout: Arc<Fanout>,
    /// The first client's `initialize` params start its handshake.
    init: watch::Sender<Option<Arc<str>>>,
}

/// How a session gets one of its upstreams.
pub(crate) enum Lease {
    /// A process of its own, within the cap if there is one.
    Own(Option<OwnedSemaphorePermit>),
    /// The shared one.
    Shared(Upstream),
    /// None: the cap is reached.
    Refused(String),
}

impl Pool {
    /// Starts the shared upstreams of `config` (their handshakes wait for the
    /// first client) and sets up the caps of the others.
    pub fn start(config: &Config) -> Pool {
        let pool = Pool::default();
        pool.apply(&Config::default(), config);
        pool
    }

    /// Applies a new configuration's shared servers and caps, before the
    /// sessions apply theirs: a new shared server starts, a changed one
    /// restarts once for every session, a removed one stops (sessions
    /// retire it). Caps of servers already configured keep their size until
    /// Warden restarts.
    pub fn apply(&self, old: &Config, config: &Config) {
        let mut shared = lock(&self.shared);
        let mut caps = lock(&self.caps);
        shared.retain(|name, common| {
            let keep = config.servers.get(name).is_some_and(|server| server.share);
            if !keep {
                let upstream = common.upstream.clone();
                tokio::spawn(async move { upstream.stop("it was removed from the configuration").await });
            }
            keep
        });
        for (index, (name, server)) in config.servers.iter().enumerate() {
            let Some(spec) = UpstreamSpec::from_config(name, config) else { continue };
            if !server.share {
                if let Some(cap) = server.max_processes {
                    caps.entry(name.clone()).or_insert_with(|| (cap, Arc::new(Semaphore::new(cap))));
                }
                continue;
            }
            match shared.get(name) {
                Some(common) if old.servers.get(name) == Some(server) => common.upstream.amend(spec),
                Some(common) => {
                    tracing::info!(server = %name, "shared server definition changed: restarting it");
                    common.upstream.replace(spec);
                }
                None => {
                    let (init, init_rx) = watch::channel(lock(&self.first_init).clone());
                    let fanout = Arc::new(Fanout { sessions: Mutex::new(Vec::new()) });
                    let upstream = Upstream::spawn(index, spec, init_rx, fanout.clone());
                    shared.insert(name.clone(), Common { upstream, fanout, init });
                }
            }
        }
    }

    /// Stops the shared upstreams.
    pub async fn shutdown(&self) {
        let upstreams: Vec<Upstream> = lock(&self.shared).values().map(|common| common.upstream.clone()).collect();
        for upstream in upstreams {
            upstream.shutdown().await;
        }
    }

    /// Whether server `name` is shared (its process is not a session's own).
    pub(crate) fn shares(&self, name: &str) -> bool {
        lock(&self.shared).contains_key(name)
    }

    /// How a new session gets server `name`.
    pub(crate) fn lease(&self, name: &str) -> Lease {
        if let Some(common) = lock(&self.shared).get(name) {
            return Lease::Shared(common.upstream.clone());
        }
        match lock(&self.caps).get(name) {
            None => Lease::Own(None),
            Some((cap, permits)) => match permits.clone().try_acquire_owned() {
                Ok(permit) => Lease::Own(Some(permit)),
                Err(_) => Lease::Refused(format!(
                    "{cap} processes of it are running already, for other sessions (servers.{name}.maxProcesses)"
                )),
            },
        }
    }

    /// Registers a session as a user of shared server `name`, as its
    /// upstream number `index`; its `initialize` params start the shared
    /// handshake if it is the first.
    pub(crate) fn join(&self, name: &str, index: usize, session: Weak<Shared>) {
        if let Some(common) = lock(&self.shared).get(name) {
            lock(&common.fanout.sessions).push((session, index));
        }
    }

    /// Unregisters a session from shared server `name`.
    pub(crate) fn leave(&self, name: &str, session: &Weak<Shared>) {
        if let Some(common) = lock(&self.shared).get(name) {
            lock(&common.fanout.sessions).retain(|(user, _)| !user.ptr_eq(session));
        }
    }

    /// Hands a session's `initialize` params to the shared upstreams that
    /// have none yet.
    pub(crate) fn initialized(&self, params: &Arc<str>) {
        lock(&self.first_init).get_or_insert_with(|| params.clone());
        for common in lock(&self.shared).values() {
            common.init.send_if_modified(|current| {
                let first = current.is_none();
                if first {
                    *current = Some(params.clone());
                }
                first
            });
        }
    }
}

/// Delivers a shared upstream's events to the sessions that use it.
struct Fanout {
    sessions: Mutex<Vec<(Weak<Shared>, usize)>>,
}

#[derive(Deserialize)]
struct TokenParams<'a> {
    #[serde(borrow, default, rename = "progressToken")]
    progress_token: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "requestId")]
    request_id: Option<&'a RawValue>,
}

impl EventSink for Fanout {
    fn deliver(&self, event: Event) {
        let sessions: Vec<(Arc<Shared>, usize)> = {
            let mut sessions = lock(&self.sessions);
            sessions.retain(|(session, _)| session.strong_count() > 0);
            sessions.iter().filter_map(|(session, index)| Some((session.upgrade()?, *index))).collect()
        };
        let related = event.related;
        match event.kind {
            EventKind::Ready(connection) => {
                for (session, index) in sessions {
                    session.upstream_event(Event::new(index, EventKind::Ready(connection.clone())));
                }
            }
            EventKind::Down { reason } => {
                for (session, index) in sessions {
                    let kind = EventKind::Down { reason: reason.clone() };
                    session.upstream_event(Event::new(index, kind));
                }
            }
            EventKind::Message(connection, frame) => {
                let owners = owners(&sessions, &connection, &frame);
                let Some(((last, last_index), others)) = owners.split_last() else { return };
                // Every owner but the last gets a copy; the last gets the frame.
                for (session, index) in others {
                    if let Ok(copy) = Frame::parse(frame.text()) {
                        let kind = EventKind::Message(connection.clone(), copy);
                        session.clone().upstream_event(Event { upstream: *index, kind, related });
                    }
                }
                let kind = EventKind::Message(connection, frame);
                last.clone().upstream_event(Event { upstream: *last_index, kind, related });
            }
        }
    }
}

/// The sessions a message from a shared upstream is for.
fn owners<'a>(
    sessions: &'a [(Arc<Shared>, usize)],
    connection: &Arc<Connection>,
    frame: &Frame,
) -> Vec<&'a (Arc<Shared>, usize)> {
    let params = frame.params().and_then(|params| serde_json::from_str::<TokenParams>(params).ok());
    let by = |holds: &dyn Fn(&Shared) -> bool| sessions.iter().filter(|(session, _)| holds(session)).take(1).collect();
    let serving = |session: &Shared| {
        lock(&session.maps.in_flight).values().any(|entry| Arc::ptr_eq(&entry.connection, connection))
    };
    match (frame.kind(), frame.method()) {
        (_, Some(Method::ToolsListChanged | Method::PromptsListChanged | Method::ResourcesListChanged)) => {
            sessions.iter().collect()
        }
        (Kind::Notification, Some(Method::Progress)) => match params.and_then(|p| p.progress_token) {
            Some(token) => by(&|session| lock(&session.maps.tokens).contains_key(token.get())),
            None => Vec::new(),
        },
        (Kind::Notification, Some(Method::Cancelled)) => match params.and_then(|p| p.request_id) {
            Some(id) => by(&|session| {
                lock(&session.maps.server_requests)
                    .values()
                    .any(|request| Arc::ptr_eq(&request.connection, connection) && request.upstream_id == id.get())
            }),
            None => Vec::new(),
        },
        (Kind::Request, _) => by(&serving),
        // Logging and the rest: the session being served, else everyone.
        _ => {
            let served: Vec<_> = by(&serving);
            if served.is_empty() { sessions.iter().collect() } else { served }
        }
    }
}
