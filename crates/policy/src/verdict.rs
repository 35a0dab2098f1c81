//! What an evaluation decided: [`Decision`], [`Evaluation`], the
//! most-restrictive combination, and the mapping to the gateway's [`Verdict`].

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use warden_pipeline::Verdict;

/// What happens to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Forward it.
    Allow,
    /// Refuse it.
    Deny,
    /// Ask a person first.
    Escalate,
}

impl Decision {
    /// How restrictive it is: deny > escalate > allow.
    pub fn severity(self) -> u8 {
        match self {
            Decision::Allow => 0,
            Decision::Escalate => 1,
            Decision::Deny => 2,
        }
    }

    /// The lower-case name (`allow`, `deny`, `escalate`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Escalate => "escalate",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Decision {
    type Err = String;

    /// `allow`, `deny` or `escalate`, in any case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "allow" => Ok(Decision::Allow),
            "deny" => Ok(Decision::Deny),
            "escalate" => Ok(Decision::Escalate),
            _ => Err(format!("{text:?} is not a decision (allow, deny or escalate)")),
        }
    }
}

/// The result of evaluating one call against the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evaluation {
    /// What happens to the call.
    pub action: Decision,
    /// The rule (or structural check: `trusted-server`, `protected-path`,
    /// `sandbox`, `default`, ...) that decided.
    pub rule: String,
    /// Why, in words the model can act on.
    pub reason: String,
    /// The deciding rule's position in `policy.rules` (1-based); `None` for
    /// a structural check or the default.
    pub position: Option<usize>,
    /// How refusals and the audit log name the deciding rule: its name, and
    /// its position when another rule has the same name.
    pub label: String,
    /// Each step of the evaluation: which check or rule matched or not, and
    /// why (for `warden policy explain`). Empty when evaluated as a guard.
    pub trace: Vec<String>,
    /// The names of the `log` rules that matched.
    pub logged: Vec<String>,
}

impl Evaluation {
    /// The gateway's verdict for this evaluation.
    pub fn verdict(&self) -> Verdict {
        match self.action {
            Decision::Allow => Verdict::Allow,
            Decision::Deny => Verdict::Deny { rule: self.label.clone(), reason: self.reason.clone() },
            Decision::Escalate => Verdict::Escalate {
                rule: self.label.clone(),
                reason: self.reason.clone(),
                escalation: Default::default(),
            },
        }
    }
}

/// One decision with the rule that took it. Its texts borrow from the
/// engine where they can, so deciding allocates only what it must say anew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome<'e> {
    pub decision: Decision,
    pub rule: Cow<'e, str>,
    pub reason: Cow<'e, str>,
    /// The rule's position in `policy.rules` (1-based), for rules.
    pub position: Option<usize>,
    /// The rule's name as refusals show it (see [`Evaluation::label`]).
    pub label: Cow<'e, str>,
    /// For one role's outcome whose reason is written only if it decides
    /// the call (most roles' outcomes do not, and a reason costs a string):
    /// which reason. `reason` is empty until then.
    pub role_reason: Option<RoleReason>,
}

/// The reason a role's outcome gets when it decides the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoleReason {
    /// No rule decided (some of) the role's values: the default.
    Default,
    /// Every path of the role is within the sandbox.
    Sandbox,
}

impl<'e> Outcome<'e> {
    /// A structural check's (or the default's) outcome.
    pub(crate) fn new(
        decision: Decision,
        rule: impl Into<Cow<'e, str>>,
        reason: impl Into<Cow<'e, str>>,
    ) -> Outcome<'e> {
        let rule = rule.into();
        Outcome { decision, label: rule.clone(), rule, reason: reason.into(), position: None, role_reason: None }
    }

    /// A role's outcome by a structural check or the default, its reason
    /// written later (see [`Outcome::role_reason`]).
    pub(crate) fn of_role(decision: Decision, rule: &'static str, reason: RoleReason) -> Outcome<'e> {
        Outcome { role_reason: Some(reason), ..Outcome::new(decision, rule, "") }
    }

    /// The gateway's verdict (as [`Evaluation::verdict`]).
    pub(crate) fn verdict(&self) -> Verdict {
        match self.decision {
            Decision::Allow => Verdict::Allow,
            Decision::Deny => {
                Verdict::Deny { rule: self.label.clone().into_owned(), reason: self.reason.clone().into_owned() }
            }
            Decision::Escalate => Verdict::Escalate {
                rule: self.label.clone().into_owned(),
                reason: self.reason.clone().into_owned(),
                escalation: Default::default(),
            },
        }
    }

    /// The evaluation this outcome ends, with its trace and `log` rules.
    pub(crate) fn into_evaluation(self, trace: Vec<String>, logged: Vec<String>) -> Evaluation {
        Evaluation {
            action: self.decision,
            rule: self.rule.into_owned(),
            reason: self.reason.into_owned(),
            position: self.position,
            label: self.label.into_owned(),
            trace,
            logged,
        }
    }

    /// The outcome of the rule at `position` (1-based), labelled `label`.
    pub(crate) fn of_rule(
        decision: Decision,
        name: &'e str,
        position: usize,
        label: &'e str,
        reason: &'e str,
    ) -> Outcome<'e> {
        Outcome {
            decision,
            rule: Cow::Borrowed(name),
            reason: Cow::Borrowed(reason),
            position: Some(position),
            label: Cow::Borrowed(label),
            role_reason: None,
        }
    }
}

/// The most restrictive of `outcomes` (deny > escalate > allow); on a tie,
/// the first. `None` when there are none.
pub(crate) fn most_restrictive<'a, 'e>(outcomes: impl IntoIterator<Item = &'a Outcome<'e>>) -> Option<&'a Outcome<'e>> {
    let mut best: Option<&Outcome<'e>> = None;
    for outcome in outcomes {
        if best.is_none_or(|b| outcome.decision.severity() > b.decision.severity()) {
            best = Some(outcome);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_restrictive_wins_and_ties_keep_the_first() {
        let a = Outcome::new(Decision::Allow, "a", "");
        let e1 = Outcome::new(Decision::Escalate, "e1", "");
        let e2 = Outcome::new(Decision::Escalate, "e2", "");
        let d = Outcome::new(Decision::Deny, "d", "");
        assert_eq!(most_restrictive([&a, &e1, &e2]).map(|o| o.rule.as_ref()), Some("e1"));
        assert_eq!(most_restrictive([&a, &e1, &d, &e2]).map(|o| o.rule.as_ref()), Some("d"));
        assert_eq!(most_restrictive([&a]).map(|o| o.rule.as_ref()), Some("a"));
        assert!(most_restrictive([]).is_none());
    }

    #[test]
    fn decisions_parse_in_any_case() {
        assert_eq!("DENY".parse::<Decision>(), Ok(Decision::Deny));
        assert_eq!(" escalate ".parse::<Decision>(), Ok(Decision::Escalate));
        assert!("block".parse::<Decision>().is_err());
        assert_eq!(Decision::Allow.to_string(), "allow");
    }
}
