//! The client sessions of the HTTP front, by `Mcp-Session-Id`.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::session::Session;

use super::streams::Streams;

/// One client session of the HTTP front.
pub(super) struct Entry {
    /// Its `Mcp-Session-Id`.
    pub id: String,
    /// The gateway session, with its own upstreams.
    pub session: Session,
    /// Where its messages go.
    pub streams: Arc<Streams>,
    /// `None` for the hub, else the server of a `/mcp/<server>` endpoint.
    pub scope: Option<String>,
    /// The token holder that opened it; only they may use it.
    pub owner: Option<Arc<str>>,
    /// Its profile.
    pub profile: Option<String>,
    last_seen: Mutex<Instant>,
}

impl Entry {
    /// A new entry, seen now.
    pub fn new(
        id: String,
        session: Session,
        streams: Arc<Streams>,
        scope: Option<String>,
        owner: Option<Arc<str>>,
        profile: Option<String>,
    ) -> Entry {
        Entry { id, session, streams, scope, owner, profile, last_seen: Mutex::new(Instant::now()) }
    }

    /// Whether it speaks the legacy HTTP+SSE transport (one stream, no
    /// `Mcp-Session-Id` header).
    pub fn legacy(&self) -> bool {
        self.streams.legacy()
    }

    /// Notes that the client was heard from.
    pub fn touch(&self) {
        *self.last_seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).elapsed()
    }
}

/// Every live session.
#[derive(Default)]
pub(super) struct Sessions {
    map: Mutex<HashMap<String, Arc<Entry>>>,
}

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        self.map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many sessions are live.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Adds a session unless there are `max` already.
    pub fn insert(&self, entry: Arc<Entry>, max: usize) -> Result<(), Arc<Entry>> {
        let mut map = self.lock();
        if map.len() >= max {
            return Err(entry);
        }
        map.insert(entry.id.clone(), entry);
        Ok(())
    }

    /// The session with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().get(id).cloned()
    }

    /// Forgets a session; the caller shuts it down.
    pub fn remove(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().remove(id)
    }

    /// Every session.
    pub fn all(&self) -> Vec<Arc<Entry>> {
        self.lock().values().cloned().collect()
    }

    /// Removes and returns the sessions idle for longer than `idle` with no
    /// open stream and no request waiting.
    pub fn take_idle(&self, idle: Duration) -> Vec<Arc<Entry>> {
        let mut map = self.lock();
        let idle: Vec<String> = map
            .values()
            .filter(|entry| entry.idle_for() > idle && !entry.streams.any_open())
            .map(|entry| entry.id.clone())
            .collect();
        idle.iter().filter_map(|id| map.remove(id)).collect()
    }
}

/// A fresh session id: 128 random bits in hex, from the kernel.
pub(super) fn new_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Ends a session: its streams close and its upstreams stop.
pub(super) async fn end(entry: Arc<Entry>) {
    entry.streams.close_all();
    entry.session.shutdown().await;
}
