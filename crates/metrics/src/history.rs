//! Per-tool figures over the last minutes, for the dashboard and `warden
//! status`.
//!
//! Prometheus keeps history for those who run one; Warden keeps just
//! enough to say how each tool did over the last 5 and 60 minutes. Every
//! [`History::record`] (the dashboard calls it every 15 seconds) copies
//! the counts of the `tools/call` histogram, one small array per tool; a
//! window is the counts now minus the counts of the snapshot that starts
//! it. Nothing is added to a request's path.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Metrics;
use crate::labels::TargetKind;
use crate::operations::BOUNDS;

/// Observations per bucket of one tool's calls.
type Buckets = [u64; BOUNDS.len() + 1];

/// The counts of one moment.
#[derive(Debug, Default)]
struct Tally {
    /// (server, tool) → calls per bucket, and how many failed.
    tools: HashMap<(Arc<str>, Arc<str>), (Buckets, u64)>,
    /// Every request clients made, of any method.
    requests: u64,
}

impl Tally {
    fn of(metrics: &Metrics) -> Tally {
        let mut tally = Tally::default();
        metrics.served.visit(|labels, buckets| {
            tally.requests += buckets.iter().sum::<u64>();
            let Some((TargetKind::Tool, tool)) = &labels.target else { return };
            if labels.method != "tools/call" {
                return;
            }
            let server = labels.server.clone().unwrap_or_else(|| Arc::from(""));
            let (counts, errors) = tally.tools.entry((server, tool.clone())).or_insert(([0; BOUNDS.len() + 1], 0));
            for (count, more) in counts.iter_mut().zip(buckets) {
                *count += more;
            }
            if labels.error.is_some() {
                *errors += buckets.iter().sum::<u64>();
            }
        });
        tally
    }
}

/// Snapshots of the counts, oldest first, as far back as the longest
/// window asked for.
#[derive(Debug)]
pub struct History {
    snapshots: VecDeque<(Instant, Tally)>,
    keep: Duration,
}

/// How one tool did over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFigures {
    /// The server's name.
    pub server: String,
    /// The tool's name as the server lists it (or [`OTHER`](crate::OTHER)).
    pub tool: String,
    /// Calls answered in the window.
    pub calls: u64,
    /// Of those, the ones that failed (an error or `isError`).
    pub errors: u64,
    /// Median, 95th and 99th percentile of the time to answer, in
    /// seconds, estimated from the histogram's buckets as Prometheus's
    /// `histogram_quantile` does.
    pub p50: f64,
    /// See `p50`.
    pub p95: f64,
    /// See `p50`.
    pub p99: f64,
}

/// What happened over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// How long the window really is: shorter than asked while Warden is
    /// younger than that.
    pub span: Duration,
    /// Requests clients made, of any method.
    pub requests: u64,
    /// Each tool called in the window, most called first.
    pub tools: Vec<ToolFigures>,
}

impl Window {
    /// Requests per second over the window.
    pub fn requests_per_second(&self) -> f64 {
        self.requests as f64 / self.span.as_secs_f64().max(1.0)
    }

    /// Tool calls per second over the window.
    pub fn calls_per_second(&self) -> f64 {
        self.tools.iter().map(|tool| tool.calls).sum::<u64>() as f64 / self.span.as_secs_f64().max(1.0)
    }
}

impl History {
    /// A history that starts now, from zero, and keeps snapshots for
    /// windows up to `keep` long.
    pub fn new(now: Instant, keep: Duration) -> History {
        History { snapshots: VecDeque::from([(now, Tally::default())]), keep }
    }

    /// Takes a snapshot of `metrics` at `now`, and forgets those no window
    /// can start from any more.
    pub fn record(&mut self, metrics: &Metrics, now: Instant) {
        self.snapshots.push_back((now, Tally::of(metrics)));
        // Keep the newest snapshot at least `keep` old: it starts the longest window.
        while self.snapshots.get(1).is_some_and(|(at, _)| now.saturating_duration_since(*at) >= self.keep) {
            self.snapshots.pop_front();
        }
    }

    /// What happened in the `length` before `now`, as far back as a
    /// snapshot goes: counted from the newest snapshot at least `length`
    /// old, or from the oldest.
    pub fn window(&self, metrics: &Metrics, now: Instant, length: Duration) -> Window {
        let start = self
            .snapshots
            .iter()
            .rev()
            .find(|(at, _)| now.saturating_duration_since(*at) >= length)
            .or(self.snapshots.front());
        let empty = Tally::default();
        let (since, before) = match start {
            Some((at, tally)) => (*at, tally),
            None => (now, &empty),
        };
        let current = Tally::of(metrics);
        let mut tools: Vec<ToolFigures> = current
            .tools
            .iter()
            .filter_map(|(key, (buckets, errors))| {
                let (old_buckets, old_errors) = before.tools.get(key).copied().unwrap_or(([0; BOUNDS.len() + 1], 0));
                let delta: Buckets = std::array::from_fn(|i| buckets[i].saturating_sub(old_buckets[i]));
                let calls: u64 = delta.iter().sum();
                (calls > 0).then(|| ToolFigures {
                    server: key.0.to_string(),
                    tool: key.1.to_string(),
                    calls,
                    errors: errors.saturating_sub(old_errors),
                    p50: quantile(&delta, 0.50),
                    p95: quantile(&delta, 0.95),
                    p99: quantile(&delta, 0.99),
                })
            })
            .collect();
        tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| (&a.server, &a.tool).cmp(&(&b.server, &b.tool))));
        Window {
            span: now.saturating_duration_since(since),
            requests: current.requests.saturating_sub(before.requests),
            tools,
        }
    }
}

