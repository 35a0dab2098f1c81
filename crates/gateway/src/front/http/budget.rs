//! The process budget: how many server processes the sessions' own
//! upstreams may hold at once, whatever the number of sessions.
//!
//! A session reserves its processes when it opens and gives them back once
//! they are gone (see [`sessions::end`](super::sessions::end)), so the count
//! of live processes never exceeds the budget, even while evicted sessions
//! are still stopping theirs.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use warden_config::{Config, Transport};

use crate::pool::Pool;

/// The process budget of one front.
pub(super) struct ProcessBudget {
    permits: Arc<Semaphore>,
    total: usize,
}

impl ProcessBudget {
    /// A budget of `total` processes.
    pub fn new(total: usize) -> ProcessBudget {
        ProcessBudget { permits: Arc::new(Semaphore::new(total)), total }
    }

    /// Reserves `count` processes, if that many are free.
    pub fn reserve(&self, count: usize) -> Option<OwnedSemaphorePermit> {
        let count = u32::try_from(count).ok()?;
        self.permits.clone().try_acquire_many_owned(count).ok()
    }

    /// The budget.
    pub fn total(&self) -> usize {
        self.total
    }

    /// How many processes are reserved now.
    pub fn in_use(&self) -> usize {
        self.total.saturating_sub(self.permits.available_permits())
    }
}

/// How many processes of its own a session of `config` starts: its stdio
/// servers, less those the pool shares.
pub(super) fn processes_of(config: &Config, pool: &Pool) -> usize {
    config
        .servers
        .iter()
        .filter(|(name, server)| matches!(server.transport, Transport::Stdio { .. }) && !pool.shares(name))
        .count()
}
