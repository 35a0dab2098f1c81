//! A session's servers: one slot per configured server, and what they were
//! opened with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use tokio::sync::OwnedSemaphorePermit;
use warden_sandbox::SandboxReport;
use warden_upstream::{EventSink, Upstream};

use crate::pool::Pool;

/// The upstreams of one session.
pub(crate) struct Upstreams {
    /// By index; indexes stay valid for the session's life: a removed
    /// server's slot keeps its stopped upstream until a server of that name
    /// comes back.
    pub slots: ArcSwap<Vec<Upstream>>,
    /// Shared upstreams and process caps, when the front has them.
    pub pool: Option<Arc<Pool>>,
    /// Where the sandboxes of its own upstreams report, and how each was
    /// started.
    pub sandbox: SandboxReport,
    /// This session's places under the process caps, by server, freed when
    /// the server is removed or at shutdown.
    pub permits: Mutex<HashMap<String, OwnedSemaphorePermit>>,
    /// Where the session's own upstreams deliver their events.
    pub sink: Arc<dyn EventSink>,
}

impl Upstreams {
    /// No upstream yet; their events will go to `sink`.
    pub fn new(pool: Option<Arc<Pool>>, sandbox: SandboxReport, sink: Arc<dyn EventSink>) -> Upstreams {
        Upstreams { slots: ArcSwap::from_pointee(Vec::new()), pool, sandbox, permits: Mutex::default(), sink }
    }

    /// Upstream `index` (a cheap handle).
    pub fn get(&self, index: usize) -> Upstream {
        self.slots.load()[index].clone()
    }

    /// Whether server `name` is the pool's shared one, not the session's own.
    pub fn is_shared(&self, name: &str) -> bool {
        self.pool.as_deref().is_some_and(|pool| pool.shares(name))
    }

    /// How server `name`'s sandbox last started it: a shared server's as
    /// the pool recorded it.
    pub fn sandbox_launch(&self, name: &str) -> Option<String> {
        match self.pool.as_deref() {
            Some(pool) if pool.shares(name) => pool.sandbox().launch_of(name),
            _ => self.sandbox.launch_of(name),
        }
    }
}
