//! One client session and the upstreams that serve it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;
use warden_config::Config;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, error_response, guess_id};
use warden_sandbox::SandboxReport;
use warden_upstream::{Connection, EventSink, Upstream, UpstreamError, UpstreamState};

use crate::catalog::{Catalog, InventoryItem, ItemKind, Namer};
use crate::outbound::Sink;
use crate::outlet::{Outbound, Outlet};
use crate::pipeline::Hooks;
use crate::pool::Pool;
use crate::tokens::IdMaps;
use crate::work::Work;

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
    /// The client declared form-mode elicitation.
    pub elicits_forms: bool,
}

/// The state a session's tasks share.
pub(crate) struct Shared {
    pub id: String,
    /// The configuration in force (replaced by [`Session::apply`]).
    pub config: ArcSwap<Config>,
    pub hooks: ArcSwap<Hooks>,
    /// By index; indexes stay valid for the session's life: a removed
    /// server's slot keeps its stopped upstream until a server of that name
    /// comes back.
    pub upstreams: ArcSwap<Vec<Upstream>>,
    pub init_params: watch::Sender<Option<Arc<str>>>,
    pub client: OnceLock<ClientInit>,
    pub initialized: AtomicBool,
    pub to_client: Box<dyn Outlet>,
    pub catalog: RwLock<Catalog>,
    pub maps: IdMaps,
    /// Shared upstreams and process caps, when the front has them.
    pub pool: Option<Arc<Pool>>,
    /// Where the sandboxes of its own upstreams report, and how each was
    /// started (for [`Session::status`]).
    pub sandbox: SandboxReport,
    /// This session's places under the process caps, by server, freed when
    /// the server is removed or at shutdown.
    pub permits: std::sync::Mutex<std::collections::HashMap<String, tokio::sync::OwnedSemaphorePermit>>,
    /// `resources/subscribe` params by URI, replayed when an upstream restarts.
    pub subscriptions: std::sync::Mutex<std::collections::HashMap<String, (usize, String)>>,
    /// The last `logging/setLevel` params, replayed when an upstream restarts.
    pub log_level: std::sync::Mutex<Option<String>>,
    /// Upstream index → the id of the `subscriptions/listen` request open on
    /// that (modern) upstream.
    pub listens: std::sync::Mutex<std::collections::HashMap<usize, u64>>,
    /// Task id → the upstream that created the task.
    pub tasks: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// Where this session's own upstreams deliver their events.
    pub sink: Arc<dyn EventSink>,
    /// The session itself, weakly, for the pool and new upstreams.
    pub myself: std::sync::Weak<Shared>,
    /// Who the front let in (an HTTP token's name), for approvals.
    pub principal: OnceLock<Arc<str>>,
}

impl Session {
    /// Starts a session: every configured upstream starts at once, in the
    /// background; their handshakes wait for the client's `initialize`.
    /// Their sandboxes report to `sandbox`.
    pub fn start(config: Arc<Config>, hooks: Hooks, to_client: impl Outlet, sandbox: SandboxReport) -> Session {
        Session::start_in(config, hooks, to_client, None, sandbox)
    }

    /// Starts a session whose upstreams may come from `pool`: shared ones
    /// are joined, capped ones are started only within their cap. The
    /// sandboxes of its own upstreams report to `sandbox` (the pool's
    /// shared ones, to the pool's).
    pub fn start_in(
        config: Arc<Config>,
        hooks: Hooks,
        to_client: impl Outlet,
        pool: Option<Arc<Pool>>,
        sandbox: SandboxReport,
    ) -> Session {
        let (init_params, _) = watch::channel(None);
        let names = config.servers.keys().map(|name| Arc::from(name.as_str())).collect();
        let mut catalog = Catalog::new(Namer::new(&config.naming, config.servers.len()), names);
        catalog.set_view(hooks.view.clone());
        let shared = Arc::new_cyclic(|weak: &std::sync::Weak<Shared>| {
            // Upstream events are handled in the tasks that read them (in order);
            // the sink holds the session weakly, so dropping the session ends it.
            let sink: Arc<dyn EventSink> = Arc::new(Sink(weak.clone()));
            Shared {
                id: format!("s{}", SESSIONS.fetch_add(1, Ordering::Relaxed)),
                config: ArcSwap::new(config.clone()),
                hooks: ArcSwap::from_pointee(hooks),
                upstreams: ArcSwap::from_pointee(Vec::new()),
                init_params,
                client: OnceLock::new(),
                initialized: AtomicBool::new(false),
                to_client: Box::new(to_client),
                catalog: RwLock::new(catalog),
                maps: IdMaps::default(),
                pool,
                sandbox,
                permits: Default::default(),
                subscriptions: Default::default(),
                log_level: Default::default(),
                tasks: Default::default(),
                listens: Default::default(),
                sink,
                myself: weak.clone(),
                principal: OnceLock::new(),
            }
        });
        let upstreams =
            config.servers.keys().enumerate().map(|(index, name)| shared.open_upstream(index, name, &config)).collect();
        shared.upstreams.store(Arc::new(upstreams));
        Session { shared }
    }

