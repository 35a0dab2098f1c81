//! Pin drift: tool definitions that changed since they were pinned.

use std::sync::Arc;

use warden_pipeline::{Pins, Review, ToolDefinition};

use crate::Metrics;
use crate::labels::Labels;

/// Pins whose reviews' drift is counted.
pub struct MeteredPins {
    inner: Arc<dyn Pins>,
    metrics: Arc<Metrics>,
}

impl MeteredPins {
    /// `inner`, counted in `metrics`.
    pub fn new(inner: Arc<dyn Pins>, metrics: Arc<Metrics>) -> MeteredPins {
        MeteredPins { inner, metrics }
    }
}

impl Pins for MeteredPins {
    fn review(&self, server: &str, tools: &[ToolDefinition<'_>]) -> Review {
        let review = self.inner.review(server, tools);
        // A change counts once, when first seen, as it is audited.
        if !review.changed.is_empty() {
            let labels = Labels([("server", Some(self.metrics.server(server)))]);
            self.metrics.pin_drift.get_or_create(&labels).inc_by(review.changed.len() as u64);
        }
        review
    }
}
