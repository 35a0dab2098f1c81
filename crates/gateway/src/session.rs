//! One client session and the upstreams that serve it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;
use warden_config::Config;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, error_response, guess_id};
use warden_upstream::{Connection, EventSink, State, Upstream, UpstreamError, UpstreamSpec};

use crate::catalog::{Catalog, InventoryItem, ItemKind, Namer};
use crate::outbound::Sink;
use crate::outlet::{Outbound, Outlet};
use crate::pipeline::Hooks;
use crate::pool::{Lease, Pool};
use crate::tokens::Maps;

/// Every session gets a distinct id, for logs and audit records.
static SESSIONS: AtomicU64 = AtomicU64::new(1);

/// Source of Warden-issued ids and tokens, unique across sessions because
/// sessions may share an upstream.
static ISSUED: AtomicU64 = AtomicU64::new(1);

/// One client connected to Warden, with its own upstream connections.
///
/// Fronts (stdio, HTTP) feed it the client's messages with
/// [`Session::handle`]; everything for the client goes to the [`Outlet`]
/// given to [`Session::start`], one JSON-RPC message at a time.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

/// What the client said in `initialize`.
#[derive(Debug)]
pub(crate) struct ClientInit {
    /// The revision both sides speak.
    pub protocol_version: String,
    /// `clientInfo` as `name/version`, for audit records.
    pub name: Option<String>,
}

/// The state a session's tasks share.
pub(crate) struct Shared {
    pub id: String,
    pub config: Arc<Config>,
    pub hooks: ArcSwap<Hooks>,
    pub upstreams: Vec<Upstream>,
    pub init_params: watch::Sender<Option<Arc<str>>>,
    pub client: OnceLock<ClientInit>,
    pub initialized: AtomicBool,
    /// Lists wait for upstreams that are still starting.
    pub patient_lists: AtomicBool,
    pub to_client: Box<dyn Outlet>,
    pub catalog: RwLock<Catalog>,
    pub maps: Maps,
    /// Shared upstreams and process caps, when the front has them.
    pub pool: Option<Arc<Pool>>,
    /// This session's places under the process caps, freed at shutdown.
    pub permits: std::sync::Mutex<Vec<tokio::sync::OwnedSemaphorePermit>>,
    /// `resources/subscribe` params by URI, replayed when an upstream restarts.
    pub subscriptions: std::sync::Mutex<std::collections::HashMap<String, (usize, String)>>,
    /// The last `logging/setLevel` params, replayed when an upstream restarts.
    pub log_level: std::sync::Mutex<Option<String>>,
    /// Task id → the upstream that created the task.
    pub tasks: std::sync::Mutex<std::collections::HashMap<String, usize>>,
}

impl Session {
    /// Starts a session: every configured upstream starts at once, in the
    /// background; their handshakes wait for the client's `initialize`.
    pub fn start(config: Arc<Config>, hooks: Hooks, to_client: impl Outlet) -> Session {
        Session::start_in(config, hooks, to_client, None)
    }

