//! The HTTP front: Streamable HTTP (`/mcp`, and `/mcp/<server>` with
//! `exposePerServer`), the HTTP+SSE transport of 2024-11-05 (`/sse`), `/healthz`
//! and `/status`.
//!
//! A request passes, in order: [`access`] (Host, Origin, bearer token), the
//! transport's handler ([`mcp`] or [`sse_transport`]), which finds or starts the
//! client's [`sessions`] entry and hands the message to its gateway
//! [`Session`](crate::Session); what the session sends back is routed to
//! the right HTTP stream by [`streams`].

mod accept;
pub(crate) mod access;
mod body;
mod budget;
mod connections;
mod descriptors;
mod health;
mod mcp;
mod modern;
mod reply;
mod request_headers;
mod routes;
mod sessions;
mod sse;
mod sse_transport;
mod streams;
mod tenants;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use warden_config::{Config, PrefixMode};
use warden_sandbox::SandboxReport;

use crate::pipeline::HooksSource;
use crate::pool::Pool;
use crate::session::Session;
use access::{Access, Caller};
use budget::ProcessBudget;
use connections::Connections;
use reply::Refusal;
use request_headers::RequestHeaders;
use sessions::{Claim, Entry, Reservation, Sessions};
use streams::Streams;
use tenants::{Held, Share, Tenants};

/// The session header of Streamable HTTP (2025 era).
const SESSION_HEADER: axum::http::HeaderName = axum::http::HeaderName::from_static("mcp-session-id");

/// What a client refused for lack of room is told to wait, in seconds.
const RETRY_AFTER_SECS: u64 = 2;

/// How long a new session waits for sessions that are ending to free their
/// places, when every other session is busy.
const ROOM_PATIENCE: Duration = Duration::from_secs(3);

/// Serves MCP over HTTP to any number of clients, each in its own session
/// with its own upstreams.
#[derive(Clone)]
pub struct HttpFront {
    front: Arc<Front>,
}

/// What the handlers share.
struct Front {
    /// The configurations of the endpoints, replaced on reload.
    endpoints: std::sync::RwLock<Endpoints>,
    settings: warden_config::HttpFront,
    max_message_bytes: usize,
    hooks: Arc<dyn HooksSource>,
    access: Access,
    sessions: Sessions,
    /// Shared upstreams and process caps.
    pool: Arc<Pool>,
    /// How many processes the sessions' own upstreams may hold.
    budget: ProcessBudget,
    /// One permit per session place (`http.maxSessions`).
    places: Arc<tokio::sync::Semaphore>,
    /// The open client connections.
    connections: Arc<Connections>,
    /// The lanes serving modern (2026-07-28) requests, one per endpoint,
    /// principal and profile. Looked up on every modern request: hashed
    /// with foldhash (SipHash cost 300 instructions a call), as the keys are
    /// Warden's (endpoints, token names and profiles it was configured with).
    lanes: std::sync::Mutex<foldhash::HashMap<LaneKey, LaneEntry>>,
    /// Held while a lane starts, so that two first requests start one.
    starting_lane: tokio::sync::Mutex<()>,
    /// Seals the `requestState` of modern requests.
    sealer: Arc<crate::modern::Sealer>,
    /// What each token may hold, and holds.
    tenants: Arc<Tenants>,
    /// Where the sandboxes of every session's upstreams report (the shared
    /// ones' too, through the pool).
    sandbox: SandboxReport,
    /// `/metrics`, once metrics are on (see [`HttpFront::serve_metrics`]).
    metrics: std::sync::OnceLock<Arc<crate::front::MetricsEndpoint>>,
}

/// Which lane serves a modern request: its endpoint, its caller, its profile.
type LaneKey = (Option<String>, Option<Arc<str>>, Option<String>);

/// A lane and its share of the session places and process budget.
struct LaneEntry {
    lane: crate::modern::Lane,
    _reservation: Reservation,
}

