//! The client connections of the HTTP front: a cap in total, one per client
//! address and one per token, and which connection gives way when a new one
//! needs room.
//!
//! A connection belongs to the token of the first authenticated request it
//! carries. When the front is full, the idle connection that gives way is
//! taken from the token holding the most connections (connections that
//! carried no authenticated request yet count as one more holder).
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
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Every open client connection of one front.
pub(super) struct Connections {
    inner: Mutex<HashMap<u64, Arc<ClientConnection>>>,
    next: AtomicU64,
    /// Signalled whenever a connection goes.
    freed: Notify,
    max_total: usize,
    max_per_address: usize,
    /// When the front started: the clock of [`ClientConnection::last_active`].
    epoch: Instant,
}

/// One client connection.
pub(super) struct ClientConnection {
    address: IpAddr,
    /// The token of the first authenticated request it carried.
    owner: OnceLock<Arc<str>>,
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
    pub connection: Arc<ClientConnection>,
}

/// One request on a connection. Once [`working`](Activity::working), the
/// connection is busy until this is dropped (with the response's body).
pub(super) struct Activity {
    connection: Arc<ClientConnection>,
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

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<ClientConnection>>> {
        warden_sync::lock(&self.inner)
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
            give_way_fairly(live().collect())?;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(ClientConnection {
            address,
            owner: OnceLock::new(),
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

    /// Gives `connection` to `token`, which may hold at most `limit`
    /// connections: at its cap, the token's own longest-idle connection
    /// gives way. `false` if every other connection of the token is busy.
    /// A connection keeps the first token it is given.
    pub fn claim(&self, connection: &Arc<ClientConnection>, token: &Arc<str>, limit: usize) -> bool {
        let inner = self.lock();
        if connection.owner.get().is_some() {
            return true;
        }
        let others = || {
            inner.values().filter(|other| {
                !Arc::ptr_eq(other, connection)
                    && !other.closing.load(Ordering::Acquire)
                    && other.owner.get() == Some(token)
            })
        };
        if others().count() >= limit.max(1) && give_way(others()).is_none() {
            return false;
        }
        let _ = connection.owner.set(token.clone());
        true
    }

    /// How many open connections belong to `token`.
    pub fn held_by(&self, token: &str) -> usize {
        let inner = self.lock();
        inner
            .values()
            .filter(|connection| !connection.closing.load(Ordering::Acquire))
            .filter(|connection| connection.owner.get().is_some_and(|owner| &**owner == token))
            .count()
    }

    /// Closes the longest-idle connection (when descriptors run out).
    pub fn close_longest_idle(&self) -> bool {
        let inner = self.lock();
        give_way(inner.values().filter(|connection| !connection.closing.load(Ordering::Acquire))).is_some()
    }
}

/// Tells the longest-idle connection of the holder with the most connections
/// to close (the next holder's if all of that one's are busy); `None` if
/// every connection is busy.
fn give_way_fairly(live: Vec<&Arc<ClientConnection>>) -> Option<()> {
    let mut holders: HashMap<Option<&Arc<str>>, usize> = HashMap::new();
    for connection in &live {
        *holders.entry(connection.owner.get()).or_default() += 1;
    }
    let mut holders: Vec<(Option<&Arc<str>>, usize)> = holders.into_iter().collect();
    holders.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    holders
        .into_iter()
        .find_map(|(holder, _)| give_way(live.iter().copied().filter(|connection| connection.owner.get() == holder)))
}

/// Tells the longest-idle of `candidates` to close; `None` if all are busy.
fn give_way<'a>(candidates: impl Iterator<Item = &'a Arc<ClientConnection>>) -> Option<()> {
    let oldest = candidates
        .filter(|connection| connection.active.load(Ordering::Acquire) == 0)
        .min_by_key(|connection| connection.last_active.load(Ordering::Acquire))?;
    oldest.closing.store(true, Ordering::Release);
    oldest.close.notify_one();
    Some(())
}

impl ClientConnection {
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

    /// Whether it belongs to a token already.
    pub fn is_claimed(&self) -> bool {
        self.owner.get().is_some()
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

    #[tokio::test]
    async fn a_token_at_its_cap_gives_way_among_its_own_idle_connections() {
        let connections = Connections::new(10, 10);
        let (bob, alice): (Arc<str>, Arc<str>) = (Arc::from("bob"), Arc::from("alice"));
        let first = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        assert!(connections.claim(&first.connection, &bob, 2));
        let hers = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        assert!(connections.claim(&hers.connection, &alice, 2));
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        assert!(connections.claim(&second.connection, &bob, 2));
        assert_eq!(connections.held_by("bob"), 2);
        let third = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        assert!(connections.claim(&third.connection, &bob, 2), "bob's longest idle gives way");
        assert!(first.connection.closing.load(Ordering::Acquire));
        assert!(!hers.connection.closing.load(Ordering::Acquire), "alice's is not bob's to give");
        assert_eq!(connections.held_by("bob"), 2);
        assert!(connections.claim(&third.connection, &alice, 2), "claimed already: kept");
        assert_eq!(connections.held_by("alice"), 1, "a connection keeps its first token");
    }

    #[tokio::test]
    async fn a_token_whose_connections_are_all_busy_is_refused_another() {
        let connections = Connections::new(10, 10);
        let bob: Arc<str> = Arc::from("bob");
        let first = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        assert!(connections.claim(&first.connection, &bob, 1));
        let busy = first.connection.request();
        busy.working();
        let second = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        let _arriving = second.connection.request();
        assert!(!connections.claim(&second.connection, &bob, 1), "its one connection is busy");
        assert!(!second.connection.is_claimed());
        drop(busy);
        assert!(connections.claim(&second.connection, &bob, 1), "now idle, it gives way");
        assert!(first.connection.closing.load(Ordering::Acquire));
    }

    #[tokio::test]
    async fn a_full_front_takes_room_from_the_token_holding_the_most() {
        let connections = Connections::new(4, 4);
        let (bob, alice): (Arc<str>, Arc<str>) = (Arc::from("bob"), Arc::from("alice"));
        let hers = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
        assert!(connections.claim(&hers.connection, &alice, 4));
        tokio::time::sleep(Duration::from_millis(5)).await;
        let mut his = Vec::new();
        for _ in 0..3 {
            let place = connections.admit(LOCAL, Duration::ZERO).await.expect("room");
            assert!(connections.claim(&place.connection, &bob, 4));
            his.push(place);
        }
        let newcomer = connections.admit(OTHER, Duration::ZERO).await.expect("one of bob's gives way");
        assert!(!hers.connection.closing.load(Ordering::Acquire), "alice's is the oldest but she holds one");
        assert_eq!(his.iter().filter(|place| place.connection.closing.load(Ordering::Acquire)).count(), 1);
        assert!(!newcomer.connection.closing.load(Ordering::Acquire));
    }
}
