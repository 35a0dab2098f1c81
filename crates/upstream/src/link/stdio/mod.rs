//! A child process speaking newline-delimited JSON-RPC on stdin and stdout.

mod launch;
mod pipes;
mod process;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use warden_jsonrpc::DirectPipe;

use super::Phase;
use crate::connection::{Connection, Outgoing};
use crate::dispatch::Dispatch;
use crate::error::UpstreamError;
use crate::stderr::{self, StderrTail};
pub(crate) use launch::{Prepared, prepare};
use process::Process;

/// A running upstream process with the tasks that move its bytes.
pub(crate) struct StdioLink {
    process: Process,
    reader: JoinHandle<()>,
    connection: Arc<Connection>,
    tail: Arc<StderrTail>,
    grace: Duration,
    /// The sandbox's egress proxy, stopped with the link.
    _proxy: Option<Box<warden_sandbox::launch::Held>>,
}

impl StdioLink {
    /// Starts the process: its stdin is fed from `outbox`, its stdout goes to
    /// `dispatch`, its stderr to `tail` and the log.
    pub fn open(
        mut command: Prepared,
        dispatch: Dispatch,
        outbox: mpsc::UnboundedReceiver<Outgoing>,
        tail: Arc<StderrTail>,
        grace: Duration,
    ) -> Result<StdioLink, String> {
        let (process, pipes) = Process::spawn(&command)
            .map_err(|err| format!("failed to start '{}': {err}", command.program.display()))?;
        let connection = dispatch.connection().clone();
        let stdin = pipes
            .stdin
            .into_owned_fd()
            .and_then(tokio::net::unix::pipe::Sender::from_owned_fd)
            .map_err(|err| format!("cannot write to the stdin of '{}': {err}", command.program.display()))?;
        let stdin = Arc::new(DirectPipe::new(stdin));
        // On one thread, the server's answer is read only once the requester
        // yields, after it has noted its request (which client request it
        // serves, for the server's own requests and cancellation). On many,
        // the reader could run first: there, requests go through the writer.
        if tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread {
            connection.set_direct(Arc::downgrade(&stdin));
        }
        tokio::spawn(pipes::write_all(outbox, stdin));
        tokio::spawn(stderr::pump(connection.name().into(), pipes.stderr, tail.clone()));
        let reader = tokio::spawn(pipes::read_all(pipes.stdout, dispatch, command.sandboxed.take()));
        let proxy = command.proxy.take().map(Box::new);
        Ok(StdioLink { process, reader, connection, tail, grace, _proxy: proxy })
    }

    /// The connection to the process.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// Resolves when the process is gone: while starting, when it exits;
    /// once ready, also when it closes its stdout.
    pub async fn ended(&mut self, phase: Phase) -> String {
        match phase {
            Phase::Starting => {
                let status = self.process.child.wait().await;
                format!("it exited during startup ({})", describe_exit(status))
            }
            Phase::Ready => tokio::select! {
                status = self.process.child.wait() => describe_exit(status),
                _ = &mut self.reader => "it closed its stdout".into(),
            },
        }
    }

    /// Fails what is pending with `reason`, closes stdin, waits the grace
    /// period, then kills the process group. Returns `reason` with the tail of
    /// the process's stderr.
    pub async fn close(mut self, reason: &str) -> String {
        // Let the last stderr lines arrive before quoting them.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let name = self.connection.name().to_owned();
        self.connection.close(UpstreamError::Lost { name, reason: self.tail.explain(reason) });
        self.stop_process().await;
        self.reader.abort();
        self.tail.explain(reason)
    }

    /// Waits the grace period for the process to exit after its stdin closed,
    /// then terminates and kills its process group.
    async fn stop_process(&mut self) {
        let process = &mut self.process;
        if tokio::time::timeout(self.grace, process.child.wait()).await.is_err() {
            process.signal_group(libc::SIGTERM);
            if tokio::time::timeout(Duration::from_millis(500), process.child.wait()).await.is_err() {
                process.signal_group(libc::SIGKILL);
                let _ = process.child.wait().await;
            }
        }
        // Helpers it left behind in its group go too.
        process.signal_group(libc::SIGKILL);
    }
}

fn describe_exit(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => format!("it exited ({status})"),
        Err(err) => format!("waiting for it failed: {err}"),
    }
}
