//! CPU time of a measured process (the gateway), from `/proc`: the figure
//! that stays meaningful on a noisy machine, where latency and throughput
//! move with whatever else runs.

use std::time::Duration;

/// The CPU time (user + system, all threads) process `pid` has used so far,
/// from the scheduler's nanosecond counters of each of its threads. Threads
/// that have exited are not counted: measure around phases, while the
/// process's threads live.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    for task in tasks.flatten() {
        let Ok(schedstat) = std::fs::read_to_string(task.path().join("schedstat")) else { continue };
        total += parse_schedstat_ns(&schedstat).unwrap_or(0);
    }
    Some(Duration::from_nanos(total))
}

/// The first field of `/proc/<pid>/task/<tid>/schedstat`: time on the CPU, ns.
fn parse_schedstat_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().next()?.parse().ok()
}

/// CPU time of `pid` spent while `phase` runs, per call, in µs.
pub struct CpuMeter {
    pid: Option<u32>,
    start: Option<Duration>,
}

impl CpuMeter {
    /// Starts measuring `pid` (nothing, when `None`).
    pub fn start(pid: Option<u32>) -> CpuMeter {
        CpuMeter { pid, start: pid.and_then(cpu_time) }
    }

    /// The CPU time used since the start, in µs per call over `calls`.
    pub fn per_call_us(&self, calls: u64) -> Option<f64> {
        let used = cpu_time(self.pid?)?.checked_sub(self.start?)?;
        (calls > 0).then(|| crate::stats::round1(used.as_secs_f64() * 1e6 / calls as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schedstat() {
        assert_eq!(parse_schedstat_ns("123456 789 10\n"), Some(123_456));
        assert_eq!(parse_schedstat_ns(""), None);
    }

    #[test]
    fn measures_own_work() {
        let meter = CpuMeter::start(Some(std::process::id()));
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let per_call = meter.per_call_us(1).expect("a measurement");
        assert!(per_call > 0.0, "busy work shows as CPU time: {per_call}");
    }
}
