//! How often a process's audit writer threads have been woken, from /proc:
//! the sum of their voluntary context switches. Shared with the gateway's
//! end-to-end tests (`crates/warden/tests/audit.rs` includes this file).

/// The wake-ups of the threads named `warden-audit*` of process `pid`
/// (`"self"` for this one).
pub fn writer_wakeups(pid: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    let mut total = 0;
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("warden-audit") {
            continue;
        }
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|count| count.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}
