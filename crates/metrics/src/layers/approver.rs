//! Approvals: how many wait, how they settle, and how long they waited.

use std::sync::Arc;
use std::time::Instant;

use prometheus_client::metrics::gauge::Gauge;
use warden_pipeline::{Approver, Ask, ResolutionFuture, Ticket};

use crate::Metrics;
use crate::labels::{Labels, Value};

/// An approver whose approvals are counted.
pub struct MeteredApprover {
    inner: Arc<dyn Approver>,
    metrics: Arc<Metrics>,
}

impl MeteredApprover {
    /// `inner`, counted in `metrics`.
    pub fn new(inner: Arc<dyn Approver>, metrics: Arc<Metrics>) -> MeteredApprover {
        MeteredApprover { inner, metrics }
    }
}

/// One pending approval: counted while it lives, so an approval whose
/// waiter went away stops counting too.
struct Pending(Gauge);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Approver for MeteredApprover {
    fn open(&self, ask: &Ask<'_>) -> (Ticket, ResolutionFuture) {
        let (ticket, decision) = self.inner.open(ask);
        self.metrics.approvals_pending.inc();
        let pending = Pending(self.metrics.approvals_pending.clone());
        let metrics = self.metrics.clone();
        let opened = Instant::now();
        let decision = Box::pin(async move {
            let resolution = decision.await;
            drop(pending);
            let outcome = Some(Value::Word(resolution.settled.as_str()));
            let channel = Some(Value::Name(metrics.channels.get(&resolution.channel)));
            metrics.approvals.get_or_create(&Labels([("outcome", outcome.clone()), ("channel", channel)])).inc();
            metrics
                .approval_wait
                .get_or_create(&Labels([("outcome", outcome)]))
                .observe(opened.elapsed().as_secs_f64());
            resolution
        });
        (ticket, decision)
    }

    fn withdraw(&self, id: &str) {
        self.inner.withdraw(id);
    }

    fn executed(&self, id: &str) {
        self.inner.executed(id);
    }

    fn elicits(&self) -> bool {
        self.inner.elicits()
    }

    fn decide(&self, id: &str, approve: bool, channel: &str, by: &str, note: Option<String>) -> bool {
        self.inner.decide(id, approve, channel, by, note)
    }
}
