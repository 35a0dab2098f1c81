//! The server's session as Warden knows it: its id, the negotiated protocol
//! version, and which generation it is (a new one after each re-initialization).

use reqwest::RequestBuilder;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio::sync::watch;

/// `Mcp-Session-Id`.
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The headers of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// The session id the server gave, if it uses sessions.
    pub id: Option<HeaderValue>,
    /// The protocol version from the `initialize` result.
    pub version: Option<HeaderValue>,
    /// 0 for the first session, one more for each re-initialization.
    pub generation: u64,
}

impl Snapshot {
    /// A session from what an `initialize` exchange gave.
    pub fn new(id: Option<HeaderValue>, version: Option<&str>, generation: u64) -> Snapshot {
        let version = version.and_then(|version| HeaderValue::from_str(version).ok());
        Snapshot { id, version, generation }
    }

    /// Adds the session's headers to a request.
    pub fn apply(&self, request: RequestBuilder) -> RequestBuilder {
        let mut headers = HeaderMap::new();
        self.add_to(&mut headers);
        request.headers(headers)
    }

    /// Adds the session's headers to `headers`.
    pub fn add_to(&self, headers: &mut HeaderMap) {
        if let Some(id) = &self.id {
            headers.insert(SESSION_ID, id.clone());
        }
        if let Some(version) = &self.version {
            headers.insert(PROTOCOL_VERSION, version.clone());
        }
    }
}

#[derive(Debug, Default)]
struct SessionState {
    current: Snapshot,
    /// A re-initialization is under way: new messages wait for it.
    renewing: bool,
    /// Why the last re-initialization failed.
    failure: Option<String>,
}

/// The current session, shared by every task of a link.
#[derive(Debug)]
pub(crate) struct Session {
    state: watch::Sender<SessionState>,
}

/// What a caller that found the session expired should do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Renewal {
    /// Re-initialize; then call [`Session::renewed`] or [`Session::renewal_failed`].
    Mine,
    /// Someone else is re-initializing or already has: wait with
    /// [`Session::settled`] and use the result.
    Theirs,
}

impl Session {
    /// No session yet.
    pub fn new() -> Session {
        Session { state: watch::channel(SessionState::default()).0 }
    }

    /// The session to send with, waiting while it is being re-established.
    pub async fn current(&self) -> Snapshot {
        let mut state = self.state.subscribe();
        match state.wait_for(|state| !state.renewing).await {
            Ok(state) => state.current.clone(),
            // The sender lives in `self`: cannot happen.
            Err(_) => self.state.borrow().current.clone(),
        }
    }

    /// The session as it is now, without waiting for a renewal.
    pub fn current_now(&self) -> Snapshot {
        self.state.borrow().current.clone()
    }

    /// Records the session the first `initialize` opened.
    pub fn begin(&self, first: Snapshot) {
        self.state.send_modify(|state| state.current = first);
    }

    /// Asks to re-initialize a session of generation `seen` that the server
    /// no longer knows. Only the first caller for a generation renews.
    pub fn renew(&self, seen: u64) -> Renewal {
        let mut mine = false;
        self.state.send_if_modified(|state| {
            mine = !state.renewing && state.current.generation == seen;
            if mine {
                state.renewing = true;
            }
            mine
        });
        if mine { Renewal::Mine } else { Renewal::Theirs }
    }

    /// The generation after the one being renewed.
    pub fn next_generation(&self) -> u64 {
        self.state.borrow().current.generation + 1
    }

    /// Installs the re-established session.
    pub fn renewed(&self, next: Snapshot) {
        self.state.send_modify(|state| {
            state.current = next;
            state.renewing = false;
            state.failure = None;
        });
    }

    /// Records that re-initializing failed; the old session stays (and the
    /// next message that finds it expired tries again).
    pub fn renewal_failed(&self, reason: String) {
        self.state.send_modify(|state| {
            state.renewing = false;
            state.failure = Some(reason);
        });
    }

    /// Waits for a renewal of generation `seen` by someone else: `Ok` when
    /// there is a newer session, else why renewing failed.
    pub async fn settled(&self, seen: u64) -> Result<(), String> {
        let mut state = self.state.subscribe();
        let state = state.wait_for(|state| !state.renewing).await.map_err(|_| "the link closed".to_owned())?;
        if state.current.generation != seen {
            return Ok(());
        }
        Err(state.failure.clone().unwrap_or_else(|| "re-initializing failed".into()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use reqwest::header::HeaderValue;

    use super::{Renewal, Session, Snapshot};

    #[tokio::test]
    async fn one_renewal_per_generation_and_others_wait_for_it() {
        let session = Arc::new(Session::new());
        session.begin(Snapshot::new(Some(HeaderValue::from_static("a")), Some("2025-11-25"), 0));
        assert_eq!(session.renew(0), Renewal::Mine);
        assert_eq!(session.renew(0), Renewal::Theirs);

        let waiting = tokio::spawn({
            let session = session.clone();
            async move { (session.settled(0).await, session.current().await) }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiting.is_finished(), "messages wait while the session is renewed");
        let next = Snapshot::new(Some(HeaderValue::from_static("b")), Some("2025-11-25"), session.next_generation());
        session.renewed(next.clone());
        let (settled, current) = waiting.await.unwrap();
        assert_eq!(settled, Ok(()));
        assert_eq!(current, next);
        // A late 404 for the old generation does not renew again.
        assert_eq!(session.renew(0), Renewal::Theirs);
        assert_eq!(session.settled(0).await, Ok(()));
    }

    #[tokio::test]
    async fn a_failed_renewal_is_reported_and_can_be_retried() {
        let session = Session::new();
        assert_eq!(session.renew(0), Renewal::Mine);
        session.renewal_failed("cannot connect".into());
        assert_eq!(session.settled(0).await, Err("cannot connect".into()));
        assert_eq!(session.current().await.generation, 0);
        assert_eq!(session.renew(0), Renewal::Mine);
    }

    #[test]
    fn headers_are_sent_when_known() {
        let client = crate::link::web::client(Default::default()).unwrap();
        let none = Snapshot::default().apply(client.post("http://h/")).build().unwrap();
        assert!(none.headers().is_empty());
        let snapshot = Snapshot::new(Some(HeaderValue::from_static("s1")), Some("2025-06-18"), 0);
        let request = snapshot.apply(client.post("http://h/")).build().unwrap();
        assert_eq!(request.headers()["Mcp-Session-Id"], "s1");
        assert_eq!(request.headers()["MCP-Protocol-Version"], "2025-06-18");
    }
}