    /// Starts a session whose upstreams may come from `pool`: shared ones
    /// are joined, capped ones are started only within their cap.
    pub fn start_in(config: Arc<Config>, hooks: Hooks, to_client: impl Outlet, pool: Option<Arc<Pool>>) -> Session {
        let (init_params, init_rx) = watch::channel(None);
        let names = config.servers.keys().map(|name| Arc::from(name.as_str())).collect();
        let catalog = Catalog::new(Namer::new(&config.naming, config.servers.len()), names);
        let shared = Arc::new_cyclic(|weak| {
            // Upstream events are handled in the tasks that read them (in order);
            // the sink holds the session weakly, so dropping the session ends it.
            let sink: Arc<dyn EventSink> = Arc::new(Sink(weak.clone()));
            let (mut upstreams, mut permits) = (Vec::new(), Vec::new());
            for (index, (name, server)) in config.servers.iter().enumerate() {
                let lease = pool.as_ref().map_or(Lease::Own(None), |pool| pool.lease(name));
                let upstream = match lease {
                    Lease::Own(permit) => {
                        permits.extend(permit);
                        let spec = UpstreamSpec {
                            name: Arc::from(name.as_str()),
                            transport: server.transport.clone(),
                            supervision: config.supervision.clone(),
                            max_message_bytes: config.limits.max_message_bytes,
                            sandbox: config.sandbox_of(name),
                        };
                        Upstream::spawn(index, spec, init_rx.clone(), sink.clone())
                    }
                    Lease::Shared(upstream) => {
                        if let Some(pool) = &pool {
                            pool.join(name, index, weak.clone());
                        }
                        upstream
                    }
                    Lease::Refused(reason) => Upstream::refused(Arc::from(name.as_str()), reason),
                };
                upstreams.push(upstream);
            }
            Shared {
                id: format!("s{}", SESSIONS.fetch_add(1, Ordering::Relaxed)),
                config,
                hooks: ArcSwap::from_pointee(hooks),
                upstreams,
                init_params,
                client: OnceLock::new(),
                initialized: AtomicBool::new(false),
                patient_lists: AtomicBool::new(false),
                to_client: Box::new(to_client),
                catalog: RwLock::new(catalog),
                maps: Maps::default(),
                pool,
                permits: std::sync::Mutex::new(permits),
                subscriptions: Default::default(),
                log_level: Default::default(),
                tasks: Default::default(),
            }
        });
        Session { shared }
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// Handles one message from the client. Never blocks: requests are served
    /// by their own tasks, so a slow call delays nothing else.
    pub fn handle(&self, text: String) {
        match Frame::parse(text) {
            Ok(frame) => self.handle_frame(frame),
            Err(err) => {
                tracing::warn!(session = %self.shared.id, "invalid message from the client: {err}");
                self.shared.send(error_response(err.id.as_deref(), err.code, &err.message, None));
            }
        }
    }

    /// Handles one message the front has already parsed.
    pub fn handle_frame(&self, frame: Frame) {
        match frame.kind() {
            // Answered inline: a request sent right after `initialize` must
            // find the session initialized, whatever the runtime's scheduling.
            Kind::Request if frame.method() == Some(&Method::Initialize) => self.shared.initialize(&frame),
            Kind::Request => {
                let shared = self.shared.clone();
                tokio::spawn(async move { shared.request(frame).await });
            }
            Kind::Notification => self.shared.notification(frame),
            Kind::Response | Kind::ErrorResponse => self.shared.client_response(frame),
        }
    }

    /// Makes lists wait (up to 10 s) for upstreams that are still starting.
    /// Over stdio the upstreams start with Warden, before any client asks,
    /// and a list answers at once with what is ready (list_changed follows);
    /// over HTTP they start for the client that is asking, so its first list
    /// would otherwise be empty.
    pub fn set_patient_lists(&self, patient: bool) {
        self.shared.patient_lists.store(patient, Ordering::Relaxed);
    }

    /// Answers a message that exceeded the size limit. Its id is recovered
    /// from its first or last bytes when possible, so the client's request
    /// fails at once instead of waiting forever.
    pub fn reject_oversized(&self, bytes: usize, head: &str, tail: &str) {
        let limit = self.shared.config.limits.max_message_bytes;
        tracing::warn!(session = %self.shared.id, bytes, limit, "refused an oversized message from the client");
        let message = format!("message of {bytes} bytes exceeds the limit of {limit} bytes (limits.maxMessageBytes)");
        let id = guess_id(head, tail);
        self.shared.send(error_response(id.as_deref(), ErrorCode::InvalidRequest, &message, None));
    }

    /// Answers a line that is not UTF-8.
    pub fn reject_not_utf8(&self) {
        self.shared.send(error_response(None, ErrorCode::ParseError, "message is not valid UTF-8", None));
    }

    /// Replaces the pipeline hooks (on reload) and tells the client its lists
    /// may have changed; requests already past a stage keep the hooks they
    /// started with.
    pub fn set_hooks(&self, hooks: Hooks) {
        self.shared.hooks.store(Arc::new(hooks));
        self.shared.list_changed(&[ItemKind::Tool, ItemKind::Prompt, ItemKind::Resource]);
    }

    /// Waits until every upstream is either ready with its surface loaded, or
    /// down (each bounded by the start timeout). Needs `initialize` first.
    pub async fn settle(&self) {
        self.shared.await_unloaded().await;
    }

    /// Everything the upstreams offer, visible or not: for inspection
    /// (`warden effective`), not for clients.
    pub fn inventory(&self) -> Vec<InventoryItem> {
        self.shared.read_catalog().inventory()
    }

    /// The protocol revision agreed with the client, once initialized.
    pub fn protocol_version(&self) -> Option<&str> {
        self.shared.client.get().map(|client| client.protocol_version.as_str())
    }

    /// Each upstream's state.
    pub fn status(&self) -> Status {
        let catalog = self.shared.read_catalog();
        Status {
            upstreams: self
                .shared
                .upstreams
                .iter()
                .map(|upstream| UpstreamStatus {
                    name: upstream.name().to_owned(),
                    state: match upstream.state() {
                        State::Starting => "starting".into(),
                        State::Ready(_) => "ready".into(),
                        State::Down { reason, .. } => format!("down: {reason}"),
                        State::Stopped => "stopped".into(),
                        State::Refused(reason) => format!("refused: {reason}"),
                    },
                })
                .collect(),
            collisions: catalog.collisions().to_vec(),
            protocol_version: self.protocol_version().map(str::to_owned),
        }
    }

    /// Stops every upstream of its own, all at once, and waits until they
    /// are gone (shared upstreams stay, for the other sessions; refused ones
    /// never started).
    pub async fn shutdown(&self) {
        let mut stopping = tokio::task::JoinSet::new();
        let pool = self.shared.pool.as_deref();
        for upstream in &self.shared.upstreams {
            if !pool.is_some_and(|pool| pool.shares(upstream.name())) {
                let upstream = upstream.clone();
                stopping.spawn(async move { upstream.shutdown().await });
            }
        }
        while stopping.join_next().await.is_some() {}
        crate::tokens::lock(&self.shared.permits).clear();
    }
}

/// A snapshot of a session's upstreams.
#[derive(Debug, Clone)]
pub struct Status {
    /// Each upstream, in configuration order.
    pub upstreams: Vec<UpstreamStatus>,
    /// Name collisions, one sentence each.
    pub collisions: Vec<String>,
    /// The protocol revision agreed with the client, once initialized.
    pub protocol_version: Option<String>,
}

/// One upstream's state.
#[derive(Debug, Clone)]
pub struct UpstreamStatus {
    /// Its name.
    pub name: String,
    /// `starting`, `ready`, `down: <reason>` or `stopped`.
    pub state: String,
}

impl Shared {
    /// Queues a message for the client that belongs to no request.
    pub fn send(&self, text: String) {
        self.to_client.deliver(Outbound { text, request: None, is_response: false });
    }

