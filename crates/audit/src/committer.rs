//! Group commit: whatever is queued is written together, with one write
//! and one durable write (or sync) for the whole batch.
//!
//! A caller hands over a record already serialised ([`Members`]) and waits
//! on a oneshot. A writer thread takes everything queued, gives the
//! records their `seq` and hashes in file order, appends them with one
//! `write`, makes them durable, then answers every waiter. Records queued
//! while a batch is being made durable go into the next one, so under load
//! one sync covers many calls, and a call alone pays exactly one. Callers
//! just answered get a short moment to come back and share the next batch
//! (see [`Batches`]).
//!
//! Two ways to make a batch durable:
//!
//! * **Journalled** (`fsync: always` where the sync journal could be set up,
//!   see [`crate::journal`]): a writer thread ([`WRITERS`]) takes
//!   everything queued, appends it to the log (no sync) and places its
//!   frame under one lock, then writes the frame outside it, so a record
//!   committed in place (below) can be appended meanwhile. Batches are
//!   answered in order, never before every earlier batch is durable too: a
//!   record is only acknowledged with the whole chain before it.
//!   A record whose call is the only request being served, on a
//!   single-threaded runtime (stdio), is committed the same way on the
//!   caller's own thread instead: nothing waits behind it there, and the
//!   hand-over to a writer thread and the wake-up back cost a sequential
//!   call about 80 µs on a VM (two wake-ups of an idle virtual CPU), more
//!   than half a journal write. Under load this would serialise the calls
//!   behind each write (measured: 16 calls in flight fell from ~24,000 to
//!   ~5,000 calls/s), so then the threads write.
//! * **Direct** (`fsync: always` without a journal): one thread writes and
//!   runs `fdatasync` itself.
//! * **Inline** (`fsync: never`): the caller writes its own line, under a
//!   lock. A `write` of one line takes a few microseconds; handing it to a
//!   thread and being woken for the answer cost more than that.

use std::collections::BTreeMap;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::chain::Members;
use crate::error::AuditError;
use crate::journal::{Device, Frame, Journal};
use crate::writer::Writer;
use warden_sync::lock;

/// The most records one batch takes, so waiters are answered in bounded
/// time even when records arrive faster than they are written.
const MAX_BATCH: usize = 4096;

/// Journalled writer threads. One: a second one, writing its own frame
/// while the first one's is under way, did not make the disk faster (a
/// write and a cache flush each, and the flushes queue), took batches of
/// one record as soon as they came, and had to be woken for each (measured
/// with 16 calls in flight, 8 alternating rounds: one thread did 9 % more
/// calls per second in every round). A disk whose flushes run side by side
/// may want more.
const WRITERS: usize = 1;

/// After a durable write slower than this, records go to the writer
/// threads: a disk that stalls (a network file system, a device busy with
/// another process's writeback) must not stall the runtime with it. The
/// next quick write, by a writer thread, brings them back.
const MAX_IN_PLACE: Duration = Duration::from_millis(20);

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

/// What the writer threads are told.
enum Message {
    /// A record to append.
    Record(Pending),
    /// The log is closing: each writer thread takes one, finishes its batch
    /// and stops.
    Close,
}

/// The writer threads and the queue to them. Dropping it lets them finish
/// what is queued and waits for them.
#[derive(Debug)]
pub(crate) struct Committer {
    queue: mpsc::Sender<Message>,
    threads: Vec<JoinHandle<()>>,
    /// The journalled writers' state, for the final sync.
    shared: Option<Arc<Shared>>,
    /// `fsync: never`: the writer, used on the caller's own thread.
    inline: Option<Mutex<Writer>>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Message::Record(_) => "Record",
            Message::Close => "Close",
        })
    }
}

