//! Latency percentiles.

use std::time::Duration;

/// Summary of a set of latencies, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest latency.
    pub max_us: f64,
}

/// Summarizes `latencies` (sorted in place). All fields are zero when empty.
pub fn summarize(latencies: &mut [Duration]) -> Summary {
    latencies.sort_unstable();
    Summary {
        p50_us: micros(percentile(latencies, 50.0)),
        p90_us: micros(percentile(latencies, 90.0)),
        p99_us: micros(percentile(latencies, 99.0)),
        max_us: micros(latencies.last().copied().unwrap_or_default()),
    }
}

/// Nearest-rank percentile `p` (0–100) of an ascending slice; zero when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let n = sorted.len();
    // Smallest value with at least p% of the values at or below it.
    let rank = (p / 100.0 * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// A duration in microseconds, rounded to 0.1 µs.
pub fn micros(d: Duration) -> f64 {
    // Integer rounding to tenths of a microsecond, then one exact division.
    ((d.as_nanos() + 50) / 100) as f64 / 10.0
}

/// Rounds to one decimal place.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    #[test]
    fn empty_is_zero() {
        let s = summarize(&mut []);
        assert_eq!(s.p50_us, 0.0);
        assert_eq!(s.max_us, 0.0);
    }

    #[test]
    fn nearest_rank() {
        let mut v: Vec<Duration> = (1..=100).rev().map(us).collect();
        let s = summarize(&mut v);
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p90_us, 90.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 100.0);
    }

    #[test]
    fn single_value() {
        let s = summarize(&mut [us(7)]);
        assert_eq!((s.p50_us, s.p99_us, s.max_us), (7.0, 7.0, 7.0));
    }

    #[test]
    fn small_sets_round_up() {
        let v = [us(1), us(2), us(3)];
        assert_eq!(percentile(&v, 50.0), us(2));
        assert_eq!(percentile(&v, 99.0), us(3));
        assert_eq!(percentile(&v, 0.0), us(1));
    }

    #[test]
    fn micros_rounding() {
        assert_eq!(micros(Duration::from_nanos(12_345)), 12.3);
        assert_eq!(micros(Duration::from_nanos(12_350)), 12.4);
    }
}
