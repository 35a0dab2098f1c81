//! Resident memory of a process, from `/proc/<pid>/status`.

use anyhow::{Context, anyhow};

/// The `VmRSS` of process `pid`, in kB.
pub fn vm_rss_kb(pid: u32) -> anyhow::Result<u64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    parse_vm_rss_kb(&status).ok_or_else(|| anyhow!("no VmRSS line in {path}"))
}

/// Extracts `VmRSS:   1234 kB` from the text of a status file.
fn parse_vm_rss_kb(status: &str) -> Option<u64> {
    let rest = status.lines().find_map(|line| line.strip_prefix("VmRSS:"))?;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status() {
        let text = "Name:\tx\nVmPeak:\t  9999 kB\nVmRSS:\t    4321 kB\nThreads:\t1\n";
        assert_eq!(parse_vm_rss_kb(text), Some(4321));
        assert_eq!(parse_vm_rss_kb("Name:\tx\n"), None);
    }

    #[test]
    fn reads_own_process() {
        let kb = vm_rss_kb(std::process::id()).expect("own status");
        assert!(kb > 0);
    }
}
