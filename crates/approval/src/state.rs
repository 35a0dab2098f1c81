//! The life of an approval, as a pure state machine:
//! pending → approved | denied | expired | withdrawn, approved → executed.

use serde::{Deserialize, Serialize};

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
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
    pub from: State,
    /// What was attempted.
    pub event: Event,
}

impl State {
    /// The state after `event`, or why not: only a pending approval can be
    /// decided (first decision wins), only an approved one executed (once).
    pub fn apply(self, event: Event) -> Result<State, Transition> {
        match (self, event) {
            (State::Pending, Event::Approve) => Ok(State::Approved),
            (State::Pending, Event::Deny) => Ok(State::Denied),
            (State::Pending, Event::Expire) => Ok(State::Expired),
            (State::Pending, Event::Withdraw) => Ok(State::Withdrawn),
            (State::Approved, Event::Execute) => Ok(State::Executed),
            (from, event) => Err(Transition { from, event }),
        }
    }

    /// Whether no decision was taken yet.
    pub fn is_pending(self) -> bool {
        self == State::Pending
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Approved => "approved",
            State::Denied => "denied",
            State::Expired => "expired",
            State::Withdrawn => "withdrawn",
            State::Executed => "executed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pending_approvals_are_decided_and_only_approved_ones_executed() {
        assert_eq!(State::Pending.apply(Event::Approve), Ok(State::Approved));
        assert_eq!(State::Pending.apply(Event::Deny), Ok(State::Denied));
        assert_eq!(State::Pending.apply(Event::Expire), Ok(State::Expired));
        assert_eq!(State::Pending.apply(Event::Withdraw), Ok(State::Withdrawn));
        assert_eq!(State::Approved.apply(Event::Execute), Ok(State::Executed));
        for decided in [State::Approved, State::Denied, State::Expired, State::Withdrawn, State::Executed] {
            for event in [Event::Approve, Event::Deny, Event::Expire, Event::Withdraw] {
                assert_eq!(decided.apply(event), Err(Transition { from: decided, event }), "{decided:?} {event:?}");
            }
        }
        assert!(State::Pending.apply(Event::Execute).is_err(), "never executed without approval");
        assert!(State::Executed.apply(Event::Execute).is_err(), "used once");
    }
}
