//! Keeping one upstream running: start, handshake, watch, restart with backoff.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use warden_config::{Supervision, Transport};
use warden_jsonrpc::Kind;

use crate::connection::Connection;
use crate::error::UpstreamError;
use crate::event::{Event, EventKind, EventSink};
use crate::handshake::Handshake;
use crate::link::{Link, Phase};

/// Everything needed to run one upstream.
#[derive(Debug, Clone)]
pub struct UpstreamSpec {
    /// The server's name from the configuration.
    pub name: Arc<str>,
    /// How to start or reach it.
    pub transport: Transport,
    /// Timeouts and backoff.
    pub supervision: Supervision,
    /// The largest message accepted from it.
    pub max_message_bytes: usize,
    /// The OS sandbox its process runs in (stdio only).
    pub sandbox: Option<warden_config::ServerSandbox>,
}

/// Where an upstream is in its life.
#[derive(Debug, Clone)]
pub enum State {
    /// Its process is starting, its server being reached, or its handshake
    /// under way.
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

/// A handle on one supervised upstream. Dropping it does not stop the
/// upstream; call [`Upstream::shutdown`].
#[derive(Debug, Clone)]
pub struct Upstream {
    name: Arc<str>,
    state: watch::Receiver<State>,
    stop: watch::Sender<bool>,
}

impl Upstream {
    /// Starts supervising an upstream at once, in the background.
    ///
    /// The handshake waits until `init_params` holds the parameters of the
    /// client's `initialize` (JSON text), which are sent as they are, so the
    /// server sees the client's real capabilities; a restart sends them again.
    /// Events are delivered to `events`, tagged with `index`.
    pub fn spawn(
        index: usize,
        spec: UpstreamSpec,
        init_params: watch::Receiver<Option<Arc<str>>>,
        events: Arc<dyn EventSink>,
    ) -> Upstream {
        let (state_tx, state) = watch::channel(State::Starting);
        let (stop, stop_rx) = watch::channel(false);
        let name = spec.name.clone();
        let supervisor = Supervisor { index, spec, init_params, events, state: state_tx, stop: stop_rx };
        tokio::spawn(supervisor.run());
        Upstream { name, state, stop }
    }

    /// An upstream that is not started, for `reason` (its process cap is
    /// reached, say): every request to it fails with that reason.
    pub fn refused(name: Arc<str>, reason: String) -> Upstream {
        let (_, state) = watch::channel(State::Refused(reason));
        let (stop, _) = watch::channel(false);
        Upstream { name, state, stop }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its current state.
    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }

    /// Its connection, when it is ready.
    pub fn connection(&self) -> Option<Arc<Connection>> {
        match &*self.state.borrow() {
            State::Ready(connection) => Some(connection.clone()),
            _ => None,
        }
    }

