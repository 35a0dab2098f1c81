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

/// The user-space CPU time process `pid` has used so far (all threads,
/// exited ones included), from `/proc/<pid>/stat`. Its resolution is the
/// kernel's clock tick (10 ms): meaningful over thousands of calls.
pub fn user_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(Duration::from_millis(parse_stat_utime_ticks(&stat)? * 1000 / TICKS_PER_SECOND))
}

/// `USER_HZ`, the unit of the times in `/proc/<pid>/stat` (100 on Linux
/// whatever the kernel's own tick rate).
const TICKS_PER_SECOND: u64 = 100;

/// Field 14 of `/proc/<pid>/stat`, `utime`, in clock ticks. The command
/// name (field 2) may hold spaces and parentheses: fields are counted from
/// the last `)`.
fn parse_stat_utime_ticks(stat: &str) -> Option<u64> {
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(11)?.parse().ok()
}

/// CPU time of a process per call, µs: user and system together, and user
/// space alone (what the process's own code costs; the rest is the kernel
/// working for it).
#[derive(Debug, Clone, Copy)]
pub struct PerCall {
    /// User + system.
    pub total_us: f64,
    /// User space alone.
    pub user_us: Option<f64>,
}

/// CPU time of `pid` spent while a phase runs, per call.
pub struct CpuMeter {
    pid: Option<u32>,
    start: Option<Duration>,
    start_user: Option<Duration>,
}

impl CpuMeter {
    /// Starts measuring `pid` (nothing, when `None`).
    pub fn start(pid: Option<u32>) -> CpuMeter {
        CpuMeter { pid, start: pid.and_then(cpu_time), start_user: pid.and_then(user_time) }
    }

    /// The CPU time used since the start, per call over `calls`.
    pub fn per_call(&self, calls: u64) -> Option<PerCall> {
        let pid = self.pid.filter(|_| calls > 0)?;
        let per_call = |used: Duration| crate::stats::round1(used.as_secs_f64() * 1e6 / calls as f64);
        let used = cpu_time(pid)?.checked_sub(self.start?)?;
        let user = user_time(pid).zip(self.start_user).and_then(|(now, start)| now.checked_sub(start));
        Some(PerCall { total_us: per_call(used), user_us: user.map(per_call) })
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
    fn parses_the_user_time_after_a_command_name_with_spaces() {
        let stat = "4242 (tokio rt) worker) S 1 4242 4242 0 -1 4194560 300 0 0 0 1234 56 0 0 20 0 2 0";
        assert_eq!(parse_stat_utime_ticks(stat), Some(1234));
        assert_eq!(parse_stat_utime_ticks("4242 (x) S 1"), None);
    }

    #[test]
    fn measures_own_work() {
        let meter = CpuMeter::start(Some(std::process::id()));
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let per_call = meter.per_call(1).expect("a measurement");
        assert!(per_call.total_us > 0.0, "busy work shows as CPU time: {per_call:?}");
        assert!(per_call.user_us.is_some(), "and user time is read: {per_call:?}");
    }
}