impl Committer {
    /// Starts the thread that owns `writer`, or with a `journal` the
    /// [`WRITERS`] threads that share it.
    /// With `inline` (`fsync: never`), no thread: callers write themselves.
    pub(crate) fn start(writer: Writer, journal: Option<Journal>, inline: bool) -> Result<Committer, AuditError> {
        let (queue, incoming) = mpsc::channel();
        if inline {
            return Ok(Committer { queue, threads: Vec::new(), shared: None, inline: Some(Mutex::new(writer)) });
        }
        let spawn = |name: String, run: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name)
                .spawn(run)
                .map_err(|err| AuditError::Writer(format!("cannot start the writer thread: {err}")))
        };
        let Some(journal) = journal else {
            let thread = spawn("warden-audit".into(), Box::new(move || run_direct(writer, &incoming)))?;
            return Ok(Committer { queue, threads: vec![thread], shared: None, inline: None });
        };
        let shared = Arc::new(Shared {
            incoming: Mutex::new(incoming),
            files: Mutex::new(Files { writer, journal: Some(journal), next_batch: 0 }),
            done: Mutex::new(Done::default()),
            last_write_us: AtomicU64::new(0),
        });
        let mut committer = Committer { queue, threads: Vec::new(), shared: Some(shared.clone()), inline: None };
        for index in 0..WRITERS {
            let shared = shared.clone();
            committer.threads.push(spawn(format!("warden-audit-{index}"), Box::new(move || run_journalled(&shared)))?);
        }
        Ok(committer)
    }

    /// Appends `members` and returns its `seq` once it is written (and
    /// synced, as configured).
    pub(crate) async fn append(&self, members: Members) -> Result<u64, AuditError> {
        if let Some(writer) = &self.inline {
            let mut outcomes = write(&mut lock(writer), std::slice::from_ref(&members), &mut Vec::new());
            return outcomes.pop().unwrap_or_else(|| Err(unwritten()));
        }
        let (done, outcome) = oneshot::channel();
        let stopped = || AuditError::Writer("the writer thread has stopped".into());
        let pending = Pending { members, done };
        match self.shared.as_ref().filter(|shared| shared.commits_in_place()) {
            // Alone, the hand-over to a writer thread and the wake-up back
            // would cost about as much as the write itself.
            Some(shared) => {
                shared.commit(vec![pending]);
            }
            None => self.queue.send(Message::Record(pending)).map_err(|_| stopped())?,
        }
        outcome.await.map_err(|_| stopped())?
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Each thread ends once what was queued before its `Close` is written.
        for _ in &self.threads {
            let _ = self.queue.send(Message::Close);
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        // A clean stop leaves nothing in the journal for recovery to read.
        if let Some(shared) = self.shared.take() {
            let mut files = lock(&shared.files);
            let restarted = files.writer.sync_log().map_err(|err| err.to_string()).and_then(|()| {
                files.journal.as_mut().map_or(Ok(()), |journal| journal.restart().map_err(|err| err.to_string()))
            });
            if let Err(err) = restarted {
                tracing::warn!(error = %err, "audit log: the final sync failed");
            }
        }
    }
}

/// Appends `batch` with the writer (see [`write`]). Returns each waiter
/// with its outcome, and the bytes written.
fn append(writer: &mut Writer, mut batch: Vec<Pending>) -> (Vec<Waiter>, Vec<u8>) {
    let members: Vec<Members> = batch.iter_mut().map(|pending| std::mem::take(&mut pending.members)).collect();
    tracing::trace!(records = members.len(), "audit batch");
    let mut written = Vec::new();
    let mut outcomes = write(writer, &members, &mut written).into_iter();
    let waiters =
        batch.into_iter().map(|pending| (pending.done, outcomes.next().unwrap_or_else(|| Err(unwritten())))).collect();
    (waiters, written)
}

/// Appends `members` with the writer, putting the bytes written in
/// `written`; returns each record's outcome, in order, as far as the writer
/// got. A panic (a bug, not bad input) leaves the rest unreported, and the
/// file is reopened and rechecked before the next batch.
fn write(writer: &mut Writer, members: &[Members], written: &mut Vec<u8>) -> Vec<Result<u64, AuditError>> {
    let mut results = Vec::with_capacity(members.len());
    if catch_unwind(AssertUnwindSafe(|| writer.append(members, &mut results, written))).is_err() {
        writer.reset();
    }
    results
}

/// The outcome of a record the writer did not report on.
fn unwritten() -> AuditError {
    AuditError::Writer("the writer failed while writing this record".into())
}

/// A caller and what its record came to.
type Waiter = (oneshot::Sender<Result<u64, AuditError>>, Result<u64, AuditError>);

/// Answers waiters; `failed`, if given, overrides the records written.
fn answer(waiters: Vec<Waiter>, failed: Option<&AuditError>) {
    for (done, outcome) in waiters {
        let outcome = match (outcome, failed) {
            (Ok(_), Some(err)) => Err(err.again()),
            (outcome, _) => outcome,
        };
        // A caller that went away (its call was cancelled) needs no answer.
        let _ = done.send(outcome);
    }
}

