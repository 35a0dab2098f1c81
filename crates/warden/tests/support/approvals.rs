//! Helpers of the approval tests: a Warden whose policy escalates, the
//! `warden approvals` command, and the audit log's approval steps.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::{Client, PATIENCE, fixtures, warden_bin};

/// A Warden whose fixture's echo escalates text containing DROP (timeout
/// `timeout` seconds), with its control socket and audit log in `dir`, and
/// `approval` (indented YAML) added to its `approval:` section.
pub fn approval_config(dir: &Path, timeout: Option<u64>, approval: &str) -> String {
    let timeout = timeout.map(|secs| format!(", timeoutSecs: {secs}")).unwrap_or_default();
    fixtures(
        &[("fx", &[])],
        &format!(
            "policy:\n  rules:\n    - {{name: drops-need-a-human, if: {{tool: [echo], args: {{arg: text, contains: DROP}}}}, then: escalate, reason: DROP changes the schema{timeout}}}\napproval:\n  socket: {socket:?}\n{approval}audit: {{path: {audit:?}}}\n",
            socket = dir.join("approvals.sock").to_str().unwrap(),
            audit = dir.join("audit.jsonl").to_str().unwrap(),
        ),
    )
}

/// Runs `warden approvals ARGS --socket <dir>/approvals.sock`.
pub fn approvals(dir: &Path, args: &[&str]) -> (bool, String) {
    let socket = dir.join("approvals.sock");
    let output = Command::new(warden_bin())
        .arg("approvals")
        .args(args)
        .arg("--socket")
        .arg(&socket)
        .output()
        .expect("run warden approvals");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

/// The pending approvals, from `warden approvals list --json`, once there
/// are `count`.
pub fn pending(dir: &Path, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let (ok, text) = approvals(dir, &["list", "--json"]);
        if ok {
            let list: Value = serde_json::from_str(&text).expect("list --json is JSON");
            let pending = list["pending"].as_array().cloned().unwrap_or_default();
            if pending.len() == count {
                return pending;
            }
        }
        assert!(std::time::Instant::now() < deadline, "never {count} pending approvals: {text}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Sends a tools/call of echo with a progress token and returns its id.
pub fn call_echo(client: &mut Client, text: &str, token: &str) -> Value {
    client.send_request(
        "tools/call",
        json!({"name": "fx__echo", "arguments": {"text": text, "n": [1, 2]}, "_meta": {"progressToken": token}}),
    )
}

pub fn audit_records(dir: &Path) -> Vec<Value> {
    super::audit_records(&dir.join("audit.jsonl"))
}

/// Waits until the audit log has a record for approval `id` in `state`.
pub fn wait_for_step(dir: &Path, id: &str, state: &str) -> Value {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let found = audit_records(dir)
            .into_iter()
            .find(|record| record["approval"]["id"] == id && record["approval"]["state"] == state);
        if let Some(record) = found {
            return record;
        }
        assert!(std::time::Instant::now() < deadline, "no {state} record for {id}: {:#?}", audit_records(dir));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

pub fn verify_audit(dir: &Path) {
    let output =
        Command::new(warden_bin()).args(["audit", "verify"]).arg(dir.join("audit.jsonl")).output().expect("verify");
    assert!(output.status.success(), "audit verify: {}", String::from_utf8_lossy(&output.stdout));
}

/// The approval page's URL, from the line Warden prints at start.
pub fn page_url(stderr: impl Fn() -> String) -> String {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let text = stderr();
        if let Some(line) = text.lines().find(|line| line.contains("approvals at http://")) {
            let at = line.find("http://").unwrap();
            return line[at..].split_whitespace().next().unwrap().to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "warden printed no approval page: {text}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
