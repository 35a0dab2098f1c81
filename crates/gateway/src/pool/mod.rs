//! Upstreams that outlive a session: servers marked `share: true` run once
//! for every session, and `maxProcesses` caps how many processes of the
//! others the sessions of a front may start.
//!
//! A shared upstream's events reach the session they belong to, and only
//! when the protocol tells which that is (see [`owners`]): list changes go
//! to every session; what no session can be told is for it stays in Warden
//! (a request gets an error, a notification is logged) and is counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use warden_config::Config;
use warden_jsonrpc::{ErrorCode, Frame, Kind, error_response};
use warden_sandbox::SandboxReport;
use warden_upstream::{Connection, Event, EventKind, EventSink, Upstream, UpstreamSpec};

use owners::{Owners, User, owners};
use warden_sync::lock;

mod log_level;
mod owners;

pub(crate) use log_level::wants_log;

/// A session as the pool sees it: where a shared server's events go, and
/// what tells which session a message of the server's is for. The pool holds
/// its members weakly; a session that ends leaves.
pub(crate) trait Member: Send + Sync {
    /// Handles an event of a shared upstream, which the session knows by
    /// `event.upstream`.
    fn deliver(self: Arc<Self>, event: Event);
    /// Whether the session issued progress token `token` (JSON text).
    fn holds_token(&self, token: &str) -> bool;
    /// Whether the session holds the request `id` (JSON text) that
    /// `connection`'s server asked it.
    fn holds_server_request(&self, connection: &Arc<Connection>, id: &str) -> bool;
    /// Whether the session subscribed to `uri` on its upstream `index`.
    fn subscribed(&self, index: usize, uri: &str) -> bool;
    /// Whether the session has Warden's request `upstream_id` in flight on
    /// `connection`.
    fn has_in_flight(&self, connection: &Arc<Connection>, upstream_id: u64) -> bool;
    /// Whether the session's upstream `index` created task `task`.
    fn created_task(&self, index: usize, task: &str) -> bool;
    /// The log level the session asked for (JSON text), if any.
    fn log_level(&self) -> Option<String>;
    /// Who watches the session (see [`crate::pipeline::Observer`]).
    fn observer(&self) -> Arc<dyn crate::pipeline::Observer>;
}

/// The shared upstreams and process caps of one front.
#[derive(Default)]
pub struct Pool {
    shared: Mutex<HashMap<String, Common>>,
    caps: Mutex<HashMap<String, (usize, Arc<Semaphore>)>>,
    /// The first client's `initialize` params, for shared upstreams added later.
    first_init: Mutex<Option<Arc<str>>>,
    /// Where the shared upstreams' sandboxes report.
    sandbox: SandboxReport,
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
    /// first client) and sets up the caps of the others. The shared ones'
    /// sandboxes report to `sandbox`.
    pub fn start(config: &Config, sandbox: SandboxReport) -> Pool {
        let pool = Pool { sandbox, ..Pool::default() };
        pool.apply(&Config::default(), config);
        pool
    }

