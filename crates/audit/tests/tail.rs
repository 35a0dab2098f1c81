//! `tail`: filters, and following a growing (and rotating) file.

mod common;

use std::time::Duration;

use common::{Req, TempDir, json, record};
use warden_audit::{AuditLog, AuditSettings, Fsync, TailFilter, tail};

async fn sample(log: &AuditLog) {
    record(log, &Req::allow("github", "create_issue", None)).await.expect("1");
    record(log, &Req::deny("github", "delete_repo", "no-delete", "destructive")).await.expect("2");
    record(log, &Req::allow("fs", "read_file", None)).await.expect("3");
    record(log, &Req::deny("fs", "write_file", "ro", "read only")).await.expect("4");
    record(log, &Req::allow("fs", "read_file", None)).await.expect("5");
}

fn seqs(path: &std::path::Path, filter: &TailFilter) -> Vec<u64> {
    let mut seen = Vec::new();
    tail(path, filter, false, &mut |line| {
        seen.push(json(line)["seq"].as_u64().expect("seq"));
        true
    })
    .expect("tail");
    seen
}

#[tokio::test]
async fn filters_by_decision_server_and_tool() {
    let dir = TempDir::new("tail-filter");
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(AuditSettings::new(&path)).expect("open");
    sample(&log).await;
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(seqs(&path, &TailFilter::default()), [1, 2, 3, 4, 5]);
    assert_eq!(seqs(&path, &TailFilter { decision: some("deny"), ..TailFilter::default() }), [2, 4]);
    assert_eq!(seqs(&path, &TailFilter { decision: some("ALLOW"), ..TailFilter::default() }), [1, 3, 5]);
    assert_eq!(seqs(&path, &TailFilter { server: some("fs"), ..TailFilter::default() }), [3, 4, 5]);
    assert_eq!(seqs(&path, &TailFilter { tool: some("read_file"), ..TailFilter::default() }), [3, 5]);
    let both = TailFilter { decision: some("deny"), server: some("github"), tool: None };
    assert_eq!(seqs(&path, &both), [2]);
    assert!(seqs(&path, &TailFilter { decision: some("escalate"), ..TailFilter::default() }).is_empty());
}

#[tokio::test]
async fn stops_when_out_returns_false() {
    let dir = TempDir::new("tail-stop");
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(AuditSettings::new(&path)).expect("open");
    sample(&log).await;
    let mut count = 0;
    tail(&path, &TailFilter::default(), false, &mut |_| {
        count += 1;
        count < 2
    })
    .expect("tail");
    assert_eq!(count, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_reads_appended_lines_across_rotation() {
    let dir = TempDir::new("tail-follow");
    let path = dir.join("audit.jsonl");
    let settings = AuditSettings { fsync: Fsync::Never, rotate_bytes: Some(900), keep: 3, ..AuditSettings::new(&path) };
    let log = AuditLog::open(settings).expect("open");
    record(&log, &Req::allow("fs", "read_file", None)).await.expect("first");

    // A plain thread, so a broken follow fails the test instead of hanging
    // the runtime's shutdown.
    let (send, receive) = std::sync::mpsc::channel();
    let follow_path = path.clone();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let filter = TailFilter { server: Some("fs".into()), ..TailFilter::default() };
        let result = tail(&follow_path, &filter, true, &mut |line| {
            seen.push(json(line)["seq"].as_u64().expect("seq"));
            seen.len() < 6
        });
        let _ = send.send(result.map(|()| seen));
    });
    // seq 2..=11, alternating fs and github.
    for i in 0..10 {
        tokio::time::sleep(Duration::from_millis(120)).await;
        let server = if i % 2 == 0 { "fs" } else { "github" };
        record(&log, &Req::allow(server, "read_file", None)).await.expect("record");
    }
    let seen = tokio::task::spawn_blocking(move || receive.recv_timeout(Duration::from_secs(20)))
        .await
        .expect("join")
        .expect("tail finished in time")
        .expect("tail");
    assert_eq!(seen, [1, 2, 4, 6, 8, 10]);
    assert!(dir.join("audit.jsonl.1").exists(), "the log rotated while followed");
}
