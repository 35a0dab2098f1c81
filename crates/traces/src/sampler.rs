//! Which traces are recorded: parent-based, with a ratio for new traces.

use warden_pipeline::SpanContext;

/// OpenTelemetry's `parentbased_traceidratio`: a request under a client's
/// span is recorded when that span is (the client decided); a new trace is
/// recorded for a share `ratio` of trace ids, decided by the id itself, so
/// every service that sees the trace decides alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    ratio: f64,
}

impl Sampler {
    /// Records a share `ratio` (0 to 1) of new traces.
    pub fn new(ratio: f64) -> Sampler {
        Sampler { ratio: if ratio.is_finite() { ratio.clamp(0.0, 1.0) } else { 1.0 } }
    }

    /// Whether a span under `parent` (or starting `trace_id`) is recorded.
    pub fn samples(&self, parent: Option<&SpanContext>, trace_id: &[u8; 16]) -> bool {
        match parent {
            Some(parent) => parent.sampled,
            None if self.ratio >= 1.0 => true,
            None if self.ratio <= 0.0 => false,
            None => {
                // The id's last 8 bytes, as the specification's TraceIdRatioBased reads them.
                let mut low = [0; 8];
                low.copy_from_slice(&trace_id[8..]);
                let value = u64::from_be_bytes(low) >> 1;
                (value as f64) < self.ratio * (u64::MAX >> 1) as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_decides_and_the_ratio_decides_new_traces() {
        let sampler = Sampler::new(0.0);
        let parent = SpanContext { trace_id: [1; 16], span_id: [1; 8], sampled: true };
        assert!(sampler.samples(Some(&parent), &[1; 16]));
        let unsampled = SpanContext { sampled: false, ..parent };
        assert!(!Sampler::new(1.0).samples(Some(&unsampled), &[1; 16]));
        assert!(!sampler.samples(None, &[0xff; 16]));
        assert!(Sampler::new(1.0).samples(None, &[0xff; 16]));
        let half = Sampler::new(0.5);
        let kept = (0..1000u64)
            .filter(|i| {
                let mut id = [0; 16];
                id[8..].copy_from_slice(&(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_be_bytes());
                half.samples(None, &id)
            })
            .count();
        assert!((400..600).contains(&kept), "{kept}");
    }
}