    /// Where the shared upstreams' sandboxes report.
    pub(crate) fn sandbox(&self) -> &SandboxReport {
        &self.sandbox
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
                    let fanout = Arc::new(Fanout {
                        name: Arc::from(name.as_str()),
                        sessions: Mutex::new(Vec::new()),
                        kept: Arc::default(),
                        warned: Default::default(),
                    });
                    let upstream = Upstream::spawn(index, spec, init_rx, fanout.clone(), self.sandbox.clone());
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

    /// What each shared server sent that Warden kept for want of an owner,
    /// by server name.
    pub(crate) fn kept(&self) -> Vec<(String, u64, u64)> {
        let shared = lock(&self.shared);
        let mut kept: Vec<(String, u64, u64)> = shared
            .iter()
            .map(|(name, common)| {
                let kept = &common.fanout.kept;
                (name.clone(), kept.requests.load(Ordering::Relaxed), kept.notifications.load(Ordering::Relaxed))
            })
            .collect();
        kept.sort();
        kept
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
    pub(crate) fn join(&self, name: &str, index: usize, session: Weak<dyn Member>) {
        if let Some(common) = lock(&self.shared).get(name) {
            lock(&common.fanout.sessions).push((session, index));
        }
    }

    /// Unregisters a session from shared server `name`.
    pub(crate) fn leave(&self, name: &str, session: &dyn Member) {
        if let Some(common) = lock(&self.shared).get(name) {
            lock(&common.fanout.sessions).retain(|(user, _)| !std::ptr::addr_eq(user.as_ptr(), session));
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
    /// The server's name.
    name: Arc<str>,
    sessions: Mutex<Vec<(Weak<dyn Member>, usize)>>,
    /// What it sent that no session could be told.
    kept: Arc<Kept>,
    /// Whether the warning about what cannot be shared was given.
    warned: std::sync::atomic::AtomicBool,
}

impl EventSink for Fanout {
    fn deliver(&self, event: Event) {
        let sessions: Vec<User> = {
            let mut sessions = lock(&self.sessions);
            sessions.retain(|(session, _)| session.strong_count() > 0);
            sessions.iter().filter_map(|(session, index)| Some((session.upgrade()?, *index))).collect()
        };
        let related = event.related;
        match event.kind {
            EventKind::Ready(connection) => {
                self.warn_once(&connection);
                for (session, index) in sessions {
                    session.deliver(Event::new(index, EventKind::Ready(connection.clone())));
                }
            }
            EventKind::Down { reason } => {
                // Counted once, whatever the number of sessions using it.
                if let Some((session, _)) = sessions.first() {
                    session.observer().upstream_down(&self.name);
                }
                for (session, index) in sessions {
                    let kind = EventKind::Down { reason: reason.clone() };
                    session.deliver(Event::new(index, kind));
                }
            }
            EventKind::Message(connection, frame) => {
                let owners = match owners(&sessions, &connection, &frame, related) {
                    Owners::Sessions(owners) => owners,
                    Owners::Unknown(why) => return self.keep(&connection, &frame, why),
                };
                let Some(((last, last_index), others)) = owners.split_last() else { return };
                // Every owner but the last gets a copy; the last gets the frame.
                for (session, index) in others {
                    let kind = EventKind::Message(connection.clone(), frame.clone());
                    session.clone().deliver(Event { upstream: *index, kind, related });
                }
                let kind = EventKind::Message(connection, frame);
                last.clone().deliver(Event { upstream: *last_index, kind, related });
            }
        }
    }
}

impl Fanout {
    /// A message no session can be told is for it stays in Warden: a
    /// request is answered with an error that says why, a notification is
    /// only logged; both are counted (see [`Pool::kept`]).
    fn keep(&self, connection: &Connection, frame: &Frame, why: &str) {
        let method = frame.method().map_or("", |method| method.as_str());
        if frame.kind() == Kind::Request {
            self.kept.requests.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(server = %self.name, method, "refused a shared server's request: {why}");
            let message = format!(
                "Warden did not pass {method} to any client: server {} is shared by several clients \
                 (share: true) and {why}",
                self.name
            );
            let answer = error_response(frame.id(), ErrorCode::Refused, &message, None);
            if connection.send(answer).is_err() {
                tracing::debug!(server = %self.name, "the shared server went away before its refusal");
            }
        } else {
            self.kept.notifications.fetch_add(1, Ordering::Relaxed);
            tracing::info!(server = %self.name, method, message = frame.text(), "kept a shared server's notification: {why}");
        }
    }

    /// Warns, once, when a shared server declares what only works with one
    /// client behind it.
    fn warn_once(&self, connection: &Connection) {
        let handshake = connection.handshake();
        let per_client: Vec<&str> = ["logging", "tasks"].into_iter().filter(|name| handshake.has(name)).collect();
        if per_client.is_empty() || self.warned.swap(true, Ordering::Relaxed) {
            return;
        }
        tracing::warn!(
            server = %self.name,
            "server {} is shared (share: true) but declares {}: what it sends outside a call's own HTTP answer \
             stream (log messages, requests for sampling, elicitation or roots over stdio) cannot be told apart \
             between clients, so Warden keeps it (requests get an error); share only stateless servers that \
             ask clients nothing",
            self.name,
            per_client.join(" and ")
        );
    }
}

/// How many messages of a shared server Warden kept for want of an owner.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Requests to a client, refused.
    pub requests: AtomicU64,
    /// Notifications, logged only.
    pub notifications: AtomicU64,
}
