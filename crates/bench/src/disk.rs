//! The disk's own cost of a durable append: what the audit log's
//! `fsync: always` can at best cost a call, measured beside it.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

/// The size of one appended line: about an audit record of an echo call.
pub const LINE_BYTES: usize = 330;

/// [`append_sync_latencies`] with one other thread spinning meanwhile. On a
/// virtual machine whose CPUs are otherwise idle, a sync's completion can
/// wait for the next timer tick (4 ms here) instead of its interrupt; during
/// the benchmark's calls the CPUs are busy, so this is the figure to compare
/// the audit log with.
pub fn append_sync_latencies_busy(dir: &Path, writes: u64) -> anyhow::Result<Vec<Duration>> {
    let stop = Arc::new(AtomicBool::new(false));
    let spinning = Arc::clone(&stop);
    let spinner = std::thread::spawn(move || {
        while !spinning.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    });
    let measured = append_sync_latencies(dir, writes);
    stop.store(true, Ordering::Relaxed);
    let _ = spinner.join();
    measured
}

/// Appends `writes` lines of [`LINE_BYTES`] to a new file in `dir`, each
/// with one `write` and one `fdatasync` (as the audit log does for a batch),
/// and returns each append's latency. The file is removed afterwards.
pub fn append_sync_latencies(dir: &Path, writes: u64) -> anyhow::Result<Vec<Duration>> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("disk-probe-{}.jsonl", std::process::id()));
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut line = vec![b'x'; LINE_BYTES - 1];
    line.push(b'\n');
    let measured = (0..writes)
        .map(|_| {
            let started = Instant::now();
            file.write_all(&line)?;
            file.sync_data()?;
            Ok(started.elapsed())
        })
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(|| format!("append and fdatasync to {}", path.display()));
    let _ = fs::remove_file(&path);
    measured
}
