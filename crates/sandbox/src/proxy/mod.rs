//! The egress proxy: one per sandboxed server, on a Unix socket bound into
//! its sandbox. It speaks HTTP `CONNECT` and absolute-URI HTTP, enforces the
//! server's allowlist, resolves names itself and dials only checked addresses.

mod allow;
mod request;
mod resolve;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use allow::{Allowlist, Host};
/// Public for the fuzz target: the proxy reads every request head with it.
pub use request::{Target, parse as parse_request};
pub use resolve::is_internal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::SandboxError;
use crate::report::{self, Denial};

/// The largest request head accepted.
const MAX_HEAD: usize = 16 * 1024;

/// A running proxy; dropping it stops it and removes its socket.
#[derive(Debug)]
pub struct Proxy {
    task: tokio::task::JoinHandle<()>,
    socket: PathBuf,
}

impl Proxy {
    /// Listens on `socket` for server `server`'s connections. Must be called
    /// within a Tokio runtime.
    pub fn start(server: &str, list: Allowlist, socket: &Path) -> Result<Proxy, SandboxError> {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)
            .map_err(|err| SandboxError::io(format!("cannot listen on {}", socket.display()), err))?;
        let shared = Arc::new((server.to_owned(), list));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(shared.clone(), stream));
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

async fn serve(shared: Arc<(String, Allowlist)>, mut client: UnixStream) {
    let (server, list) = (&shared.0, &shared.1);
    let Some((head, extra)) = read_head(&mut client).await else {
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
            report::denied(Denial { server: server.clone(), host, port: target.port, reason: why });
            let _ = client.write_all(&answer(403, "Forbidden", &message)).await;
            return;
        }
    };
    let mut upstream = match TcpStream::connect(address).await {
        Ok(upstream) => upstream,
        Err(err) => {
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
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
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
    let blocked = if status == 502 { "" } else { "X-Proxy-Error: blocked-by-warden\r\n" };
    format!(
        "HTTP/1.1 {status} {reason}\r\n{blocked}Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
