//! End to end: an escalated call waits for a decision over the control
//! socket (`warden approvals ...`), other calls flow meanwhile, and every
//! step of the approval is in the audit chain.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use support::approvals::{approval_config, approvals, audit_records, call_echo, pending, verify_audit, wait_for_step};
use support::{Client, fixtures, scratch_dir, warden_bin};

fn started(dir: &Path, timeout: Option<u64>) -> Client {
    let mut client = Client::serve_initialized(&approval_config(dir, timeout, ""));
    client.wait_for_tool("fx__echo");
    client
}

#[test]
fn an_escalated_call_waits_other_calls_flow_and_the_cli_approves_it_once() {
    let dir = scratch_dir("approve");
    let mut client = started(&dir, None);
    let mode = std::fs::metadata(dir.join("approvals.sock")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "only the owner may decide");

    let id = call_echo(&mut client, "DROP TABLE users", "tok-1");
    let progress = client.wait_method("notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "tok-1");
    let message = progress["params"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("waiting for approval ") && message.contains("warden approvals approve"), "{message}");

    // While it waits, the session goes on.
    assert_eq!(client.call_text("fx__echo", json!({"text": "SELECT 1"})), "SELECT 1");
    assert!(client.request("ping", json!({})).value.get("result").is_some());

    let listed = pending(&dir, 1);
    let approval = &listed[0];
    assert_eq!((approval["server"].as_str(), approval["tool"].as_str()), (Some("fx"), Some("echo")));
    assert_eq!(approval["rule"], "drops-need-a-human");
    assert_eq!(approval["reason"], "DROP changes the schema");
    assert_eq!(approval["client"], "warden-tests/1.0.0");
    let shown = approval["arguments"].clone();
    assert_eq!(shown, json!({"text": "DROP TABLE users", "n": [1, 2]}));
    let full_id = approval["id"].as_str().unwrap().to_owned();
    assert_eq!(full_id.len(), 32, "128 random bits");
    assert!(message.contains(&full_id[..8]), "the progress names the approval: {message}");

    let (ok, text) = approvals(&dir, &["list"]);
    assert!(ok && text.contains("fx/echo") && text.contains("DROP TABLE users"), "{text}");

    let (ok, text) = approvals(&dir, &["approve", &full_id[..8]]);
    assert!(ok && text.contains("approved"), "{text}");
    let answer = client.response(&id);
    assert_eq!(answer["result"]["content"][0]["text"], "DROP TABLE users", "{}", answer.raw);
    assert_eq!(answer["result"]["structuredContent"]["arguments"], shown, "the upstream got exactly what was shown");

    let (ok, again) = approvals(&dir, &["approve", &full_id]);
    assert!(!ok && again.contains("already"), "a second approve does nothing: {again}");
    let (ok, deny) = approvals(&dir, &["deny", &full_id]);
    assert!(!ok && deny.contains("already"), "{deny}");

    let executed = wait_for_step(&dir, &full_id, "executed");
    assert_eq!(executed["outcome"], "result");
    let steps: Vec<String> = audit_records(&dir)
        .iter()
        .filter(|record| record["approval"]["id"] == full_id.as_str())
        .map(|record| record["approval"]["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(steps, ["pending", "approved", "executed"]);
    let approved = wait_for_step(&dir, &full_id, "approved");
    assert_eq!(approved["approval"]["channel"], "cli");
    assert_eq!(approved["approval"]["argsDigest"], approval["argsDigest"]);
    assert_eq!(approved["decision"]["verdict"], "escalate");
    verify_audit(&dir);
}

#[test]
fn a_denial_and_a_timeout_refuse_the_call_naming_the_rule() {
    let dir = scratch_dir("deny");
    let mut client = started(&dir, None);
    let id = call_echo(&mut client, "DROP TABLE a", "t");
    let full_id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    let (ok, text) = approvals(&dir, &["deny", &full_id, "--reason", "not on production"]);
    assert!(ok && text.contains("denied"), "{text}");
    let answer = client.response(&id);
    assert_eq!(answer["result"]["isError"], true);
    let refusal = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(refusal.starts_with("Escalation denied:"), "{refusal}");
    assert!(refusal.contains("'drops-need-a-human'") && refusal.contains("not on production"), "{refusal}");
    wait_for_step(&dir, &full_id, "denied");
    drop(client);

    let dir = scratch_dir("timeout");
    let mut client = started(&dir, Some(1));
    let answer = client.request("tools/call", json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE b"}}));
    let refusal = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(answer["result"]["isError"], true);
    assert!(refusal.starts_with("Escalation timed out:") && refusal.contains("'drops-need-a-human'"), "{refusal}");
    let (_, listed) = approvals(&dir, &["list", "--all"]);
    assert!(listed.contains("expired"), "{listed}");
    verify_audit(&dir);
}

#[test]
fn a_cancelled_call_withdraws_its_approval() {
    let dir = scratch_dir("cancel");
    let mut client = started(&dir, None);
    let id = call_echo(&mut client, "DROP TABLE c", "t");
    let full_id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    // A second request under the waiting one's id is refused; the first
    // still waits, and can still be cancelled.
    let params = json!({"name": "fx__echo", "arguments": {"text": "SELECT 2"}});
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    let refused = client.response(&id);
    assert_eq!(refused["error"]["code"], -32600, "{}", refused.raw);
    assert!(refused.raw.contains("already used"), "{}", refused.raw);
    pending(&dir, 1);
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}));
    wait_for_step(&dir, &full_id, "withdrawn");
    pending(&dir, 0);
    let (ok, text) = approvals(&dir, &["approve", &full_id]);
    assert!(!ok && text.contains("already withdrawn"), "{text}");
    // No answer to a cancelled request; the session goes on.
    assert_eq!(client.call_text("fx__echo", json!({"text": "after"})), "after");
    assert!(client.drain(std::time::Duration::from_millis(200)).iter().all(|m| m["id"] != id));
}

/// `warden approvals watch` on the socket in `dir`: its output so far, and
/// its answers.
struct Watcher {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    output: std::sync::mpsc::Receiver<String>,
}

impl Watcher {
    fn start(dir: &Path) -> Watcher {
        let mut child = Command::new(warden_bin())
            .args(["approvals", "watch", "--socket"])
            .arg(dir.join("approvals.sock"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start watch");
        let stdin = child.stdin.take().unwrap();
        let (output_tx, output) = std::sync::mpsc::channel::<String>();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buffer = Vec::new();
            // The question has no newline: read byte chunks.
            loop {
                let chunk = match reader.fill_buf() {
                    Ok([]) | Err(_) => return,
                    Ok(chunk) => chunk.to_vec(),
                };
                reader.consume(chunk.len());
                buffer.extend_from_slice(&chunk);
                if output_tx.send(String::from_utf8_lossy(&buffer).into_owned()).is_err() {
                    return;
                }
            }
        });
        let mut watcher = Watcher { child, stdin, output };
        watcher.seen("watching");
        watcher
    }

    /// Waits until the output (all of it so far) contains `what`.
    fn seen(&mut self, what: &str) -> String {
        let deadline = std::time::Instant::now() + support::PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let text = self.output.recv_timeout(left).unwrap_or_else(|_| panic!("watch never printed {what:?}"));
            if text.contains(what) {
                return text;
            }
        }
    }

    fn answer(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn watch_shows_each_request_and_asks_yes_or_no() {
    let dir = scratch_dir("watch");
    let mut client = started(&dir, None);
    let mut watcher = Watcher::start(&dir);
    let first = call_echo(&mut client, "DROP TABLE w1", "t1");
    let text = watcher.seen("[y/N]");
    assert!(
        text.contains("fx/echo") && text.contains("DROP TABLE w1") && text.contains("drops-need-a-human"),
        "{text}"
    );
    watcher.answer("y");
    assert_eq!(client.response(&first)["result"]["content"][0]["text"], "DROP TABLE w1");

    let second = call_echo(&mut client, "DROP TABLE w2", "t2");
    watcher.seen("DROP TABLE w2");
    watcher.answer("n");
    let answer = client.response(&second);
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().starts_with("Escalation denied:"));
}

/// One `watch` follows every Warden on the config: those started after it,
/// and the others once the first exits.
#[test]
fn watch_follows_every_warden_on_the_config() {
    let dir = scratch_dir("watch-several");
    let first = started(&dir, None);
    let mut watcher = Watcher::start(&dir);
    // Started after `watch`: its socket is beside the first one's.
    let mut second = started(&dir, None);
    let call = call_echo(&mut second, "DROP TABLE from_second", "t1");
    watcher.seen("DROP TABLE from_second");
    watcher.answer("y");
    assert_eq!(second.response(&call)["result"]["content"][0]["text"], "DROP TABLE from_second");
    drop(first);
    let call = call_echo(&mut second, "DROP TABLE after_the_first", "t2");
    watcher.seen("DROP TABLE after_the_first");
    watcher.answer("y");
    assert_eq!(second.response(&call)["result"]["content"][0]["text"], "DROP TABLE after_the_first");
}

#[test]
fn without_an_approval_section_escalation_is_refused_at_once_saying_how_to_enable_it() {
    let config = fixtures(
        &[("fx", &[])],
        "policy:\n  rules:\n    - {name: ask, if: {tool: [echo]}, then: escalate, reason: needs a person}\n",
    );
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    let result = client.call_tool("fx__echo", json!({"text": "x"}));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Approval required by policy 'ask'") && text.contains("approval:"), "{text}");
}

#[test]
fn approve_remember_whitelists_calls_like_it_for_the_session_until_revoked() {
    let dir = scratch_dir("remember");
    let mut client = started(&dir, None);
    let id = call_echo(&mut client, "DROP TABLE r1", "t");
    let approval_id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    let (ok, text) = approvals(&dir, &["approve", &approval_id, "--remember"]);
    assert!(ok, "{text}");
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE r1");
    // The same call runs at once, approved by the whitelist (audited).
    assert_eq!(client.call_text("fx__echo", json!({"text": "DROP TABLE r1", "n": [1, 2]})), "DROP TABLE r1");
    // Other arguments are not "like it": they wait (issue 28).
    let other = call_echo(&mut client, "DROP TABLE r2", "t2");
    let waiting = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    assert!(approvals(&dir, &["deny", &waiting]).0);
    assert_eq!(client.response(&other)["result"]["isError"], true);
    let whitelisted = audit_records(&dir)
        .into_iter()
        .find(|record| record["approval"]["state"] == "approved" && record["approval"]["channel"] == "whitelist")
        .expect("a whitelist approval in the audit");
    assert!(whitelisted["approval"]["note"].as_str().unwrap().contains("fx/echo in session"), "{whitelisted}");
    let (_, listed) = approvals(&dir, &["list"]);
    let grant = listed
        .lines()
        .find_map(|line| line.strip_prefix("whitelist "))
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("the entry is listed: {listed}"))
        .to_owned();
    let (ok, text) = approvals(&dir, &["revoke", &grant]);
    assert!(ok && text.contains("revoked"), "{text}");
    // Revoked: the next one waits again; the revocation is in the chain.
    call_echo(&mut client, "DROP TABLE r1", "t3");
    pending(&dir, 1);
    let deadline = std::time::Instant::now() + support::PATIENCE;
    let revoked = loop {
        // Written in the background, just after the answer.
        if let Some(record) = audit_records(&dir).into_iter().find(|record| record["method"] == "warden/whitelist") {
            break record;
        }
        assert!(std::time::Instant::now() < deadline, "the revocation is audited");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(revoked["decision"]["reason"].as_str().unwrap().contains(&format!("entry {grant} revoked")), "{revoked}");
    verify_audit(&dir);
}

/// "Approve for this session" may widen a string argument to a pattern the
/// approver writes (issue 28); the approved call must be within it, and
/// nothing outside it runs without asking.
#[test]
fn approve_remember_with_a_pattern_covers_what_it_matches_and_nothing_else() {
    let dir = scratch_dir("remember-pattern");
    let mut client = started(&dir, None);
    let id = call_echo(&mut client, "DROP TABLE tmp_1", "t");
    let listed = pending(&dir, 1);
    let approval_id = listed[0]["id"].as_str().unwrap().to_owned();
    let (_, shown) = approvals(&dir, &["list"]);
    assert!(shown.contains("--pattern NAME=GLOB widens text"), "{shown}");
    // A pattern the approved call is not within, or on a non-string
    // argument, is refused, and decides nothing.
    for pattern in ["text=DROP TABLE other_*", "n=*"] {
        let (ok, said) = approvals(&dir, &["approve", &approval_id, "--remember", "--pattern", pattern]);
        assert!(!ok && said.contains("nothing was decided"), "{pattern}: {said}");
    }
    pending(&dir, 1);
    let (ok, said) = approvals(&dir, &["approve", &approval_id, "--remember", "--pattern", "text=DROP TABLE tmp_*"]);
    assert!(ok, "{said}");
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE tmp_1");
    // Within the pattern: runs at once.
    assert_eq!(client.call_text("fx__echo", json!({"text": "DROP TABLE tmp_2", "n": [1, 2]})), "DROP TABLE tmp_2");
    // Outside it, or with another exact argument: waits.
    for (text, n) in [("DROP TABLE customers", json!([1, 2])), ("DROP TABLE tmp_3", json!([9]))] {
        let other = client.send_request("tools/call", json!({"name": "fx__echo", "arguments": {"text": text, "n": n}}));
        let waiting = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
        assert!(approvals(&dir, &["deny", &waiting]).0);
        assert_eq!(client.response(&other)["result"]["isError"], true, "{text}");
    }
    let (_, listed) = approvals(&dir, &["list"]);
    assert!(listed.contains(r#"text matching "DROP TABLE tmp_*""#), "{listed}");
    verify_audit(&dir);
}

#[test]
fn the_exchange_directory_speaks_ironcurtains_request_and_response_files() {
    let dir = scratch_dir("files");
    let exchange = dir.join("escalations");
    let section = format!("  exchangeDir: {:?}\n", exchange.to_str().unwrap());
    let mut client = Client::serve_initialized(&approval_config(&dir, None, &section));
    client.wait_for_tool("fx__echo");
    let mode = std::fs::metadata(&exchange).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "whoever can write there can approve");

    let request_file = || -> (String, serde_json::Value) {
        let deadline = std::time::Instant::now() + support::PATIENCE;
        loop {
            let found = std::fs::read_dir(&exchange).unwrap().filter_map(Result::ok).find_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let id = name.strip_prefix("request-")?.strip_suffix(".json")?.to_owned();
                Some((id, serde_json::from_slice(&std::fs::read(entry.path()).ok()?).ok()?))
            });
            if let Some(found) = found {
                return found;
            }
            assert!(std::time::Instant::now() < deadline, "no request file");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let id = call_echo(&mut client, "DROP TABLE f1", "t");
    let (approval_id, request) = request_file();
    assert_eq!(request["escalationId"], approval_id.as_str());
    assert_eq!((request["serverName"].as_str(), request["toolName"].as_str()), (Some("fx"), Some("echo")));
    assert_eq!(request["arguments"], json!({"text": "DROP TABLE f1", "n": [1, 2]}));
    assert!(request["reason"].as_str().unwrap().contains("drops-need-a-human"));
    std::fs::write(exchange.join(format!("response-{approval_id}.json")), r#"{"decision":"approved"}"#).unwrap();
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE f1");
    assert_eq!(wait_for_step(&dir, &approval_id, "approved")["approval"]["channel"], "files");

    // Anything but "approved" denies; settled requests disappear.
    let id = call_echo(&mut client, "DROP TABLE f2", "t");
    let (second, _) = loop {
        let found = request_file();
        if found.0 != approval_id {
            break found;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::fs::write(exchange.join(format!("response-{second}.json")), r#"{"decision":"maybe"}"#).unwrap();
    let text = client.response(&id)["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.starts_with("Escalation denied:"), "{text}");
    let deadline = std::time::Instant::now() + support::PATIENCE;
    while std::fs::read_dir(&exchange).unwrap().count() > 0 {
        assert!(std::time::Instant::now() < deadline, "files left behind");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