    /// Queues the response to the client's request `frame`.
    pub fn respond(&self, frame: &Frame, text: String) {
        let request = frame.id().map(str::to_owned);
        self.to_client.deliver(Outbound { text, request, is_response: true });
    }

    /// Queues a message for the client that belongs to the client request
    /// `request` (its id as JSON text), when known.
    pub fn send_related(&self, text: String, request: Option<String>) {
        self.to_client.deliver(Outbound { text, request, is_response: false });
    }

    /// A fresh number for an id or a token.
    pub fn next(&self) -> u64 {
        ISSUED.fetch_add(1, Ordering::Relaxed)
    }

    pub fn read_catalog(&self) -> std::sync::RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn write_catalog(&self) -> std::sync::RwLockWriteGuard<'_, Catalog> {
        self.catalog.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How long Warden waits for an upstream to start.
    pub fn start_timeout(&self) -> Duration {
        Duration::from_millis(self.config.supervision.start_timeout_ms)
    }

    /// The connection of upstream `index`, waiting for it while it starts.
    pub async fn connection(&self, index: usize) -> Result<Arc<Connection>, UpstreamError> {
        let upstream = &self.upstreams[index];
        if let Some(connection) = upstream.connection() {
            return Ok(connection);
        }
        if matches!(upstream.state(), State::Starting)
            && let Some(connection) = upstream.settled(self.start_timeout()).await
        {
            return Ok(connection);
        }
        Err(upstream.unavailable())
    }
}
