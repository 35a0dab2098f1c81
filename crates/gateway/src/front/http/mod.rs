//! The HTTP front: Streamable HTTP (`/mcp`, and `/mcp/<server>` with
//! `exposePerServer`), the legacy HTTP+SSE transport (`/sse`), `/healthz`
//! and `/status`.
//!
//! A request passes, in order: [`access`] (Host, Origin, bearer token), the
//! transport's handler ([`mcp`] or [`legacy`]), which finds or starts the
//! client's [`sessions`] entry and hands the message to its gateway
//! [`Session`](crate::Session); what the session sends back is routed to
//! the right HTTP stream by [`streams`].

pub(crate) mod access;
mod health;
mod legacy;
mod mcp;
mod reply;
mod sessions;
mod sse;
mod streams;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use warden_config::{Config, PrefixMode};

use crate::pipeline::HooksSource;
use crate::pool::Pool;
use crate::session::Session;
use access::{Access, Caller};
use reply::Refusal;
use sessions::{Entry, Sessions};
use streams::Streams;

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
}

impl HttpFront {
    /// A front for `config`, to be bound to `bound`. `hooks` builds each
    /// session's pipeline from its profile; `default_profile` is the one
    /// used when a client picks none (`--profile`).
    pub fn new(
        config: Arc<Config>,
        hooks: Arc<dyn HooksSource>,
        default_profile: Option<String>,
        bound: SocketAddr,
    ) -> HttpFront {
        let front = Front {
            endpoints: std::sync::RwLock::new(Endpoints::new(&config)),
            settings: config.http.clone(),
            max_message_bytes: config.limits.max_message_bytes,
            hooks,
            access: Access::new(&config, bound, default_profile),
            sessions: Sessions::default(),
            pool: Arc::new(Pool::start(&config)),
        };
        HttpFront { front: Arc::new(front) }
    }

    /// Serves on `listener` until SIGTERM or SIGINT, then ends every session
    /// (stopping their upstreams).
    pub async fn serve(&self, listener: TcpListener) -> std::io::Result<()> {
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let reaper = tokio::spawn(reap(self.front.clone()));
        let app = router(self.front.clone());
        // Small answers must leave at once, not wait for an ACK (Nagle).
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let result = tokio::select! {
            served = axum::serve(listener, app) => served,
            _ = terminate.recv() => Ok(()),
            _ = interrupt.recv() => Ok(()),
        };
        reaper.abort();
        self.shutdown().await;
        result
    }

    /// Ends every session at once and waits until their upstreams are gone.
    pub async fn shutdown(&self) {
        let mut ending = tokio::task::JoinSet::new();
        for entry in self.front.sessions.all() {
            if let Some(entry) = self.front.sessions.remove(&entry.id) {
                ending.spawn(sessions::end(entry));
            }
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
            entry.session.apply(scoped);
        }
        *self.front.endpoints.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = endpoints;
    }

    /// How many client sessions are live.
    pub fn session_count(&self) -> usize {
        self.front.sessions.len()
    }
}

fn router(front: Arc<Front>) -> Router {
    Router::new()
        .route("/mcp", post(mcp::post_hub).get(mcp::get_hub).delete(mcp::delete_hub))
        .route("/mcp/{server}", post(mcp::post_server).get(mcp::get_server).delete(mcp::delete_server))
        .route("/sse", get(legacy::open_hub))
        .route("/sse/{server}", get(legacy::open_server))
        .route("/messages", post(legacy::message))
        .route("/healthz", get(health::healthz))
        .route("/status", get(health::status))
        .with_state(front)
}

/// Ends idle sessions now and then.
async fn reap(front: Arc<Front>) {
    let idle = Duration::from_secs(front.settings.session_idle_secs);
    let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        for entry in front.sessions.take_idle(idle) {
            tracing::info!(session = %entry.id, idle_secs = idle.as_secs(), "ending an idle session");
            tokio::spawn(sessions::end(entry));
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
    fn open_session(
        &self,
        scope: Option<String>,
        config: Arc<Config>,
        caller: &Caller,
        headers: &HeaderMap,
        legacy: bool,
    ) -> Result<Arc<Entry>, Refusal> {
        let profile = self.access.profile(caller, headers)?;
        let max = self.settings.max_sessions;
        let full = || {
            let message = format!("Warden serves at most {max} sessions (http.maxSessions)");
            Refusal::new(StatusCode::SERVICE_UNAVAILABLE, &message)
        };
        // Checked before starting any process; the insert below checks again,
        // atomically, for sessions opened meanwhile.
        if self.sessions.len() >= max {
            return Err(full());
        }
        let failed = |why: &str| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, why);
        let hooks = self.hooks.hooks(profile.as_deref()).map_err(|err| failed(&err))?;
        let id = sessions::new_id().map_err(|err| failed(&err.to_string()))?;
        let streams = Streams::new(self.settings.replay_events, legacy);
        let session = Session::start_in(config, hooks, streams.clone(), Some(self.pool.clone()));
        if let Some(name) = &caller.name {
            session.set_principal(name.clone());
        }
        let entry = Arc::new(Entry::new(id, session, streams, scope, caller.name.clone(), profile));
        if let Err(entry) = self.sessions.insert(entry.clone(), max) {
            tokio::spawn(sessions::end(entry));
            return Err(full());
        }
        tracing::info!(session = %entry.id, owner = ?entry.owner, profile = ?entry.profile, scope = ?entry.scope, legacy, "HTTP session started");
        Ok(entry)
    }

    /// How often idle streams get a keep-alive comment.
    fn keep_alive(&self) -> Duration {
        Duration::from_secs(self.settings.keep_alive_secs)
    }

    /// The configuration of an endpoint: `None` for the hub.
    fn config_for(&self, scope: Option<&str>) -> Option<Arc<Config>> {
        let endpoints = self.endpoints.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        match scope {
            None => endpoints.hub.clone(),
            Some(server) => endpoints.per_server.get(server).cloned(),
        }
    }
}
