//! End to end: the audit log under load and when the disk fails. Every
//! answered call has its record on disk, whatever happens to Warden after
//! the answer; a record that cannot be written withholds the answer.

mod support;
#[path = "../../audit/tests/common/wakeups.rs"]
mod wakeups;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use support::{Client, fixtures};
use wakeups::writer_wakeups;

/// `warden audit verify FILE`: whether it passed, and what it printed.
fn verify(log: &Path) -> (bool, String) {
    let output = Command::new(support::warden_bin()).args(["audit", "verify", log.to_str().unwrap()]).output().unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The complete lines of the log (a torn last line left by a kill is not one).
fn records(log: &Path) -> Vec<Value> {
    support::audit_records(log)
}

fn audit_config(log: &Path, extra: &str) -> String {
    fixtures(&[("fx", &[])], &format!("audit: {{path: {:?}{extra}}}\n", log.to_str().unwrap()))
}

/// Runs `warden serve` with an audit log in `dir` and 16 calls in flight at
/// all times until `answered` calls are answered, then kills it with
/// SIGKILL, some calls mid-batch. Returns the config and the texts of the
/// calls answered.
fn kill_under_16_callers(dir: &Path, answered_count: usize) -> (String, Vec<String>) {
    const IN_FLIGHT: usize = 16;
    let log = dir.join("audit.jsonl");
    let config = audit_config(&log, "");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");

    // 16 calls in flight at all times; each answer is followed by a new call.
    let mut next = 0usize;
    let mut in_flight: HashMap<Value, String> = HashMap::new();
    let mut send = |client: &mut Client, in_flight: &mut HashMap<Value, String>| {
        let text = format!("call-{next}");
        next += 1;
        let id = client.send_request("tools/call", json!({"name": "fx__echo", "arguments": {"text": text}}));
        in_flight.insert(id, text);
    };
    for _ in 0..IN_FLIGHT {
        send(&mut client, &mut in_flight);
    }
    let mut answered = Vec::new();
    while answered.len() < answered_count {
        let ids: HashSet<Value> = in_flight.keys().cloned().collect();
        let response = client.wait_for("an answer", |m| ids.contains(&m["id"]) && m.value.get("method").is_none());
        let text = in_flight.remove(&response["id"]).unwrap();
        assert_eq!(response["result"]["content"][0]["text"], text.as_str(), "{}", response.raw);
        answered.push(text);
        send(&mut client, &mut in_flight);
    }
    // Killed with 16 calls in flight, some of them mid-batch.
    let killed = Command::new("kill").args(["-9", &client.pid().to_string()]).status().unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + support::PATIENCE;
    while support::alive(client.pid()) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    (config, answered)
}

/// The answered calls that have no record in `log`.
fn missing<'a>(log: &Path, answered: &'a [String]) -> Vec<&'a String> {
    let written: HashSet<String> =
        records(log).iter().map(|record| record["arguments"]["text"].as_str().unwrap().to_owned()).collect();
    answered.iter().filter(|text| !written.contains(*text)).collect()
}

#[test]
fn a_kill_under_16_concurrent_callers_loses_no_answered_record() {
    let dir = support::scratch_dir("audit-kill16");
    let log = dir.join("audit.jsonl");
    let (config, answered) = kill_under_16_callers(&dir, 400);
    let lost = missing(&log, &answered);
    assert!(lost.is_empty(), "answered calls without a record: {lost:?}");
    // At most a torn last line (a batch the kill interrupted, never answered).
    let (ok, report) = verify(&log);
    assert!(ok || report.contains("torn last line"), "{report}");

    // Warden started again removes a torn line and continues the chain.
    let last_seq = records(&log).last().unwrap()["seq"].as_u64().unwrap();
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    assert_eq!(client.call_text("fx__echo", json!({"text": "after"})), "after");
    client.close();
    let (ok, report) = verify(&log);
    assert!(ok, "{report}");
    let after = records(&log);
    assert_eq!(after.last().unwrap()["arguments"]["text"], "after");
    assert_eq!(after.last().unwrap()["seq"], last_seq + 1);
}