    /// Applies a new configuration's servers as a diff: new servers start
    /// (their items appear, with `list_changed`), removed ones stop (their
    /// calls in flight fail, their items disappear), servers whose
    /// definition changed restart, and unchanged ones keep their processes
    /// and state. Naming applies at once; timeouts and limits apply to each
    /// server from its next start.
    pub fn apply(&self, config: Arc<Config>) {
        self.shared.apply(config);
    }

    /// Records who the front let in (an HTTP token's name), shown with the
    /// session's approvals. Set once.
    pub fn set_principal(&self, name: Arc<str>) {
        let _ = self.shared.principal.set(name);
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
            Err(err) => self.reject_invalid(&err),
        }
    }

    /// Answers a message that is not valid JSON-RPC.
    pub fn reject_invalid(&self, err: &warden_jsonrpc::FrameError) {
        tracing::warn!(session = %self.shared.id, "invalid message from the client: {err}");
        self.shared.send(error_response(err.id.as_deref(), err.code, &err.message, None));
    }

    /// Handles one message the front has already parsed.
    pub fn handle_frame(&self, frame: Frame) {
        match frame.kind() {
            // Answered inline: a request sent right after `initialize` must
            // find the session initialized, whatever the runtime's scheduling.
            Kind::Request if frame.method() == Some(&Method::Initialize) => self.shared.initialize(&frame),
            // Boxed (as `Work`): the request's future is a few kilobytes,
            // which the runtime would otherwise copy into its task and over
            // again when the task ends.
            Kind::Request => {
                tokio::spawn(self.request_work(frame));
            }
            Kind::Notification => self.shared.notification(frame),
            Kind::Response | Kind::ErrorResponse => self.shared.client_response(frame),
        }
    }

    /// Takes a client request (not `initialize`, which is answered at once
    /// by [`handle_frame`](Session::handle_frame)) and hands back its work,
    /// for the caller to run where it awaits the answer (see [`Work`]).
    pub fn request_work(&self, frame: Frame) -> Work {
        let shared = self.shared.clone();
        let work = async move { shared.request(frame).await };
        // The work keeps the client's address it was started under; on
        // stdio there is none, and nothing to wrap.
        match crate::origin::client_address() {
            Some(address) => Work::new(crate::origin::scope(Some(address), work)),
            None => Work::new(work),
        }
    }

    /// Answers a message that exceeded the size limit. Its id is recovered
    /// from its first or last bytes when possible, so the client's request
    /// fails at once instead of waiting forever.
    pub fn reject_oversized(&self, bytes: usize, head: &str, tail: &str) {
        let limit = self.shared.config.load().limits.max_message_bytes;
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
        // Names go to what the new view shows (an item it hides takes none).
        self.shared.write_catalog().set_view(hooks.view.clone());
        self.shared.hooks.store(Arc::new(hooks));
        self.shared.match_view();
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

    /// The key a modern upstream gave the input request Warden sent the
    /// client as `id` (JSON text), if Warden asked on an upstream's behalf.
    pub(crate) fn input_key(&self, id: &str) -> Option<String> {
        let id = id.parse::<u64>().ok()?;
        warden_sync::lock(&self.shared.maps.input_keys).get(&id).cloned()
    }

    /// For the tool the client knows as `exposed`: `None` if it is not
    /// listed, else its `inputSchema` (JSON text) if that mirrors arguments
    /// in headers (`x-mcp-header`, 2026-07-28), else `Some(None)`.
    pub fn tool_mirrored_schema(&self, exposed: &str) -> Option<Option<String>> {
        let catalog = self.shared.read_catalog();
        let definition = catalog.tool_definition(exposed)?;
        if !definition.contains("x-mcp-header") {
            return Some(None);
        }
        let definition = warden_jsonrpc::Members::parse(definition).ok()?;
        Some(definition.get("inputSchema").map(str::to_owned))
    }

    /// How long a 2026-07-28 request waiting for input stays parked
    /// (`http.requestStateSecs`).
    pub(crate) fn request_state_lifetime(&self) -> Duration {
        Duration::from_secs(self.shared.config.load().http.request_state_secs)
    }

    /// The protocol revision agreed with the client, once initialized.
    pub fn protocol_version(&self) -> Option<&str> {
        self.shared.client.get().map(|client| client.protocol_version.as_str())
    }

    /// Each upstream's state, and how its sandbox started it.
    pub fn status(&self) -> Status {
        let catalog = self.shared.read_catalog();
        let config = self.shared.config.load();
        Status {
            upstreams: self
                .shared
                .live_upstreams()
                .into_iter()
                // A hidden server is not there, as far as the client knows.
                .filter(|(_, upstream)| self.shared.shows_server(upstream.name()))
                .map(|(_, upstream)| UpstreamStatus {
                    name: upstream.name().to_owned(),
                    display_name: config.servers.get(upstream.name()).and_then(|server| server.display_name.clone()),
                    state: match upstream.state() {
                        UpstreamState::Starting => "starting".into(),
                        UpstreamState::Ready(_) => "ready".into(),
                        UpstreamState::Down { reason, .. } => format!("down: {reason}"),
                        UpstreamState::Stopped => "stopped".into(),
                        UpstreamState::Refused(reason) => format!("refused: {reason}"),
                    },
                    sandbox: self.sandbox_launch(upstream.name()),
                })
                .collect(),
            collisions: catalog.collisions().to_vec(),
            protocol_version: self.protocol_version().map(str::to_owned),
        }
    }

    /// How server `name`'s sandbox last started it: a shared server's as
    /// the pool recorded it.
    fn sandbox_launch(&self, name: &str) -> Option<String> {
        match self.shared.pool.as_deref() {
            Some(pool) if pool.shares(name) => pool.sandbox().launch_of(name),
            _ => self.shared.sandbox.launch_of(name),
        }
    }

    /// Stops every upstream of its own, all at once, and waits until they
    /// are gone (shared upstreams stay, for the other sessions; refused ones
    /// never started).
    pub async fn shutdown(&self) {
        // Calls waiting for approval are withdrawn: nobody is left to answer.
        for (_, (_, waiting)) in warden_sync::lock(&self.shared.maps.waiting).drain() {
            let _ = waiting.send("the session ended");
        }
        let mut stopping = tokio::task::JoinSet::new();
        let pool = self.shared.pool.as_deref();
        for upstream in self.shared.upstreams.load().iter() {
            if !pool.is_some_and(|pool| pool.shares(upstream.name())) {
                let upstream = upstream.clone();
                stopping.spawn(async move { upstream.shutdown().await });
            }
        }
        while stopping.join_next().await.is_some() {}
        warden_sync::lock(&self.shared.permits).clear();
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
    /// Its `displayName`, when the configuration gives one.
    pub display_name: Option<String>,
    /// `starting`, `ready`, `down: <reason>` or `stopped`.
    pub state: String,
    /// How its sandbox last started it (`sandboxed: …`, `UNSANDBOXED: …`),
    /// when it has one and was started.
    pub sandbox: Option<String>,
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
        warden_sync::read(&self.catalog)
    }

    pub fn write_catalog(&self) -> std::sync::RwLockWriteGuard<'_, Catalog> {
        warden_sync::write(&self.catalog)
    }

    /// The catalog, to write what `connection` listed as upstream `index`'s;
    /// `None` when that connection no longer serves `index` (its server was
    /// removed, hidden or reopened while the list was read). Checked under
    /// the lock: a retirement publishes the new set of upstreams first and
    /// then clears the slot under this lock, so no stale list lands after it.
    pub(crate) fn catalog_for(
        &self,
        index: usize,
        connection: &Connection,
    ) -> Option<std::sync::RwLockWriteGuard<'_, Catalog>> {
        let catalog = self.write_catalog();
        let upstreams = self.upstreams.load();
        let upstream = upstreams.get(index)?;
        let serves = self.config.load().servers.contains_key(upstream.name())
            && upstream.connection().is_some_and(|live| std::ptr::eq(&*live, connection));
        serves.then_some(catalog)
    }

    /// How long Warden waits for an upstream to start.
    pub fn start_timeout(&self) -> Duration {
        Duration::from_millis(self.config.load().supervision.start_timeout_ms)
    }

    /// How long a list waits for upstreams that are still starting: the
    /// configured wait, never longer than the start timeout.
    pub fn list_wait(&self) -> Duration {
        let supervision = &self.config.load().supervision;
        Duration::from_millis(supervision.list_wait_ms.min(supervision.start_timeout_ms))
    }

    /// Upstream `index` (a cheap handle).
    pub fn upstream(&self, index: usize) -> Upstream {
        self.upstreams.load()[index].clone()
    }

    /// The upstreams of the servers configured now, with their indexes.
    pub fn live_upstreams(&self) -> Vec<(usize, Upstream)> {
        let config = self.config.load();
        let upstreams = self.upstreams.load();
        upstreams
            .iter()
            .enumerate()
            .filter(|(_, upstream)| config.servers.contains_key(upstream.name()))
            .map(|(index, upstream)| (index, upstream.clone()))
            .collect()
    }

    /// The connection of upstream `index`, waiting for it while it starts.
    pub async fn connection(&self, index: usize) -> Result<Arc<Connection>, UpstreamError> {
        // Every call asks: the ready case clones no `Upstream`.
        if let Some(connection) = self.upstreams.load()[index].connection() {
            return Ok(connection);
        }
        let upstream = self.upstream(index);
        // Boxed: only calls made while the upstream starts wait here.
        if matches!(upstream.state(), UpstreamState::Starting)
            && let Some(connection) = Box::pin(upstream.settled(self.start_timeout())).await
        {
            return Ok(connection);
        }
        Err(upstream.unavailable())
    }
}
