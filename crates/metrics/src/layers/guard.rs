//! Decisions of a guard (the policy, or the limits), by decision and rule.

use std::sync::Arc;

use prometheus_client::metrics::counter::Counter;
use warden_pipeline::{Call, Guard, Verdict};

use crate::Metrics;
use crate::labels::{Labels, Value};

/// Which guard a [`MeteredGuard`] wraps: where its decisions are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardKind {
    /// The policy engine: every decision (`warden_policy_decisions_total`).
    Policy,
    /// Rate limits and the loop breaker: their refusals
    /// (`warden_limit_decisions_total`; they allow nearly every call).
    Limits,
}

/// A guard whose decisions are counted.
pub struct MeteredGuard {
    inner: Arc<dyn Guard>,
    metrics: Arc<Metrics>,
    kind: GuardKind,
    /// The policy's `decision="allow"` series, found once: most calls are
    /// allowed, and then counting one is an atomic addition, no lookup.
    allowed: Option<Counter>,
}

impl MeteredGuard {
    /// `inner`, counted in `metrics` as `kind`.
    pub fn new(inner: Arc<dyn Guard>, metrics: Arc<Metrics>, kind: GuardKind) -> MeteredGuard {
        let allowed = (kind == GuardKind::Policy).then(|| {
            metrics.policy.get_or_create(&Labels([("decision", Some(Value::Word("allow"))), ("rule", None)])).clone()
        });
        MeteredGuard { inner, metrics, kind, allowed }
    }
}

impl Guard for MeteredGuard {
    fn decide(&self, call: &Call<'_>) -> Verdict {
        self.counted(self.inner.decide(call))
    }

    fn decide_at_once(&self, call: &Call<'_>) -> Option<Verdict> {
        self.inner.decide_at_once(call).map(|verdict| self.counted(verdict))
    }
}

impl MeteredGuard {
    /// `verdict`, counted.
    fn counted(&self, verdict: Verdict) -> Verdict {
        if let (Verdict::Allow, Some(allowed)) = (&verdict, &self.allowed) {
            allowed.inc();
            return verdict;
        }
        let (decision, rule) = match &verdict {
            Verdict::Allow => ("allow", None),
            Verdict::Deny { rule, .. } => ("deny", Some(rule)),
            Verdict::Escalate { rule, .. } => ("escalate", Some(rule)),
        };
        let family = match self.kind {
            GuardKind::Policy => &self.metrics.policy,
            GuardKind::Limits if rule.is_none() => return verdict,
            GuardKind::Limits => &self.metrics.limits,
        };
        let rule = rule.map(|rule| Value::Name(self.metrics.rules.get(rule)));
        family.get_or_create(&Labels([("decision", Some(Value::Word(decision))), ("rule", rule)])).inc();
        verdict
    }
}
