//! Keeping one upstream running: start, handshake, watch, restart with backoff.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use warden_config::{Config, ProtocolEra, Supervision, Transport, Watch};
use warden_jsonrpc::Kind;
use warden_sandbox::SandboxReport;

use crate::code_watch::CodeWatch;
use crate::connection::Connection;
use crate::era::{self, Era};
use crate::error::UpstreamError;
use crate::event::{Event, EventKind, EventSink};
use crate::handshake::Handshake;
use crate::link::{Link, Phase};

/// Everything needed to run one upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamSpec {
    /// The server's name from the configuration.
    pub name: Arc<str>,
    /// How to start or reach it.
    pub transport: Transport,
    /// Timeouts and backoff.
    pub supervision: Supervision,
    /// The largest message accepted from it.
    pub max_message_bytes: usize,
    /// Restart it when these files change.
    pub watch: Option<Watch>,
    /// The OS sandbox its process runs in (stdio only).
    pub sandbox: Option<warden_config::ServerSandbox>,
    /// The era to speak: probed, or pinned.
    pub protocol: warden_config::ProtocolEra,
}

impl UpstreamSpec {
    /// The definition of server `name` in `config`, when it has one.
    pub fn from_config(name: &str, config: &Config) -> Option<UpstreamSpec> {
        let server = config.servers.get(name)?;
        Some(UpstreamSpec {
            name: Arc::from(name),
            transport: server.transport.clone(),
            supervision: config.supervision.clone(),
            max_message_bytes: config.limits.max_message_bytes,
            watch: server.watch.clone(),
            sandbox: config.sandbox_of(name),
            protocol: server.protocol,
        })
    }
}

/// Where an upstream is in its life.
#[derive(Debug, Clone)]
pub enum UpstreamState {
    /// Its process is starting, its server being reached, or its handshake
    /// under way (also while it restarts).
    Starting,
    /// Initialized and serving requests.
    Ready(Arc<Connection>),
    /// It exited, failed to start or could not be reached; a restart is scheduled.
    Down {
        /// Why, with the tail of its stderr.
        reason: String,
        /// When the next start is due.
        retry_at: Instant,
    },
    /// Shut down by Warden.
    Stopped,
    /// Never started, and will not be: e.g. its process cap is reached.
    Refused(String),
}

/// What the owner wants of the supervisor.
#[derive(Debug, Clone)]
struct Orders {
    /// What to run; [`Upstream::replace`] changes it.
    spec: Arc<UpstreamSpec>,
    /// Counts restart requests; each new one ends the current run.
    restarts: u64,
    /// Why the last restart was asked for.
    why: Arc<str>,
    /// Stop for good.
    stop: bool,
}

/// A handle on one supervised upstream. Dropping it does not stop the
/// upstream; call [`Upstream::shutdown`].
///
/// Its whole life goes through this one handle: [`Upstream::spawn`] starts
/// it, [`Upstream::restart`] ends the running process and starts a new one
/// at once (calls in flight get `restartGraceMs` to finish), and
/// [`Upstream::replace`] does the same with a new definition. A restart
/// keeps the handle, so its owner's routes to it stay valid.
#[derive(Debug, Clone)]
pub struct Upstream {
    name: Arc<str>,
    state: watch::Receiver<UpstreamState>,
    orders: watch::Sender<Orders>,
    /// How many times its supervisor began a start (the first included).
    starts: Arc<AtomicU64>,
}

impl Upstream {
    /// Starts supervising an upstream at once, in the background.
    ///
    /// The handshake waits until `init_params` holds the parameters of the
    /// client's `initialize` (JSON text), which are sent as they are, so the
    /// server sees the client's real capabilities; a restart sends them again.
    /// Events are delivered to `events`, tagged with `index`; how its
    /// process is started, and what its sandbox refuses, to `sandbox`.
    pub fn spawn(
        index: usize,
        spec: UpstreamSpec,
        init_params: watch::Receiver<Option<Arc<str>>>,
        events: Arc<dyn EventSink>,
        sandbox: SandboxReport,
    ) -> Upstream {
        let (state_tx, state) = watch::channel(UpstreamState::Starting);
        let name = spec.name.clone();
        let orders = Orders { spec: Arc::new(spec), restarts: 0, why: Arc::from(""), stop: false };
        let (orders, orders_rx) = watch::channel(orders);
        let (changed, changes) = mpsc::unbounded_channel();
        let starts = Arc::new(AtomicU64::new(0));
        let supervisor = Supervisor {
            starts: starts.clone(),
            index,
            init_params,
            events,
            sandbox,
            state: state_tx,
            orders: orders_rx,
            restarts_seen: 0,
            changed,
            changes,
            watching: None,
        };
        tokio::spawn(supervisor.run());
        Upstream { name, state, orders, starts }
    }

