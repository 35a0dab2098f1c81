//! What an evaluation decided: [`Decision`], [`Evaluation`], the
//! most-restrictive combination, and the mapping to the gateway's [`Verdict`].

use crate::compile::Request;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard, Verdict};

use crate::PolicyEngine;

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

/// One decision with the rule that took it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub decision: Decision,
    pub rule: String,
    pub reason: String,
    /// The rule's position in `policy.rules` (1-based), for rules.
    pub position: Option<usize>,
    /// The rule's name as refusals show it (see [`Evaluation::label`]).
    pub label: String,
}

impl Outcome {
    /// A structural check's (or the default's) outcome.
    pub(crate) fn new(decision: Decision, rule: impl Into<String>, reason: impl Into<String>) -> Outcome {
        let rule = rule.into();
        Outcome { decision, label: rule.clone(), rule, reason: reason.into(), position: None }
    }

    /// The evaluation this outcome ends, with its trace and `log` rules.
    pub(crate) fn into_evaluation(self, trace: Vec<String>, logged: Vec<String>) -> Evaluation {
        Evaluation {
            action: self.decision,
            rule: self.rule,
            reason: self.reason,
            position: self.position,
            label: self.label,
            trace,
            logged,
        }
    }

    /// The outcome of the rule at `position` (1-based), labelled `label`.
    pub(crate) fn of_rule(decision: Decision, name: &str, position: usize, label: &str, reason: &str) -> Outcome {
        Outcome {
            decision,
            rule: name.to_owned(),
            reason: reason.to_owned(),
            position: Some(position),
            label: label.to_owned(),
        }
    }
}

/// The most restrictive of `outcomes` (deny > escalate > allow); on a tie,
/// the first. `None` when there are none.
pub(crate) fn most_restrictive<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Option<&'a Outcome> {
    let mut best: Option<&Outcome> = None;
    for outcome in outcomes {
        if best.is_none_or(|b| outcome.decision.severity() > b.decision.severity()) {
            best = Some(outcome);
        }
    }
    best
}

impl Guard for PolicyEngine {
    /// Decides `tools/call`, and `prompts/get` and `resources/read` where
    /// rules name them; every other method is allowed (views and other
    /// guards handle them). Matches of `log` rules are written to the
    /// `tracing` log.
    fn decide(&self, call: &Call<'_>) -> Verdict {
        let evaluation = match call.method {
            Method::ToolsCall => self.decide_quietly(call.server, call.name, call.arguments),
            Method::PromptsGet => self.evaluate_request(Request::Prompt, call.server, call.name, call.arguments),
            Method::ResourcesRead => self.evaluate_request(Request::Resource, call.server, call.name, None),
            _ => return Verdict::Allow,
        };
        for rule in &evaluation.logged {
            tracing::info!(
                target: "warden::policy",
                rule = rule.as_str(),
                server = call.server,
                tool = call.name,
                session = call.session,
                "policy log rule matched"
            );
        }
        let mut verdict = evaluation.verdict();
        // Only escalations pay for this: their rule's settings, and the
        // resources the call names (for the auto-approver and the session
        // whitelist).
        if let Verdict::Escalate { escalation, .. } = &mut verdict {
            if let Some(settings) = evaluation.position.and_then(|position| self.escalations.get(&position)) {
                *escalation = settings.clone();
            }
            escalation.identifiers = self.identifiers(call.server, call.name, call.arguments);
        }
        verdict
    }
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
        assert_eq!(most_restrictive([&a, &e1, &e2]).map(|o| o.rule.as_str()), Some("e1"));
        assert_eq!(most_restrictive([&a, &e1, &d, &e2]).map(|o| o.rule.as_str()), Some("d"));
        assert_eq!(most_restrictive([&a]).map(|o| o.rule.as_str()), Some("a"));
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
