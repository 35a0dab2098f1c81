//! Group commit: one thread owns the file and writes whatever is queued
//! together, with one write and one sync for the whole batch.
//!
//! A caller hands over a record already serialised ([`Members`]) and waits
//! on a oneshot. The writer thread takes everything queued, gives the
//! records their `seq` and hashes in file order, appends them with one
//! `write` and one `fdatasync`, then answers every waiter. Records queued
//! while a sync is under way go into the next batch, so under load one
//! sync covers many calls, and a call alone pays exactly one. Callers just
//! answered get a short moment to come back and share the next sync (see
//! [`gather`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::chain::Members;
use crate::error::AuditError;
use crate::writer::Writer;

/// The most records one batch takes, so waiters are answered in bounded
/// time even when records arrive faster than they are written.
const MAX_BATCH: usize = 4096;

/// The longest a batch waits for the callers the last one answered.
const MAX_LINGER: Duration = Duration::from_millis(1);

/// Writes quicker than this are not worth waiting for callers to share
/// (with `fsync: never`, or a disk that syncs this fast): parking and
/// waking the thread for it would cost more than a write.
const MIN_LINGER: Duration = Duration::from_micros(50);

/// A record waiting for the writer, and where its outcome goes.
struct Pending {
    members: Members,
    done: oneshot::Sender<Result<u64, AuditError>>,
}

/// The writer thread and the queue to it. Dropping it lets the thread
/// finish what is queued and waits for it.
#[derive(Debug)]
pub(crate) struct Committer {
    queue: Option<mpsc::Sender<Pending>>,
    thread: Option<JoinHandle<()>>,
}

impl Committer {
    /// Starts the thread that owns `writer`.
    pub(crate) fn start(writer: Writer) -> Result<Committer, AuditError> {
        let (queue, incoming) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("warden-audit".into())
            .spawn(move || run(writer, &incoming))
            .map_err(|err| AuditError::Writer(format!("cannot start the writer thread: {err}")))?;
        Ok(Committer { queue: Some(queue), thread: Some(thread) })
    }

    /// Appends `members` and returns its `seq` once it is written (and
    /// synced, as configured).
    pub(crate) async fn append(&self, members: Members) -> Result<u64, AuditError> {
        let (done, outcome) = oneshot::channel();
        let stopped = || AuditError::Writer("the writer thread has stopped".into());
        let queue = self.queue.as_ref().ok_or_else(stopped)?;
        queue.send(Pending { members, done }).map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has written what is queued.
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The writer thread: a batch at a time until the queue closes.
fn run(mut writer: Writer, incoming: &mpsc::Receiver<Pending>) {
    let mut batch = Vec::new();
    let mut results = Vec::new();
    let mut released = 0;
    let mut last_write = Duration::ZERO;
    while gather(incoming, &mut batch, released, last_write) {
        let members: Vec<Members> = batch.iter_mut().map(|pending| std::mem::take(&mut pending.members)).collect();
        tracing::trace!(records = members.len(), "audit batch");
        let started = Instant::now();
        let appended = catch_unwind(AssertUnwindSafe(|| writer.append(&members, &mut results)));
        last_write = started.elapsed();
        if appended.is_err() {
            // A bug, not bad input: the records not reported written fail,
            // and the file is reopened and rechecked before the next batch.
            writer.reset();
        }
        let mut outcomes = results.drain(..);
        released = batch.len();
        for pending in batch.drain(..) {
            let outcome = outcomes
                .next()
                .unwrap_or_else(|| Err(AuditError::Writer("the writer failed while writing this record".into())));
            // A caller that went away (its call was cancelled) needs no answer.
            let _ = pending.done.send(outcome);
        }
        drop(outcomes);
        // What came in while this batch was written goes first next time.
        batch.extend(incoming.try_iter().take(MAX_BATCH));
    }
}

/// Fills `batch` (which holds what arrived before the last batch was
/// answered) for the next write; `false` once the queue is closed and empty.
///
/// The `released` callers just answered usually come back with their next
/// record soon, and if the write before went out without them they would
/// each wait for a whole extra write. So the batch waits for up to
/// `released` new records, but never longer than the last write took (at
/// most [`MAX_LINGER`], and not at all after a write quicker than
/// [`MIN_LINGER`]): a call alone is never held back (its own record is the
/// one awaited).
fn gather(incoming: &mpsc::Receiver<Pending>, batch: &mut Vec<Pending>, released: usize, last_write: Duration) -> bool {
    let linger = if last_write < MIN_LINGER { Duration::ZERO } else { last_write.min(MAX_LINGER) };
    let deadline = Instant::now() + linger;
    let mut returned = 0;
    while returned < released.max(1) && batch.len() < MAX_BATCH {
        let next = if batch.is_empty() {
            incoming.recv().ok()
        } else {
            incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()
        };
        let Some(pending) = next else { break };
        batch.push(pending);
        returned += 1;
    }
    let room = MAX_BATCH.saturating_sub(batch.len());
    batch.extend(incoming.try_iter().take(room));
    !batch.is_empty()
}