/// What the journalled writers share (see the module docs).
#[derive(Debug)]
struct Shared {
    /// Records come in here; a writer that is free takes what is queued.
    incoming: Mutex<mpsc::Receiver<Message>>,
    /// The log and the journal: appending and placing a frame happen
    /// together, so frames are placed in the order of the log.
    files: Mutex<Files>,
    /// Batches written, by number, waiting for every earlier one.
    done: Mutex<Done>,
    /// How long the last frame's write took, in microseconds.
    last_write_us: AtomicU64,
}

#[derive(Debug)]
struct Files {
    writer: Writer,
    /// `None` once a journal write failed: from then on each batch is made
    /// durable by syncing the log itself.
    journal: Option<Journal>,
    next_batch: u64,
}

#[derive(Debug, Default)]
struct Done {
    /// The next batch to answer.
    next: u64,
    waiting: BTreeMap<u64, (Vec<Waiter>, Result<(), AuditError>)>,
    /// Batches below this number that were written after a batch that
    /// failed: their records chain onto lost ones, so they fail too.
    failed_through: u64,
}

/// How a batch is made durable once its lines are in the log.
enum Durability {
    /// Its frame, written by the writer that appended it.
    Frame(Device, Frame),
    /// Already settled: synced with the log, or nothing to sync.
    Settled(Result<(), AuditError>),
}

/// One journalled writer thread: takes what is queued, appends it, writes
/// its frame outside every lock (so a record committed in place can be
/// appended meanwhile), then answers whatever is durable, in order.
fn run_journalled(shared: &Shared) {
    let mut batches = Batches::default();
    loop {
        // Its own statement: a guard in a `while let` would be held for the
        // whole body.
        let Some(batch) = batches.next(&lock(&shared.incoming)) else { return };
        let count = batch.len();
        let took = shared.commit(batch);
        batches.answered(&lock(&shared.incoming), count, took);
    }
}