#[test]
fn after_a_machine_crash_the_sync_journal_gives_back_every_answered_record() {
    let dir = support::scratch_dir("audit-power");
    let log = dir.join("audit.jsonl");
    let (config, answered) = kill_under_16_callers(&dir, 400);
    // The kernel had not written back the log's last 40 lines when the
    // machine went down: what the page cache held is gone.
    let text = std::fs::read_to_string(&log).unwrap();
    let complete = &text[..text.rfind('\n').map_or(0, |at| at + 1)];
    let kept: Vec<&str> = complete.lines().collect();
    let kept = &kept[..kept.len() - 40];
    std::fs::write(&log, kept.iter().map(|line| format!("{line}\n")).collect::<String>()).unwrap();
    assert!(!missing(&log, &answered).is_empty(), "the crash took answered records");

    // Started again, Warden puts them back from the journal before anything else.
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    assert_eq!(client.call_text("fx__echo", json!({"text": "after"})), "after");
    client.close();
    let lost = missing(&log, &answered);
    assert!(lost.is_empty(), "answered calls without a record after recovery: {lost:?}");
    let (ok, report) = verify(&log);
    assert!(ok, "{report}");
    assert_eq!(records(&log).last().unwrap()["arguments"]["text"], "after");
}

/// A tmpfs of 256 KiB mounted for one test, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    /// Mounts it, or `None` when this user may not mount (the test then
    /// says so and does nothing; CI runs as root).
    fn mount(at: PathBuf) -> Option<SmallDisk> {
        std::fs::create_dir_all(&at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs", at.to_str().unwrap()])
            .status()
            .is_ok_and(|status| status.success());
        mounted.then_some(SmallDisk(at))
    }

    /// Fills it to the last byte.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.0.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = [b'x'; 4096];
        while file.write_all(&block).is_ok() {}
        while file.write_all(b"x").is_ok() {}
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_withholds_answers_unless_fail_open_and_the_log_recovers_when_space_returns() {
    let dir = support::scratch_dir("audit-full");
    let Some(disk) = SmallDisk::mount(dir.join("disk")) else {
        let root = Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"));
        assert!(!root, "running as root, but a tmpfs could not be mounted");
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    };
    let closed_log = disk.0.join("closed.jsonl");
    let open_log = disk.0.join("open.jsonl");
    let mut closed = Client::serve_initialized(&audit_config(&closed_log, ""));
    let mut open = Client::serve_initialized(&audit_config(&open_log, ", failOpen: true"));
    for client in [&mut closed, &mut open] {
        client.wait_for_tool("fx__echo");
        assert_eq!(client.call_text("fx__echo", json!({"text": "before"})), "before");
    }

    // The log's last block still has room for a few records: the disk is
    // full for the log once that is used up too.
    let filler = disk.fill();
    let mut closed_answered = vec![json!("before")];
    let refused = loop {
        let text = format!("while-full-{}", closed_answered.len());
        let response = closed.request("tools/call", json!({"name": "fx__echo", "arguments": {"text": text}}));
        if response.value.get("error").is_some() {
            break response;
        }
        assert!(closed_answered.len() < 100, "the log never filled up");
        closed_answered.push(json!(text));
    };
    let message = refused["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(
        message.starts_with("the audit log could not be written, so the result was withheld")
            && message.contains("No space left on device"),
        "fail closed, saying why: {}",
        refused.raw
    );
    closed.wait_stderr("No space left on device");
    // failOpen lets the call through and says so in the log.
    for i in 0..100 {
        assert_eq!(open.call_text("fx__echo", json!({"text": format!("while-full-{i}")})), format!("while-full-{i}"));
        if open.stderr().contains("the call goes ahead (fail_open)") {
            break;
        }
    }
    open.wait_stderr("No space left on device");

    std::fs::remove_file(filler).unwrap();
    for client in [&mut closed, &mut open] {
        assert_eq!(client.call_text("fx__echo", json!({"text": "after"})), "after");
    }
    closed.close();
    open.close();
    closed_answered.push(json!("after"));
    for log in [&closed_log, &open_log] {
        let (ok, report) = verify(log);
        assert!(ok, "{}: {report}", log.display());
    }
    let texts =
        |log: &Path| -> Vec<Value> { records(log).iter().map(|record| record["arguments"]["text"].clone()).collect() };
    assert_eq!(texts(&closed_log), closed_answered, "every answered call, and nothing of the refused one");
    let open_texts = texts(&open_log);
    assert_eq!(open_texts.last(), Some(&json!("after")), "{open_texts:?}");
}

#[test]
fn a_call_alone_commits_its_own_record_and_calls_together_share_the_writer_threads() {
    let dir = support::scratch_dir("audit-in-place");
    let log = dir.join("audit.jsonl");
    let mut client = Client::serve_initialized(&audit_config(&log, ""));
    client.wait_for_tool("fx__echo");
    assert_eq!(client.call_text("fx__echo", json!({"text": "warm"})), "warm");

    // One call at a time: each record is made durable on the runtime's own
    // thread, so the writer threads sleep.
    let before = writer_wakeups(&client.pid().to_string());
    for i in 0..30 {
        let text = format!("alone-{i}");
        assert_eq!(client.call_text("fx__echo", json!({"text": text})), text);
    }
    let alone = writer_wakeups(&client.pid().to_string()) - before;
    // Through the threads each record costs them about 3 wake-ups; a write
    // slowed by another process's disk traffic may send a few their way.
    assert!(alone < 30, "the writer threads were woken {alone} times for 30 calls made one at a time");

    // 16 at a time: blocking the one runtime thread would hold up the other
    // calls, so their records go to the writer threads.
    let before = writer_wakeups(&client.pid().to_string());
    for round in 0..10 {
        let ids: HashSet<Value> = (0..16)
            .map(|i| {
                client.send_request(
                    "tools/call",
                    json!({"name": "fx__echo", "arguments": {"text": format!("together-{round}-{i}")}}),
                )
            })
            .collect();
        for _ in 0..16 {
            client.wait_for("an answer", |m| ids.contains(&m["id"]) && m.value.get("method").is_none());
        }
    }
    let together = writer_wakeups(&client.pid().to_string()) - before;
    assert!(together >= 10, "the writer threads were woken {together} times for 160 calls made 16 at a time");
    client.close();
    let (ok, report) = verify(&log);
    assert!(ok, "{report}");
    assert_eq!(records(&log).len(), 1 + 30 + 160);
}

/// Claude Code and Claude Desktop start one `warden` per window, all on one
/// configuration: three Wardens, 16 calls in flight on each, append to one
/// log, and it stays one chain that `audit verify` accepts.
#[test]
fn several_wardens_on_one_log_keep_one_chain() {
    let dir = support::scratch_dir("audit-shared");
    let log = dir.join("audit.jsonl");
    let config = audit_config(&log, ", rotateBytes: 20000, keep: 100");
    let mut wardens: Vec<Client> = (0..3).map(|_| Client::serve_initialized(&config)).collect();
    for warden in &mut wardens {
        warden.wait_for_tool("fx__echo");
    }
    // Every Warden keeps calls in flight while the others write.
    let mut pending: Vec<Vec<Value>> = vec![Vec::new(); wardens.len()];
    for round in 0..10 {
        for (w, warden) in wardens.iter_mut().enumerate() {
            for i in 0..16 {
                let text = format!("w{w}-r{round}-{i}");
                pending[w]
                    .push(warden.send_request("tools/call", json!({"name": "fx__echo", "arguments": {"text": text}})));
            }
        }
        for (w, warden) in wardens.iter_mut().enumerate() {
            for id in pending[w].drain(..) {
                let answer = warden.response(&id);
                assert!(answer["result"].is_object(), "{}", answer.raw);
            }
        }
    }
    for warden in &mut wardens {
        warden.close();
    }
    let (ok, report) = verify(&log);
    assert!(ok, "{report}");
    let mut files: Vec<std::path::PathBuf> =
        (1..=100).rev().map(|n| dir.join(format!("audit.jsonl.{n}"))).filter(|file| file.exists()).collect();
    assert!(!files.is_empty(), "rotated at least once");
    files.push(log.clone());
    let mut seqs = Vec::new();
    for file in &files {
        let (ok, report) = verify(file);
        assert!(ok, "{}: {report}", file.display());
        seqs.extend(records(file).iter().map(|record| record["seq"].as_u64().expect("seq")));
    }
    let calls = 3 * 10 * 16;
    assert!(seqs.len() >= calls, "{} records", seqs.len());
    assert!(seqs.windows(2).all(|pair| pair[1] == pair[0] + 1), "one chain across files: {seqs:?}");
}

/// IronCurtain records what each tool answered; so does Warden, redacted
/// like the arguments, and `results: false` leaves it out.
#[test]
fn a_tool_answer_is_recorded_redacted_and_can_be_left_out() {
    let key = "sk-ant-api03-abcDEF123-ghiJKL456_mnoPQR789-stuVWX012yz";
    let dir = support::scratch_dir("audit-results");
    for (extra, recorded) in [("", true), (", results: false", false)] {
        let log = dir.join(format!("audit{}.jsonl", recorded as u8));
        let mut client = Client::serve_initialized(&audit_config(&log, extra));
        client.wait_for_tool("fx__echo");
        let text = format!("the key is {key}");
        assert_eq!(client.call_text("fx__echo", json!({"text": text})), text);
        client.close();
        let records = records(&log);
        let call = records.iter().find(|r| r["name"] == "echo").expect("the call's record");
        assert!(!call.to_string().contains(key), "{call}");
        if recorded {
            assert_eq!(call["result"]["content"][0]["text"], "the key is [REDACTED:api-key]", "{call}");
            let digest = call["resultDigest"].as_str().unwrap_or_default();
            assert_eq!(digest.len(), 64, "{call}");
        } else {
            assert!(call.get("result").is_none() && call.get("resultDigest").is_none(), "{call}");
        }
    }
}

/// `warden audit query LOG ARGS...`: success and stdout.
fn query(log: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new(support::warden_bin())
        .args(["audit", "query", log.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[test]
fn the_log_is_searched_by_time_server_tool_decision_rule_and_client_across_rotated_files() {
    let dir = support::scratch_dir("audit-query");
    let log = dir.join("audit.jsonl");
    // Small files: the calls' records spread over the log and its rotated files.
    let policy = "\npolicy:\n  rules:\n    - {name: no-secrets, if: {tool: [echo], args: {arg: text, contains: SECRET}}, then: deny}\n";
    let mut client = Client::serve_initialized(&(audit_config(&log, ", rotateBytes: 2000, keep: 20") + policy));
    client.wait_for_tool("fx__echo");
    for i in 0..6 {
        assert_eq!(client.call_text("fx__echo", json!({"text": format!("call {i}")})), format!("call {i}"));
    }
    for _ in 0..2 {
        assert_eq!(client.call_tool("fx__echo", json!({"text": "a SECRET"}))["isError"], true);
    }
    client.close();
    assert!(dir.join("audit.jsonl.1").exists(), "the log rotated");

    let lines = |text: &str| text.lines().map(|line| serde_json::from_str::<Value>(line).unwrap()).collect::<Vec<_>>();
    let (ok, all) = query(&log, &["--tool", "echo", "--json"]);
    assert!(ok, "{all}");
    let all = lines(&all);
    assert_eq!(all.len(), 8, "every call, from every file: {all:?}");
    let texts: Vec<&str> = all.iter().filter_map(|r| r["arguments"]["text"].as_str()).collect();
    assert_eq!(&texts[..6], ["call 0", "call 1", "call 2", "call 3", "call 4", "call 5"], "oldest first");

    let (ok, denied) = query(&log, &["--decision", "deny", "--rule", "no-secrets", "--server", "fx", "--json"]);
    assert!(ok);
    assert_eq!(lines(&denied).len(), 2, "{denied}");
    let (_, by_client) = query(&log, &["--client", "warden-tests", "--tool", "echo", "--json"]);
    assert_eq!(lines(&by_client).len(), 8);
    let (_, other_client) = query(&log, &["--client", "cursor", "--json"]);
    assert!(other_client.is_empty(), "{other_client}");
    let (_, recent) = query(&log, &["--since", "1h", "--tool", "echo", "--limit", "3", "--json"]);
    let recent = lines(&recent);
    assert_eq!(recent.len(), 3);
    assert_eq!(recent[0]["arguments"]["text"], "call 5", "the most recent three, oldest first");
    let (_, before) = query(&log, &["--until", "2001-01-01", "--json"]);
    assert!(before.is_empty(), "{before}");

    let (ok, table) = query(&log, &["--decision", "deny"]);
    assert!(ok);
    let mut rows = table.lines();
    assert_eq!(
        rows.next().map(|header| header.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["TIME", "SERVER", "NAME", "DECISION", "RULE", "OUTCOME", "CLIENT"])
    );
    let row: Vec<&str> = rows.next().unwrap().split_whitespace().collect();
    assert_eq!(&row[1..6], ["fx", "echo", "deny", "no-secrets", "refused"], "{table}");
    assert!(table.ends_with("2 records\n"), "{table}");

    let (ok, bad) = query(&log, &["--since", "last tuesday"]);
    assert!(!ok && bad.contains("neither a time"), "{bad}");
    let (ok, missing) = query(&dir.join("nothing.jsonl"), &[]);
    assert!(!ok && missing.contains("nothing.jsonl"), "{missing}");
}
