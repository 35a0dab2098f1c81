//! The egress proxy: one per sandboxed server, on a Unix socket bound into
//! its sandbox. It speaks HTTP `CONNECT` and absolute-URI HTTP, enforces the
//! server's allowlist, resolves names itself and dials only checked addresses.

mod allow;
mod interfaces;
mod request;
mod resolve;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use allow::{Allowlist, Host};
/// Public for the fuzz target: the proxy reads every request head with it.
pub use request::{Target, parse as parse_request};
pub use resolve::{is_internal, is_special};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::Semaphore;

use crate::SandboxError;
use crate::report::{Denial, SandboxReport};

/// The largest request head accepted.
const MAX_HEAD: usize = 16 * 1024;

/// How long and how much one server's proxy holds, so that a hostile
/// server cannot hold Warden's sockets and tasks forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request head must be complete within this long.
    pub header_timeout: Duration,
    /// A tunnel with no byte either way for this long is closed.
    pub idle_timeout: Duration,
    /// Connections at once; more are answered 503 and closed.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { header_timeout: Duration::from_secs(10), idle_timeout: Duration::from_secs(300), max_connections: 64 }
    }
}

/// A running proxy; dropping it stops it and removes its socket.
#[derive(Debug)]
pub struct Proxy {
    task: tokio::task::JoinHandle<()>,
    socket: PathBuf,
}

impl Proxy {
    /// Listens on `socket` for server `server`'s connections; refusals go to
    /// `report`. Must be called within a Tokio runtime.
    pub fn start(server: &str, list: Allowlist, socket: &Path, report: SandboxReport) -> Result<Proxy, SandboxError> {
        Proxy::start_with(server, list, socket, Limits::default(), report)
    }

    /// [`Proxy::start`] with `limits` instead of the defaults.
    pub fn start_with(
        server: &str,
        list: Allowlist,
        socket: &Path,
        limits: Limits,
        report: SandboxReport,
    ) -> Result<Proxy, SandboxError> {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)
            .map_err(|err| SandboxError::io(format!("cannot listen on {}", socket.display()), err))?;
        let shared = Arc::new(Served { server: server.to_owned(), list, limits, report });
        let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    tokio::spawn(async move {
                        let body = format!(
                            "[SANDBOX BLOCKED] too many connections through Warden's proxy at once (at most {})",
                            limits.max_connections
                        );
                        let reply = answer(503, "Service Unavailable", &body);
                        let _ = tokio::time::timeout(limits.header_timeout, stream.write_all(&reply)).await;
                    });
                    continue;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    serve(shared, stream).await;
                    drop(slot);
                });
            }
        });
        Ok(Proxy { task, socket: socket.to_owned() })
    }

    /// The socket it listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// What every connection of one proxy is served with.
struct Served {
    /// The server whose proxy it is.
    server: String,
    list: Allowlist,
    limits: Limits,
    /// Where refusals go.
    report: SandboxReport,
}

async fn serve(shared: Arc<Served>, mut client: UnixStream) {
    let (server, list, limits) = (&shared.server, &shared.list, shared.limits);
    let Ok(head) = tokio::time::timeout(limits.header_timeout, read_head(&mut client)).await else {
        let body = "[SANDBOX BLOCKED] the request head did not arrive in time";
        let _ =
            tokio::time::timeout(limits.header_timeout, client.write_all(&answer(408, "Request Timeout", body))).await;
        return;
    };
    let Some((head, extra)) = head else {
        let _ = client
            .write_all(&answer(400, "Bad Request", "[SANDBOX BLOCKED] the request head is missing or too large"))
            .await;
        return;
    };
    let target = match request::parse(&head) {
        Ok(target) => target,
        Err(why) => {
            let _ = client.write_all(&answer(400, "Bad Request", &format!("[SANDBOX BLOCKED] {why}"))).await;
            return;
        }
    };
    let checked = match list.refusal(&target.host, target.port) {
        Some(why) => Err(why),
        None => resolve::resolve(list, &target.host, target.port).await,
    };
    let address = match checked {
        Ok(address) => address,
        Err(why) => {
            let host = target.host.to_string();
            let message = format!(
                "[SANDBOX BLOCKED] Warden refused a connection from server '{server}' to {host}:{}: {why}. To allow it, add \"{host}:{}\" to servers.{server}.sandbox.network.allow.",
                target.port, target.port
            );
            shared.report.denied(Denial { server: server.clone(), host, port: target.port, reason: why });
            let _ = client.write_all(&answer(403, "Forbidden", &message)).await;
            return;
        }
    };
    let mut upstream = match tokio::time::timeout(limits.header_timeout, TcpStream::connect(address)).await {
        Ok(Ok(upstream)) => upstream,
        Err(_) => {
            let message = format!("cannot connect to {}:{} ({address}): timed out", target.host, target.port);
            let _ = client.write_all(&answer(502, "Bad Gateway", &message)).await;
            return;
        }
        Ok(Err(err)) => {
            let message = format!("cannot connect to {}:{} ({address}): {err}", target.host, target.port);
            let _ = client.write_all(&answer(502, "Bad Gateway", &message)).await;
            return;
        }
    };
    let sent = match &target.forward {
        None => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await,
        Some(head) => upstream.write_all(head).await,
    };
    if sent.is_err() || upstream.write_all(&extra).await.is_err() {
        return;
    }
    relay(client, upstream, limits.idle_timeout).await;
}

/// Copies both ways until both sides have finished, or nothing moved
/// either way for `idle`.
async fn relay(client: UnixStream, upstream: TcpStream, idle: Duration) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    let (mut up, mut down) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut client_open, mut upstream_open) = (true, true);
    while client_open || upstream_open {
        tokio::select! {
            read = client_read.read(&mut up), if client_open => match read {
                Ok(0) | Err(_) => {
                    client_open = false;
                    let _ = upstream_write.shutdown().await;
                }
                Ok(count) => if !matches!(tokio::time::timeout(idle, upstream_write.write_all(&up[..count])).await, Ok(Ok(()))) { return },
            },
            read = upstream_read.read(&mut down), if upstream_open => match read {
                Ok(0) | Err(_) => {
                    upstream_open = false;
                    let _ = client_write.shutdown().await;
                }
                Ok(count) => if !matches!(tokio::time::timeout(idle, client_write.write_all(&down[..count])).await, Ok(Ok(()))) { return },
            },
            () = tokio::time::sleep(idle) => return,
        }
    }
}

/// Reads up to the end of the head; returns it and whatever followed it.
async fn read_head(client: &mut UnixStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let read = client.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            let extra = buffer.split_off(end + 4);
            return Some((buffer, extra));
        }
        if buffer.len() > MAX_HEAD {
            return None;
        }
    }
}

fn answer(status: u16, reason: &str, body: &str) -> Vec<u8> {
    let blocked = if matches!(status, 502 | 503 | 408) { "" } else { "X-Proxy-Error: blocked-by-warden\r\n" };
    format!(
        "HTTP/1.1 {status} {reason}\r\n{blocked}Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