    /// Waits until the upstream is ready or has failed at least once, up to
    /// `timeout`; returns its connection if ready.
    pub async fn settled(&self, timeout: Duration) -> Option<Arc<Connection>> {
        let mut state = self.state.clone();
        let settled = state.wait_for(|state| !matches!(state, State::Starting));
        match tokio::time::timeout(timeout, settled).await {
            Ok(Ok(state)) => match &*state {
                State::Ready(connection) => Some(connection.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Why the upstream cannot take a request now.
    pub fn unavailable(&self) -> UpstreamError {
        let reason = match self.state() {
            State::Starting => "it is still starting".to_owned(),
            State::Ready(_) => "it is ready".to_owned(),
            State::Down { reason, retry_at } => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                format!("{reason} (next start in {:.1} s)", wait.as_secs_f64())
            }
            State::Stopped => "it was shut down".to_owned(),
            State::Refused(reason) => reason,
        };
        UpstreamError::Unavailable { name: self.name.to_string(), reason }
    }

    /// Stops the upstream: closes a process's stdin, waits the grace period,
    /// then kills its process group; deletes a remote session. Returns when it
    /// is gone.
    pub async fn shutdown(&self) {
        let _ = self.stop.send(true);
        let mut state = self.state.clone();
        let _ = state.wait_for(|state| matches!(state, State::Stopped | State::Refused(_))).await;
    }
}

/// Why one run of the link ended.
enum Ended {
    /// It exited, could not start or could not be reached; restart after a pause.
    Failed(String),
    /// Warden asked it to stop.
    Stopped,
}

struct Supervisor {
    index: usize,
    spec: UpstreamSpec,
    init_params: watch::Receiver<Option<Arc<str>>>,
    events: Arc<dyn EventSink>,
    state: watch::Sender<State>,
    stop: watch::Receiver<bool>,
}

impl Supervisor {
    async fn run(mut self) {
        let sup = self.spec.supervision.clone();
        let mut failures: u32 = 0;
        loop {
            self.state.send_replace(State::Starting);
            let started = Instant::now();
            let reason = match self.run_once().await {
                Ended::Stopped => break,
                Ended::Failed(reason) => reason,
            };
            // A server that ran for a while earns a fresh backoff.
            if started.elapsed() > Duration::from_secs(60) {
                failures = 0;
            }
            let delay = backoff(&sup, failures);
            failures = failures.saturating_add(1);
            tracing::warn!(server = %self.spec.name, retry_in_ms = delay.as_millis() as u64, "upstream down: {reason}");
            self.events.deliver(Event { upstream: self.index, kind: EventKind::Down { reason: reason.clone() } });
            self.state.send_replace(State::Down { reason, retry_at: Instant::now() + delay });
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stopped(&mut self.stop) => break,
            }
        }
        self.state.send_replace(State::Stopped);
    }

    /// Opens the link once and serves until it ends.
    async fn run_once(&mut self) -> Ended {
        let name = self.spec.name.clone();
        let mut link = match Link::open(&self.spec, self.index, self.events.clone()) {
            Ok(link) => link,
            Err(reason) => return Ended::Failed(reason),
        };
        let connection = link.connection().clone();

        let mut init_params = self.init_params.clone();
        let timeout = Duration::from_millis(self.spec.supervision.start_timeout_ms);
        let (mut stop, mut stop_later) = (self.stop.clone(), self.stop.clone());
        let ended = tokio::select! {
            handshake = handshake(&mut init_params, timeout, &connection) => match handshake {
                Ok(()) => {
                    tracing::info!(server = %name, "upstream ready");
                    self.state.send_replace(State::Ready(connection.clone()));
                    self.events.deliver(Event { upstream: self.index, kind: EventKind::Ready(connection.clone()) });
                    tokio::select! {
                        reason = link.ended(Phase::Ready) => Ended::Failed(reason),
                        _ = stopped(&mut stop_later) => Ended::Stopped,
                    }
                }
                Err(reason) => Ended::Failed(reason),
            },
            reason = link.ended(Phase::Starting) => Ended::Failed(reason),
            _ = stopped(&mut stop) => Ended::Stopped,
        };

        let reason = match &ended {
            Ended::Failed(reason) => reason.clone(),
            Ended::Stopped => "Warden is shutting down".to_owned(),
        };
        let explained = link.close(&reason).await;
        match ended {
            Ended::Failed(_) => Ended::Failed(explained),
            Ended::Stopped => Ended::Stopped,
        }
    }
}

/// Sends `initialize` with the client's parameters, then `initialized`.
async fn handshake(
    init_params: &mut watch::Receiver<Option<Arc<str>>>,
    timeout: Duration,
    connection: &Connection,
) -> Result<(), String> {
    let params = match init_params.wait_for(Option::is_some).await {
        Ok(params) => params.clone().unwrap_or_else(|| Arc::from("{}")),
        Err(_) => return Err("Warden closed before the client initialized".into()),
    };
    let answer = tokio::time::timeout(timeout, connection.request("initialize", Some(&params)))
        .await
        .map_err(|_| format!("it did not answer initialize within {} s", timeout.as_secs()))?
        .map_err(|err| err.to_string())?;
    let result = answer.payload().unwrap_or("null");
    if answer.kind() != Kind::Response {
        return Err(format!("it refused initialize: {result}"));
    }
    let handshake = Handshake::parse(result)?;
    connection.set_handshake(handshake);
    connection.send(warden_jsonrpc::notification("notifications/initialized", None)).map_err(|err| err.to_string())
}

/// Resolves once Warden asks the upstream to stop.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// The delay before restart number `failures` (0-based): doubling from the
/// initial delay up to the maximum.
fn backoff(sup: &Supervision, failures: u32) -> Duration {
    let factor = 1u64 << failures.min(20);
    Duration::from_millis(sup.backoff_initial_ms.saturating_mul(factor).min(sup.backoff_max_ms))
}
