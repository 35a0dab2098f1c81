//! Warden's stdout: every message for the stdio client, one per line.
//!
//! A writer task gathers queued messages into one write. The answer to the
//! only request being served has nothing to be gathered with: it is written
//! at once by the task that answers, while the writer is idle (see
//! [`DirectPipe`]), so no message overtakes another.

use std::io::IoSlice;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use warden_jsonrpc::{DirectPipe, SharedWrite, Unwritten};

use crate::outlet::{Outbound, Outlet};

/// Where the stdio client's messages go (cheap to clone).
#[derive(Clone)]
pub(super) struct ClientOutput {
    queue: mpsc::UnboundedSender<Unwritten>,
    /// Stdout, when it is a pipe or a socket.
    direct: Option<Arc<DirectPipe<Stdout>>>,
    /// Whether answers may be written at once: on one thread, where the
    /// client's next message is read only once the answering task has
    /// finished its bookkeeping and yields.
    at_once: bool,
}

/// The client stopped reading: stdout is closed.
#[derive(Debug)]
pub(super) struct Closed;

impl ClientOutput {
    /// The output to Warden's stdout, and the writer task's future, which
    /// ends when stdout closes or every output is dropped.
    pub fn stdout() -> (ClientOutput, impl Future<Output = ()> + Send + 'static) {
        let (queue, queued) = mpsc::unbounded_channel();
        let at_once = tokio::runtime::Handle::try_current()
            .is_ok_and(|runtime| runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
        match Stdout::open() {
            Ok(stdout) => {
                let direct = Arc::new(DirectPipe::new(stdout));
                let writer = Writer::Direct(direct.clone());
                (ClientOutput { queue, direct: Some(direct), at_once }, writer.run(queued))
            }
            Err(other) => (ClientOutput { queue, direct: None, at_once }, Writer::Plain(other).run(queued)),
        }
    }

    /// Queues `text` behind whatever is queued.
    pub fn send(&self, text: String) -> Result<(), Closed> {
        let queue = || self.queue.send(Unwritten::Line(text)).map_err(|_| Closed);
        match &self.direct {
            Some(direct) => direct.queue(queue),
            None => queue(),
        }
    }
}

impl Outlet for ClientOutput {
    fn deliver(&self, message: Outbound) {
        // The front is gone when this fails; the session ends with it.
        let _ = match &self.direct {
            Some(direct) if message.alone && self.at_once => {
                direct.send(message.text, |unwritten| self.queue.send(unwritten).map_err(|_| Closed))
            }
            _ => self.send(message.text),
        };
    }
}

/// The writer task's end of stdout.
enum Writer {
    Direct(Arc<DirectPipe<Stdout>>),
    /// A file or a terminal, through tokio's blocking writer.
    Plain(Box<dyn AsyncWrite + Unpin + Send>),
}

impl Writer {
    /// Writes what is queued, gathering whatever is there into one write.
    async fn run(mut self, mut queued: mpsc::UnboundedReceiver<Unwritten>) {
        let mut gathered = Vec::with_capacity(64 * 1024);
        while let Some(first) = queued.recv().await {
            let mut next = Some(first);
            while let Some(item) = next.take() {
                match item {
                    Unwritten::Line(text) => {
                        gathered.extend_from_slice(text.as_bytes());
                        gathered.push(b'\n');
                    }
                    Unwritten::Rest(bytes) => gathered.extend_from_slice(&bytes),
                }
                next = queued.try_recv().ok();
                if next.is_none() {
                    let written = match &mut self {
                        Writer::Direct(stdout) => stdout.write_all(&gathered).await,
                        Writer::Plain(out) => {
                            async {
                                out.write_all(&gathered).await?;
                                out.flush().await
                            }
                            .await
                        }
                    };
                    if written.is_err() {
                        return;
                    }
                    gathered.clear();
                    // One big message does not keep its room for good.
                    gathered.shrink_to(64 * 1024);
                    if let Writer::Direct(stdout) = &self {
                        next = stdout.next_or_idle(|| queued.try_recv().ok());
                    }
                }
            }
        }
    }
}

/// Stdout when the event loop can write it: a pipe (most clients) or a Unix
/// socket (Node's child processes: libuv's "pipes" are socket pairs).
pub(super) enum Stdout {
    Pipe(pipe::Sender),
    Socket(UnixStream),
}

impl Stdout {
    /// Stdout through the event loop, or, when it is anything else, tokio's
    /// blocking writer.
    fn open() -> Result<Stdout, Box<dyn AsyncWrite + Unpin + Send>> {
        let blocking = || -> Box<dyn AsyncWrite + Unpin + Send> { Box::new(tokio::io::stdout()) };
        match Stdio::of(std::io::stdout().as_fd()) {
            Stdio::Pipe(fd) => pipe::Sender::from_owned_fd(fd).map(Stdout::Pipe).map_err(|_| blocking()),
            Stdio::Socket(socket) => Ok(Stdout::Socket(socket)),
            Stdio::Other => Err(blocking()),
        }
    }
}

impl SharedWrite for Stdout {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
        match self {
            Stdout::Pipe(pipe) => pipe.try_write_vectored(bufs),
            Stdout::Socket(socket) => socket.try_write_vectored(bufs),
        }
    }

    fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stdout::Pipe(pipe) => pipe.try_write(buf),
            Stdout::Socket(socket) => socket.try_write(buf),
        }
    }

    async fn writable(&self) -> std::io::Result<()> {
        match self {
            Stdout::Pipe(pipe) => pipe.writable().await,
            Stdout::Socket(socket) => socket.writable().await,
        }
    }
}

/// What a standard stream is connected to: a pipe (its own copy of the
/// descriptor), a Unix socket (registered with the event loop), or anything
/// else.
pub(super) enum Stdio {
    Pipe(OwnedFd),
    Socket(UnixStream),
    Other,
}

impl Stdio {
    pub(super) fn of(fd: BorrowedFd<'_>) -> Stdio {
        let Ok(file) = fd.try_clone_to_owned().map(std::fs::File::from) else { return Stdio::Other };
        match file.metadata().map(|metadata| metadata.file_type()) {
            Ok(kind) if kind.is_fifo() => Stdio::Pipe(file.into()),
            Ok(kind) if kind.is_socket() => {
                let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
                match socket.set_nonblocking(true).and_then(|()| UnixStream::from_std(socket)) {
                    Ok(socket) => Stdio::Socket(socket),
                    Err(_) => Stdio::Other,
                }
            }
            _ => Stdio::Other,
        }
    }
}
