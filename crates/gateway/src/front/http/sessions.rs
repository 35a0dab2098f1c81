//! The client sessions of the HTTP front, by `Mcp-Session-Id`.

use std::io::Read;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::http::HeaderValue;
use foldhash::HashMap;
use tokio::sync::OwnedSemaphorePermit;

use crate::session::Session;

use super::streams::Streams;

/// One client session of the HTTP front.
pub(super) struct Entry {
    /// Its `Mcp-Session-Id`.
    pub id: String,
    /// The same as a header value, made once for every answer.
    pub id_header: Option<HeaderValue>,
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
    /// Requests being handled for it right now (see [`Claim`]).
    claims: AtomicUsize,
    /// Its place and its share of the process budget, given back once its
    /// upstreams are gone.
    reservation: Mutex<Option<Reservation>>,
}

/// A session's place among `http.maxSessions` and its processes within
/// `http.processBudget`, given back when dropped.
pub(super) struct Reservation {
    _place: OwnedSemaphorePermit,
    processes: OwnedSemaphorePermit,
    /// The token's shares it holds (a session, its processes).
    _shares: Vec<super::tenants::Held>,
}

impl Reservation {
    /// A place and processes, reserved.
    pub fn new(place: OwnedSemaphorePermit, processes: OwnedSemaphorePermit) -> Reservation {
        Reservation { _place: place, processes, _shares: Vec::new() }
    }

    /// The same, also holding the token's `shares` until it ends.
    pub fn with_shares(mut self, shares: Vec<super::tenants::Held>) -> Reservation {
        self._shares = shares;
        self
    }
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
        Entry {
            id_header: HeaderValue::from_str(&id).ok(),
            id,
            session,
            streams,
            scope,
            owner,
            profile,
            last_seen: Mutex::new(Instant::now()),
            claims: AtomicUsize::new(0),
            reservation: Mutex::new(None),
        }
    }

    /// Makes its reservation cover `processes` processes (a reload gave it
    /// more servers), taking the difference from `budget`; false if the
    /// budget cannot. A reload that gives it fewer keeps the reservation
    /// until it ends: stopped processes are counted until they are gone.
    pub fn reserve_processes(&self, budget: &super::budget::ProcessBudget, processes: usize) -> bool {
        let mut reservation = warden_sync::lock(&self.reservation);
        let Some(reservation) = reservation.as_mut() else { return false };
        let held = reservation.processes.num_permits();
        if processes <= held {
            return true;
        }
        match budget.reserve(processes - held) {
            Some(more) => {
                reservation.processes.merge(more);
                true
            }
            None => false,
        }
    }

    /// Holds its place and processes until it ends.
    pub fn hold(&self, reservation: Reservation) {
        *warden_sync::lock(&self.reservation) = Some(reservation);
    }

    /// Whether it speaks the HTTP+SSE transport (2024-11-05: one stream,
    /// no `Mcp-Session-Id` header).
    pub fn is_sse_transport(&self) -> bool {
        self.streams.is_sse_transport()
    }

    /// Notes that the client was heard from.
    pub fn touch(&self) {
        *warden_sync::lock(&self.last_seen) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        warden_sync::lock(&self.last_seen).elapsed()
    }

    /// Whether nothing is going on: no request being handled, no event
    /// stream open, no POST waiting for its answer (a call in flight or
    /// waiting for approval). Only such a session may be ended to make room.
    fn idle(&self) -> bool {
        self.claims.load(Ordering::Acquire) == 0 && !self.streams.any_open()
    }

    /// Whether it has been idle for longer than its timeout: `streamed` for
    /// a session that has opened an event stream, `never_streamed` for one
    /// that never did (a client that called and walked away).
    fn expired(&self, streamed: Duration, never_streamed: Duration) -> bool {
        let timeout = if self.streams.ever_attached() { streamed } else { never_streamed };
        self.idle() && self.idle_for() > timeout
    }
}

/// A session being used by a request: it is not idle, so it is never ended
/// to make room while the request is handled.
pub(super) struct Claim(Arc<Entry>);

impl Deref for Claim {
    type Target = Arc<Entry>;
    fn deref(&self) -> &Arc<Entry> {
        &self.0
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.0.claims.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Every live session.
#[derive(Default)]
pub(super) struct Sessions {
    map: Mutex<HashMap<String, Arc<Entry>>>,
}

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        warden_sync::lock(&self.map)
    }

    /// How many sessions are live.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// The session with this id, claimed for a request (under the same lock
    /// that eviction takes, so a claimed session is never evicted).
    pub fn claim(&self, id: &str) -> Option<Claim> {
        let map = self.lock();
        let entry = map.get(id)?.clone();
        entry.claims.fetch_add(1, Ordering::AcqRel);
        entry.touch();
        Some(Claim(entry))
    }

    /// Removes an idle session to make room for a new one: of the token
    /// holding the most sessions first, its least recently used; `None` when
    /// every session is busy.
    pub fn take_least_recent_idle(&self) -> Option<Arc<Entry>> {
        let mut map = self.lock();
        let mut held: HashMap<Option<Arc<str>>, usize> = HashMap::default();
        for entry in map.values() {
            *held.entry(entry.owner.clone()).or_default() += 1;
        }
        let victim = map
            .values()
            .filter(|entry| entry.idle())
            .max_by_key(|entry| (held.get(&entry.owner).copied().unwrap_or(0), entry.idle_for()))?
            .id
            .clone();
        map.remove(&victim)
    }

    /// Removes the least recently used idle session of token `owner`, to
    /// make room within that token's share; `None` when all of its are busy.
    pub fn take_least_recent_idle_of(&self, owner: &Arc<str>) -> Option<Arc<Entry>> {
        let mut map = self.lock();
        let victim = map
            .values()
            .filter(|entry| entry.idle() && entry.owner.as_ref() == Some(owner))
            .max_by_key(|entry| entry.idle_for())?
            .id
            .clone();
        map.remove(&victim)
    }

    /// Adds a session (its place is reserved), claimed for the request
    /// that opens it.
    pub fn insert(&self, entry: Arc<Entry>) -> Claim {
        entry.claims.fetch_add(1, Ordering::AcqRel);
        self.lock().insert(entry.id.clone(), entry.clone());
        Claim(entry)
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

    /// Removes and returns the sessions idle for longer than their timeout:
    /// `streamed` for those that have opened an event stream,
    /// `never_streamed` for the others.
    pub fn take_expired(&self, streamed: Duration, never_streamed: Duration) -> Vec<Arc<Entry>> {
        let mut map = self.lock();
        let expired: Vec<String> = map
            .values()
            .filter(|entry| entry.expired(streamed, never_streamed))
            .map(|entry| entry.id.clone())
            .collect();
        expired.iter().filter_map(|id| map.remove(id)).collect()
    }
}

/// A fresh session id: 128 random bits in hex, from the kernel.
pub(super) fn new_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Ends a session: its streams close and its upstreams stop; then its place
/// and processes are given back.
pub(super) async fn end(entry: Arc<Entry>) {
    entry.streams.close_all();
    entry.session.shutdown().await;
    warden_sync::lock(&entry.reservation).take();
}
