//! The MCP operation histograms, kept and written by hand.
//!
//! These are the families with the most series (a server's every tool, as
//! clients asked and as Warden forwarded, with each way it failed), and the
//! only ones touched on every request. So, unlike the other families:
//! - an observation is three atomic additions on a series found under a
//!   read lock (no lock per histogram);
//! - each series renders its label set once, when it is created, and a
//!   scrape copies that text onto each of its lines: a scrape of thousands
//!   of series costs what copying its text costs.

use hashbrown::HashMap;
use rustc_hash::FxBuildHasher;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use warden_sync::{read, write};

use crate::labels::{OperationKey, OperationLabels, TargetKind};

/// Bucket boundaries in seconds: OpenTelemetry's recommended ones (10 ms
/// to 300 s) with finer ones below, where a gateway's own work lies.
pub(crate) const BOUNDS: [f64; 17] =
    [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 300.0];

/// The boundaries as the text format writes them.
const BOUND_TEXT: [&str; 17] = [
    "0.0001", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1.0", "2.0", "5.0",
    "10.0", "30.0", "300.0",
];

/// One histogram family of MCP operations.
#[derive(Debug)]
pub(crate) struct Operations {
    /// The family's name, without `_seconds`.
    name: &'static str,
    help: &'static str,
    series: RwLock<HashMap<OperationLabels, Arc<Series>, FxBuildHasher>>,
}

/// One label set's histogram.
#[derive(Debug)]
struct Series {
    /// The label set as the text format writes it (`a="x",b="y"`).
    labels: Box<str>,
    /// Observations per bucket, not cumulative; the last one is over every
    /// bound (`+Inf` only).
    buckets: [AtomicU64; BOUNDS.len() + 1],
    /// The sum, in nanoseconds.
    sum_nanos: AtomicU64,
}

impl Operations {
    /// An empty family `name` (`mcp_server_operation_duration`).
    pub(crate) fn new(name: &'static str, help: &'static str) -> Operations {
        Operations { name, help, series: RwLock::new(HashMap::with_hasher(FxBuildHasher)) }
    }

    /// Counts one operation of `key` that took `nanos`. Its series is
    /// found by the borrowed names; `labels` (which interns them, and may
    /// count a name past the cap as `other`) is made only when it is not.
    pub(crate) fn observe(&self, key: &OperationKey<'_>, nanos: u64, labels: impl FnOnce() -> OperationLabels) {
        if let Some(series) = read(&self.series).get(key) {
            return series.add(nanos);
        }
        let labels = labels();
        // A name past the cap is not found by its own name: its `other`
        // series is, without the write lock.
        if let Some(series) = read(&self.series).get(&labels) {
            return series.add(nanos);
        }
        let mut series = write(&self.series);
        let series = series.entry(labels).or_insert_with_key(|labels| Arc::new(Series::new(labels)));
        series.add(nanos);
    }

    /// Calls `visit` with each series' labels and its observations per
    /// bucket (not cumulative; the last is over every bound).
    pub(crate) fn visit(&self, mut visit: impl FnMut(&OperationLabels, [u64; BOUNDS.len() + 1])) {
        for (labels, series) in read(&self.series).iter() {
            visit(labels, std::array::from_fn(|index| series.buckets[index].load(Ordering::Relaxed)));
        }
    }

    /// Writes the family in the OpenMetrics text format. The count is the
    /// buckets' total, so it always equals the `+Inf` bucket.
    pub(crate) fn encode(&self, out: &mut String) {
        let name = self.name;
        let _ = write!(
            out,
            "# HELP {name}_seconds {}.\n# TYPE {name}_seconds histogram\n# UNIT {name}_seconds seconds\n",
            self.help
        );
        let series: Vec<Arc<Series>> = read(&self.series).values().cloned().collect();
        let mut number = itoa::Buffer::new();
        for series in series {
            let mut cumulative = 0u64;
            for (index, counter) in series.buckets.iter().enumerate() {
                cumulative += counter.load(Ordering::Relaxed);
                let bound = BOUND_TEXT.get(index).copied().unwrap_or("+Inf");
                out.push_str(name);
                out.push_str("_seconds_bucket{");
                out.push_str(&series.labels);
                out.push_str(",le=\"");
                out.push_str(bound);
                out.push_str("\"} ");
                out.push_str(number.format(cumulative));
                out.push('\n');
            }
            let sum = series.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
            let labels = &series.labels;
            let _ = writeln!(out, "{name}_seconds_sum{{{labels}}} {sum:?}");
            let _ = writeln!(out, "{name}_seconds_count{{{labels}}} {cumulative}");
        }
    }
}

impl Series {
    /// One observation of `nanos`.
    fn add(&self, nanos: u64) {
        let seconds = nanos as f64 / 1e9;
        let bucket = BOUNDS.iter().position(|bound| seconds <= *bound).unwrap_or(BOUNDS.len());
        if let Some(counter) = self.buckets.get(bucket) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn new(labels: &OperationLabels) -> Series {
        let mut text = String::new();
        let mut label = |key: &str, value: &str| {
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(key);
            text.push_str("=\"");
            escape_into(&mut text, value);
            text.push('"');
        };
        label("mcp_method_name", labels.method);
        if let Some((kind, name)) = &labels.target {
            let key = match kind {
                TargetKind::Tool => "gen_ai_tool_name",
                TargetKind::Prompt => "gen_ai_prompt_name",
            };
            label(key, name);
        }
        if let Some(server) = &labels.server {
            label("server", server);
        }
        if let Some(error) = &labels.error {
            label("error_type", &error.to_string());
        }
        Series { labels: text.into(), buckets: Default::default(), sum_nanos: AtomicU64::new(0) }
    }
}

/// `value` escaped for a label value: `\`, `"` and line feeds.
fn escape_into(out: &mut String, value: &str) {
    for character in value.chars() {
        match character {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_their_text_agree() {
        for (bound, text) in BOUNDS.iter().zip(BOUND_TEXT) {
            assert_eq!(text.parse::<f64>().ok(), Some(*bound));
        }
        assert!(BOUNDS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn label_values_are_escaped() {
        let mut out = String::new();
        escape_into(&mut out, "a\"b\\c\nd");
        assert_eq!(out, r#"a\"b\\c\nd"#);
    }
}
