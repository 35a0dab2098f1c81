//! Keeping one upstream running: start, handshake, watch, restart with backoff.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use warden_config::{Supervision, Transport};
use warden_jsonrpc::Kind;

use crate::connection::Connection;
use crate::error::UpstreamError;
use crate::event::{Event, EventKind, EventSink};
use crate::handshake::Handshake;
use crate::pipes;
use crate::process::Process;
use crate::stderr::{self, StderrTail};

/// Everything needed to run one upstream.
#[derive(Debug, Clone)]
pub struct UpstreamSpec {
    /// The server's name from the configuration.
    pub name: Arc<str>,
    /// How to start it.
    pub transport: Transport,
    /// Timeouts and backoff.
    pub supervision: Supervision,
    /// The largest message accepted from it.
    pub max_message_bytes: usize,
}

/// Where an upstream is in its life.
#[derive(Debug, Clone)]
pub enum State {
    /// Its process is starting or its handshake is under way.
    Starting,
    /// Initialized and serving requests.
    Ready(Arc<Connection>),
    /// It exited or failed to start; a restart is scheduled.
    Down {
        /// Why, with the tail of its stderr.
        reason: String,
        /// When the next start is due.
        retry_at: Instant,
    },
    /// Shut down by Warden.
    Stopped,
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
        };
        UpstreamError::Unavailable { name: self.name.to_string(), reason }
    }

    /// Stops the upstream: closes its stdin, waits the grace period, then kills
    /// its process group. Returns when it is gone.
    pub async fn shutdown(&self) {
        let _ = self.stop.send(true);
        let mut state = self.state.clone();
        let _ = state.wait_for(|state| matches!(state, State::Stopped)).await;
    }
}

/// Why one run of the process ended.
enum Ended {
    /// It exited or could not start; restart after a pause.
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

    /// Starts the process once and serves until it ends.
    async fn run_once(&mut self) -> Ended {
        let name = self.spec.name.clone();
        let (mut process, pipes) = match Process::spawn(&self.spec.transport) {
            Ok(started) => started,
            Err(err) => return Ended::Failed(format!("failed to start {}: {err}", self.command())),
        };
        let tail = Arc::new(StderrTail::new(self.spec.supervision.stderr_tail_bytes));
        let (outbox, outbox_rx) = mpsc::unbounded_channel();
        let connection = Arc::new(Connection::new(name.clone(), outbox, tail.clone()));
        tokio::spawn(pipes::write_all(outbox_rx, pipes.stdin));
        tokio::spawn(stderr::pump(name.clone(), pipes.stderr, tail.clone()));
        let mut reader = tokio::spawn(pipes::read_all(
            pipes.stdout,
            connection.clone(),
            self.spec.max_message_bytes,
            self.index,
            self.events.clone(),
        ));

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
                        status = process.child.wait() => Ended::Failed(describe_exit(status)),
                        _ = &mut reader => Ended::Failed("it closed its stdout".into()),
                        _ = stopped(&mut stop_later) => Ended::Stopped,
                    }
                }
                Err(reason) => Ended::Failed(reason),
            },
            status = process.child.wait() => Ended::Failed(format!("it exited during startup ({})", describe_exit(status))),
            _ = stopped(&mut stop) => Ended::Stopped,
        };

        let reason = match &ended {
            Ended::Failed(reason) => reason.clone(),
            Ended::Stopped => "Warden is shutting down".to_owned(),
        };
        // Let the last stderr lines arrive before quoting them.
        tokio::time::sleep(Duration::from_millis(20)).await;
        connection.close(UpstreamError::Lost { name: name.to_string(), reason: tail.explain(&reason) });
        self.stop_process(&mut process).await;
        reader.abort();
        match ended {
            Ended::Failed(reason) => Ended::Failed(tail.explain(&reason)),
            Ended::Stopped => Ended::Stopped,
        }
    }

    /// Closes stdin, waits the grace period, then kills the process group.
    async fn stop_process(&self, process: &mut Process) {
        let grace = Duration::from_millis(self.spec.supervision.shutdown_grace_ms);
        if tokio::time::timeout(grace, process.child.wait()).await.is_err() {
            process.signal_group(libc::SIGTERM);
            if tokio::time::timeout(Duration::from_millis(500), process.child.wait()).await.is_err() {
                process.signal_group(libc::SIGKILL);
                let _ = process.child.wait().await;
            }
        }
        // Helpers it left behind in its group go too.
        process.signal_group(libc::SIGKILL);
    }

    fn command(&self) -> String {
        match &self.spec.transport {
            Transport::Stdio { command, .. } => format!("'{command}'"),
            Transport::Http { url, .. } | Transport::Sse { url, .. } => format!("'{url}'"),
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

fn describe_exit(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => format!("it exited ({status})"),
        Err(err) => format!("waiting for it failed: {err}"),
    }
}
