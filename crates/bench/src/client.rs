//! A minimal MCP client over a child process's stdio: newline-delimited
//! JSON-RPC written by hand with `serde_json`.
//!
//! One writer task owns the child's stdin and writes whatever lines are queued
//! (flushing once per batch); one reader task owns its stdout and resolves
//! pending requests by id. Notifications and non-JSON lines from the server are
//! ignored, and server→client requests are answered with error -32601.

use std::collections::HashMap;
use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::caller::Caller;

/// MCP protocol version sent in `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Outcome of one request at the JSON-RPC level: the raw `result`, or a
/// description of the `error` object.
pub type RpcOutcome = Result<Box<RawValue>, String>;

/// A response as handed from the reader task to the waiting caller.
struct Reply {
    /// When the reader got the response line.
    received: Instant,
    outcome: RpcOutcome,
}

/// Requests awaiting a response; `None` once the server's stdout has closed.
type Pending = Mutex<Option<HashMap<u64, oneshot::Sender<Reply>>>>;

/// What the writer task is asked to do.
enum WriterMsg {
    /// Write this line (which ends with `\n`).
    Line(Vec<u8>),
    /// Close the child's stdin and stop.
    Close,
}

/// A completed request: its outcome and its latency, from just before the
/// line was queued for writing to the receipt of the response line.
pub struct Completed {
    /// The result or error of the request.
    pub outcome: RpcOutcome,
    /// Time from write to response receipt.
    pub latency: Duration,
}

/// Cloneable handle for sending requests; shared by concurrent workers.
pub struct Rpc {
    writer: mpsc::UnboundedSender<WriterMsg>,
    pending: Arc<Pending>,
    next_id: AtomicU64,
    timeout: Duration,
}

#[derive(Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a RawValue,
}

/// A JSON-RPC request as JSON text (no trailing newline).
pub fn encode_request(id: u64, method: &str, params: &RawValue) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&Request { jsonrpc: "2.0", id, method, params })
}

/// A JSON-RPC notification without params, as JSON text (no trailing newline).
pub fn encode_notification(method: &str) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&Notification { jsonrpc: "2.0", method })
}

/// The `initialize` params this client sends.
pub fn initialize_params() -> anyhow::Result<Box<RawValue>> {
    let params = serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "warden-bench", "version": env!("CARGO_PKG_VERSION")},
    });
    Ok(serde_json::value::to_raw_value(&params)?)
}

#[derive(Serialize)]
struct Notification<'a> {
    jsonrpc: &'static str,
    method: &'a str,
}

impl Rpc {
    /// Sends a request and waits for its response.
    ///
    /// Errors only on transport failures (server gone, timeout); a JSON-RPC
    /// error response is an `Ok` with an `Err` outcome.
    pub async fn request(&self, method: &str, params: &RawValue) -> anyhow::Result<Completed> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut line = encode_request(id, method, params)?;
        line.push(b'\n');
        let (tx, rx) = oneshot::channel();
        {
            let mut guard = warden_sync::lock(&self.pending);
            let map = guard.as_mut().ok_or_else(|| anyhow!("server closed its stdout"))?;
            map.insert(id, tx);
        }
        let start = Instant::now();
        if self.writer.send(WriterMsg::Line(line)).is_err() {
            bail!("cannot write to server: its stdin is closed");
        }
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(reply)) => {
                Ok(Completed { outcome: reply.outcome, latency: reply.received.saturating_duration_since(start) })
            }
            Ok(Err(_)) => bail!("server closed its stdout before answering {method} (id {id})"),
            Err(_) => {
                if let Some(map) = warden_sync::lock(&self.pending).as_mut() {
                    map.remove(&id);
                }
                bail!("no response to {method} (id {id}) within {:?}", self.timeout)
            }
        }
    }

    /// Sends a notification (no response expected).
    pub fn notify(&self, method: &str) -> anyhow::Result<()> {
        let mut line = encode_notification(method)?;
        line.push(b'\n');
        self.writer.send(WriterMsg::Line(line)).map_err(|_| anyhow!("cannot write to server: its stdin is closed"))
    }
}

impl Caller for Arc<Rpc> {
    fn request<'a>(
        &'a mut self,
        method: &'a str,
        params: &'a RawValue,
    ) -> impl Future<Output = anyhow::Result<Completed>> + Send + 'a {
        Rpc::request(self, method, params)
    }
}

/// A spawned MCP server process and the tasks talking to it.
pub struct McpClient {
    child: Child,
    rpc: Arc<Rpc>,
    writer_task: JoinHandle<()>,
    reader_task: JoinHandle<()>,
}

