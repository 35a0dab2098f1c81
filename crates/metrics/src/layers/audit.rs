//! Audit appends: how many, whether they were written, how long they took.

use std::sync::Arc;
use std::time::Instant;

use warden_pipeline::{Audit, AuditFuture, Record};

use crate::Metrics;
use crate::labels::{Labels, Value};

/// An audit log whose appends are counted and timed.
pub struct MeteredAudit {
    inner: Arc<dyn Audit>,
    metrics: Arc<Metrics>,
}

impl MeteredAudit {
    /// `inner`, counted in `metrics`.
    pub fn new(inner: Arc<dyn Audit>, metrics: Arc<Metrics>) -> MeteredAudit {
        MeteredAudit { inner, metrics }
    }
}

impl Audit for MeteredAudit {
    fn record<'a>(&'a self, record: Record<'a>) -> AuditFuture<'a> {
        let started = Instant::now();
        let append = self.inner.record(record);
        Box::pin(async move {
            let written = append.await;
            let result = if written.is_ok() { "ok" } else { "failed" };
            self.metrics.audit_appends.get_or_create(&Labels([("result", Some(Value::Word(result)))])).inc();
            self.metrics.audit_append.observe(started.elapsed().as_secs_f64());
            written
        })
    }
}
