//! What a rotation costs the calls whose batch crosses it, against a batch
//! that does not: records written one at a time with `fsync: always`, the
//! log rotating every 40 records or so, and each record's latency sorted
//! by whether its batch rotated.
//!
//! Run with `cargo run --release -p warden-audit --example rotation_cost
//! [DIR]` (default: `bench/.cache/rotation`, on the repository's disk).
//! Prints p50 / p90 in microseconds.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use warden_audit::{AuditLog, AuditSettings};
use warden_jsonrpc::Method;
use warden_pipeline::{Audit, Call, Outcome, Record, Verdict};

const RECORDS: usize = 4_000;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).map_or_else(|| PathBuf::from("bench/.cache/rotation"), PathBuf::from);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("audit.jsonl");
    let settings = AuditSettings { rotate_bytes: Some(16 * 1024), keep: 5, ..AuditSettings::new(&path) };
    let log = AuditLog::open(settings)?;
    let method = Method::ToolsCall;
    let (mut plain, mut rotating) = (Vec::new(), Vec::new());
    for i in 0..RECORDS {
        let before = std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(0);
        let name = format!("tool{i}");
        let call = Call { session: "s1", server: "fixture", method: &method, name: &name, arguments: Some("{}") };
        let record = Record {
            call,
            client: Some("bench/1.0"),
            principal: None,
            client_address: None,
            verdict: &Verdict::Allow,
            outcome: &Outcome::Result,
            result: None,
            elapsed: Duration::from_micros(100),
            approval: None,
        };
        let started = Instant::now();
        log.record(record).await?;
        let took = started.elapsed();
        let after = std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(0);
        if after < before { &mut rotating } else { &mut plain }.push(took);
    }
    drop(log);
    for (label, times) in [("a batch that does not rotate", &mut plain), ("a batch that rotates", &mut rotating)] {
        times.sort();
        let at = |q: f64| times.get(((times.len() as f64 * q) as usize).min(times.len().saturating_sub(1)));
        let micros = |d: Option<&Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1e6);
        println!(
            "{label:30} {:>5} records  p50 {:8.1} µs  p90 {:8.1} µs",
            times.len(),
            micros(at(0.5)),
            micros(at(0.9))
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
