//! A client request's work, handed to whoever waits for its answer.
//!
//! The HTTP front runs a request in the connection's own task, where its
//! answer is awaited: no task is spawned and no other thread woken for a
//! request that completes at once (`ping`, a refusal, a cached list). If
//! the work is dropped unfinished (the answer turned into an event stream
//! and the handler returned it, or the client hung up), it goes on in a
//! task of its own, so nothing a request started is ever cut off half-way.
//!
//! The work keeps the [`Origin`] it was started under and sets it around
//! each poll, wherever it is polled: wrapped in a scope future instead, the
//! request's future would be moved into it, kilobytes copied per request.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::origin::Origin;

/// One request's work; see the module docs.
pub struct Work {
    future: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    origin: Option<Origin>,
}

impl Work {
    /// The work of the future `make` returns, made in its box (see
    /// [`crate::in_place`]), run under `origin` when there is one.
    pub(crate) fn made<F: Future<Output = ()> + Send + 'static>(
        origin: Option<Origin>,
        make: impl FnOnce() -> F,
    ) -> Work {
        Work { future: Some(crate::in_place::boxed(make)), origin }
    }

    /// Runs the work where it is, as a task of its own would run it: a
    /// panic in it ends this request (whose answer then never comes, as
    /// for a task that panicked), not the task that polls it.
    pub(crate) fn run_isolated(&mut self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut *self).poll(cx))) {
            Ok(done) => done,
            Err(_) => {
                // A future that panicked is not polled again, nor finished elsewhere.
                self.future = None;
                Poll::Ready(())
            }
        })
    }
}

impl Future for Work {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let Some(future) = this.future.as_mut() else { return Poll::Ready(()) };
        let done = match &this.origin {
            Some(origin) => crate::origin::within(origin.clone(), || future.as_mut().poll(cx)),
            None => future.as_mut().poll(cx),
        };
        if done.is_ready() {
            this.future = None;
        }
        done
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if let Some(rest) = self.future.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            match self.origin.take() {
                Some(origin) => runtime.spawn(crate::origin::scope(origin, rest)),
                None => runtime.spawn(rest),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A panic in a work run in place ends that work alone: its poller
    /// goes on, and the work is not spawned again when dropped.
    #[tokio::test]
    async fn a_work_that_panics_in_place_ends_alone() {
        let mut work = Work::made(None, || async { panic!("a bug in one request") });
        work.run_isolated().await;
        assert!(work.future.is_none(), "the panicked future is let go");
        drop(work);
        let done = Arc::new(Mutex::new(false));
        let mut next = Work::made(None, || {
            let done = done.clone();
            async move { *done.lock().unwrap() = true }
        });
        next.run_isolated().await;
        assert!(*done.lock().unwrap(), "the next work runs to its end");
    }

    /// A work dropped unfinished finishes in a task of its own, under the
    /// origin it was started with, as it ran under it before.
    #[tokio::test]
    async fn work_dropped_unfinished_goes_on_in_its_own_task_under_its_origin() {
        let address = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));
        let origin = Origin { address: Some(address), trace: None };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let work = Work::made(Some(origin), || {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(crate::origin::client_address());
                let _ = wait.await;
                seen.lock().unwrap().push(crate::origin::client_address());
            }
        });
        let mut work = Box::pin(work);
        let first = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
        assert!(first.is_pending());
        assert_eq!(crate::origin::client_address(), None, "the origin is set only while the work is polled");
        drop(work);
        let _ = go.send(());
        for _ in 0..100 {
            if seen.lock().unwrap().len() == 2 {
                assert_eq!(*seen.lock().unwrap(), [Some(address), Some(address)]);
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the dropped work never finished");
    }
}
