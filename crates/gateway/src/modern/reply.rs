//! What a modern request gets back, and what dropping it undoes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::task::Poll;

use futures_util::task::AtomicWaker;
use warden_sync::lock;

use crate::work::Work;

/// One message of a modern request's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyMessage {
    /// A notification about the request (progress, a log message, a change
    /// on a listen stream).
    Note(String),
    /// The final message: the answer, or `input_required`.
    Last(String),
}

/// What a modern request gets back: notifications, then one final message
/// (a listen stream: notifications until it is dropped). Dropping it before
/// the final message cancels the request.
///
/// It carries the request's [`Work`]: awaiting the reply runs it, in the
/// caller's task (no task spawned for a call answered at once); dropped
/// unfinished, it goes on in a task of its own.
pub struct Reply {
    pub(super) pieces: ReplyReceiver,
    pub(super) work: Option<Work>,
    /// Dropped with the reply: undoes what an unfinished request leaves
    /// behind.
    pub(super) _undo: Option<DropCancel>,
}

impl Reply {
    /// A reply on `pieces`, with the request's `work` and what undoes it
    /// when dropped unfinished.
    pub(super) fn new(pieces: ReplyReceiver, work: Option<Work>, undo: Option<DropCancel>) -> Reply {
        Reply { pieces, work, _undo: undo }
    }

    /// The next message; `None` once the answer was given.
    pub async fn next(&mut self) -> Option<ReplyMessage> {
        let Reply { pieces, work, .. } = self;
        if let Some(running) = work {
            tokio::select! {
                biased;
                piece = pieces.recv() => return piece,
                () = running => *work = None,
            }
        }
        pieces.recv().await
    }

    /// A reply that is only `text`.
    pub(super) fn done(text: String) -> Reply {
        let (to_client, pieces) = channel();
        let _ = to_client.send(ReplyMessage::Last(text));
        Reply::new(pieces, None, None)
    }
}

/// What a lane undoes when a reply is dropped before its end (a trait, so
/// that a reply needs nothing of the lane's).
pub(super) trait Canceller: Send + Sync {
    /// Cancels round `generation` of request `key` upstream, if it still runs.
    fn cancel_round(self: Arc<Self>, key: u64, generation: u64);
    /// Closes listen stream `key` and drops its subscriptions.
    fn close_listen(self: Arc<Self>, key: u64);
}

/// Cancels what a dropped reply leaves behind.
pub(super) enum DropCancel {
    /// A request's round: cancelled upstream if still running.
    Round { lane: Weak<dyn Canceller>, key: u64, generation: u64 },
    /// A listen stream: closed, and its subscriptions dropped.
    Listen { lane: Weak<dyn Canceller>, key: u64 },
}

impl Drop for DropCancel {
    fn drop(&mut self) {
        match self {
            DropCancel::Round { lane, key, generation } => {
                if let Some(lane) = lane.upgrade() {
                    lane.cancel_round(*key, *generation);
                }
            }
            DropCancel::Listen { lane, key } => {
                if let Some(lane) = lane.upgrade() {
                    lane.close_listen(*key);
                }
            }
        }
    }
}

/// A channel for one reply's messages: one allocation, where tokio's
/// unbounded channel takes two (its state and a first block), and the
/// usual reply is one message.
pub(super) fn channel() -> (ReplySender, ReplyReceiver) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue { first: None, rest: VecDeque::new(), senders: 1, receiving: true }),
        receiver: AtomicWaker::new(),
    });
    (ReplySender(shared.clone()), ReplyReceiver(shared))
}

struct Shared {
    queue: Mutex<Queue>,
    /// The receiving task, woken when a message comes or the last sender
    /// goes. One receiver: a waker slot, not `Notify`'s list of waiters
    /// (with the wake-up a sender's drop no longer makes, some 300
    /// instructions less a 2026-07-28 call, by callgrind).
    receiver: AtomicWaker,
}

struct Queue {
    /// The oldest message, kept inline: a reply of one message allocates
    /// nothing more.
    first: Option<ReplyMessage>,
    rest: VecDeque<ReplyMessage>,
    senders: usize,
    receiving: bool,
}

/// Sends a reply's messages (clones send to the same reply).
pub(super) struct ReplySender(Arc<Shared>);

impl ReplySender {
    /// Queues `message`; gives it back when the reply was dropped.
    pub fn send(&self, message: ReplyMessage) -> Result<(), ReplyMessage> {
        {
            let mut queue = lock(&self.0.queue);
            if !queue.receiving {
                return Err(message);
            }
            if queue.first.is_none() && queue.rest.is_empty() {
                queue.first = Some(message);
            } else {
                queue.rest.push_back(message);
            }
        }
        self.0.receiver.wake();
        Ok(())
    }
}

