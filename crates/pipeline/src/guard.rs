//! The decision taken before a request is forwarded.

use warden_jsonrpc::Method;

use super::approval::Escalation;

/// A request about to be forwarded, as a guard sees it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The client session.
    pub session: &'a str,
    /// The upstream server it goes to.
    pub server: &'a str,
    /// The method.
    pub method: &'a Method,
    /// The tool or prompt name as the upstream knows it, or the resource URI.
    pub name: &'a str,
    /// The arguments as JSON text (`arguments` of tools/call and prompts/get).
    pub arguments: Option<&'a str>,
}

/// What a guard decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Forward the request.
    Allow,
    /// Refuse it.
    Deny {
        /// The rule that decided.
        rule: String,
        /// Why, in words the model can act on.
        reason: String,
    },
    /// A person must approve it first.
    Escalate {
        /// The rule that decided.
        rule: String,
        /// Why approval is needed.
        reason: String,
        /// The rule's timeout and auto-approval settings.
        escalation: Escalation,
    },
}

impl Verdict {
    /// The message sent back for a refused request, or `None` if allowed.
    ///
    /// Without approval configured, escalation is a refusal that says
    /// approval was required and how to enable it.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Verdict::Allow => None,
            Verdict::Deny { rule, reason } => Some(format!("Denied by policy '{rule}': {reason}")),
            Verdict::Escalate { rule, reason, .. } => Some(format!(
                "Approval required by policy '{rule}': {reason}. No approval channel is configured, so the call was denied (add an `approval:` section to Warden's config to let a person approve such calls)."
            )),
        }
    }
}

/// Decides, from the request alone, whether it may go ahead. Does no I/O,
/// but for reading the filesystem to resolve the paths a call names (the
/// policy follows symbolic links): [`Guard::decide_at_once`] tells apart
/// the calls that would read a filesystem that may not answer (a network
/// mount that hangs), so that the caller decides them where waiting holds
/// up no one else.
pub trait Guard: Send + Sync {
    /// The verdict for `call`.
    fn decide(&self, call: &Call<'_>) -> Verdict;

    /// The verdict for `call` when it can be given without reading a
    /// filesystem that may not answer; `None` when only [`Guard::decide`]
    /// can give it, which the caller then runs where it may wait. `None`
    /// leaves no trace: nothing is counted or logged.
    fn decide_at_once(&self, call: &Call<'_>) -> Option<Verdict> {
        Some(self.decide(call))
    }
}

/// Allows everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Guard for AllowAll {
    fn decide(&self, _call: &Call<'_>) -> Verdict {
        Verdict::Allow
    }
}

/// Guards in order: the first that does not allow decides. Later guards see
/// only calls the earlier ones allowed (a rate limit counts only calls the
/// policy let through).
pub struct Guards(pub Vec<std::sync::Arc<dyn Guard>>);

impl Guard for Guards {
    fn decide(&self, call: &Call<'_>) -> Verdict {
        self.decide_after(0, call)
    }

    /// Only the first guard may put the decision off (`None`): the guards
    /// after it may count what they see (a rate limit), and must see a call
    /// once, so one of them that would read the filesystem reads it here.
    fn decide_at_once(&self, call: &Call<'_>) -> Option<Verdict> {
        let Some(first) = self.0.first() else { return Some(Verdict::Allow) };
        match first.decide_at_once(call)? {
            Verdict::Allow => Some(self.decide_after(1, call)),
            verdict => Some(verdict),
        }
    }
}

impl Guards {
    /// The verdict of the guards from the `first`th on.
    fn decide_after(&self, first: usize, call: &Call<'_>) -> Verdict {
        for guard in self.0.iter().skip(first) {
            let verdict = guard.decide(call);
            if verdict != Verdict::Allow {
                return verdict;
            }
        }
        Verdict::Allow
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Counting(AtomicUsize, Verdict);

    impl Guard for Counting {
        fn decide(&self, _call: &Call<'_>) -> Verdict {
            self.0.fetch_add(1, Ordering::Relaxed);
            self.1.clone()
        }
    }

    #[test]
    fn the_first_refusal_decides_and_later_guards_are_not_asked() {
        let deny = Verdict::Deny { rule: "r".into(), reason: "no".into() };
        let first = Arc::new(Counting(AtomicUsize::new(0), Verdict::Allow));
        let second = Arc::new(Counting(AtomicUsize::new(0), deny.clone()));
        let third = Arc::new(Counting(AtomicUsize::new(0), Verdict::Allow));
        let guards = Guards(vec![first.clone(), second.clone(), third.clone()]);
        let call = Call { session: "s", server: "a", method: &Method::ToolsCall, name: "t", arguments: None };
        assert_eq!(guards.decide(&call), deny);
        assert_eq!([&first, &second, &third].map(|g| g.0.load(Ordering::Relaxed)), [1, 1, 0]);
        assert_eq!(Guards(vec![]).decide(&call), Verdict::Allow);
    }

    /// A guard that would read the filesystem: it puts every decision off.
    struct Reading(AtomicUsize);

    impl Guard for Reading {
        fn decide(&self, _call: &Call<'_>) -> Verdict {
            self.0.fetch_add(1, Ordering::Relaxed);
            Verdict::Allow
        }

        fn decide_at_once(&self, _call: &Call<'_>) -> Option<Verdict> {
            None
        }
    }

    /// The first guard may put the decision off, and then no later guard
    /// sees the call (it sees it once, when the decision is taken); a later
    /// guard that would read the filesystem is asked to decide outright.
    #[test]
    fn only_the_first_guard_puts_a_decision_off() {
        let call = Call { session: "s", server: "a", method: &Method::ToolsCall, name: "t", arguments: None };
        let reading = Arc::new(Reading(AtomicUsize::new(0)));
        let counting = Arc::new(Counting(AtomicUsize::new(0), Verdict::Allow));
        let first = Guards(vec![reading.clone(), counting.clone()]);
        assert_eq!(first.decide_at_once(&call), None);
        assert_eq!([reading.0.load(Ordering::Relaxed), counting.0.load(Ordering::Relaxed)], [0, 0]);
        assert_eq!(first.decide(&call), Verdict::Allow);
        assert_eq!([reading.0.load(Ordering::Relaxed), counting.0.load(Ordering::Relaxed)], [1, 1]);

        let later = Guards(vec![counting.clone(), reading.clone()]);
        assert_eq!(later.decide_at_once(&call), Some(Verdict::Allow));
        assert_eq!([reading.0.load(Ordering::Relaxed), counting.0.load(Ordering::Relaxed)], [2, 2]);
        assert_eq!(Guards(vec![]).decide_at_once(&call), Some(Verdict::Allow));
    }
}
