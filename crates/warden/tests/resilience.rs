//! End to end: what happens when things go wrong (crashes, failed starts,
//! garbage, bad input) and the guarantees that keep a client unblocked.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{Client, alive, fixture_bin, fixtures};

#[test]
fn backends_start_in_the_background_and_the_first_list_waits_for_them() {
    let mut client = Client::serve(&fixtures(&[("late", &["--delay-init", "700"])], ""));
    let answer = client.initialize();
    assert!(answer.value.get("result").is_some(), "initialize is answered without waiting for backends");
    client.send(json!({"jsonrpc": "2.0", "id": "early", "method": "tools/list", "params": {}}));
    let early = client.response(&json!("early"));
    let tools = early["result"]["tools"].as_array().expect("a list");
    assert!(tools.iter().any(|tool| tool["name"] == "late__echo"), "the list waited for the backend: {}", early.raw);
}

#[test]
fn a_call_to_a_backend_still_starting_waits_for_it() {
    let mut client = Client::serve_initialized(&fixtures(&[("late", &["--delay-init", "500"])], ""));
    assert_eq!(client.call_text("late__echo", json!({"text": "patience"})), "patience");
}

#[test]
fn a_crash_mid_call_fails_in_flight_requests_and_the_backend_restarts() {
    let config = fixtures(&[("fragile", &[]), ("steady", &[])], "supervision: {backoffInitialMs: 50}\n");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fragile__echo");
    client.wait_for_tool("steady__echo");
    let before = client.call_text("fragile__pid", json!({}));
    let slow = client.send_request("tools/call", json!({"name": "fragile__slow", "arguments": {"ms": 30000}}));
    let crash = client.send_request("tools/call", json!({"name": "fragile__crash", "arguments": {}}));
    for id in [&slow, &crash] {
        let answer = client.response(id);
        assert_eq!(answer["error"]["code"], -32010, "{}", answer.raw);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("fragile") && message.contains("crashing on purpose"), "stderr is quoted: {message}");
    }
    // The other backend never noticed.
    assert_eq!(client.call_text("steady__echo", json!({"text": "still here"})), "still here");
    // The crashed one comes back, initialized again with the client's own parameters.
    client.wait_method("notifications/tools/list_changed");
    let after = loop {
        let answer = client.request("tools/call", json!({"name": "fragile__pid", "arguments": {}}));
        if let Some(text) = answer["result"]["content"][0]["text"].as_str() {
            break text.to_owned();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_ne!(before, after, "a new process");
    let seen: Value = serde_json::from_str(&client.call_text("fragile__whoami", json!({}))).unwrap();
    assert_eq!(seen["clientInfo"]["name"], "warden-tests", "initialize replayed after restart");
}

#[test]
fn backends_that_never_start_are_reported_with_their_stderr_and_skipped() {
    let config = format!(
        "{}  missing:\n    transport: {{kind: stdio, command: /nonexistent/server}}\nsupervision: {{startTimeoutMs: 400}}\n",
        fixtures(&[("good", &[]), ("broken", &["--fail-start"]), ("stuck", &["--hang-start"])], "")
    );
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("good__echo");
    assert_eq!(client.call_text("good__echo", json!({"text": "fine"})), "fine");
    client.wait_stderr("failing on purpose");
    client.wait_stderr("did not answer initialize");
    client.wait_stderr("failed to start '/nonexistent/server'");
    let answer = client.request("tools/call", json!({"name": "broken__echo", "arguments": {}}));
    assert_eq!(answer["error"]["code"], -32010, "{}", answer.raw);
    assert!(answer["error"]["message"].as_str().unwrap().contains("failing on purpose"), "{}", answer.raw);
    let names = client.tool_names();
    assert!(names.iter().all(|n| n.starts_with("good__")), "{names:?}");
}

#[test]
fn garbage_on_a_backends_stdout_is_dropped_not_forwarded() {
    let mut client = Client::serve_initialized(&fixtures(&[("messy", &[])], ""));
    assert_eq!(client.call_text("messy__garbage", json!({})), "garbage sent");
    client.wait_stderr("not JSON-RPC");
    assert_eq!(client.call_text("messy__echo", json!({"text": "after"})), "after");
    // The harness fails the test if anything but JSON reached our stdout.
}

#[test]
fn bad_client_input_gets_clear_errors_and_warden_keeps_running() {
    let mut client = Client::serve(&fixtures(&[("fx", &[])], "limits: {maxMessageBytes: 4096}\n"));
    let early = client.request("tools/list", json!({}));
    assert_eq!(early["error"]["code"], -32600, "before initialize: {}", early.raw);
    client.initialize();

    client.send_raw("{this is not json");
    let parse = client.wait_for("parse error", |m| m["error"]["code"] == -32700);
    assert_eq!(parse["id"], Value::Null);

    client.send_raw(r#"{"id":5,"method":"ping"}"#);
    let envelope = client.response(&json!(5));
    assert_eq!(envelope["error"]["code"], -32600, "{}", envelope.raw);

    client.send_raw(r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#);
    let batch = client.wait_for("batch error", |m| m["error"]["message"].as_str().is_some_and(|s| s.contains("batch")));
    assert_eq!(batch["error"]["code"], -32600);

    let big = "x".repeat(10_000);
    client.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"fx__echo","arguments":{{"text":"{big}"}}}}}}"#));
    let oversized = client.response(&json!(7));
    assert!(oversized["error"]["message"].as_str().unwrap().contains("exceeds the limit of 4096"), "{}", oversized.raw);
    // The TypeScript SDK writes the id last; it is still answered.
    client.send_raw(&format!(r#"{{"method":"tools/call","params":{{"name":"fx__echo","arguments":{{"text":"{big}"}}}},"jsonrpc":"2.0","id":"ts-8"}}"#));
    assert!(client.response(&json!("ts-8"))["error"].is_object());

    client.send(json!({"jsonrpc": "2.0", "id": 999, "result": {}}));
    client.wait_stderr("never sent");

    let unknown = client.request("tools/call", json!({"name": "nobody__echo", "arguments": {}}));
    assert_eq!(unknown["error"]["message"], "Unknown tool: nobody__echo");
    let wrong_type = client.request("tools/call", json!({"name": 42}));
    assert_eq!(wrong_type["error"]["code"], -32602);

    let pong = client.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "still alive");
}