impl HttpFront {
    /// A front for `config`, to be bound to `bound`. `hooks` builds each
    /// session's pipeline from its profile; `default_profile` is the one
    /// used when a client picks none (`--profile`). Every server's sandbox
    /// reports to `sandbox`.
    pub fn new(
        config: Arc<Config>,
        hooks: Arc<dyn HooksSource>,
        default_profile: Option<String>,
        bound: SocketAddr,
        sandbox: SandboxReport,
    ) -> HttpFront {
        let open_files = match descriptors::raise_open_files_limit() {
            Ok(limit) => Some(limit),
            Err(err) => {
                tracing::warn!("cannot read the open-file limit: {err}");
                None
            }
        };
        let http = &config.http;
        let max_connections = match http.max_connections {
            0 => descriptors::default_max_connections(open_files.unwrap_or(1024), http.process_budget),
            max => max,
        };
        let per_address = match http.max_connections_per_address {
            0 => max_connections.div_ceil(2),
            max => max,
        };
        tracing::info!(open_files, max_connections, per_address, "HTTP connection limits");
        let front = Front {
            endpoints: std::sync::RwLock::new(Endpoints::new(&config)),
            settings: config.http.clone(),
            max_message_bytes: config.limits.max_message_bytes,
            hooks,
            access: Access::new(&config, bound, default_profile),
            sessions: Sessions::default(),
            pool: Arc::new(Pool::start(&config, sandbox.clone())),
            budget: ProcessBudget::new(config.http.process_budget),
            places: Arc::new(tokio::sync::Semaphore::new(config.http.max_sessions)),
            connections: Connections::new(max_connections, per_address),
            lanes: std::sync::Mutex::default(),
            starting_lane: tokio::sync::Mutex::default(),
            sealer: Arc::new(crate::modern::Sealer::new()),
            tenants: Tenants::new(&config, max_connections),
            sandbox,
            metrics: std::sync::OnceLock::new(),
        };
        HttpFront { front: Arc::new(front) }
    }

    /// Serves `endpoint` at `/metrics` too (otherwise that path is 404).
    pub fn serve_metrics(&self, endpoint: Arc<crate::front::MetricsEndpoint>) {
        let _ = self.front.metrics.set(endpoint);
    }

    /// Finds the token a connection belongs to (see [`accept::Owner`]).
    fn owner(&self) -> accept::Owner {
        let front = self.front.clone();
        Arc::new(move |headers: &axum::http::HeaderMap| {
            let name = front.access.authenticate_by(|| headers.get(axum::http::header::AUTHORIZATION)).ok()?.name?;
            let limit = front.tenants.limit(&name, Share::Connections);
            Some((name, limit))
        })
    }

