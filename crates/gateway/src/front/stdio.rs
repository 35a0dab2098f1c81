//! The stdio front: one client on Warden's own stdin and stdout.

use std::sync::Arc;
use std::time::Duration;

use std::os::fd::AsFd;

use tokio::io::AsyncRead;
use tokio::net::unix::pipe;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;
use warden_config::Config;
use warden_jsonrpc::{Line, LineReader};
use warden_sandbox::SandboxReport;

use super::stdio_era::StdioEra;
use super::stdio_output::{ClientOutput, Stdio};
use crate::modern::LaneOutlet;
use crate::pipeline::Hooks;
use crate::session::Session;

/// Serves one client over stdin/stdout until stdin ends, stdout breaks or
/// Warden is told to terminate, then stops the upstreams. Their sandboxes
/// report to `sandbox`. `started` runs once the session exists (to
/// attach a config watcher, say); its error is logged, not fatal.
///
/// Stdin is read by one task that is never cancelled (a read that is
/// abandoned and restarted can lose a message, the hang seed 001 saw), and
/// every message is handed off without waiting, so a slow request never
/// delays the next read. Only protocol goes to stdout.
pub async fn serve_stdio<E: std::fmt::Display>(
    config: Arc<Config>,
    hooks: Hooks,
    sandbox: SandboxReport,
    started: impl FnOnce(&Session) -> Result<(), E>,
) -> std::io::Result<()> {
    let (to_client, writer) = ClientOutput::stdout();
    let outlet = LaneOutlet::with_fallback(to_client.clone());
    let session = Session::start(config.clone(), hooks, outlet.clone(), sandbox);
    let mut era = StdioEra::new(session.clone(), outlet, to_client);
    if let Err(err) = started(&session) {
        tracing::warn!("{err}");
    }
    let mut writer = tokio::spawn(writer);
    let mut lines = LineReader::new(stdin(), config.limits.max_message_bytes);
    let mut client_gone = false;
    // Clients stop servers with SIGTERM (or SIGINT in a terminal): the
    // upstreams must go too, not linger as orphans. The signals are awaited
    // in a task of their own: polling a signal's receiver beside every line
    // cost more than reading the line, and a oneshot's receiver is one load.
    let mut signalled = signalled()?;
    let result = loop {
        // A line that is there is taken before anything else is polled.
        let line = tokio::select! {
            biased;
            line = lines.next() => line,
            _ = &mut signalled => break Ok(()),
            _ = &mut writer => {
                // Stdout closed: nobody is listening any more.
                client_gone = true;
                break Ok(());
            }
        };
        match line {
            Ok(Line::Text(text)) => era.handle(text),
            Ok(Line::TooLong { bytes, head, tail }) => session.reject_oversized(bytes, &head, &tail),
            Ok(Line::NotUtf8) => session.reject_not_utf8(),
            Ok(Line::Eof) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    tracing::info!(session = session.id(), "client disconnected; stopping upstreams");
    session.shutdown().await;
    drop(era);
    drop(session);
    if !client_gone {
        // Answers still queued (errors for requests the shutdown ended) get a moment to go out.
        let _ = tokio::time::timeout(Duration::from_millis(500), writer).await;
    }
    result
}

/// Resolves when Warden gets SIGTERM or SIGINT (a task that waits for
/// either; it ends with the runtime).
fn signalled() -> std::io::Result<oneshot::Receiver<()>> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let (tell, told) = oneshot::channel();
    tokio::spawn(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
        let _ = tell.send(());
    });
    Ok(told)
}

/// Stdin as an async stream. MCP clients start servers with a pipe (most)
/// or a Unix socket (Node's child processes: libuv's "pipes" are socket
/// pairs): either is read through the event loop, without a thread hop per
/// read. Anything else (a file, a terminal) goes through tokio's blocking
/// reader.
fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
    let blocking = || -> Box<dyn AsyncRead + Unpin + Send> { Box::new(tokio::io::stdin()) };
    match Stdio::of(std::io::stdin().as_fd()) {
        Stdio::Pipe(fd) => pipe::Receiver::from_owned_fd(fd).map_or_else(|_| blocking(), |pipe| Box::new(pipe)),
        Stdio::Socket(socket) => Box::new(socket),
        Stdio::Other => blocking(),
    }
}
