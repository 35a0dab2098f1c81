//! The client connections of the HTTP front: a cap in total and one per
//! client address, and which connection gives way when a new one needs room.
//!
//! A connection is *idle* while no request is being worked on: waiting for
//! (or half-way through) a request's headers or body, or between keep-alive
//! requests. It is busy from the moment a request's body has arrived until
//! its response (an event stream included) is done. When the front is full,
//! the connection idle the longest is closed to let a new one in, so
//! half-open connections and bodies dripping in can never lock clients out;
//! only when every connection is busy does a new one wait for a place (until
//! its header timeout).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Every open client connection of one front.
pub(super) struct Connections {
    inner: Mutex<HashMap<u64, Arc<Connection>>>,
    next: AtomicU64,
    /// Signalled whenever a connection goes.
    freed: Notify,
    max_total: usize,
    max_per_address: usize,
    /// When the front started: the clock of [`Connection::last_active`].
    epoch: Instant,
}

/// One client connection.
pub(super) struct Connection {
    address: IpAddr,
    /// Requests being handled on it.
    active: AtomicUsize,
    /// When it last started or finished a request, in ms since the epoch.
    last_active: AtomicU64,
    /// Set when it must give way; its task then drops it.
    closing: AtomicBool,
    close: Notify,
    epoch: Instant,
}

/// A connection's place in the table, given back when dropped.
pub(super) struct Place {
    id: u64,
    connections: Arc<Connections>,
    /// The connection.
    pub connection: Arc<Connection>,
}

/// One request on a connection. Once [`working`](Activity::working), the
/// connection is busy until this is dropped (with the response's body).
pub(super) struct Activity {
    connection: Arc<Connection>,
    counted: AtomicBool,
}

impl Connections {
    /// A table of at most `max_total` connections, `max_per_address` from
    /// any one client address.
    pub fn new(max_total: usize, max_per_address: usize) -> Arc<Connections> {
        Arc::new(Connections {
            inner: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            freed: Notify::new(),
            max_total: max_total.max(1),
            max_per_address: max_per_address.clamp(1, max_total.max(1)),
            epoch: Instant::now(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many connections are open (those giving way included).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// The cap in total.
    pub fn max_total(&self) -> usize {
        self.max_total
    }

    /// A place for a new connection from `address`, making room by closing
    /// the longest-idle connection (of that address first) if need be;
    /// waits up to `patience` while every connection is busy.
    pub async fn admit(self: &Arc<Self>, address: IpAddr, patience: Duration) -> Option<Place> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let freed = self.freed.notified();
            if let Some(place) = self.try_admit(address) {
                return Some(place);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return None;
            }
        }
    }

    fn try_admit(self: &Arc<Self>, address: IpAddr) -> Option<Place> {
        let mut inner = self.lock();
        // Connections already giving way no longer count: their sockets are
        // about to close.
        let live = || inner.values().filter(|connection| !connection.closing.load(Ordering::Acquire));
        let from_address = live().filter(|connection| connection.address == address).count();
        if from_address >= self.max_per_address {
            give_way(live().filter(|connection| connection.address == address))?;
        } else if live().count() >= self.max_total {
            give_way(live())?;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            address,
            active: AtomicUsize::new(0),
            last_active: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            close: Notify::new(),
            epoch: self.epoch,
        });
        connection.mark();
        inner.insert(id, connection.clone());
        Some(Place { id, connections: self.clone(), connection })
    }

    /// Closes the longest-idle connection (when descriptors run out).
    pub fn close_longest_idle(&self) -> bool {
        let inner = self.lock();
        give_way(inner.values().filter(|connection| !connection.closing.load(Ordering::Acquire))).is_some()
    }
}

/// Tells the longest-idle of `candidates` to close; `None` if all are busy.
fn give_way<'a>(candidates: impl Iterator<Item = &'a Arc<Connection>>) -> Option<()> {
    let oldest = candidates
        .filter(|connection| connection.active.load(Ordering::Acquire) == 0)
        .min_by_key(|connection| connection.last_active.load(Ordering::Acquire))?;
    oldest.closing.store(true, Ordering::Release);
    oldest.close.notify_one();
    Some(())
}

impl Connection {
    /// Notes activity now.
    fn mark(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_active.store(now, Ordering::Release);
    }

    /// A request starts arriving on it.
    pub fn request(self: &Arc<Self>) -> Arc<Activity> {
        self.mark();
        Arc::new(Activity { connection: self.clone(), counted: AtomicBool::new(false) })
    }

    /// Resolves when the connection must give way to a new one.
    pub async fn closed(&self) {
        self.close.notified().await;
    }
}

impl Activity {
    /// The request has arrived and is being worked on (or answered): the
    /// connection is busy.
    pub fn working(&self) {
        if !self.counted.swap(true, Ordering::AcqRel) {
            self.connection.active.fetch_add(1, Ordering::AcqRel);
            self.connection.mark();
        }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.connection.mark();
        if self.counted.load(Ordering::Acquire) {
            self.connection.active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.connections.lock().remove(&self.id);
        self.connections.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    const OTHER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));

    #[tokio::test]
    async fn a_full_front_closes_the_longest_idle_connection() {
        let connections = Connections::new(2, 2);
        let first = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        let third = connections.admit(LOCAL, Duration::ZERO).await.expect("the longest idle gives way");
        assert!(first.connection.closing.load(Ordering::Acquire), "the first, idle longest, gives way");
        assert!(!second.connection.closing.load(Ordering::Acquire));
        assert!(!third.connection.closing.load(Ordering::Acquire));
    }

    #[tokio::test]
    async fn a_request_still_arriving_gives_way() {
        let connections = Connections::new(1, 1);
        let first = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        let _arriving = first.connection.request();
        assert!(connections.admit(LOCAL, Duration::ZERO).await.is_some(), "a dripping body gives way");
        assert!(first.connection.closing.load(Ordering::Acquire));
    }

    #[tokio::test]
    async fn busy_connections_never_give_way_and_newcomers_wait_for_a_place() {
        let connections = Connections::new(1, 1);
        let first = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        let busy = first.connection.request();
        busy.working();
        assert!(connections.admit(LOCAL, Duration::from_millis(20)).await.is_none(), "every connection is busy");
        let waiting = tokio::spawn({
            let connections = connections.clone();
            async move { connections.admit(LOCAL, Duration::from_secs(30)).await.is_some() }
        });
        drop(busy);
        drop(first);
        assert!(waiting.await.expect("joined"), "a freed place goes to the one waiting");
    }

    #[tokio::test]
    async fn one_address_at_its_cap_gives_way_among_its_own() {
        let connections = Connections::new(3, 1);
        let other = connections.admit(OTHER, Duration::ZERO).await.expect("room");
        let local = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        let again = connections.admit(LOCAL, Duration::ZERO).await.expect("its own idle one gives way");
        assert!(local.connection.closing.load(Ordering::Acquire));
        assert!(!other.connection.closing.load(Ordering::Acquire), "another address keeps its connection");
        assert!(!again.connection.closing.load(Ordering::Acquire));
    }
}
