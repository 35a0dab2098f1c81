//! The stdio front: one client on Warden's own stdin and stdout.

use std::sync::Arc;
use std::time::Duration;

use std::os::fd::AsFd;

use tokio::io::AsyncRead;
use tokio::net::unix::pipe;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use warden_config::Config;
use warden_jsonrpc::{Line, LineReader};
use warden_sandbox::SandboxReport;

use super::stdio_era::StdioEra;
use super::stdio_output::{ClientOutput, Stdio};
use crate::modern::LaneOutlet;
use crate::pipeline::Hooks;
use crate::session::Session;
use crate::work::Work;

/// Serves one client over stdin/stdout until stdin ends, stdout breaks or
/// Warden is told to terminate, then stops the upstreams. Their sandboxes
/// report to `sandbox`. `started` runs once the session exists (to
/// attach a config watcher, say); its error is logged, not fatal.
///
/// Stdin is read by one task, and no message is waited for before the
/// next read, so a slow request never delays another. That task stops
/// waiting for a line whenever something else is ready first; the reader
/// keeps what it had read of it (a read abandoned and restarted must not
/// lose a message, the hang seed 001 saw). Only protocol goes to stdout.
///
/// A request that arrives while no other is in the front's hands is run by
/// the front's own task, beside the read (a client that waits for each
/// answer, the usual case, costs no task, no spawn and no hand-off); one
/// that arrives meanwhile runs in a task of its own.
pub async fn serve_stdio<E: std::fmt::Display>(
    config: Arc<Config>,
    hooks: Hooks,
    sandbox: SandboxReport,
    started: impl FnOnce(&Session) -> Result<(), E>,
) -> std::io::Result<()> {
    let (to_client, writer) = ClientOutput::stdout();
    let outlet = LaneOutlet::with_fallback(to_client.clone());
    let session = Session::start(config.clone(), hooks, outlet.clone(), sandbox);
    let era = StdioEra::new(session.clone(), outlet, to_client);
    if let Err(err) = started(&session) {
        tracing::warn!("{err}");
    }
    let writer = tokio::spawn(writer);
    let lines = LineReader::new(stdin(), config.limits.max_message_bytes);
    // Clients stop servers with SIGTERM (or SIGINT in a terminal): the
    // upstreams must go too, not linger as orphans. The signals are awaited
    // in a task of their own: polling a signal's receiver beside every line
    // cost more than reading the line, and a oneshot's receiver is one load.
    let signalled = signalled()?;
    // The reading runs in a task, not in the runtime's own future: woken by
    // another task (the upstream's reader, answering the request it runs),
    // that future costs the runtime one more look at its events.
    let reading = tokio::spawn(read_client(lines, era, session.clone(), signalled, writer)).await;
    tracing::info!(session = session.id(), "client disconnected; stopping upstreams");
    // Stopped even if the reading panicked: no server outlives Warden.
    session.shutdown().await;
    let Reading { result, client_gone, writer, era } = reading.map_err(std::io::Error::other)?;
    drop(era);
    drop(session);
    if !client_gone {
        // Answers still queued (errors for requests the shutdown ended) get a moment to go out.
        let _ = tokio::time::timeout(Duration::from_millis(500), writer).await;
    }
    result
}

/// How the client's side ended, and what is left to close.
struct Reading {
    result: std::io::Result<()>,
    /// Stdout closed: nobody is listening any more.
    client_gone: bool,
    writer: JoinHandle<()>,
    era: StdioEra,
}

/// Reads the client's messages until stdin ends, stdout breaks or Warden
/// is told to terminate (see [`serve_stdio`]).
async fn read_client(
    mut lines: LineReader<Box<dyn AsyncRead + Unpin + Send>>,
    mut era: StdioEra,
    session: Session,
    mut signalled: oneshot::Receiver<()>,
    mut writer: JoinHandle<()>,
) -> Reading {
    let mut client_gone = false;
    let mut inline: Option<Work> = None;
    let result = loop {
        // The request run here is polled first. While a client keeps lines
        // coming, the read is pending only once the task's budget of work is
        // spent, and a request polled after it would then make no progress.
        let line = tokio::select! {
            biased;
            () = async { if let Some(work) = inline.as_mut() { work.run_isolated().await } }, if inline.is_some() => {
                inline = None;
                continue;
            }
            line = lines.next() => line,
            _ = &mut signalled => break Ok(()),
            _ = &mut writer => {
                client_gone = true;
                break Ok(());
            }
        };
        match line {
            Ok(Line::Text(text)) => match (era.handle(text), &inline) {
                (Some(work), None) => inline = Some(work),
                (Some(work), Some(_)) => drop(tokio::spawn(work)),
                (None, _) => {}
            },
            Ok(Line::TooLong { bytes, head, tail }) => session.reject_oversized(bytes, &head, &tail),
            Ok(Line::NotUtf8) => session.reject_not_utf8(),
            Ok(Line::Eof) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    // A request still running goes on in its own task (see `Work`), ended
    // with the others by the shutdown.
    drop(inline);
    Reading { result, client_gone, writer, era }
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
