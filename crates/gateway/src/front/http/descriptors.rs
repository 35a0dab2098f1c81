//! The open-file limit: every client connection and every server's pipes
//! take descriptors, so the front raises its soft limit to the hard one at
//! start (1024 is a common soft default) and sizes its connection cap from
//! what it got.

use std::io;

/// Raises the soft limit on open files to the hard limit; returns the soft
/// limit now in force.
pub(super) fn raise_open_files_limit() -> io::Result<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct it is given, which lives on
    // this stack frame for the whole call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit only reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    Ok(limit.rlim_cur)
}

/// The soft limit on open files, if it can be read.
pub(super) fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: as in `raise_open_files_limit`.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0).then_some(limit.rlim_cur)
}

/// The connection cap for `open_files` descriptors when none is configured:
/// what is left after the servers' pipes (three per process of the budget)
/// and a reserve for logs, the audit file and the servers' own start-up.
pub(super) fn default_max_connections(open_files: u64, process_budget: usize) -> usize {
    let reserved = 3 * process_budget as u64 + 64;
    usize::try_from(open_files.saturating_sub(reserved).clamp(16, 65_536)).unwrap_or(65_536)
}