    /// An upstream that is not started, for `reason` (its process cap is
    /// reached, say): every request to it fails with that reason.
    pub fn refused(name: Arc<str>, reason: String) -> Upstream {
        let (_, state) = watch::channel(UpstreamState::Refused(reason));
        let spec = UpstreamSpec {
            name: name.clone(),
            transport: Transport::Http { url: String::new(), headers: Default::default() },
            supervision: Supervision::default(),
            max_message_bytes: 0,
            watch: None,
            sandbox: None,
            protocol: ProtocolEra::Mcp2025,
        };
        let (orders, _) = watch::channel(Orders { spec: Arc::new(spec), restarts: 0, why: Arc::from(""), stop: true });
        Upstream { name, state, orders, starts: Arc::default() }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many times it was started again after its first start: after
    /// a crash, a failed start, a code change or a new definition.
    pub fn restarts(&self) -> u64 {
        self.starts.load(Ordering::Relaxed).saturating_sub(1)
    }

    /// Its current state.
    pub fn state(&self) -> UpstreamState {
        self.state.borrow().clone()
    }

    /// Its connection, when it is ready.
    pub fn connection(&self) -> Option<Arc<Connection>> {
        match &*self.state.borrow() {
            UpstreamState::Ready(connection) => Some(connection.clone()),
            _ => None,
        }
    }

    /// The definition it runs (the last one given to [`Upstream::replace`]).
    pub fn spec(&self) -> Arc<UpstreamSpec> {
        self.orders.borrow().spec.clone()
    }

    /// Waits until the upstream is ready or has failed at least once, up to
    /// `timeout`; returns its connection if ready.
    pub async fn settled(&self, timeout: Duration) -> Option<Arc<Connection>> {
        let mut state = self.state.clone();
        let settled = state.wait_for(|state| !matches!(state, UpstreamState::Starting));
        match tokio::time::timeout(timeout, settled).await {
            Ok(Ok(state)) => match &*state {
                UpstreamState::Ready(connection) => Some(connection.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Why the upstream cannot take a request now.
    pub fn unavailable(&self) -> UpstreamError {
        let reason = match self.state() {
            UpstreamState::Starting => "it is still starting".to_owned(),
            UpstreamState::Ready(_) => "it is ready".to_owned(),
            UpstreamState::Down { reason, retry_at } => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                format!("{reason} (next start in {:.1} s)", wait.as_secs_f64())
            }
            UpstreamState::Stopped => "it was shut down".to_owned(),
            UpstreamState::Refused(reason) => reason,
        };
        UpstreamError::Unavailable { name: self.name.to_string(), reason }
    }

    /// Restarts the upstream now, for `why`: requests sent from now on wait
    /// for the new process; those in flight get `restartGraceMs` to finish on
    /// the old one, then fail. A server waiting out its backoff starts at
    /// once, with its backoff reset.
    pub fn restart(&self, why: &str) {
        self.orders.send_modify(|orders| {
            orders.restarts += 1;
            orders.why = Arc::from(why);
        });
    }

    /// Restarts the upstream with a new definition (same name), as
    /// [`Upstream::restart`] does.
    pub fn replace(&self, spec: UpstreamSpec) {
        self.orders.send_modify(|orders| {
            orders.spec = Arc::new(spec);
            orders.restarts += 1;
            orders.why = Arc::from("its definition changed");
        });
    }

    /// Changes the definition used from the next (re)start on, without
    /// restarting now: for settings that need no new process at once
    /// (timeouts, limits).
    pub fn amend(&self, spec: UpstreamSpec) {
        self.orders.send_if_modified(|orders| {
            let changed = *orders.spec != spec;
            orders.spec = Arc::new(spec);
            changed
        });
    }

    /// Stops the upstream because Warden is shutting down; see
    /// [`Upstream::stop`].
    pub async fn shutdown(&self) {
        self.stop("Warden is shutting down").await;
    }

    /// Stops the upstream for `why` (which its calls in flight fail with):
    /// closes a process's stdin, waits the grace period, then kills its
    /// process group; deletes a remote session. Returns when it is gone.
    pub async fn stop(&self, why: &str) {
        self.orders.send_modify(|orders| {
            orders.stop = true;
            orders.why = Arc::from(why);
        });
        let mut state = self.state.clone();
        let _ = state.wait_for(|state| matches!(state, UpstreamState::Stopped | UpstreamState::Refused(_))).await;
    }
}

/// Why one run of the link ended.
enum Ended {
    /// It exited, could not start or could not be reached; restart after a pause.
    Failed(String),
    /// Warden asked for a restart (code or definition changed): start again now.
    Restart(String),
    /// Warden asked it to stop.
    Stopped,
}

/// What interrupted a run or a pause.
enum Interrupt {
    Restart(String),
    Stop,
}

struct Supervisor {
    index: usize,
    init_params: watch::Receiver<Option<Arc<str>>>,
    events: Arc<dyn EventSink>,
    /// Where its sandbox reports.
    sandbox: SandboxReport,
    state: watch::Sender<UpstreamState>,
    orders: watch::Receiver<Orders>,
    /// The restart count already acted on.
    restarts_seen: u64,
    /// Starts begun, shared with the [`Upstream`] handle.
    starts: Arc<AtomicU64>,
    /// Changed files, from the code watch.
    changed: mpsc::UnboundedSender<PathBuf>,
    changes: mpsc::UnboundedReceiver<PathBuf>,
    /// The code watch and the definition it was made for.
    watching: Option<(Arc<UpstreamSpec>, Option<CodeWatch>)>,
}

impl Supervisor {
    async fn run(mut self) {
        let mut failures: u32 = 0;
        loop {
            let spec = self.orders.borrow().spec.clone();
            self.watch_code(&spec);
            self.starts.fetch_add(1, Ordering::Relaxed);
            self.state.send_replace(UpstreamState::Starting);
            let started = Instant::now();
            let reason = match self.run_once(&spec).await {
                Ended::Stopped => break,
                Ended::Restart(why) => {
                    tracing::info!(server = %spec.name, "restarting: {why}");
                    failures = 0;
                    continue;
                }
                Ended::Failed(reason) => reason,
            };
            // A server that ran for a while earns a fresh backoff.
            if started.elapsed() > Duration::from_secs(60) {
                failures = 0;
            }
            let delay = backoff(&spec.supervision, failures);
            failures = failures.saturating_add(1);
            tracing::warn!(server = %spec.name, retry_in_ms = delay.as_millis() as u64, "upstream down: {reason}");
            // The state first: a session told of the end can then tell this
            // upstream's Down from a late one of a predecessor it replaced.
            self.state.send_replace(UpstreamState::Down { reason: reason.clone(), retry_at: Instant::now() + delay });
            self.events.deliver(Event::new(self.index, EventKind::Down { reason }));
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                interrupt = self.interrupted(&spec) => match interrupt {
                    Interrupt::Stop => break,
                    Interrupt::Restart(why) => {
                        tracing::info!(server = %spec.name, "starting at once: {why}");
                        failures = 0;
                    }
                },
            }
        }
        self.watching = None;
        self.state.send_replace(UpstreamState::Stopped);
    }

    /// Keeps a code watch for `spec`'s `watch` paths, made anew when the
    /// definition changed.
    fn watch_code(&mut self, spec: &Arc<UpstreamSpec>) {
        if self.watching.as_ref().is_some_and(|(watched, _)| watched.watch == spec.watch) {
            return;
        }
        let code_watch = spec.watch.as_ref().and_then(|watch| {
            let base = match &spec.transport {
                Transport::Stdio { cwd: Some(cwd), .. } => cwd.clone(),
                _ => PathBuf::from("."),
            };
            match CodeWatch::start(watch, &base, self.changed.clone()) {
                Ok(code_watch) => {
                    tracing::info!(server = %spec.name, paths = ?watch.paths, "watching code");
                    Some(code_watch)
                }
                Err(why) => {
                    tracing::error!(server = %spec.name, "cannot watch its code, it will not restart on changes: {why}");
                    None
                }
            }
        });
        self.watching = Some((spec.clone(), code_watch));
    }

    /// Resolves when the owner asks for a restart or a stop, or when the
    /// watched code changed and then stayed quiet for `debounceMs`.
    async fn interrupted(&mut self, spec: &UpstreamSpec) -> Interrupt {
        let debounce = Duration::from_millis(spec.watch.as_ref().map_or(300, |watch| watch.debounce_ms));
        let seen = self.restarts_seen;
        // The first changed path and how many changes followed it.
        let mut burst: Option<(PathBuf, usize)> = None;
        loop {
            let pending = burst.is_some();
            let quiet = async move {
                if pending {
                    tokio::time::sleep(debounce).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                orders = async {
                    let orders = self.orders.wait_for(|orders| orders.stop || orders.restarts != seen).await;
                    orders.map(|orders| (!orders.stop).then(|| (orders.restarts, orders.why.clone())))
                } => return match orders {
                    Ok(Some((restarts, why))) => {
                        self.restarts_seen = restarts;
                        Interrupt::Restart(why.to_string())
                    }
                    _ => Interrupt::Stop,
                },
                Some(path) = self.changes.recv() => {
                    // One burst of changes (a formatter, a checkout) is one restart.
                    burst = Some(match burst.take() {
                        None => (path, 0),
                        Some((first, more)) => (first, more + 1),
                    });
                }
                () = quiet => {
                    let (first, more) = burst.take().unwrap_or_default();
                    let also = if more > 0 { format!(" and {more} more changes") } else { String::new() };
                    return Interrupt::Restart(format!("{} changed{also}", first.display()));
                }
            }
        }
    }

    /// Resolves when the owner asks for a stop.
    async fn stop_ordered(&mut self) {
        let _ = self.orders.wait_for(|orders| orders.stop).await;
    }

    /// Opens the link once and serves until it ends.
    async fn run_once(&mut self, spec: &UpstreamSpec) -> Ended {
        let name = spec.name.clone();
        let mut link = match Link::open(spec, self.index, self.events.clone(), &self.sandbox) {
            Ok(link) => link,
            Err(reason) => return Ended::Failed(reason),
        };
        let connection = link.connection().clone();

        let mut init_params = self.init_params.clone();
        let timeout = Duration::from_millis(spec.supervision.start_timeout_ms);
        let ended = tokio::select! {
            handshake = handshake(&mut init_params, timeout, &connection, spec) => match handshake {
                Ok(()) => {
                    tracing::info!(server = %name, "upstream ready");
                    self.state.send_replace(UpstreamState::Ready(connection.clone()));
                    self.events.deliver(Event::new(self.index, EventKind::Ready(connection.clone())));
                    tokio::select! {
                        reason = link.ended(Phase::Ready) => Ended::Failed(reason),
                        interrupt = self.interrupted(spec) => match interrupt {
                            Interrupt::Stop => Ended::Stopped,
                            Interrupt::Restart(why) => {
                                // New requests wait for the new process; those in
                                // flight get the grace period on this one.
                                self.state.send_replace(UpstreamState::Starting);
                                let grace = Duration::from_millis(spec.supervision.restart_grace_ms);
                                tokio::select! {
                                    _ = tokio::time::timeout(grace, connection.drained()) => Ended::Restart(why),
                                    _ = link.ended(Phase::Ready) => Ended::Restart(why),
                                    () = self.stop_ordered() => Ended::Stopped,
                                }
                            }
                        },
                    }
                }
                Err(reason) => Ended::Failed(reason),
            },
            reason = link.ended(Phase::Starting) => Ended::Failed(reason),
            interrupt = self.interrupted(spec) => match interrupt {
                Interrupt::Stop => Ended::Stopped,
                Interrupt::Restart(why) => Ended::Restart(why),
            },
        };

        let reason = match &ended {
            Ended::Failed(reason) => reason.clone(),
            Ended::Restart(why) => format!("it is restarting ({why})"),
            Ended::Stopped => self.orders.borrow().why.to_string(),
        };
        let explained = link.close(&reason).await;
        match ended {
            Ended::Failed(_) => Ended::Failed(explained),
            other => other,
        }
    }
}

/// How Warden opens the conversation with a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// `initialize` only (pinned to the 2025 era, or an HTTP+SSE server).
    Initialize,
    /// `server/discover` only (pinned modern).
    Discover,
    /// `server/discover`, then `initialize` if that is refused: over HTTP a
    /// probe costs nothing and harms nobody.
    DiscoverFirst,
    /// `initialize`, then `server/discover` if that is refused: over stdio a
    /// request before `initialize` can kill a 2025-era server (rmcp's exit
    /// on it), while a modern-only one refuses `initialize` with an error.
    InitializeFirst,
}

impl Opening {
    fn of(spec: &UpstreamSpec) -> Opening {
        match (spec.protocol, &spec.transport) {
            (ProtocolEra::Mcp2025, _) | (ProtocolEra::Auto, Transport::Sse { .. }) => Opening::Initialize,
            (ProtocolEra::Modern, _) => Opening::Discover,
            (ProtocolEra::Auto, Transport::Http { .. }) => Opening::DiscoverFirst,
            (ProtocolEra::Auto, Transport::Stdio { .. }) => Opening::InitializeFirst,
        }
    }
}

/// Opens the conversation in the server's era (see [`Opening`]): for a
/// modern server `server/discover`, for a 2025-era one `initialize` with the
/// client's parameters, then `initialized`.
async fn handshake(
    init_params: &mut watch::Receiver<Option<Arc<str>>>,
    timeout: Duration,
    connection: &Connection,
    spec: &UpstreamSpec,
) -> Result<(), String> {
    let params = match init_params.wait_for(Option::is_some).await {
        Ok(params) => params.clone().unwrap_or_else(|| Arc::from("{}")),
        Err(_) => return Err("Warden closed before the client initialized".into()),
    };
    let opening = Opening::of(spec);
    if matches!(opening, Opening::Discover | Opening::DiscoverFirst) {
        match discover(&params, timeout, connection).await {
            Ok(handshake) => return modern(spec, connection, handshake, &params),
            Err(why) if opening == Opening::Discover => return Err(why),
            Err(why) => tracing::debug!(server = %spec.name, "upstream is not modern ({why}): initializing"),
        }
    }
    let answer = tokio::time::timeout(timeout, connection.request("initialize", Some(&params)))
        .await
        .map_err(|_| format!("it did not answer initialize within {} s", timeout.as_secs()))?
        .map_err(|err| err.to_string())?;
    let result = answer.payload().unwrap_or("null");
    if answer.kind() != Kind::Response {
        let refused = format!("it refused initialize: {result}");
        if opening == Opening::InitializeFirst {
            // A modern-only server refuses initialize: ask it the modern way.
            return match discover(&params, timeout, connection).await {
                Ok(handshake) => modern(spec, connection, handshake, &params),
                Err(why) => Err(format!("{refused}; server/discover failed too: {why}")),
            };
        }
        return Err(refused);
    }
    let handshake = Handshake::parse(result)?;
    connection.set_handshake(handshake);
    connection.set_era(Era::Mcp2025, String::new());
    connection.send(warden_jsonrpc::notification("notifications/initialized", None)).map_err(|err| err.to_string())
}

/// Makes `connection` a modern one.
fn modern(spec: &UpstreamSpec, connection: &Connection, handshake: Handshake, params: &str) -> Result<(), String> {
    tracing::info!(server = %spec.name, "upstream speaks MCP 2026-07-28");
    connection.set_handshake(handshake);
    connection.set_era(Era::Modern, era::envelope_members(params));
    Ok(())
}

/// `server/discover` in 2026-07-28: the server's capabilities if it speaks
/// it. A server that answers `UnsupportedProtocolVersion` naming 2026-07-28
/// among its versions is asked once more, as the revision asks clients to.
async fn discover(init_params: &str, timeout: Duration, connection: &Connection) -> Result<Handshake, String> {
    let params = format!("{{\"_meta\":{{{}}}}}", era::envelope_members(init_params));
    let mut retried = false;
    loop {
        let answer = tokio::time::timeout(timeout, connection.request("server/discover", Some(&params)))
            .await
            .map_err(|_| format!("it did not answer server/discover within {} s", timeout.as_secs()))?
            .map_err(|err| err.to_string())?;
        let payload = answer.payload().unwrap_or("null");
        if answer.kind() == Kind::Response {
            return Handshake::from_discover(payload);
        }
        if !retried && era::offers_modern(payload) {
            retried = true;
            continue;
        }
        return Err(format!("it refused server/discover: {payload}"));
    }
}

/// The delay before restart number `failures` (0-based): doubling from the
/// initial delay up to the maximum.
fn backoff(sup: &Supervision, failures: u32) -> Duration {
    let factor = 1u64 << failures.min(20);
    Duration::from_millis(sup.backoff_initial_ms.saturating_mul(factor).min(sup.backoff_max_ms))
}
