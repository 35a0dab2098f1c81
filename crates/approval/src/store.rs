//! Where approvals live while they wait, and briefly after.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use tokio::sync::{broadcast, oneshot};

use crate::record::{Approval, Decided};
use crate::state::{ApprovalState, Event, Transition};

/// How many decided approvals are kept for the history.
const HISTORY: usize = 200;

/// Something that happened to an approval, for channels that follow them.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The approval after the change.
    pub approval: Approval,
}

/// Why a decision was not taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecideError {
    /// No approval has this id (or it is long gone).
    #[error("no approval {0}")]
    Unknown(String),
    /// Already decided: the first decision stands.
    #[error("approval {} is already {}", .approval.short_id(), .approval.state.as_str())]
    AlreadyDecided {
        /// The approval as it stands.
        approval: Box<Approval>,
    },
    /// The short id matches more than one approval.
    #[error("{0} matches more than one approval; give more of the id")]
    Ambiguous(String),
    /// A pattern for "approve for this session" was refused: nothing was
    /// decided.
    #[error("{0}: nothing was decided")]
    Pattern(crate::whitelist::PatternError),
}

/// The future of a decided approval.
pub type Decision = Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'static>>;

/// Where approvals are kept. Every decision goes through
/// [`decide`](Approvals::decide), which takes the first and refuses the
/// rest, so channels can race freely.
pub trait Approvals: Send + Sync {
    /// Stores a new approval.
    fn create(&self, approval: Approval);
    /// The approval with this id, or the only one whose id starts with it
    /// (at least 8 characters).
    fn get(&self, id: &str) -> Result<Approval, DecideError>;
    /// The pending approvals, oldest first.
    fn pending(&self) -> Vec<Approval>;
    /// Recently decided approvals, newest first.
    fn recent(&self) -> Vec<Approval>;
    /// Applies `event` (with who decided) if the approval's state allows it.
    fn decide(&self, id: &str, event: Event, decided: Decided) -> Result<Approval, DecideError>;
    /// Resolves once the approval is no longer pending (`None` if unknown).
    fn wait(&self, id: &str) -> Decision;
    /// Every change from now on.
    fn subscribe(&self) -> broadcast::Receiver<Change>;
}

/// Approvals in this process's memory.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    changes: broadcast::Sender<Change>,
}

#[derive(Default)]
struct Inner {
    approvals: HashMap<String, Approval>,
    waiters: HashMap<String, Vec<oneshot::Sender<Approval>>>,
    /// Decided ids, oldest first, so the history stays bounded.
    decided: VecDeque<String>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore { inner: Mutex::default(), changes: broadcast::channel(256).0 }
    }
}

impl MemoryStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        warden_sync::lock(&self.inner)
    }
}

impl Inner {
    fn resolve(&self, id: &str) -> Result<&Approval, DecideError> {
        if let Some(approval) = self.approvals.get(id) {
            return Ok(approval);
        }
        if id.len() < 8 {
            return Err(DecideError::Unknown(id.to_owned()));
        }
        let mut found = self.approvals.values().filter(|approval| approval.id.starts_with(id));
        match (found.next(), found.next()) {
            (Some(approval), None) => Ok(approval),
            (Some(_), Some(_)) => Err(DecideError::Ambiguous(id.to_owned())),
            _ => Err(DecideError::Unknown(id.to_owned())),
        }
    }
}

impl Approvals for MemoryStore {
    fn create(&self, approval: Approval) {
        self.lock().approvals.insert(approval.id.clone(), approval.clone());
        let _ = self.changes.send(Change { approval });
    }

    fn get(&self, id: &str) -> Result<Approval, DecideError> {
        self.lock().resolve(id).cloned()
    }

    fn pending(&self) -> Vec<Approval> {
        let mut pending: Vec<Approval> =
            self.lock().approvals.values().filter(|approval| approval.state.is_pending()).cloned().collect();
        pending.sort_by_key(|approval| approval.created_ms);
        pending
    }

    fn recent(&self) -> Vec<Approval> {
        let inner = self.lock();
        inner.decided.iter().rev().filter_map(|id| inner.approvals.get(id)).cloned().collect()
    }

    fn decide(&self, id: &str, event: Event, decided: Decided) -> Result<Approval, DecideError> {
        let mut inner = self.lock();
        let current = inner.resolve(id)?.clone();
        let state = current
            .state
            .apply(event)
            .map_err(|Transition { .. }| DecideError::AlreadyDecided { approval: Box::new(current.clone()) })?;
        let mut approval = current;
        approval.state = state;
        if event != Event::Execute {
            approval.decided = Some(decided);
            inner.decided.push_back(approval.id.clone());
            while inner.decided.len() > HISTORY {
                if let Some(old) = inner.decided.pop_front()
                    && inner
                        .approvals
                        .get(&old)
                        .is_some_and(|a| !a.state.is_pending() && a.state != ApprovalState::Approved)
                {
                    inner.approvals.remove(&old);
                }
            }
        }
        inner.approvals.insert(approval.id.clone(), approval.clone());
        for waiter in inner.waiters.remove(&approval.id).unwrap_or_default() {
            let _ = waiter.send(approval.clone());
        }
        drop(inner);
        let _ = self.changes.send(Change { approval: approval.clone() });
        Ok(approval)
    }

    fn wait(&self, id: &str) -> Decision {
        let mut inner = self.lock();
        let Some(approval) = inner.approvals.get(id) else { return Box::pin(async { None }) };
        if !approval.state.is_pending() {
            let approval = approval.clone();
            return Box::pin(async move { Some(approval) });
        }
        let (tx, rx) = oneshot::channel();
        inner.waiters.entry(id.to_owned()).or_default().push(tx);
        Box::pin(async move { rx.await.ok() })
    }

    fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    pub(crate) fn approval(id: &str) -> Approval {
        Approval {
            id: id.into(),
            server: "db".into(),
            tool: "query".into(),
            arguments: json!({"sql": "DROP TABLE t"}),
            masked: Vec::new(),
            args_digest: "d".into(),
            identifiers: Vec::new(),
            rule: "r".into(),
            reason: "why".into(),
            policy_version: "p".into(),
            session: "s1".into(),
            client: None,
            principal: None,
            created_ms: 1,
            expires_ms: u64::MAX,
            state: ApprovalState::Pending,
            decided: None,
        }
    }

    #[tokio::test]
    async fn the_first_decision_wins_and_waiters_see_it() {
        let store = MemoryStore::default();
        let mut changes = store.subscribe();
        store.create(approval("0123456789abcdef"));
        let waiting = store.wait("0123456789abcdef");
        let first = store.decide("01234567", Event::Approve, Decided::now("web", "me", None)).unwrap();
        assert_eq!(first.state, ApprovalState::Approved);
        let second = store.decide("0123456789abcdef", Event::Deny, Decided::now("cli", "you", None));
        assert!(matches!(second, Err(DecideError::AlreadyDecided { .. })), "{second:?}");
        let seen = waiting.await.unwrap();
        assert_eq!((seen.state, seen.decided.unwrap().channel.as_str()), (ApprovalState::Approved, "web"));
        assert_eq!(changes.recv().await.unwrap().approval.state, ApprovalState::Pending);
        assert_eq!(changes.recv().await.unwrap().approval.state, ApprovalState::Approved);
        assert!(store.pending().is_empty());
        assert_eq!(store.recent().len(), 1);
        assert!(matches!(store.get("0123"), Err(DecideError::Unknown(_))), "short prefixes are not ids");
    }
}
