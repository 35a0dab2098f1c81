//! One client session and the upstreams that serve it.

use std::sync::{Arc, Weak};
use std::time::Duration;

use warden_config::Config;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Method, error_response, guess_id};
use warden_sandbox::SandboxReport;
use warden_upstream::{EventSink, UpstreamState};

use crate::catalog::{InventoryItem, ItemKind};
use crate::inbound;
use crate::outbound::Sink;
use crate::outlet::Outlet;
use crate::overview::{ClientView, Overview, ServerView};
use crate::parts::{ClientLink, Opened, SessionParts, Surface, Upstreams};
use crate::pipeline::{Front, Hooks};
use crate::pool::Pool;
use crate::servers::{apply, match_view, open_upstream};
use crate::work::Work;

/// One client connected to Warden, with its own upstream connections.
///
/// Fronts (stdio, HTTP) feed it the client's messages with
/// [`Session::handle`]; everything for the client goes to the [`Outlet`]
/// given to [`Session::start`], one JSON-RPC message at a time.
#[derive(Clone)]
pub struct Session {
    parts: Arc<SessionParts>,
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
        let front = if pool.is_some() { Front::Http } else { Front::Stdio };
        let opened = Opened::now(front, hooks.observer.clone());
        let parts = Arc::new_cyclic(|weak: &Weak<SessionParts>| {
            // Upstream events are handled in the tasks that read them (in order).
            let sink: Arc<dyn EventSink> = Arc::new(Sink(weak.clone()));
            SessionParts::new(
                ClientLink::new(to_client),
                Surface::new(config.clone(), hooks),
                Upstreams::new(pool, sandbox, sink),
                opened,
            )
        });
        let upstreams = config
            .servers
            .keys()
            .enumerate()
            .map(|(index, name)| open_upstream(&parts, index, name, &config))
            .collect();
        parts.upstreams.slots.store(Arc::new(upstreams));
        Session { parts }
    }

    /// Applies a new configuration's servers as a diff: new servers start
    /// (their items appear, with `list_changed`), removed ones stop (their
    /// calls in flight fail, their items disappear), servers whose
    /// definition changed restart, and unchanged ones keep their processes
    /// and state. Naming applies at once; timeouts and limits apply to each
    /// server from its next start.
    pub fn apply(&self, config: Arc<Config>) {
        apply(&self.parts, config);
    }

    /// Records who the front let in (an HTTP token's name), shown with the
    /// session's approvals. Set once.
    pub fn set_principal(&self, name: Arc<str>) {
        let _ = self.parts.link.principal.set(name);
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.parts.id
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
        tracing::warn!(session = %self.parts.id, "invalid message from the client: {err}");
        self.parts.link.send(error_response(err.id.as_deref(), err.code, &err.message, None));
    }

    /// Handles one message the front has already parsed; a request runs in
    /// a task of its own.
    pub fn handle_frame(&self, frame: Frame) {
        // Boxed (as `Work`): the request's future is a few kilobytes, which
        // the runtime would otherwise copy into its task and over again when
        // the task ends.
        if let Some(work) = self.take_frame(frame) {
            tokio::spawn(work);
        }
    }

    /// Handles one message the front has already parsed, except that a
    /// request's work (not `initialize`'s) is handed back, for the caller to
    /// run where it chooses (see [`Work`]).
    pub fn take_frame(&self, frame: Frame) -> Option<Work> {
        match frame.kind() {
            // Answered inline: a request sent right after `initialize` must
            // find the session initialized, whatever the runtime's scheduling.
            Kind::Request if frame.method() == Some(&Method::Initialize) => {
                inbound::initialize_now(&self.parts, &frame)
            }
            Kind::Request => return Some(self.request_work(frame)),
            Kind::Notification => inbound::notification(&self.parts, frame),
            Kind::Response | Kind::ErrorResponse => inbound::client_response(&self.parts, frame),
        }
        None
    }

    /// Takes a client request (not `initialize`, which is answered at once
    /// by [`take_frame`](Session::take_frame)) and hands back its work,
    /// for the caller to run where it awaits the answer (see [`Work`]).
    pub fn request_work(&self, frame: Frame) -> Work {
        let parts = self.parts.clone();
        // The work keeps the origin it was started under (on stdio there is none).
        Work::made(crate::origin::current(), move || async move { inbound::request(&parts, frame).await })
    }

    /// Answers a message that exceeded the size limit. Its id is recovered
    /// from its first or last bytes when possible, so the client's request
    /// fails at once instead of waiting forever.
    pub fn reject_oversized(&self, bytes: usize, head: &str, tail: &str) {
        let limit = self.parts.surface.config.load().limits.max_message_bytes;
        tracing::warn!(session = %self.parts.id, bytes, limit, "refused an oversized message from the client");
        let message = format!("message of {bytes} bytes exceeds the limit of {limit} bytes (limits.maxMessageBytes)");
        let id = guess_id(head, tail);
        self.parts.link.send(error_response(id.as_deref(), ErrorCode::InvalidRequest, &message, None));
    }

    /// Answers a line that is not UTF-8.
    pub fn reject_not_utf8(&self) {
        self.parts.link.send(error_response(None, ErrorCode::ParseError, "message is not valid UTF-8", None));
    }

    /// Replaces the pipeline hooks (on reload) and tells the client its lists
    /// may have changed; requests already past a stage keep the hooks they
    /// started with.
    pub fn set_hooks(&self, hooks: Hooks) {
        // Names go to what the new view shows (an item it hides takes none).
        self.parts.surface.write_catalog().set_view(hooks.view.clone());
        self.parts.surface.hooks.store(Arc::new(hooks));
        match_view(&self.parts);
        self.parts.link.list_changed(&[ItemKind::Tool, ItemKind::Prompt, ItemKind::Resource]);
    }

    /// Waits until every upstream is either ready with its surface loaded, or
    /// down (each bounded by the start timeout). Needs `initialize` first.
    pub async fn settle(&self) {
        inbound::await_unloaded(&self.parts).await;
    }

    /// Everything the upstreams offer, visible or not: for inspection
    /// (`warden effective`), not for clients.
    pub fn inventory(&self) -> Vec<InventoryItem> {
        self.parts.surface.read_catalog().inventory()
    }

    /// The key a modern upstream gave the input request Warden sent the
    /// client as `id` (JSON text), if Warden asked on an upstream's behalf.
    pub(crate) fn input_key(&self, id: &str) -> Option<String> {
        let id = id.parse::<u64>().ok()?;
        warden_sync::lock(&self.parts.maps.input_keys).get(&id).cloned()
    }

    /// For the tool the client knows as `exposed`: `None` if it is not
    /// listed, else its `inputSchema` (JSON text) if that mirrors arguments
    /// in headers (`x-mcp-header`, 2026-07-28), else `Some(None)`.
    pub fn tool_mirrored_schema(&self, exposed: &str) -> Option<Option<String>> {
        let catalog = self.parts.surface.read_catalog();
        Some(catalog.tool_mirrored_schema(exposed)?.map(str::to_owned))
    }

    /// How long a 2026-07-28 request waiting for input stays parked
    /// (`http.requestStateSecs`).
    pub(crate) fn request_state_lifetime(&self) -> Duration {
        self.parts.request_state_lifetime()
    }

    /// The protocol revision agreed with the client, once initialized.
    pub fn protocol_version(&self) -> Option<&str> {
        self.parts.link.protocol_version()
    }

    /// Each upstream's state, and how its sandbox started it.
    pub fn status(&self) -> Status {
        let catalog = self.parts.surface.read_catalog();
        let config = self.parts.surface.config.load();
        Status {
            upstreams: self
                .parts
                .live_upstreams()
                .into_iter()
                // A hidden server is not there, as far as the client knows.
                .filter(|(_, upstream)| self.parts.surface.shows_server(upstream.name()))
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
                    sandbox: self.parts.upstreams.sandbox_launch(upstream.name()),
                })
                .collect(),
            collisions: catalog.collisions().to_vec(),
            protocol_version: self.protocol_version().map(str::to_owned),
        }
    }

    /// Each of this session's server connections, shared ones included.
    pub fn server_views(&self) -> Vec<ServerView> {
        let parts = &self.parts;
        parts
            .live_upstreams()
            .into_iter()
            .map(|(_, upstream)| {
                let restarts = upstream.restarts();
                let (state, reason) = match upstream.state() {
                    UpstreamState::Starting if restarts > 0 => ("restarting", None),
                    UpstreamState::Starting => ("starting", None),
                    UpstreamState::Ready(_) => ("ready", None),
                    UpstreamState::Down { reason, .. } => ("down", Some(reason)),
                    UpstreamState::Stopped => ("stopped", None),
                    UpstreamState::Refused(reason) => ("refused", Some(reason)),
                };
                ServerView {
                    name: upstream.name().to_owned(),
                    state,
                    reason,
                    restarts,
                    sandbox: parts.upstreams.sandbox_launch(upstream.name()),
                    shared: parts.upstreams.is_shared(upstream.name()),
                }
            })
            .collect()
    }

    /// The servers the session's configuration names now (reloads
    /// included), in its order.
    pub fn configured_servers(&self) -> Vec<String> {
        self.parts.surface.config.load().servers.keys().cloned().collect()
    }

    /// What the person running Warden sees of this session (the stdio
    /// front's one).
    pub fn overview(&self) -> Overview {
        Overview::of(self.configured_servers(), [(self.client_view(), self.server_views())])
    }

    /// Who this session's client is.
    pub fn client_view(&self) -> ClientView {
        let parts = &self.parts;
        ClientView {
            front: parts.front().as_str(),
            client: parts.link.name().map(str::to_owned),
            protocol_version: parts.link.protocol_version().map(str::to_owned),
            principal: parts.link.principal.get().map(|name| name.to_string()),
        }
    }

    /// Each upstream's name and state (`starting`, `restarting`, `ready`,
    /// `down`, `stopped`, `refused`; see [`Session::server_views`]), and
    /// whether it is shared with other sessions (so that a count across
    /// sessions counts it once).
    pub fn upstream_states(&self) -> Vec<(String, &'static str, bool)> {
        self.server_views().into_iter().map(|view| (view.name, view.state, view.shared)).collect()
    }

    /// Stops every upstream of its own, all at once, and waits until they
    /// are gone (shared upstreams stay, for the other sessions; refused ones
    /// never started).
    pub async fn shutdown(&self) {
        // Calls waiting for approval are withdrawn: nobody is left to answer.
        for (_, (_, waiting)) in warden_sync::lock(&self.parts.maps.waiting).drain() {
            let _ = waiting.send("the session ended");
        }
        let mut stopping = tokio::task::JoinSet::new();
        for upstream in self.parts.upstreams.slots.load().iter() {
            if !self.parts.upstreams.is_shared(upstream.name()) {
                let upstream = upstream.clone();
                stopping.spawn(async move { upstream.shutdown().await });
            }
        }
        while stopping.join_next().await.is_some() {}
        warden_sync::lock(&self.parts.upstreams.permits).clear();
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
