//! The log as the gateway uses it: durability, reopening, failure, rotation.

mod common;

use std::fs;
use std::io::Write;
use std::sync::Arc;

use common::{Req, TempDir, json, lines, record, record_at_once, write_n};
use warden_audit::{AuditLog, AuditSettings, Fsync, GENESIS, sha256_hex, verify};
use warden_pipeline::{Outcome, Verdict};

#[tokio::test]
async fn each_record_is_on_disk_when_record_returns() {
    let dir = TempDir::new("durable");
    let path = dir.join("nested/dirs/audit.jsonl");
    let log = AuditLog::open(AuditSettings::new(&path)).expect("open");
    for i in 1..=5u64 {
        let name = format!("t{i}");
        record(&log, &Req::allow("fs", &name, None)).await.expect("record");
        // Read back right away, through a fresh handle.
        let lines = lines(&path);
        assert_eq!(lines.len() as u64, i);
        let last = json(&lines[lines.len() - 1]);
        assert_eq!(last["seq"], i);
        assert_eq!(last["name"], name.as_str());
    }
}

#[tokio::test]
async fn record_fields_are_redacted_and_shaped() {
    let dir = TempDir::new("fields");
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(AuditSettings::new(&path)).expect("open");
    let key = "sk-ant-api03-abcDEF123-ghiJKL456_mnoPQR789-stuVWX012yz";
    let arguments = format!(r#"{{"query":"use {key}","limit":4111111111111111,"auth":{{"password":"hunter2"}}}}"#);
    record(&log, &Req::allow("search", "find", Some(&arguments))).await.expect("allow");
    let invalid = format!("not json {key}");
    record(&log, &Req::deny("search", "find", "no-keys", &format!("found {key}"))).await.expect("deny");
    let mut unreachable = Req::allow("search", "find", Some(&invalid));
    unreachable.outcome = Outcome::Unreachable(format!("connect failed with Bearer {key}"));
    record(&log, &unreachable).await.expect("unreachable");
    let mut escalate = Req::allow("search", "find", Some("null"));
    escalate.verdict =
        Verdict::Escalate { rule: "ask".into(), reason: "writes".into(), escalation: Default::default() };
    escalate.outcome = Outcome::Refused;
    record(&log, &escalate).await.expect("escalate");

    let text = fs::read_to_string(&path).expect("read");
    assert!(!text.contains(key) && !text.contains("hunter2"), "{text}");
    let lines = lines(&path);
    let allow = json(&lines[0]);
    assert_eq!(
        allow["arguments"],
        serde_json::json!({"query": "use [REDACTED:api-key]", "limit": 4111111111111111u64, "auth": {"password": "[REDACTED:secret]"}})
    );
    assert_eq!(allow["decision"], serde_json::json!({"verdict": "allow"}));
    assert!(allow.get("outcomeDetail").is_none());
    let deny = json(&lines[1]);
    assert_eq!(deny["arguments"], serde_json::Value::Null);
    assert_eq!(
        deny["decision"],
        serde_json::json!({"verdict": "deny", "rule": "no-keys", "reason": "found [REDACTED:api-key]"})
    );
    assert_eq!(deny["outcome"], "refused");
    let down = json(&lines[2]);
    assert_eq!(down["arguments"], "not json [REDACTED:api-key]");
    assert_eq!(down["outcome"], "unreachable");
    assert_eq!(down["outcomeDetail"], "connect failed with Bearer [REDACTED:api-key]");
    let ask = json(&lines[3]);
    assert_eq!(ask["decision"]["verdict"], "escalate");
    assert_eq!(verify(&path).expect("verify").first_broken, None);
}

#[tokio::test]
async fn redaction_can_be_turned_off() {
    let dir = TempDir::new("noredact");
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(AuditSettings { redact: false, fsync: Fsync::Never, ..AuditSettings::new(&path) })
        .expect("open");
    record(&log, &Req::allow("s", "t", Some(r#"{"password":"hunter2"}"#))).await.expect("record");
    assert!(fs::read_to_string(&path).expect("read").contains("hunter2"));
}

#[tokio::test]
async fn reopening_continues_the_chain() {
    let dir = TempDir::new("reopen");
    let path = dir.join("audit.jsonl");
    write_n(&path, 2).await;
    write_n(&path, 2).await;
    let lines = lines(&path);
    assert_eq!(lines.len(), 4);
    assert_eq!(json(&lines[2])["seq"], 3);
    assert_eq!(json(&lines[2])["prevHash"], sha256_hex(lines[1].as_bytes()));
    let report = verify(&path).expect("verify");
    assert_eq!((report.records, report.first_broken), (4, None));
}

#[tokio::test]
async fn reopening_after_a_torn_write_chains_from_the_last_valid_record() {
    let dir = TempDir::new("torn-reopen");
    let path = dir.join("audit.jsonl");
    write_n(&path, 2).await;
    let good = lines(&path);
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(br#"{"time":"2026-01-01T00:00:00.000Z","seq":3,"sess"#))
        .expect("tear");
    assert_eq!(verify(&path).expect("verify").first_broken.expect("torn").line, 3);

    write_n(&path, 1).await;
    let lines = lines(&path);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[..2], good[..]);
    let third = json(&lines[2]);
    assert_eq!(third["seq"], 3);
    assert_eq!(third["prevHash"], sha256_hex(good[1].as_bytes()));
    assert_eq!(verify(&path).expect("verify").first_broken, None);
}

#[tokio::test]
async fn an_unwritable_path_fails_closed_by_default() {
    let dir = TempDir::new("closed");
    let path = dir.join("audit.jsonl");
    fs::create_dir(&path).expect("a directory where the file should be");
    let err = AuditLog::open(AuditSettings::new(&path)).expect_err("must fail");
    assert!(err.to_string().contains("audit.jsonl"), "{err}");
}

#[tokio::test]
async fn an_unwritable_path_is_tolerated_with_fail_open() {
    let dir = TempDir::new("open-fail");
    let path = dir.join("audit.jsonl");
    fs::create_dir(&path).expect("a directory where the file should be");
    let log = AuditLog::open(AuditSettings { fail_open: true, ..AuditSettings::new(&path) }).expect("open anyway");
    record(&log, &Req::allow("s", "t", None)).await.expect("the call goes ahead");
    // Once the path is usable, records are written again.
    fs::remove_dir(&path).expect("remove dir");
    record(&log, &Req::allow("s", "t", None)).await.expect("record");
    assert_eq!(json(&lines(&path)[0])["seq"], 1);
}

/// A log whose next write must rotate into `audit.jsonl.1`, made a
/// directory so the rotation fails.
async fn log_that_cannot_rotate(dir: &TempDir, fail_open: bool) -> AuditLog {
    let path = dir.join("audit.jsonl");
    let settings = AuditSettings { fail_open, rotate_bytes: Some(10), keep: 1, ..AuditSettings::new(&path) };
    let log = AuditLog::open(settings).expect("open");
    record(&log, &Req::allow("s", "first", None)).await.expect("first record");
    fs::create_dir(dir.join("audit.jsonl.1")).expect("block rotation");
    log
}

#[tokio::test]
async fn a_failed_write_refuses_the_call() {
    let dir = TempDir::new("write-closed");
    let log = log_that_cannot_rotate(&dir, false).await;
    let err = record(&log, &Req::allow("s", "second", None)).await.expect_err("fail closed");
    assert!(err.contains("audit"), "{err}");
    // Nothing half-written; after the cause is gone the chain goes on.
    let path = dir.join("audit.jsonl");
    assert_eq!(lines(&path).len(), 1);
    fs::remove_dir(dir.join("audit.jsonl.1")).expect("unblock");
    record(&log, &Req::allow("s", "third", None)).await.expect("record");
    let rotated = lines(&dir.join("audit.jsonl.1"));
    let current = lines(&path);
    assert_eq!(json(&current[0])["seq"], 2);
    assert_eq!(json(&current[0])["prevHash"], sha256_hex(rotated[0].as_bytes()));
}

#[tokio::test]
async fn a_failed_write_lets_the_call_through_with_fail_open() {
    let dir = TempDir::new("write-open");
    let log = log_that_cannot_rotate(&dir, true).await;
    record(&log, &Req::allow("s", "second", None)).await.expect("fail open");
    assert_eq!(lines(&dir.join("audit.jsonl")).len(), 1);
}

#[tokio::test]
async fn rotation_keeps_files_and_continues_the_chain() {
    let dir = TempDir::new("rotate");
    let path = dir.join("audit.jsonl");
    let settings = AuditSettings { rotate_bytes: Some(1200), keep: 2, ..AuditSettings::new(&path) };
    let log = AuditLog::open(settings.clone()).expect("open");
    for i in 0..12 {
        let name = format!("tool{i}");
        record(&log, &Req::allow("github", &name, Some(r#"{"x":1}"#))).await.expect("record");
    }
    let files = [dir.join("audit.jsonl.2"), dir.join("audit.jsonl.1"), path.clone()];
    assert!(!dir.join("audit.jsonl.3").exists(), "only `keep` rotated files");
    let mut all = Vec::new();
    for file in &files {
        assert!(fs::metadata(file).expect("exists").len() <= 1200);
        let report = verify(file).expect("verify");
        assert_eq!(report.first_broken, None, "{}", file.display());
        all.push(lines(file));
    }
    // The chain runs on across files: each first prevHash is the hash of the
    // previous file's last line, and seq has no gap.
    for pair in all.windows(2) {
        let last = pair[0].last().expect("line");
        assert_eq!(json(&pair[1][0])["prevHash"], sha256_hex(last.as_bytes()));
    }
    let seqs: Vec<u64> = all.iter().flatten().map(|line| json(line)["seq"].as_u64().expect("seq")).collect();
    assert_eq!(*seqs.last().expect("seq"), 12);
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    drop(log);

    // A crash right after the rename leaves an empty current file: reopening
    // continues from the newest rotated file.
    fs::rename(&path, dir.join("audit.jsonl.1")).expect("rename");
    let log = AuditLog::open(settings).expect("reopen");
    record(&log, &Req::allow("github", "after", None)).await.expect("record");
    let rotated = lines(&dir.join("audit.jsonl.1"));
    let first = json(&lines(&path)[0]);
    assert_eq!(first["seq"], 13);
    assert_eq!(first["prevHash"], sha256_hex(rotated.last().expect("line").as_bytes()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_records_form_one_chain() {
    let dir = TempDir::new("concurrent");
    let path = dir.join("audit.jsonl");
    let log =
        Arc::new(AuditLog::open(AuditSettings { fsync: Fsync::Never, ..AuditSettings::new(&path) }).expect("open"));
    for (name, outcome) in record_at_once(&log, 40, None).await {
        outcome.unwrap_or_else(|err| panic!("{name}: {err}"));
    }
    let report = verify(&path).expect("verify");
    assert_eq!((report.records, report.first_broken), (40, None));
    assert_eq!(json(&lines(&path)[0])["prevHash"], GENESIS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_written_together_are_all_synced_and_chained_in_file_order() {
    let dir = TempDir::new("group");
    let path = dir.join("audit.jsonl");
    let log = Arc::new(AuditLog::open(AuditSettings::new(&path)).expect("open"));
    for (name, outcome) in record_at_once(&log, 64, Some(r#"{"n":1}"#)).await {
        outcome.unwrap_or_else(|err| panic!("{name}: {err}"));
    }
    let lines = lines(&path);
    let report = verify(&path).expect("verify");
    assert_eq!((report.records, report.first_broken), (64, None));
    let mut names: Vec<String> =
        lines.iter().map(|line| json(line)["name"].as_str().expect("name").to_owned()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 64, "every record once");
    // The writer's framing is exactly what serde_json writes for the whole
    // record: parsing a line and writing it again gives the same bytes.
    for line in &lines {
        let parsed: warden_audit::AuditRecord = serde_json::from_str(line).expect("record");
        assert_eq!(&serde_json::to_string(&parsed).expect("serialise"), line);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_that_crosses_a_rotation_continues_the_chain_in_the_next_file() {
    let dir = TempDir::new("group-rotate");
    let path = dir.join("audit.jsonl");
    let settings = AuditSettings { rotate_bytes: Some(2000), keep: 50, ..AuditSettings::new(&path) };
    let log = Arc::new(AuditLog::open(settings).expect("open"));
    for (name, outcome) in record_at_once(&log, 60, None).await {
        outcome.unwrap_or_else(|err| panic!("{name}: {err}"));
    }
    let mut files: Vec<_> =
        (1..=50).rev().map(|n| dir.join(&format!("audit.jsonl.{n}"))).filter(|f| f.exists()).collect();
    files.push(path.clone());
    assert!(files.len() > 3, "rotated several times: {files:?}");
    let mut previous: Option<String> = None;
    let mut seq = 0;
    for file in &files {
        assert!(fs::metadata(file).expect("exists").len() <= 2000, "{}", file.display());
        assert_eq!(verify(file).expect("verify").first_broken, None, "{}", file.display());
        for line in lines(file) {
            let value = json(&line);
            seq += 1;
            assert_eq!(value["seq"], seq);
            if let Some(previous) = &previous {
                assert_eq!(value["prevHash"], sha256_hex(previous.as_bytes()));
            }
            previous = Some(line);
        }
    }
    assert_eq!(seq, 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_a_batch_fails_part_way_exactly_the_records_reported_written_are_in_the_file() {
    let dir = TempDir::new("group-fail");
    let path = dir.join("audit.jsonl");
    let settings = AuditSettings { rotate_bytes: Some(3000), keep: 1, ..AuditSettings::new(&path) };
    let log = Arc::new(AuditLog::open(settings).expect("open"));
    record(&log, &Req::allow("s", "first", None)).await.expect("first record");
    // The rotation that the file will need fails: `.1` is a directory.
    fs::create_dir(dir.join("audit.jsonl.1")).expect("block rotation");
    let mut written = vec!["first".to_owned()];
    let mut refused = 0;
    for (name, outcome) in record_at_once(&log, 40, None).await {
        match outcome {
            Ok(()) => written.push(name),
            Err(err) => {
                assert!(err.contains("rotate"), "{err}");
                refused += 1;
            }
        }
    }
    assert!(refused > 0, "the file filled up, so some records could not be written");
    let mut in_file: Vec<String> =
        lines(&path).iter().map(|line| json(line)["name"].as_str().expect("name").to_owned()).collect();
    in_file.sort();
    written.sort();
    assert_eq!(in_file, written, "a record is in the file exactly when it was reported written");
    assert_eq!(verify(&path).expect("verify").first_broken, None);
}

/// Drops the last `count` lines of `path`, as a machine crash does to lines
/// the kernel had not written back.
fn lose_last_lines(path: &std::path::Path, count: usize) {
    let kept = lines(path);
    let kept = &kept[..kept.len() - count];
    let text: String = kept.iter().map(|line| format!("{line}\n")).collect();
    fs::write(path, text).expect("rewrite");
}

/// Set in the child process of [`crash_after`].
const CRASH_DIR: &str = "WARDEN_AUDIT_CRASH_DIR";

/// Runs `test` (the calling test's name) again in a child process of this
/// test binary, with `dir` in [`CRASH_DIR`]: there the test writes its
/// records and calls [`crash`]. Returns once the child is gone.
fn crash_after(test: &str, dir: &std::path::Path) {
    let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(CRASH_DIR, dir)
        .status()
        .expect("child");
    assert!(status.success(), "the crashing child failed");
}

/// Ends the child process without closing the log (which would sync it
/// and empty the journal), as a crash does: what it wrote stays in the
/// page cache, and its lock on the journal goes with it.
fn crash(log: AuditLog) -> ! {
    std::mem::forget(log);
    std::process::exit(0)
}

#[tokio::test]
async fn acknowledged_records_a_crash_took_from_the_file_come_back_from_the_sync_journal() {
    const TEST: &str = "acknowledged_records_a_crash_took_from_the_file_come_back_from_the_sync_journal";
    if let Some(dir) = std::env::var_os(CRASH_DIR) {
        let log = AuditLog::open(AuditSettings::new(std::path::Path::new(&dir).join("audit.jsonl"))).expect("open");
        for i in 0..10 {
            record(&log, &Req::allow("fs", &format!("t{i}"), None)).await.expect("record");
        }
        crash(log);
    }
    let dir = TempDir::new("journal-recover");
    let path = dir.join("audit.jsonl");
    crash_after(TEST, dir.path());
    let before = lines(&path);
    assert_eq!(before.len(), 10);
    // The last four lines never reached the disk.
    lose_last_lines(&path, 4);

    let log = AuditLog::open(AuditSettings::new(&path)).expect("reopen");
    assert_eq!(lines(&path), before, "every acknowledged record is back, byte for byte");
    record(&log, &Req::allow("fs", "after", None)).await.expect("record");
    drop(log);
    let after = lines(&path);
    assert_eq!(json(&after[10])["seq"], 11);
    assert_eq!(verify(&path).expect("verify").first_broken, None);

    // After a clean close the journal holds nothing to restore: lines cut
    // off now stay cut off (nothing acknowledged is missing).
    lose_last_lines(&path, 1);
    drop(AuditLog::open(AuditSettings::new(&path)).expect("reopen"));
    assert_eq!(lines(&path).len(), 10);
}

#[tokio::test]
async fn a_rotated_file_that_lost_its_last_lines_is_repaired_from_the_sync_journal() {
    const TEST: &str = "a_rotated_file_that_lost_its_last_lines_is_repaired_from_the_sync_journal";
    let settings = |dir: &std::path::Path| AuditSettings {
        rotate_bytes: Some(2000),
        keep: 3,
        ..AuditSettings::new(dir.join("audit.jsonl"))
    };
    if let Some(dir) = std::env::var_os(CRASH_DIR) {
        let log = AuditLog::open(settings(std::path::Path::new(&dir))).expect("open");
        for i in 0..12 {
            record(&log, &Req::allow("github", &format!("tool{i}"), Some(r#"{"x":1}"#))).await.expect("record");
        }
        crash(log);
    }
    let dir = TempDir::new("journal-rotated");
    let path = dir.join("audit.jsonl");
    crash_after(TEST, dir.path());
    let rotated = dir.join("audit.jsonl.1");
    let (rotated_before, current_before) = (lines(&rotated), lines(&path));
    assert!(!current_before.is_empty() && rotated_before.len() > 2);
    lose_last_lines(&rotated, 2);
    lose_last_lines(&path, 1);

    drop(AuditLog::open(settings(dir.path())).expect("reopen"));
    assert_eq!(lines(&rotated), rotated_before);
    assert_eq!(lines(&path), current_before);
    for file in [&rotated, &path] {
        assert_eq!(verify(file).expect("verify").first_broken, None, "{}", file.display());
    }
}

#[tokio::test]
async fn a_second_process_on_the_same_log_syncs_without_the_journal() {
    let dir = TempDir::new("journal-shared");
    let path = dir.join("audit.jsonl");
    // Two logs on one file, as two Warden processes of one config: the
    // second cannot own the journal, and still makes its records durable.
    let first = AuditLog::open(AuditSettings::new(&path)).expect("open");
    let second = AuditLog::open(AuditSettings::new(&path)).expect("open again");
    record(&first, &Req::allow("fs", "one", None)).await.expect("record");
    record(&second, &Req::allow("fs", "two", None)).await.expect("record");
    assert_eq!(lines(&path).len(), 2);
}

/// Set in the child process of [`alone`].
const ALONE: &str = "WARDEN_AUDIT_ALONE";

/// Runs `test` again in a child process of this test binary, with
/// [`ALONE`] set: there it measures the writer threads with no other test's
/// log in the process.
fn alone(test: &str) {
    let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(ALONE, "1")
        .status()
        .expect("child");
    assert!(status.success(), "the child measuring the writer threads failed");
}

/// Writes 50 records one after another and returns how often the writer
/// threads were woken meanwhile.
async fn wakeups_for_sequential_records(dir: &TempDir) -> u64 {
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(AuditSettings::new(&path)).expect("open");
    record(&log, &Req::allow("fs", "warm", None)).await.expect("record");
    let before = common::wakeups::writer_wakeups("self");
    for i in 0..50 {
        record(&log, &Req::allow("fs", &format!("t{i}"), None)).await.expect("record");
    }
    let woken = common::wakeups::writer_wakeups("self") - before;
    drop(log);
    assert_eq!(verify(&path).expect("verify").records, 51);
    woken
}

#[tokio::test]
async fn a_record_alone_is_made_durable_on_the_callers_thread() {
    const TEST: &str = "a_record_alone_is_made_durable_on_the_callers_thread";
    if std::env::var_os(ALONE).is_some() {
        // One thread, nothing else served: handing each record to a writer
        // thread and being woken back would cost as much as the write.
        // Through the threads each record costs them 3 to 4 wake-ups; a
        // write slowed by another process's disk traffic may send a few
        // records their way.
        let woken = wakeups_for_sequential_records(&TempDir::new("alone")).await;
        assert!(woken < 50, "the writer threads were woken {woken} times for 50 records");
        return;
    }
    alone(TEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_runtime_of_several_threads_the_writer_threads_write() {
    const TEST: &str = "on_a_runtime_of_several_threads_the_writer_threads_write";
    if std::env::var_os(ALONE).is_some() {
        // Blocking a worker there would hold up the tasks queued behind it.
        let woken = wakeups_for_sequential_records(&TempDir::new("several")).await;
        assert!(woken >= 50, "the writer threads were woken {woken} times for 50 records");
        return;
    }
    alone(TEST);
}