impl McpClient {
    /// Spawns `command` (program and arguments) with piped stdin/stdout and
    /// inherited stderr, and starts the reader and writer tasks.
    pub fn spawn(command: &[String], timeout: Duration) -> anyhow::Result<Self> {
        let (program, args) = command.split_first().ok_or_else(|| anyhow!("no command given"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("child has no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("child has no stdout"))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let pending: Arc<Pending> = Arc::new(Mutex::new(Some(HashMap::new())));
        let writer_task = tokio::spawn(write_loop(stdin, rx));
        let reader_task = tokio::spawn(read_loop(stdout, Arc::clone(&pending), tx.clone()));
        let rpc = Arc::new(Rpc { writer: tx, pending, next_id: AtomicU64::new(1), timeout });
        Ok(Self { child, rpc, writer_task, reader_task })
    }

    /// The handle used to send requests.
    pub fn rpc(&self) -> &Arc<Rpc> {
        &self.rpc
    }

    /// The child's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Performs the MCP handshake: `initialize`, then `notifications/initialized`.
    /// Returns the server's `initialize` result.
    pub async fn initialize(&self) -> anyhow::Result<Box<RawValue>> {
        let params = initialize_params()?;
        let result = Rpc::request(&self.rpc, "initialize", &params)
            .await
            .context("initialize failed")?
            .outcome
            .map_err(|e| anyhow!("initialize returned an error: {e}"))?;
        self.rpc.notify("notifications/initialized")?;
        Ok(result)
    }

    /// Closes the child's stdin, waits up to `grace` for it to exit, then
    /// kills it.
    pub async fn shutdown(mut self, grace: Duration) -> anyhow::Result<()> {
        // The writer task drops stdin when told to close.
        let _ = self.rpc.writer.send(WriterMsg::Close);
        let _ = tokio::time::timeout(grace, &mut self.writer_task).await;
        let exited = tokio::time::timeout(grace, self.child.wait()).await;
        if exited.is_err() {
            self.child.start_kill().context("cannot kill child")?;
            self.child.wait().await.context("cannot reap child")?;
        }
        self.reader_task.abort();
        self.writer_task.abort();
        Ok(())
    }
}

/// Writes queued lines to the child's stdin, flushing after each batch.
async fn write_loop(stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<WriterMsg>) {
    let mut out = BufWriter::with_capacity(64 * 1024, stdin);
    while let Some(msg) = rx.recv().await {
        let mut close = false;
        let mut batch = Some(msg);
        while let Some(msg) = batch.take() {
            match msg {
                WriterMsg::Line(line) => {
                    if out.write_all(&line).await.is_err() {
                        return;
                    }
                }
                WriterMsg::Close => {
                    close = true;
                    break;
                }
            }
            batch = rx.try_recv().ok();
        }
        if out.flush().await.is_err() || close {
            return;
        }
    }
}

/// Fields of an incoming message that the client looks at.
#[derive(Deserialize)]
pub struct Incoming<'a> {
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<RpcErrorObject>,
}

/// The `error` member of a response.
#[derive(Deserialize)]
pub struct RpcErrorObject {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
}

impl<'a> Incoming<'a> {
    /// Reads a message; `None` if it is not a JSON-RPC object.
    pub fn parse(bytes: &'a [u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }

    /// The id of a response (a message with an id and no method), if it is
    /// one of this client's numeric ids.
    pub fn response_id(&self) -> Option<u64> {
        match (self.id, self.method) {
            (Some(id), None) => id.get().trim().parse().ok(),
            _ => None,
        }
    }

    /// A response's outcome: the raw result, or a description of the error.
    pub fn into_outcome(self) -> RpcOutcome {
        match (self.result, self.error) {
            (_, Some(e)) => Err(format!("JSON-RPC error {}: {}", e.code, e.message)),
            (Some(r), None) => Ok(r.to_owned()),
            (None, None) => Err("response has neither result nor error".to_owned()),
        }
    }
}

/// Reads the child's stdout line by line and dispatches each message.
async fn read_loop(stdout: ChildStdout, pending: Arc<Pending>, writer: mpsc::UnboundedSender<WriterMsg>) {
    let mut input = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let received = Instant::now();
        let Ok(msg) = serde_json::from_slice::<Incoming<'_>>(&line) else {
            continue; // not JSON-RPC: ignore
        };
        match (msg.id, msg.method) {
            (Some(id), Some(_)) => {
                // A request from the server: we support none.
                let reply = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32601,\"message\":\"Method not found\"}}}}\n",
                    id.get()
                );
                let _ = writer.send(WriterMsg::Line(reply.into_bytes()));
            }
            (None, Some(_)) => {} // notification
            (Some(_), None) => {
                let Some(id) = msg.response_id() else {
                    continue; // not one of ours
                };
                let outcome = msg.into_outcome();
                let waiter = warden_sync::lock(&pending).as_mut().and_then(|map| map.remove(&id));
                if let Some(tx) = waiter {
                    let _ = tx.send(Reply { received, outcome });
                }
            }
            (None, None) => {}
        }
    }
    // Server gone: fail everything pending and refuse new requests.
    warden_sync::lock(&pending).take();
}