#[test]
fn an_oversized_answer_from_a_backend_fails_that_call_only() {
    let mut client = Client::serve_initialized(&fixtures(&[("fx", &[])], "limits: {maxMessageBytes: 4096}\n"));
    client.wait_for_tool("fx__echo");
    let answer = client.request("tools/call", json!({"name": "fx__large", "arguments": {"bytes": 20000}}));
    assert!(answer["error"]["message"].as_str().unwrap().contains("over the limit of 4096"), "{}", answer.raw);
    assert_eq!(client.call_text("fx__large", json!({"bytes": 100})).len(), 100);
}

#[test]
fn a_tools_call_after_a_pause_completes() {
    // Seed 001: a client hung when the gateway's stdin reader was restarted
    // between messages. Warden's reader is one task that is never cancelled.
    let mut client = Client::serve_initialized(&fixtures(&[("fx", &[])], ""));
    client.wait_for_tool("fx__echo");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        client.call_text("fx__echo", json!({"text": "after the permission prompt"})),
        "after the permission prompt"
    );
}

#[test]
fn a_slow_call_never_delays_other_calls() {
    let mut client = Client::serve_initialized(&fixtures(&[("a", &[]), ("b", &[])], ""));
    client.wait_for_tool("b__echo");
    let slow = client.send_request("tools/call", json!({"name": "a__slow", "arguments": {"ms": 3000}}));
    let same_backend = client.send_request("tools/call", json!({"name": "a__echo", "arguments": {"text": "a"}}));
    let other_backend = client.send_request("tools/call", json!({"name": "b__echo", "arguments": {"text": "b"}}));
    let first = client.wait_for("a response", |m| m.value.get("id").is_some() && m.value.get("method").is_none());
    let second = client.wait_for("a response", |m| m.value.get("id").is_some() && m.value.get("method").is_none());
    let fast: Vec<&Value> = vec![&first["id"], &second["id"]];
    assert!(fast.contains(&&same_backend) && fast.contains(&&other_backend), "slow call answered first: {first:?}");
    assert_eq!(client.response(&slow)["result"]["content"][0]["text"], "slept 3000");
}

/// A call naming a path on a filesystem that does not answer (a network
/// mount that hangs) waits alone: the policy resolves the paths a call
/// names (protected paths hold with no policy written), and one on a
/// remote mount (FUSE here) is resolved off the thread that serves every
/// request, so the calls after it are answered, one naming a local path
/// too; after 5 s it is refused, and Warden serves on.
#[test]
fn a_path_on_a_filesystem_that_hangs_holds_up_its_call_alone() {
    let Some(mount) = support::HungMount::mount() else { return };
    let mut client = Client::serve_initialized(&fixtures(&[("fs", &[])], ""));
    client.wait_for_tool("fs__echo");
    let hung = mount.path.join("file").display().to_string();
    let stuck = client.send_request("tools/call", json!({"name": "fs__echo", "arguments": {"text": hung}}));
    let plain = client.send_request("tools/call", json!({"name": "fs__echo", "arguments": {"text": "plain"}}));
    let elsewhere = std::env::temp_dir().join("elsewhere").display().to_string();
    let other_path = client.send_request("tools/call", json!({"name": "fs__echo", "arguments": {"text": elsewhere}}));
    let response = |m: &support::Message| m.value.get("id").is_some() && m.value.get("method").is_none();
    let first = client.wait_for("a response", response);
    let second = client.wait_for("a response", response);
    let answered = [&first["id"], &second["id"]];
    assert!(answered.contains(&&plain) && answered.contains(&&other_path), "the hung call held the others: {first:?}");
    let refused = client.response(&stuck);
    assert_eq!(refused["result"]["isError"], true, "{}", refused.raw);
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("filesystem-timeout") && text.contains("did not answer within 5 s"), "{text}");
    assert_eq!(client.call_text("fs__echo", json!({"text": "still serving"})), "still serving");
    drop(mount);
}