    /// Serves on `listener` until SIGTERM or SIGINT, then ends every session
    /// (stopping their upstreams).
    pub async fn serve(&self, listener: TcpListener) -> std::io::Result<()> {
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let reaper = tokio::spawn(reap(self.front.clone()));
        let connections = self.front.connections.clone();
        let header_timeout = Duration::from_secs(self.front.settings.header_timeout_secs);
        tokio::select! {
            () = accept::accept_loop(listener, self.front.clone(), connections, self.owner(), header_timeout) => {}
            () = accept::keep_a_timer_due(header_timeout) => {}
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
        reaper.abort();
        self.shutdown().await;
        Ok(())
    }

    /// Ends every session at once and waits until their upstreams are gone.
    pub async fn shutdown(&self) {
        let mut ending = tokio::task::JoinSet::new();
        for entry in self.front.sessions.all() {
            if let Some(entry) = self.front.sessions.remove(&entry.id) {
                ending.spawn(sessions::end(entry));
            }
        }
        let lanes: Vec<LaneEntry> = self.front.lanes().drain().map(|(_, entry)| entry).collect();
        for entry in lanes {
            ending.spawn(async move { entry.lane.shutdown().await });
        }
        while ending.join_next().await.is_some() {}
        self.front.pool.shutdown().await;
    }

    /// Rebuilds every live session's hooks (after the configuration was
    /// reloaded into the [`HooksSource`]); a session whose profile no longer
    /// builds keeps its hooks.
    pub fn reload(&self) {
        for entry in self.front.sessions.all() {
            match self.front.hooks.hooks(entry.profile.as_deref()) {
                Ok(hooks) => entry.session.set_hooks(hooks),
                Err(err) => tracing::error!(session = %entry.id, "reload: keeping the previous hooks: {err}"),
            }
        }
        for ((_, _, profile), entry) in self.front.lanes().iter() {
            match self.front.hooks.hooks(profile.as_deref()) {
                Ok(hooks) => entry.lane.session().set_hooks(hooks),
                Err(err) => tracing::error!("reload: a modern lane keeps its previous hooks: {err}"),
            }
        }
    }

    /// Applies a new configuration's servers: the shared ones once, in the
    /// pool; then every live session's own, as a diff (see
    /// [`Session::apply`]). New sessions start with the new set.
    pub fn apply(&self, old: &Config, config: Arc<Config>) {
        self.front.pool.apply(old, &config);
        let endpoints = Endpoints::new(&config);
        for entry in self.front.sessions.all() {
            let scoped = match &entry.scope {
                None => config.clone(),
                // A server removed from the file leaves its endpoint's sessions empty.
                Some(server) => Arc::new(single_server(&config, server)),
            };
            // Servers added to a live session count against the process
            // budget too; a session they do not fit in is ended (its client
            // initializes anew, and is served as any new client).
            let processes = budget::processes_of(&scoped, &self.front.pool);
            if !entry.reserve_processes(&self.front.budget, processes) {
                if let Some(entry) = self.front.sessions.remove(&entry.id) {
                    tracing::warn!(session = %entry.id, processes, "ending a session: its new servers do not fit in http.processBudget");
                    tokio::spawn(sessions::end(entry));
                }
                continue;
            }
            entry.session.apply(scoped);
        }
        // Lanes start anew with the new configuration when next used.
        let ended: Vec<LaneEntry> = self.front.lanes().drain().map(|(_, entry)| entry).collect();
        for entry in ended {
            tokio::spawn(async move { entry.lane.shutdown().await });
        }
        *warden_sync::write(&self.front.endpoints) = endpoints;
    }

    /// How many client sessions are live.
    pub fn session_count(&self) -> usize {
        self.front.sessions.len()
    }

    /// The client connections open now.
    pub fn connection_count(&self) -> usize {
        self.front.connections.len()
    }

    /// The servers the configuration in force names (the hub's, or every
    /// per-server endpoint's), in its order.
    pub fn configured_servers(&self) -> Vec<String> {
        let endpoints = warden_sync::read(&self.front.endpoints);
        match &endpoints.hub {
            Some(config) => config.servers.keys().cloned().collect(),
            None => {
                let mut names: Vec<String> = endpoints.per_server.keys().cloned().collect();
                names.sort();
                names
            }
        }
    }

    /// What the person running Warden sees of every session and 2026-07-28
    /// lane of this front.
    pub fn overview(&self) -> crate::overview::Overview {
        let sessions = self.sessions();
        let views = sessions.iter().map(|session| (session.client_view(), session.server_views()));
        crate::overview::Overview::of(self.configured_servers(), views)
    }

    /// Every live session: the 2025 sessions and the 2026-07-28 lanes'.
    pub fn sessions(&self) -> Vec<Session> {
        let mut sessions: Vec<Session> = self.front.sessions.all().iter().map(|entry| entry.session.clone()).collect();
        sessions.extend(warden_sync::lock(&self.front.lanes).values().map(|entry| entry.lane.session().clone()));
        sessions
    }

    /// Every upstream of every session and lane, by name and state (see
    /// [`Session::upstream_states`]); a shared one once.
    pub fn upstream_states(&self) -> Vec<(String, &'static str)> {
        let sessions = self.sessions();
        let mut counted = Vec::new();
        let mut shared_seen = std::collections::HashSet::new();
        for session in sessions {
            for (name, state, shared) in session.upstream_states() {
                if !shared || shared_seen.insert(name.clone()) {
                    counted.push((name, state));
                }
            }
        }
        counted
    }
}

/// Ends idle sessions now and then: sooner those that never opened a stream.
async fn reap(front: Arc<Front>) {
    let streamed = Duration::from_secs(front.settings.session_idle_secs);
    let never_streamed = Duration::from_secs(front.settings.session_idle_no_stream_secs);
    let every = (streamed.min(never_streamed) / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        for entry in front.sessions.take_expired(streamed, never_streamed) {
            tracing::info!(session = %entry.id, "ending an idle session");
            tokio::spawn(sessions::end(entry));
        }
        let idle: Vec<(LaneKey, LaneEntry)> = {
            let mut lanes = front.lanes();
            let keys: Vec<LaneKey> = lanes
                .iter()
                .filter(|(_, entry)| !entry.lane.busy() && entry.lane.idle_for() >= never_streamed)
                .map(|(key, _)| key.clone())
                .collect();
            keys.into_iter().filter_map(|key| lanes.remove(&key).map(|entry| (key, entry))).collect()
        };
        for (key, entry) in idle {
            tracing::info!(scope = ?key.0, "ending an idle modern lane");
            tokio::spawn(async move { entry.lane.shutdown().await });
        }
    }
}

/// The configuration each endpoint serves.
struct Endpoints {
    /// The hub's, if the hub is served.
    hub: Option<Arc<Config>>,
    /// One per server endpoint (`exposePerServer`).
    per_server: HashMap<String, Arc<Config>>,
}

impl Endpoints {
    fn new(config: &Arc<Config>) -> Endpoints {
        let per_server = if config.expose_per_server {
            config.servers.keys().map(|name| (name.clone(), Arc::new(single_server(config, name)))).collect()
        } else {
            HashMap::new()
        };
        Endpoints { hub: config.hub.enabled.then(|| config.clone()), per_server }
    }
}

/// The configuration of one server's own endpoint: that server alone, its
/// names unprefixed.
fn single_server(config: &Config, name: &str) -> Config {
    let mut single = config.clone();
    single.servers.retain(|server, _| server == name);
    single.naming.prefix = PrefixMode::Never;
    single
}

impl Front {
    /// Starts a client session on endpoint `scope` with its own upstreams
    /// (or shared ones from the pool), under the profile the caller may use.
    ///
    /// A new client is always served while some session is idle: at the
    /// session cap, or when the process budget cannot hold the new session's
    /// processes, the least recently used idle session is ended first (its
    /// client gets 404 and initializes anew). Only when every session is busy
    /// is the new one refused, with 503 and `Retry-After`.
    async fn open_session(
        &self,
        scope: Option<String>,
        config: Arc<Config>,
        caller: &Caller,
        headers: &RequestHeaders<'_>,
        sse_transport: bool,
    ) -> Result<Claim, Refusal> {
        let profile = self.access.profile(caller, headers)?;
        let failed = |why: &str| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, why);
        let hooks = self.hooks.hooks(profile.as_deref()).map_err(|err| failed(&err))?;
        let id = sessions::new_id().map_err(|err| failed(&err.to_string()))?;
        let processes = budget::processes_of(&config, &self.pool);
        let shares = self.take_shares(caller, processes).await?;
        let reservation = self.make_room(processes).await?.with_shares(shares);
        let streams = Streams::new(self.settings.replay_events, sse_transport);
        let session = Session::start_in(config, hooks, streams.clone(), Some(self.pool.clone()), self.sandbox.clone());
        if let Some(name) = &caller.name {
            session.set_principal(name.clone());
        }
        let entry = Arc::new(Entry::new(id, session, streams, scope, caller.name.clone(), profile));
        entry.hold(reservation);
        let claim = self.sessions.insert(entry);
        tracing::info!(session = %claim.id, owner = ?claim.owner, profile = ?claim.profile, scope = ?claim.scope, sse_transport, "HTTP session started");
        Ok(claim)
    }

