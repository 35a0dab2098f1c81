//! A future that polls itself again when it wakes itself during its own
//! poll, instead of going back to the scheduler.
//!
//! A task that drives several futures at once (an HTTP connection and the
//! request it serves, a client connection and the answer awaited on it)
//! often wakes itself: one part hands the other a message through a channel
//! while the task is being polled. Tokio takes such a wake-up as a yield:
//! the task goes to the back of the run queue and, on the multi-threaded
//! runtime, another worker thread is woken to steal it, which on the HTTP
//! paths cost 2 to 4 `futex` or `eventfd` wake-ups per forwarded call
//! (counted with `strace` and `perf`), and the other worker's search and
//! sleep each time.
//!
//! [`repoll`] hands the future a waker of its own. A wake-up that comes
//! while the future is being polled (from itself, or from another thread at
//! that moment) makes it poll the future again at once, up to
//! [`MAX_REPOLLS`] polls in a row, after which the wake-up goes to the task
//! as usual, so a future that yields on purpose still yields. A wake-up at
//! any other time goes straight to the task's own waker.

#![warn(missing_docs)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use warden_sync::lock;

/// Polls in a row before a wake-up during the poll goes to the scheduler.
pub const MAX_REPOLLS: usize = 4;

/// Not being polled: a wake-up goes to the task's waker.
const IDLE: u8 = 0;
/// Being polled: a wake-up is noted.
const POLLING: u8 = 1;
/// Being polled, and woken meanwhile: the poll goes round again.
const WOKEN: u8 = 2;

/// Wraps `future` so that it polls itself again when woken during its own
/// poll; see the crate docs.
pub fn repoll<F: Future>(future: F) -> Repoll<F> {
    let shared = Arc::new(Shared { state: AtomicU8::new(IDLE), task: Mutex::new(None) });
    Repoll { waker: Waker::from(shared.clone()), shared, future }
}

pin_project_lite::pin_project! {
    /// The future [`repoll`] returns.
    pub struct Repoll<F> {
        #[pin]
        future: F,
        shared: Arc<Shared>,
        // The waker the wrapped future sees, made once.
        waker: Waker,
    }
}

/// What a [`Repoll`] and its waker share.
struct Shared {
    state: AtomicU8,
    /// The waker of the task polling the [`Repoll`].
    task: Mutex<Option<Waker>>,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match self.state.compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire) {
            // Being polled: the poll goes round again.
            Ok(_) | Err(WOKEN) => {}
            Err(_) => {
                if let Some(task) = lock(&self.task).as_ref() {
                    task.wake_by_ref();
                }
            }
        }
    }
}

impl<F: Future> Future for Repoll<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let mut this = self.project();
        {
            let mut task = lock(&this.shared.task);
            if !task.as_ref().is_some_and(|task| task.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        let mut inner = Context::from_waker(this.waker);
        for _ in 0..MAX_REPOLLS {
            this.shared.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = this.future.as_mut().poll(&mut inner) {
                this.shared.state.store(IDLE, Ordering::Release);
                return Poll::Ready(output);
            }
            // Not woken meanwhile: wait for a wake-up from outside.
            if this.shared.state.compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return Poll::Pending;
            }
        }
        // Woken every time: the scheduler runs others first.
        this.shared.state.store(IDLE, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests;