impl Shared {
    /// Appends `batch`, writes its frame and answers it once it and every
    /// batch before it are durable. Returns how long the write took.
    fn commit(&self, batch: Vec<Pending>) -> Duration {
        let (number, waiters, durability) = {
            let mut files = lock(&self.files);
            let (waiters, written) = append(&mut files.writer, batch);
            let number = files.next_batch;
            files.next_batch += 1;
            let durability = files.durability(&written);
            (number, waiters, durability)
        };
        let started = Instant::now();
        let outcome = match durability {
            Durability::Settled(outcome) => outcome,
            Durability::Frame(device, frame) => match device.write(&frame) {
                Ok(()) => Ok(()),
                Err(err) => lock(&self.files).journal_failed(&device, err),
            },
        };
        let took = started.elapsed();
        self.last_write_us.store(u64::try_from(took.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
        self.settle(number, waiters, outcome);
        took
    }

    /// Whether a record can be committed on the caller's thread (see
    /// [`Committer::append`]): no other request is being served, the caller
    /// runs on a single-threaded runtime (where blocking it holds up no other
    /// request), and the last durable write was quick.
    fn commits_in_place(&self) -> bool {
        warden_pipeline::serving() <= 1
            && self.last_write_us.load(Ordering::Relaxed) <= MAX_IN_PLACE.as_micros() as u64
            && tokio::runtime::Handle::try_current()
                .is_ok_and(|runtime| runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
    }
}

impl Files {
    /// How the batch whose lines are `written` becomes durable.
    fn durability(&mut self, written: &[u8]) -> Durability {
        if written.is_empty() {
            // Every record failed: nothing to sync.
            return Durability::Settled(Ok(()));
        }
        let Some(journal) = &mut self.journal else { return Durability::Settled(self.sync_log()) };
        if let Some(frame) = journal.place(written) {
            return Durability::Frame(journal.device(), frame);
        }
        // The journal is full: the log's own sync covers this batch and
        // every earlier one (frames still being written included), so the
        // journal can start over.
        let synced = self.sync_log();
        if synced.is_ok()
            && let Some(Err(err)) = self.journal.as_mut().map(Journal::restart)
        {
            tracing::error!(error = %err, "audit sync journal could not start over; syncing the log itself from now on");
            self.journal = None;
        }
        Durability::Settled(synced)
    }

    fn sync_log(&mut self) -> Result<(), AuditError> {
        let synced = self.writer.sync_log();
        if synced.is_err() {
            self.writer.reset();
        }
        synced
    }

    /// A journal write failed: the log itself is synced instead, which
    /// covers this batch; the journal is not used again.
    fn journal_failed(&mut self, device: &Device, err: io::Error) -> Result<(), AuditError> {
        let err = AuditError::io(device.path(), "write", err);
        tracing::error!(error = %err, "audit sync journal write failed; syncing the log itself from now on");
        self.journal = None;
        self.sync_log()
    }
}

impl Shared {
    /// Batch `number` is durable (or failed): answers it and every batch
    /// after it that is settled too, in order.
    fn settle(&self, number: u64, waiters: Vec<Waiter>, outcome: Result<(), AuditError>) {
        let mut done = lock(&self.done);
        if outcome.is_err() {
            // Later batches chain onto this one's records.
            done.failed_through = lock(&self.files).next_batch;
        }
        done.waiting.insert(number, (waiters, outcome));
        loop {
            let next = done.next;
            let Some((waiters, outcome)) = done.waiting.remove(&next) else { break };
            let failed = match &outcome {
                Err(err) => Some(err.again()),
                Ok(()) if next < done.failed_through => {
                    Some(AuditError::Writer("an earlier record of the chain could not be made durable".into()))
                }
                Ok(()) => None,
            };
            answer(waiters, failed.as_ref());
            done.next += 1;
        }
    }
}

/// The direct writer thread: a batch at a time until the log closes.
fn run_direct(mut writer: Writer, incoming: &mpsc::Receiver<Message>) {
    let mut batches = Batches::default();
    while let Some(batch) = batches.next(incoming) {
        let (started, count) = (Instant::now(), batch.len());
        let (waiters, _) = append(&mut writer, batch);
        let took = started.elapsed();
        answer(waiters, None);
        batches.answered(incoming, count, took);
    }
}

/// The batches a writer thread takes from the queue, one after another.
///
/// The callers a batch answered usually come back with their next record
/// soon, and if the next write went out without them they would each wait
/// for a whole extra write. So a batch waits for up to as many new records
/// as the last one answered, but never longer after its first record than
/// the last write took (at most [`MAX_LINGER`], and not at all after a
/// write quicker than [`MIN_LINGER`]): a call alone is never held back (its
/// own record is the one awaited). Records that came in while the last
/// batch was written are not those callers': they go first, and do not
/// count.
///
/// Measured with the journal and 16 calls in flight on stdio, whose one
/// runtime thread hands the records over a few microseconds apart: without
/// the wait the first record of each burst went alone. With it, 17 % less
/// CPU per call and a lower p99, the same calls per second.
#[derive(Default)]
struct Batches {
    /// What came in while the last batch was written.
    early: Vec<Pending>,
    /// How many callers the last batch answered.
    released: usize,
    /// How long the last batch took to write.
    last_write: Duration,
    /// This thread has taken its `Close`.
    closing: bool,
}

impl Batches {
    /// The next batch; `None` once the log is closing and nothing is left.
    fn next(&mut self, incoming: &mpsc::Receiver<Message>) -> Option<Vec<Pending>> {
        let mut batch = std::mem::take(&mut self.early);
        let linger = if self.last_write < MIN_LINGER { Duration::ZERO } else { self.last_write.min(MAX_LINGER) };
        let mut deadline = Instant::now() + linger;
        let mut returned = 0;
        while !self.closing && returned < self.released.max(1) && batch.len() < MAX_BATCH {
            let next = if batch.is_empty() {
                incoming.recv().ok()
            } else {
                incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()
            };
            match next {
                Some(Message::Record(pending)) => {
                    if batch.is_empty() {
                        // The wait runs from the first record: after an idle
                        // spell the callers come back later, but still together.
                        deadline = Instant::now() + linger;
                    }
                    batch.push(pending);
                    returned += 1;
                }
                Some(Message::Close) => self.closing = true,
                // recv: the queue is gone; recv_timeout: the wait is over.
                None if batch.is_empty() => self.closing = true,
                None => break,
            }
        }
        self.drain(incoming, &mut batch);
        (!batch.is_empty()).then_some(batch)
    }

    /// The last batch, of `released` records, is written and answered; it
    /// took `took` to write.
    fn answered(&mut self, incoming: &mpsc::Receiver<Message>, released: usize, took: Duration) {
        (self.released, self.last_write) = (released, took);
        let mut early = std::mem::take(&mut self.early);
        self.drain(incoming, &mut early);
        self.early = early;
    }

    /// Moves what is queued into `batch`, up to [`MAX_BATCH`].
    fn drain(&mut self, incoming: &mpsc::Receiver<Message>, batch: &mut Vec<Pending>) {
        while !self.closing && batch.len() < MAX_BATCH {
            match incoming.try_recv() {
                Ok(Message::Record(pending)) => batch.push(pending),
                // Each writer thread takes one `Close`: this one stops here.
                Ok(Message::Close) => self.closing = true,
                Err(_) => break,
            }
        }
    }
}
