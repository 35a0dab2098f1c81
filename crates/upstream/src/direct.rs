//! A stdio server's stdin, written by the requester itself when nothing
//! else is under way.
//!
//! Lines normally go through the connection's queue to the writer task,
//! which gathers what is queued into one write. A request that is the only
//! one in flight has nothing to be gathered with: handing it to the writer
//! costs a channel, a task wake-up and a copy for nothing. Such a request
//! is written to the pipe at once by the task that sends it, provided the
//! writer is idle (nothing queued, nothing half-written), so no line ever
//! overtakes another. What the pipe does not take at once is queued, and
//! the writer goes on from there.

use std::io::{self, IoSlice};
use std::sync::{Mutex, MutexGuard};

use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use crate::connection::Outgoing;

/// The server's stdin, shared by the writer task (which owns it) and the
/// requesters (which reach it weakly, so that it closes when the writer
/// ends).
pub(crate) struct DirectPipe {
    pipe: pipe::Sender,
    /// Whether the writer has lines to write: then every line is queued
    /// behind them. Set by whoever queues, cleared by the writer once it
    /// has written everything, under this lock.
    busy: Mutex<bool>,
}

impl DirectPipe {
    /// Shares `pipe`.
    pub(crate) fn new(pipe: pipe::Sender) -> DirectPipe {
        DirectPipe { pipe, busy: Mutex::new(false) }
    }

    /// The pipe itself, for the writer.
    pub(crate) fn pipe(&self) -> &pipe::Sender {
        &self.pipe
    }

    /// Whether the writer has lines to write. Whoever queues a line holds
    /// this lock while queueing and sets it.
    pub(crate) fn busy(&self) -> MutexGuard<'_, bool> {
        warden_sync::lock(&self.busy)
    }

    /// Writes `text` and its newline at once if the writer is idle, else
    /// queues it on `queue`. `Err` when the queue is closed (the writer
    /// has ended).
    pub(crate) fn send(&self, text: String, queue: &mpsc::UnboundedSender<Outgoing>) -> Result<(), ()> {
        let mut busy = self.busy();
        let item = if *busy {
            Outgoing::Line(text)
        } else {
            let line = [IoSlice::new(text.as_bytes()), IoSlice::new(b"\n")];
            match self.pipe.try_write_vectored(&line) {
                Ok(written) if written > text.len() => return Ok(()),
                Ok(written) => {
                    let mut rest = text.into_bytes().split_off(written);
                    rest.push(b'\n');
                    Outgoing::Rest(rest)
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => Outgoing::Line(text),
                // The server closed its stdin: the writer finds out too.
                Err(_) => Outgoing::Line(text),
            }
        };
        *busy = true;
        queue.send(item).map_err(drop)
    }
}