impl Clone for ReplySender {
    fn clone(&self) -> ReplySender {
        lock(&self.0.queue).senders += 1;
        ReplySender(self.0.clone())
    }
}

impl Drop for ReplySender {
    fn drop(&mut self) {
        let waiting = {
            let mut queue = lock(&self.0.queue);
            queue.senders -= 1;
            // Only the last sender's going is news, and with a message
            // queued the receiver takes it and then sees the senders gone
            // without waiting: no wake-up needed.
            queue.senders == 0 && queue.first.is_none() && queue.rest.is_empty()
        };
        if waiting {
            self.0.receiver.wake();
        }
    }
}

/// Receives a reply's messages, in order.
pub(super) struct ReplyReceiver(Arc<Shared>);

impl ReplyReceiver {
    /// The next message; `None` once every sender is gone and nothing is
    /// left. Cancel-safe: the messages wait in the queue, not in a wake-up.
    pub async fn recv(&mut self) -> Option<ReplyMessage> {
        std::future::poll_fn(|context| {
            // Registered before the queue is looked at: a message queued
            // after the look wakes this task.
            self.0.receiver.register(context.waker());
            let mut queue = lock(&self.0.queue);
            if let Some(message) = queue.first.take().or_else(|| queue.rest.pop_front()) {
                return Poll::Ready(Some(message));
            }
            if queue.senders == 0 {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await
    }
}

impl Drop for ReplyReceiver {
    fn drop(&mut self) {
        lock(&self.0.queue).receiving = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_arrive_in_order_and_the_end_when_senders_go() {
        let (sender, mut receiver) = channel();
        let other = sender.clone();
        for n in 0..3 {
            sender.send(ReplyMessage::Note(n.to_string())).expect("sent");
        }
        assert_eq!(receiver.recv().await, Some(ReplyMessage::Note("0".into())));
        other.send(ReplyMessage::Last("last".into())).expect("sent");
        drop((sender, other));
        assert_eq!(receiver.recv().await, Some(ReplyMessage::Note("1".into())));
        assert_eq!(receiver.recv().await, Some(ReplyMessage::Note("2".into())));
        assert_eq!(receiver.recv().await, Some(ReplyMessage::Last("last".into())));
        assert_eq!(receiver.recv().await, None);
    }

    /// The last sender's going wakes a receiver that waits on an empty
    /// queue; one that goes with a message queued leaves it to be taken.
    #[tokio::test]
    async fn a_waiting_receiver_learns_that_the_senders_are_gone() {
        let (sender, mut receiver) = channel();
        let other = sender.clone();
        let waiting = tokio::spawn(async move { receiver.recv().await });
        tokio::task::yield_now().await;
        drop(sender);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a sender is left");
        drop(other);
        // Bounded: a lost wake-up fails the test instead of hanging it.
        let woken = tokio::time::timeout(std::time::Duration::from_secs(60), waiting).await;
        assert_eq!(woken.expect("woken").expect("joined"), None);

        let (sender, mut receiver) = channel();
        sender.send(ReplyMessage::Last("x".into())).expect("sent");
        drop(sender);
        assert_eq!(receiver.recv().await, Some(ReplyMessage::Last("x".into())));
        assert_eq!(receiver.recv().await, None);
    }

    /// Messages sent from other threads while the receiver waits all
    /// arrive, in each sender's order, and then the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn messages_from_other_threads_all_arrive() {
        let (sender, mut receiver) = channel();
        let threads: Vec<_> = (0..4)
            .map(|thread| {
                let sender = sender.clone();
                std::thread::spawn(move || {
                    for n in 0..500 {
                        sender.send(ReplyMessage::Note(format!("{thread}:{n}"))).expect("sent");
                    }
                })
            })
            .collect();
        drop(sender);
        let mut next = [0; 4];
        while let Some(ReplyMessage::Note(note)) = receiver.recv().await {
            let (thread, n) = note.split_once(':').expect("thread:n");
            let thread: usize = thread.parse().expect("thread");
            assert_eq!(n.parse::<usize>().expect("n"), next[thread], "in order");
            next[thread] += 1;
        }
        assert_eq!(next, [500; 4]);
        for thread in threads {
            thread.join().expect("joined");
        }
    }

    #[tokio::test]
    async fn a_waiting_receiver_is_woken_and_a_dropped_one_refuses() {
        let (sender, mut receiver) = channel();
        let waiting = tokio::spawn(async move { (receiver.recv().await, receiver) });
        tokio::task::yield_now().await;
        sender.send(ReplyMessage::Last("x".into())).expect("sent");
        let (first, receiver) = waiting.await.expect("joined");
        assert_eq!(first, Some(ReplyMessage::Last("x".into())));
        drop(receiver);
        assert_eq!(sender.send(ReplyMessage::Note("late".into())), Err(ReplyMessage::Note("late".into())));
    }
}
