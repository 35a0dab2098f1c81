//! The life of an approval, as a pure state machine:
//! pending → approved | denied | expired | withdrawn, approved → executed.

use serde::{Deserialize, Serialize};

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Approved; the call may run once.
    Approved,
    /// Refused by a person.
    Denied,
    /// Nobody decided in time.
    Expired,
    /// The client cancelled the call or went away.
    Withdrawn,
    /// The approved call was forwarded.
    Executed,
}

/// What happens to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// Someone approves it.
    Approve,
    /// Someone denies it.
    Deny,
    /// Its time is up.
    Expire,
    /// Its call was cancelled.
    Withdraw,
    /// Its call was forwarded.
    Execute,
}

/// A refused transition: the approval was already past that point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// Where it stood.
    pub from: ApprovalState,
    /// What was attempted.
    pub event: Event,
}

impl ApprovalState {
    /// The state after `event`, or why not: only a pending approval can be
    /// decided (first decision wins), only an approved one executed (once).
    pub fn apply(self, event: Event) -> Result<ApprovalState, Transition> {
        match (self, event) {
            (ApprovalState::Pending, Event::Approve) => Ok(ApprovalState::Approved),
            (ApprovalState::Pending, Event::Deny) => Ok(ApprovalState::Denied),
            (ApprovalState::Pending, Event::Expire) => Ok(ApprovalState::Expired),
            (ApprovalState::Pending, Event::Withdraw) => Ok(ApprovalState::Withdrawn),
            (ApprovalState::Approved, Event::Execute) => Ok(ApprovalState::Executed),
            (from, event) => Err(Transition { from, event }),
        }
    }

    /// Whether no decision was taken yet.
    pub fn is_pending(self) -> bool {
        self == ApprovalState::Pending
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Denied => "denied",
            ApprovalState::Expired => "expired",
            ApprovalState::Withdrawn => "withdrawn",
            ApprovalState::Executed => "executed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pending_approvals_are_decided_and_only_approved_ones_executed() {
        assert_eq!(ApprovalState::Pending.apply(Event::Approve), Ok(ApprovalState::Approved));
        assert_eq!(ApprovalState::Pending.apply(Event::Deny), Ok(ApprovalState::Denied));
        assert_eq!(ApprovalState::Pending.apply(Event::Expire), Ok(ApprovalState::Expired));
        assert_eq!(ApprovalState::Pending.apply(Event::Withdraw), Ok(ApprovalState::Withdrawn));
        assert_eq!(ApprovalState::Approved.apply(Event::Execute), Ok(ApprovalState::Executed));
        for decided in [
            ApprovalState::Approved,
            ApprovalState::Denied,
            ApprovalState::Expired,
            ApprovalState::Withdrawn,
            ApprovalState::Executed,
        ] {
            for event in [Event::Approve, Event::Deny, Event::Expire, Event::Withdraw] {
                assert_eq!(decided.apply(event), Err(Transition { from: decided, event }), "{decided:?} {event:?}");
            }
        }
        assert!(ApprovalState::Pending.apply(Event::Execute).is_err(), "never executed without approval");
        assert!(ApprovalState::Executed.apply(Event::Execute).is_err(), "used once");
    }
}
