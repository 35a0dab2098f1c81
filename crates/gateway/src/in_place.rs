//! Futures made where they will live.
//!
//! A request's future is kilobytes: an `async fn`'s state holds every stage
//! it may await. Passed by value it is made on the stack and then copied
//! whole into its box (or into hyper's slot for a connection's current
//! request), a `memcpy` of its full size per request. Made by a closure
//! into memory already allocated, it is written there once: the optimizer
//! places the closure's result in the allocation.

use std::future::Future;
use std::pin::Pin;

/// The future `make` returns, boxed and pinned, made in its box.
pub(crate) fn boxed<F>(make: impl FnOnce() -> F) -> Pin<Box<F>>
where
    F: Future,
{
    Box::into_pin(Box::write(Box::new_uninit(), make()))
}
