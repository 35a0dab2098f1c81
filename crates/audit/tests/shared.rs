//! Several writers on one log (one `warden` per client window, all on one
//! configuration): their records form one chain, across rotations too.
//! Each `AuditLog` here opens the files on its own, with its own writer
//! thread, as another process would (the lock is `flock`, which is held
//! per open file, not per process).

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{Req, TempDir, json, lines, record};
use warden_audit::{AuditLog, AuditSettings, Fsync, sha256_hex, verify};

/// Every record of `files` (oldest first) chains onto the one before it,
/// with no seq missing or repeated.
fn assert_one_chain(files: &[&Path]) -> usize {
    let mut previous: Option<(u64, String)> = None;
    let mut count = 0;
    for file in files {
        let report = verify(file).expect("verify");
        assert!(report.first_broken.is_none(), "{}: {report:?}", file.display());
        for line in lines(file) {
            let record = json(&line);
            let seq = record["seq"].as_u64().expect("seq");
            if let Some((before, hash)) = &previous {
                assert_eq!(seq, before + 1, "{}: seq after {before}", file.display());
                assert_eq!(record["prevHash"], hash.as_str(), "{}: seq {seq} chains on", file.display());
            }
            previous = Some((seq, sha256_hex(line.as_bytes())));
            count += 1;
        }
    }
    count
}

async fn write_together(logs: &[Arc<AuditLog>], each: usize) {
    let mut tasks = Vec::new();
    for (w, log) in logs.iter().enumerate() {
        for i in 0..each {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                let name = format!("w{w}-{i}");
                record(&log, &Req::allow("s", &name, Some(r#"{"x":1}"#))).await.expect("record");
            }));
        }
    }
    for task in tasks {
        task.await.expect("join");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_writers_on_one_log_keep_one_chain() {
    let dir = TempDir::new("shared");
    let path = dir.join("audit.jsonl");
    let settings = || AuditSettings { fsync: Fsync::Never, ..AuditSettings::new(&path) };
    let logs: Vec<Arc<AuditLog>> = (0..3).map(|_| Arc::new(AuditLog::open(settings()).expect("open"))).collect();
    write_together(&logs, 100).await;
    assert_eq!(assert_one_chain(&[&path]), 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_on_one_log_keep_one_chain_across_rotations_and_syncs() {
    let dir = TempDir::new("shared-rotate");
    let path = dir.join("audit.jsonl");
    // fsync: always: the first writer owns the sync journal, the others
    // sync each batch; rotations every few records, by any writer.
    let settings = || AuditSettings { rotate_bytes: Some(4000), keep: 50, ..AuditSettings::new(&path) };
    let logs: Vec<Arc<AuditLog>> = (0..2).map(|_| Arc::new(AuditLog::open(settings()).expect("open"))).collect();
    write_together(&logs, 60).await;
    let mut files: Vec<std::path::PathBuf> =
        (1..=50).rev().map(|n| dir.join(&format!("audit.jsonl.{n}"))).filter(|file| file.exists()).collect();
    assert!(files.len() >= 3, "rotated several times: {files:?}");
    files.push(path.clone());
    let files: Vec<&Path> = files.iter().map(std::path::PathBuf::as_path).collect();
    assert_eq!(assert_one_chain(&files), 120);
}
