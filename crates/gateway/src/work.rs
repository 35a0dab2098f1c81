//! A client request's work, handed to whoever waits for its answer.
//!
//! The HTTP front runs a request in the connection's own task, where its
//! answer is awaited: no task is spawned and no other thread woken for a
//! request that completes at once (`ping`, a refusal, a cached list). If
//! the work is dropped unfinished (the answer turned into an event stream
//! and the handler returned it, or the client hung up), it goes on in a
//! task of its own, so nothing a request started is ever cut off half-way.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// One request's work; see the module docs.
pub struct Work(Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

impl Work {
    /// The work of `future`.
    pub(crate) fn new(future: impl Future<Output = ()> + Send + 'static) -> Work {
        Work(Some(Box::pin(future)))
    }
}

impl Future for Work {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(future) = self.0.as_mut() else { return Poll::Ready(()) };
        let done = future.as_mut().poll(cx);
        if done.is_ready() {
            self.0 = None;
        }
        done
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if let Some(rest) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn work_dropped_unfinished_goes_on_in_its_own_task() {
        let finished = Arc::new(AtomicBool::new(false));
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let work = Work::new({
            let finished = finished.clone();
            async move {
                let _ = wait.await;
                finished.store(true, Ordering::SeqCst);
            }
        });
        let mut work = Box::pin(work);
        let first = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
        assert!(first.is_pending());
        drop(work);
        let _ = go.send(());
        for _ in 0..100 {
            if finished.load(Ordering::SeqCst) {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the dropped work never finished");
    }
}