    /// The lane that serves the caller's modern requests on endpoint
    /// `scope`, started (with room made as for a session) on first use.
    async fn lane(
        &self,
        scope: Option<String>,
        config: Arc<Config>,
        caller: &Caller,
        headers: &RequestHeaders<'_>,
        first: &warden_jsonrpc::Frame,
    ) -> Result<crate::modern::Lane, Refusal> {
        let profile = self.access.profile(caller, headers)?;
        let key: LaneKey = (scope, caller.name.clone(), profile);
        if let Some(entry) = self.lanes().get(&key) {
            return Ok(entry.lane.clone());
        }
        // The first request of a lane starts it; one started meanwhile is used.
        let _starting = self.starting_lane.lock().await;
        if let Some(entry) = self.lanes().get(&key) {
            return Ok(entry.lane.clone());
        }
        let failed = |why: &str| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, why);
        let hooks = self.hooks.hooks(key.2.as_deref()).map_err(|err| failed(&err))?;
        let processes = budget::processes_of(&config, &self.pool);
        let shares = self.take_shares(caller, processes).await?;
        let reservation = self.make_room(processes).await?.with_shares(shares);
        let outlet = crate::modern::LaneOutlet::default();
        let session = Session::start_in(config, hooks, outlet.clone(), Some(self.pool.clone()), self.sandbox.clone());
        if let Some(name) = &caller.name {
            session.set_principal(name.clone());
        }
        let client_info = crate::modern::envelope::client_info(first);
        let parked_for = Duration::from_secs(self.settings.request_state_secs);
        let lane = crate::modern::Lane::over(session, &outlet, self.sealer.clone(), client_info.as_deref(), parked_for);
        tracing::info!(scope = ?key.0, owner = ?key.1, profile = ?key.2, "modern lane started");
        self.lanes().insert(key, LaneEntry { lane: lane.clone(), _reservation: reservation });
        Ok(lane)
    }

    /// The caller's token's share of one more session with `processes`
    /// processes of its own. At its limit, the token's own least recently
    /// used idle session is ended first; only when all of its sessions are
    /// busy is the new one refused (429), and never at another token's cost.
    async fn take_shares(&self, caller: &Caller, processes: usize) -> Result<Vec<Held>, Refusal> {
        let Some(name) = &caller.name else { return Ok(Vec::new()) };
        loop {
            let taken = self.tenants.take(Some(name), Share::Sessions, 1).and_then(|session| {
                let processes = self.tenants.take(Some(name), Share::Processes, processes)?;
                Ok(session.into_iter().chain(processes).collect())
            });
            match taken {
                Ok(shares) => return Ok(shares),
                Err(refusal) => match self.sessions.take_least_recent_idle_of(name) {
                    Some(idle) => {
                        tracing::info!(session = %idle.id, token = %name, "ending the token's least recently used idle session to make room within its share");
                        sessions::end(idle).await;
                    }
                    None => return Err(refusal),
                },
            }
        }
    }

    /// The lanes, locked.
    fn lanes(&self) -> std::sync::MutexGuard<'_, foldhash::HashMap<LaneKey, LaneEntry>> {
        warden_sync::lock(&self.lanes)
    }

    /// Ends idle sessions, least recently used first, until there is room
    /// for one more session with `processes` processes of its own; returns
    /// the reservation of its place and its processes.
    ///
    /// Sessions ended to make room (here or by a concurrent opener) give
    /// their places back only once their processes are gone, so a newcomer
    /// that finds nothing idle left waits a little for those before giving up.
    async fn make_room(&self, processes: usize) -> Result<Reservation, Refusal> {
        if processes > self.budget.total() {
            let message = format!(
                "a session needs {processes} server processes, more than http.processBudget ({})",
                self.budget.total()
            );
            return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, &message));
        }
        let deadline = tokio::time::Instant::now() + ROOM_PATIENCE;
        loop {
            if let Some(reservation) = self.reserve(processes) {
                return Ok(reservation);
            }
            if let Some(idle) = self.sessions.take_least_recent_idle() {
                tracing::info!(session = %idle.id, "ending the least recently used idle session to make room for a new one");
                // Its processes must be gone before theirs are counted free.
                sessions::end(idle).await;
            } else if tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(25)).await;
            } else {
                return Err(self.busy());
            }
        }
    }

    /// A place for a session and its processes, if both are free.
    fn reserve(&self, processes: usize) -> Option<Reservation> {
        let place = self.places.clone().try_acquire_owned().ok()?;
        let processes = self.budget.reserve(processes)?;
        Some(Reservation::new(place, processes))
    }

    /// 503: every session is busy.
    fn busy(&self) -> Refusal {
        let message = format!(
            "every session is busy (http.maxSessions {}, http.processBudget {}): retry shortly",
            self.settings.max_sessions,
            self.budget.total()
        );
        Refusal::new(StatusCode::SERVICE_UNAVAILABLE, &message).retry_after(RETRY_AFTER_SECS)
    }

    /// How long a client may take to send a request's body.
    fn body_timeout(&self) -> Duration {
        Duration::from_secs(self.settings.body_timeout_secs)
    }

    /// How often idle streams get a keep-alive comment.
    fn keep_alive(&self) -> Duration {
        Duration::from_secs(self.settings.keep_alive_secs)
    }

    /// The configuration of endpoint `scope` (`None`: the hub) for a caller
    /// already authenticated. A server endpoint whose server the caller's
    /// profile hides answers exactly as one that does not exist: the same
    /// 404, whatever the method, and nothing starts.
    fn endpoint(
        &self,
        scope: Option<&str>,
        caller: &Caller,
        headers: &RequestHeaders<'_>,
    ) -> Result<Arc<Config>, Refusal> {
        // The profile first: its refusals do not depend on the server named.
        let profile = self.access.profile(caller, headers)?;
        // Both checks are made whatever the first finds: a hidden server and
        // a missing one take the same path.
        let shown = scope.is_none_or(|server| {
            self.hooks.hooks(profile.as_deref()).is_ok_and(|hooks| hooks.view.shows_server(server))
        });
        match self.config_for(scope) {
            Some(config) if shown => Ok(config),
            _ => Err(mcp::no_endpoint()),
        }
    }

    /// The configuration of an endpoint: `None` for the hub.
    fn config_for(&self, scope: Option<&str>) -> Option<Arc<Config>> {
        let endpoints = warden_sync::read(&self.endpoints);
        match scope {
            None => endpoints.hub.clone(),
            Some(server) => endpoints.per_server.get(server).cloned(),
        }
    }
}
