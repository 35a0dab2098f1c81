//! One client session's state, in parts. Each part is owned by the session,
//! has its own locks and its impl in its own file; a handler borrows the
//! parts it needs.
//!
//! - [`ClientLink`]: the way to the client and what it said in `initialize`;
//! - [`Surface`]: the configuration, the pipeline hooks and the catalog of
//!   what upstreams offer;
//! - [`Upstreams`]: the session's servers and how they were opened;
//! - [`Replay`]: what the client set that a restarted upstream is told again;
//! - [`IdMaps`]: the ids and tokens Warden substituted.

mod client_link;
mod id_maps;
mod replay;
mod surface;
mod upstreams;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub(crate) use client_link::{ClientInit, ClientLink};
pub(crate) use id_maps::{IdMaps, InFlight, ServerRequest, TokenTarget, progress_token};
pub(crate) use replay::{Replay, level_of};
pub(crate) use surface::Surface;
pub(crate) use upstreams::Upstreams;

use warden_upstream::{Connection, Upstream, UpstreamError, UpstreamState};

use crate::catalog::Catalog;
use crate::pipeline::{Front, Observer};

/// Every session gets a distinct id, for logs and audit records.
static SESSIONS: AtomicU64 = AtomicU64::new(1);

/// Source of Warden-issued ids and tokens, unique across sessions because
/// sessions may share an upstream.
static ISSUED: AtomicU64 = AtomicU64::new(1);

/// A session's state: its parts, and what needs more than one of them.
pub(crate) struct SessionParts {
    /// The session's id, for logs and audit records.
    pub id: String,
    /// The client.
    pub link: ClientLink,
    /// What the client is shown, and under which configuration.
    pub surface: Surface,
    /// The servers.
    pub upstreams: Upstreams,
    /// What a restarted upstream is told again.
    pub replay: Replay,
    /// Substituted ids and tokens.
    pub maps: IdMaps,
    /// When and where it opened: held for its drop, which tells the observer.
    opened: Opened,
}

/// A session's start, for the observer: told when the session opens, and
/// again with how long it lasted when its parts are dropped.
pub(crate) struct Opened {
    at: Instant,
    front: Front,
    observer: Arc<dyn Observer>,
}

impl Opened {
    /// A session opening now at `front`.
    pub fn now(front: Front, observer: Arc<dyn Observer>) -> Opened {
        observer.session_opened(front);
        Opened { at: Instant::now(), front, observer }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.observer.session_closed(self.front, self.at.elapsed());
    }
}

impl SessionParts {
    /// The front the session came through.
    pub fn front(&self) -> Front {
        self.opened.front
    }

    /// A session's parts, with a fresh id and no upstream opened yet.
    pub fn new(link: ClientLink, surface: Surface, upstreams: Upstreams, opened: Opened) -> SessionParts {
        SessionParts {
            id: format!("s{}", SESSIONS.fetch_add(1, Ordering::Relaxed)),
            link,
            surface,
            upstreams,
            replay: Replay::default(),
            maps: IdMaps::default(),
            opened,
        }
    }

    /// A fresh number for an id or a token.
    pub fn next(&self) -> u64 {
        ISSUED.fetch_add(1, Ordering::Relaxed)
    }

    /// The catalog, to write what `connection` listed as upstream `index`'s;
    /// `None` when that connection no longer serves `index` (its server was
    /// removed, hidden or reopened while the list was read). Checked under
    /// the lock: a retirement publishes the new set of upstreams first and
    /// then clears the slot under this lock, so no stale list lands after it.
    pub fn catalog_for(
        &self,
        index: usize,
        connection: &Connection,
    ) -> Option<std::sync::RwLockWriteGuard<'_, Catalog>> {
        let catalog = self.surface.write_catalog();
        let upstreams = self.upstreams.slots.load();
        let upstream = upstreams.get(index)?;
        let serves = self.surface.config.load().servers.contains_key(upstream.name())
            && upstream.connection().is_some_and(|live| std::ptr::eq(&*live, connection));
        serves.then_some(catalog)
    }

    /// The upstreams of the servers configured now, with their indexes.
    pub fn live_upstreams(&self) -> Vec<(usize, Upstream)> {
        let config = self.surface.config.load();
        let upstreams = self.upstreams.slots.load();
        upstreams
            .iter()
            .enumerate()
            .filter(|(_, upstream)| config.servers.contains_key(upstream.name()))
            .map(|(index, upstream)| (index, upstream.clone()))
            .collect()
    }

    /// The connection of upstream `index`, waiting for it while it starts.
    pub async fn connection(&self, index: usize) -> Result<Arc<Connection>, UpstreamError> {
        // Every call asks: the ready case clones no `Upstream`.
        if let Some(connection) = self.upstreams.slots.load()[index].connection() {
            return Ok(connection);
        }
        let upstream = self.upstreams.get(index);
        // Boxed: only calls made while the upstream starts wait here.
        if matches!(upstream.state(), UpstreamState::Starting)
            && let Some(connection) = Box::pin(upstream.settled(self.surface.start_timeout())).await
        {
            return Ok(connection);
        }
        Err(upstream.unavailable())
    }

    /// For a shared server, the level it logs at for all its sessions.
    pub fn shared_log_level(&self, server: &str) -> Option<String> {
        let pool = self.upstreams.pool.as_ref().filter(|pool| pool.shares(server))?;
        pool.most_verbose_level(server)
    }

    /// The level to set on `connection` (JSON text): the shared one for a
    /// shared server, else the client's own.
    pub fn log_level_for(&self, connection: &Connection) -> Option<String> {
        self.shared_log_level(connection.name()).or_else(|| self.replay.level())
    }

    /// How long a 2026-07-28 request waiting for input stays parked.
    pub fn request_state_lifetime(&self) -> Duration {
        Duration::from_secs(self.surface.config.load().http.request_state_secs)
    }
}