/// The `q` quantile of observations counted per bucket, interpolated
/// linearly within its bucket (as `histogram_quantile` does); the last
/// bucket has no upper bound, so a quantile there is the largest bound.
fn quantile(buckets: &Buckets, q: f64) -> f64 {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let rank = q * total as f64;
    let mut below = 0u64;
    for (index, count) in buckets.iter().enumerate() {
        let through = below + count;
        if through as f64 >= rank && *count > 0 {
            let Some(upper) = BOUNDS.get(index) else { return BOUNDS[BOUNDS.len() - 1] };
            let lower = if index == 0 { 0.0 } else { BOUNDS[index - 1] };
            return lower + (upper - lower) * (rank - below as f64) / *count as f64;
        }
        below = through;
    }
    BOUNDS[BOUNDS.len() - 1]
}

#[cfg(test)]
mod tests {
    use warden_jsonrpc::Method;
    use warden_pipeline::{ErrorType, Observer, Operation, Target};

    use super::*;

    fn call(metrics: &Metrics, tool: &str, millis: u64, failed: bool) {
        metrics.served(&Operation {
            target: Some(Target::Tool(tool)),
            server: Some("db"),
            error: failed.then_some(ErrorType::ToolError),
            ..Operation::new(&Method::ToolsCall, Duration::from_millis(millis))
        });
    }

    #[test]
    fn a_window_counts_what_happened_since_the_snapshot_that_starts_it() {
        let metrics = Metrics::new();
        let start = Instant::now();
        let mut history = History::new(start, Duration::from_secs(3600));
        call(&metrics, "old", 3, false);
        history.record(&metrics, start + Duration::from_secs(60));
        for _ in 0..98 {
            call(&metrics, "query", 3, false);
        }
        call(&metrics, "query", 40, true);
        call(&metrics, "query", 400, false);
        let now = start + Duration::from_secs(400);
        let last_five = history.window(&metrics, now, Duration::from_secs(300));
        // Started by the snapshot at 60 s, the newest at least 300 s old.
        assert_eq!(last_five.span, Duration::from_secs(340));
        assert_eq!(last_five.tools.len(), 1, "{last_five:?}");
        let query = &last_five.tools[0];
        assert_eq!((query.calls, query.errors), (100, 1));
        // 98 of 100 in the (2.5 ms, 5 ms] bucket.
        assert!(query.p50 > 0.0025 && query.p50 <= 0.005, "{query:?}");
        assert!(query.p95 > 0.0025 && query.p95 <= 0.005, "{query:?}");
        assert!(query.p99 > 0.02 && query.p99 <= 0.05, "{query:?}");
        // The hour reaches back to the start: `old` is in it.
        let hour = history.window(&metrics, now, Duration::from_secs(3600));
        assert_eq!(hour.span, Duration::from_secs(400));
        assert_eq!(hour.tools.iter().map(|tool| tool.calls).sum::<u64>(), 101);
        assert_eq!(hour.requests, 101);
    }

    #[test]
    fn snapshots_older_than_the_longest_window_are_forgotten() {
        let metrics = Metrics::new();
        let start = Instant::now();
        let mut history = History::new(start, Duration::from_secs(60));
        for second in (15..=600).step_by(15) {
            history.record(&metrics, start + Duration::from_secs(second));
        }
        assert!(history.snapshots.len() <= 6, "{}", history.snapshots.len());
        let oldest = history.snapshots.front().map(|(at, _)| *at).unwrap_or(start);
        assert!(start + Duration::from_secs(600) - oldest >= Duration::from_secs(60));
    }

    #[test]
    fn quantiles_interpolate_within_their_bucket() {
        let mut buckets = [0; BOUNDS.len() + 1];
        buckets[2] = 10; // (0.5 ms, 1 ms]
        assert!((quantile(&buckets, 0.5) - 0.00075).abs() < 1e-12);
        buckets = [0; BOUNDS.len() + 1];
        buckets[BOUNDS.len()] = 1;
        assert_eq!(quantile(&buckets, 0.99), 300.0);
        assert_eq!(quantile(&[0; BOUNDS.len() + 1], 0.5), 0.0);
    }
}
