//! Warden's OpenTelemetry traces.
//!
//! The [`Tracer`] is an [`Observer`] of the gateway: a client request it
//! samples becomes a SERVER span (continuing the client's `traceparent`
//! from `params._meta`), and each request Warden forwards for it a CLIENT
//! span, whose `traceparent` the gateway puts in the forwarded request's
//! `_meta`, so one trace runs from the agent through Warden to the server.
//! Spans are named and attributed as OpenTelemetry's MCP conventions say
//! (`tools/call get_weather`, `mcp.method.name`, `gen_ai.tool.name`,
//! `error.type`); a policy decision that stopped a request or sent it to a
//! person is an event of its span. Arguments and results are never
//! recorded.
//!
//! Spans are exported as OTLP over HTTP (protobuf) by a task of their own
//! ([`export`]); [`settings`] reads where to, from the config and the
//! standard `OTEL_*` variables.

#![warn(missing_docs)]

mod export;
mod ids;
mod otlp;
mod sampler;
pub mod settings;
mod span;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use warden_pipeline::{Observer, Operation, SpanContext, SpanPlace};

pub use export::Destination;
pub use sampler::Sampler;
pub use settings::TraceSettings;

use export::Exporter;
use span::Kind;

/// The longest `tracestate` carried (W3C's limit).
const MAX_TRACESTATE: usize = 512;

/// Records spans and sends them to a collector.
pub struct Tracer {
    sampler: Sampler,
    exporter: Arc<Exporter>,
}

impl Tracer {
    /// A tracer for `settings`, whose exporting task runs on the current
    /// Tokio runtime.
    pub fn start(settings: TraceSettings) -> Tracer {
        let exporter = Arc::new(Exporter::default());
        tokio::spawn(exporter.clone().run(settings.destination));
        Tracer { sampler: Sampler::new(settings.ratio), exporter }
    }

    fn record(&self, operation: &Operation<'_>, kind: Kind) {
        let Some(place) = operation.span else { return };
        let end = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let start = end.saturating_sub(operation.elapsed);
        self.exporter.push(|out| span::encode(out, operation, place, kind, nanos(start), nanos(end)));
    }
}

fn nanos(at: Duration) -> u64 {
    u64::try_from(at.as_nanos()).unwrap_or(u64::MAX)
}

impl Observer for Tracer {
    fn traces(&self) -> bool {
        true
    }

    fn begin(&self, parent: Option<SpanContext>, tracestate: Option<&str>) -> Option<SpanPlace> {
        let trace_id = parent.map_or_else(ids::trace_id, |parent| parent.trace_id);
        if !self.sampler.samples(parent.as_ref(), &trace_id) {
            return None;
        }
        let context = SpanContext { trace_id, span_id: ids::span_id(), sampled: true };
        // W3C caps a tracestate at 512 characters: a longer one (a client
        // padding every span it causes) is not carried.
        let tracestate = tracestate.filter(|state| state.len() <= MAX_TRACESTATE).map(Arc::from);
        Some(SpanPlace { context, parent, tracestate })
    }

    fn child(&self, within: &SpanPlace) -> Option<SpanPlace> {
        let context = SpanContext { span_id: ids::span_id(), ..within.context };
        Some(SpanPlace { context, parent: Some(within.context), tracestate: within.tracestate.clone() })
    }

    fn served(&self, operation: &Operation<'_>) {
        self.record(operation, Kind::Server);
    }

    fn called(&self, operation: &Operation<'_>) {
        self.record(operation, Kind::Client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracer() -> Tracer {
        Tracer { sampler: Sampler::new(1.0), exporter: Arc::new(Exporter::default()) }
    }

    #[test]
    fn a_span_continues_its_parent_and_a_long_tracestate_is_dropped() {
        let parent = SpanContext { trace_id: [7; 16], span_id: [9; 8], sampled: true };
        let place = tracer().begin(Some(parent), Some("k=v")).unwrap();
        assert_eq!((place.context.trace_id, place.parent), ([7; 16], Some(parent)));
        assert_ne!(place.context.span_id, parent.span_id);
        assert_eq!(place.tracestate.as_deref(), Some("k=v"));
        let long = "k=".to_owned() + &"v".repeat(600);
        assert_eq!(tracer().begin(Some(parent), Some(&long)).unwrap().tracestate, None);
        let child = tracer().child(&place).unwrap();
        assert_eq!((child.context.trace_id, child.parent), ([7; 16], Some(place.context)));
    }
}