/// A line whose first half arrives with the line before it, and its rest
/// only once that line's request is answered, is read whole: the front
/// stops waiting for the line when the answer is ready first, and must not
/// lose what it had read of it (seed 001's lost message).
#[test]
fn a_line_split_around_an_answer_is_read_whole() {
    let mut client = Client::serve_initialized(&fixtures(&[("a", &[])], ""));
    client.wait_for_tool("a__echo");
    let call = |id: &str, text: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "a__echo", "arguments": {"text": text}}})
        .to_string()
    };
    let (first, second) = (call("first", "one"), call("second", "two"));
    let (head, rest) = second.split_at(second.len() / 2);
    client.send_bytes(format!("{first}\n{head}").as_bytes());
    assert_eq!(client.response(&json!("first"))["result"]["content"][0]["text"], "one");
    client.send_bytes(format!("{rest}\n").as_bytes());
    let answer = client.response(&json!("second"));
    assert_eq!(answer["result"]["content"][0]["text"], "two", "{}", answer.raw);
}

#[test]
fn closing_stdin_stops_every_backend_process() {
    let mut client = Client::serve_initialized(&fixtures(&[("a", &[]), ("b", &[])], ""));
    client.wait_for_tool("b__echo");
    let pids: Vec<u32> =
        ["a", "b"].iter().map(|s| client.call_text(&format!("{s}__pid"), json!({})).parse().unwrap()).collect();
    assert!(pids.iter().all(|pid| alive(*pid)));
    let status = client.close();
    assert!(status.success(), "{status:?}\n{}", client.stderr());
    for pid in pids {
        let deadline = std::time::Instant::now() + support::PATIENCE;
        while alive(pid) {
            assert!(std::time::Instant::now() < deadline, "backend {pid} outlived warden");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn wrap_accepts_a_config_for_everything_but_servers() {
    let dir = support::scratch_dir("wrapcfg");
    let path = dir.join("w.yaml");
    std::fs::write(&path, "limits: {maxMessageBytes: 16384}\n").unwrap();
    let fixture = fixture_bin();
    let mut client = Client::start(&["wrap", "--config", path.to_str().unwrap(), "--", &fixture], &[]);
    client.initialize();
    client.wait_for_tool("echo");
    let answer = client.request("tools/call", json!({"name": "large", "arguments": {"bytes": 50000}}));
    assert!(answer["error"]["message"].as_str().unwrap().contains("16384"), "{}", answer.raw);
}

#[test]
fn sigterm_stops_warden_and_every_backend_process() {
    let mut client = Client::serve_initialized(&fixtures(&[("a", &[]), ("b", &[])], ""));
    client.wait_for_tool("b__echo");
    let pids: Vec<u32> =
        ["a", "b"].iter().map(|s| client.call_text(&format!("{s}__pid"), json!({})).parse().unwrap()).collect();
    let status = std::process::Command::new("kill").args(["-TERM", &client.pid().to_string()]).status().unwrap();
    assert!(status.success());
    client.wait_stderr("stopping upstreams");
    for pid in pids {
        let deadline = std::time::Instant::now() + support::PATIENCE;
        while alive(pid) {
            assert!(std::time::Instant::now() < deadline, "backend {pid} outlived a terminated warden");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // The fields after the command name, which is in parentheses.
        let Some(rest) = stat.rsplit_once(") ").map(|(_, rest)| rest) else { continue };
        if rest.split(' ').nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(parent) {
            children.push(pid);
        }
    }
    children
}

#[test]
fn a_killed_warden_takes_its_backends_with_it() {
    // `sleep` ignores its stdin closing: only the kernel can stop it.
    let config = format!(
        "{}  stubborn:\n    transport: {{kind: stdio, command: sleep, args: [\"1000\"]}}\nsupervision: {{startTimeoutMs: 600000}}\n",
        fixtures(&[("fx", &[])], "")
    );
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    let children = children_of(client.pid());
    assert_eq!(children.len(), 2, "fixture and sleep: {children:?}");
    let status = std::process::Command::new("kill").args(["-KILL", &client.pid().to_string()]).status().unwrap();
    assert!(status.success());
    for pid in children {
        let deadline = std::time::Instant::now() + support::PATIENCE;
        while alive(pid) {
            assert!(std::time::Instant::now() < deadline, "backend {pid} outlived a killed warden");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `wrap` names no server in its tool names: a call while the server is down
/// (an edit broke it, `--watch`) says which server is not running, why, and
/// how its stderr ends, instead of "Unknown tool" (mcpmon's users rely on it).
#[test]
fn wrap_answers_a_call_to_a_broken_server_with_its_state_and_stderr() {
    let fixture = fixture_bin();
    let mut client = Client::start(&["wrap", "--", &fixture, "--fail-start"], &[]);
    client.initialize();
    client.wait_stderr("failing on purpose");
    let answer = client.request("tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    assert_eq!(answer["error"]["code"], -32010, "{}", answer.raw);
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("failing on purpose"), "{}", answer.raw);
    assert!(!message.contains("Unknown tool"), "{}", answer.raw);
}
