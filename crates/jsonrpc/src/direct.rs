//! A pipe or socket that lines are written to by a writer task, and at once
//! by their sender while that task is idle.
//!
//! Lines normally go through a queue to a writer task, which gathers what
//! is queued into one write. A line with nothing to be gathered with (a
//! request alone in flight, the answer to the only request being served)
//! gains nothing from the trip: it costs a channel, a task wake-up and a
//! copy. Such a line is written at once by the task that sends it, provided
//! the writer is idle (nothing queued, nothing half-written), so no line
//! ever overtakes another. What the pipe does not take at once is queued,
//! and the writer goes on from there.
//!
//! The queue is the owner's (its items carry more than lines); this type
//! keeps the one flag that orders the two ways in: whoever queues sets it,
//! under its lock, and the writer clears it, under the same lock, only
//! when the queue is empty.

use std::io::{self, IoSlice};
use std::sync::{Mutex, MutexGuard};

use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// What a pipe shared between a writer task and senders must do without
/// `&mut`.
pub trait SharedWrite: Send + Sync + 'static {
    /// Writes what it can of `bufs` now, or fails with `WouldBlock`.
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Writes what it can of `buf` now, or fails with `WouldBlock`.
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    /// Resolves when a write may succeed.
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
}

impl SharedWrite for pipe::Sender {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        pipe::Sender::try_write_vectored(self, bufs)
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        pipe::Sender::try_write(self, buf)
    }
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
        pipe::Sender::writable(self)
    }
}

impl SharedWrite for UnixStream {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        UnixStream::try_write_vectored(self, bufs)
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        UnixStream::try_write(self, buf)
    }
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
        UnixStream::writable(self)
    }
}

/// What a sender must queue after all: a whole line, or the end of one the
/// pipe took only part of (newline included).
#[derive(Debug)]
pub enum Unwritten {
    /// The line, without its newline: nothing of it was written.
    Line(String),
    /// The bytes the pipe did not take.
    Rest(Vec<u8>),
}

/// A pipe shared by its writer task and the senders (see the module docs).
#[derive(Debug)]
pub struct DirectPipe<W> {
    pipe: W,
    /// Whether the writer has lines to write: then every line is queued
    /// behind them.
    busy: Mutex<bool>,
}

impl<W: SharedWrite> DirectPipe<W> {
    /// Shares `pipe`.
    pub fn new(pipe: W) -> DirectPipe<W> {
        DirectPipe { pipe, busy: Mutex::new(false) }
    }

    /// Writes `text` and its newline at once if the writer is idle; what
    /// was not written goes to `queue`, called under the lock with the
    /// writer marked busy.
    pub fn send<E>(&self, text: String, queue: impl FnOnce(Unwritten) -> Result<(), E>) -> Result<(), E> {
        let mut busy = self.busy();
        let unwritten = if *busy {
            Unwritten::Line(text)
        } else {
            let line = [IoSlice::new(text.as_bytes()), IoSlice::new(b"\n")];
            match self.pipe.try_write_vectored(&line) {
                Ok(written) if written > text.len() => return Ok(()),
                Ok(written) => {
                    let mut rest = text.into_bytes().split_off(written);
                    rest.push(b'\n');
                    Unwritten::Rest(rest)
                }
                // Full, or closed by the reader: the writer waits, or finds out.
                Err(_) => Unwritten::Line(text),
            }
        };
        *busy = true;
        queue(unwritten)
    }

    /// Queues through `queue`, behind whatever the writer has, with the
    /// writer marked busy.
    pub fn queue<R>(&self, queue: impl FnOnce() -> R) -> R {
        let mut busy = self.busy();
        *busy = true;
        queue()
    }

    /// For the writer, once it has written everything it took: the next
    /// item `next` finds in the queue, or, when there is none, the writer
    /// is idle from now on (decided under the lock senders take).
    pub fn next_or_idle<T>(&self, next: impl FnOnce() -> Option<T>) -> Option<T> {
        let mut busy = self.busy();
        let item = next();
        *busy = item.is_some();
        item
    }

    /// For the writer: writes all of `bytes`.
    pub async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            self.pipe.writable().await?;
            match self.pipe.try_write(bytes) {
                Ok(written) => bytes = &bytes[written..],
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    fn busy(&self) -> MutexGuard<'_, bool> {
        warden_sync::lock(&self.busy)
    }
}
