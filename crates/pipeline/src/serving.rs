//! How many client requests this process is serving, across every session.
//!
//! A stage that could do blocking work in place when a request is alone
//! (the audit log's durable write: see `warden-audit`) reads it: with no
//! other request in flight, nothing waits behind the blocked thread, and
//! the hand-over to another thread and back costs more than the work.

use std::sync::atomic::{AtomicUsize, Ordering};

static SERVING: AtomicUsize = AtomicUsize::new(0);

/// Client requests being served right now, in this process.
pub fn serving() -> usize {
    SERVING.load(Ordering::Relaxed)
}

/// Counts one request as served while it lives.
#[derive(Debug)]
pub struct Serving(());

impl Serving {
    /// Starts counting a request.
    pub fn start() -> Serving {
        SERVING.fetch_add(1, Ordering::Relaxed);
        Serving(())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        SERVING.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_counts_while_it_is_served() {
        // Other tests in this process may be serving too: compare, not equate.
        let first = Serving::start();
        let second = Serving::start();
        assert!(serving() >= 2);
        drop((first, second));
    }
}
