//! A bare HTTP-to-stdio bridge on hyper: one server process behind it, every
//! POST body written to its stdin as a line, and the line that answers the
//! request's id sent back as the HTTP answer (notifications get 202). It
//! does the least a gateway's HTTP front over a stdio server can do (no
//! sessions, no checks, nothing rewritten), so Warden's CPU per call over
//! HTTP is measured against it: the floor, not a peer. One client session
//! only: request ids from several would collide.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

/// Requests waiting for their answer line, by id (JSON text).
type Waiting = Arc<Mutex<HashMap<String, oneshot::Sender<String>>>>;

/// What the bridge reads of a message: whether it has an id and a method.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
}

/// Starts `command`, then serves on `addr` until the process is killed.
pub async fn serve(addr: SocketAddr, command: &[String]) -> anyhow::Result<()> {
    let (program, args) = command.split_first().context("no command to bridge to")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the command's pipes were not opened");
    };
    let waiting = Waiting::default();
    tokio::spawn(answers(stdout, waiting.clone()));
    let stdin = Arc::new(tokio::sync::Mutex::new(stdin));
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let (stdin, waiting) = (stdin.clone(), waiting.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let (stdin, waiting) = (stdin.clone(), waiting.clone());
                async move { Ok::<_, Infallible>(pass(request, &stdin, &waiting).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}

/// Hands each answer line the server writes to the request it answers;
/// anything else (its notifications and requests) is dropped.
async fn answers(stdout: ChildStdout, waiting: Waiting) {
    let mut lines = BufReader::new(stdout).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(Envelope { id: Some(id), method: None }) = serde_json::from_str::<Envelope<'_>>(&line) else {
            continue;
        };
        let sender = warden_sync::lock(&waiting).remove(id.get());
        if let Some(sender) = sender {
            let _ = sender.send(line);
        }
    }
}

/// Writes one message to the server and, for a request, waits for its answer.
async fn pass(
    request: Request<Incoming>,
    stdin: &tokio::sync::Mutex<ChildStdin>,
    waiting: &Waiting,
) -> Response<Full<Bytes>> {
    // The client ends its session: there is none to end here.
    if request.method() == Method::DELETE {
        return status(StatusCode::OK);
    }
    let Ok(body) = request.into_body().collect().await.map(|body| body.to_bytes()) else {
        return status(StatusCode::BAD_REQUEST);
    };
    let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(&body) else { return status(StatusCode::BAD_REQUEST) };
    let initialize = envelope.method == Some("initialize");
    let answer = match envelope.id.filter(|_| envelope.method.is_some()) {
        Some(id) => {
            let (sender, receiver) = oneshot::channel();
            warden_sync::lock(waiting).insert(id.get().to_owned(), sender);
            Some(receiver)
        }
        None => None,
    };
    let mut line = Vec::with_capacity(body.len() + 1);
    line.extend_from_slice(&body);
    line.push(b'\n');
    if stdin.lock().await.write_all(&line).await.is_err() {
        return status(StatusCode::BAD_GATEWAY);
    }
    let Some(answer) = answer else { return status(StatusCode::ACCEPTED) };
    let Ok(text) = answer.await else { return status(StatusCode::BAD_GATEWAY) };
    let mut response = Response::new(Full::new(Bytes::from(text)));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if initialize {
        response.headers_mut().insert("mcp-session-id", HeaderValue::from_static("bare"));
    }
    response
}

/// An answer with `code` and no body.
fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}
