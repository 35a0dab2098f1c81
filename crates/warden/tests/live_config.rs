//! Editing the configuration's servers while clients are connected and calls
//! are running: added servers start, removed ones stop, changed ones
//! restart, unchanged ones keep their process.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{HttpWarden, McpHttp};
use support::{Client, fixture_bin, fixture_requests, retry, scratch_dir, wait_for_fixture_requests};

/// A config with one fixture server per `(name, args, extra lines)`.
fn config(servers: &[(&str, &[&str], &str)]) -> String {
    let fixture = fixture_bin();
    let mut config = String::from("servers:\n");
    for (name, args, extra) in servers {
        let args: Vec<String> = args.iter().map(|arg| format!("{arg:?}")).collect();
        config.push_str(&format!(
            "  {name}:\n    transport: {{kind: stdio, command: {fixture:?}, args: [{}]}}\n{extra}",
            args.join(", ")
        ));
    }
    config
}

/// Before: `keep` (unchanged), `gone` (removed), `grow` (its args change).
fn before() -> String {
    config(&[("keep", &[], ""), ("gone", &[], ""), ("grow", &["--extra-tools", "1"], "")])
}

/// After: `gone` removed, `grow` with another argument, `fresh` added.
fn after() -> String {
    config(&[("keep", &[], ""), ("grow", &["--extra-tools", "2"], ""), ("fresh", &[], "")])
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn server_changes_apply_live_to_a_stdio_session() {
    let dir = scratch_dir("live-config");
    let path = dir.join("warden.yaml");
    std::fs::write(&path, before()).expect("write config");
    let mut client = Client::start(&["serve", "--config", path.to_str().expect("utf-8")], &[]);
    client.initialize();
    for tool in ["keep__echo", "gone__echo", "grow__extra_0001"] {
        client.wait_for_tool(tool);
    }
    let keep_pid = client.call_text("keep__pid", json!({}));
    let grow_pid = client.call_text("grow__pid", json!({}));

    // Calls running while the file changes: on the unchanged server, and on
    // the one about to be removed.
    let on_keep = client.send_request("tools/call", json!({"name": "keep__slow", "arguments": {"ms": 1500}}));
    let on_gone = client.send_request("tools/call", json!({"name": "gone__slow", "arguments": {"ms": 20000}}));
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(&path, after()).expect("rewrite config");

    client.wait_method("notifications/tools/list_changed");
    client.wait_for_tool("fresh__echo");
    client.wait_for_tool("grow__extra_0002");
    let removed = client.response(&on_gone);
    assert_eq!(removed["error"]["code"], -32010, "{}", removed.raw);
    assert!(removed.raw.contains("removed from the configuration"), "{}", removed.raw);
    let kept = client.response(&on_keep);
    assert!(kept.value.get("result").is_some(), "the unchanged server's call must finish: {}", kept.raw);

    let names = client.tool_names();
    assert!(!names.iter().any(|name| name.starts_with("gone__")), "{names:?}\n{}", client.stderr());
    assert_eq!(client.call_text("keep__pid", json!({})), keep_pid, "an unchanged server keeps its process");
    assert_ne!(client.call_text("grow__pid", json!({})), grow_pid, "a changed server restarts");
    assert_eq!(client.call_text("fresh__echo", json!({"text": "hi"})), "hi");
    let unknown = client.request("tools/call", json!({"name": "gone__echo", "arguments": {"text": "x"}}));
    assert!(unknown.value.get("error").is_some(), "{}", unknown.raw);

    // A file that does not validate changes nothing.
    std::fs::write(&path, "servers: [this is not a map]\n").expect("write invalid");
    client.wait_stderr("config reload rejected");
    assert_eq!(client.call_text("keep__pid", json!({})), keep_pid);
    assert!(client.tool_names().contains(&"fresh__echo".to_owned()));
}

/// A reload whose policy names a path on a filesystem that does not answer
/// (a network mount that hangs) waits for it on a blocking thread: calls go
/// on meanwhile, served by the configuration in force, and once the mount
/// is gone the reload ends, applied or rejected, and Warden serves on.
#[test]
fn a_reload_waiting_on_a_hung_mount_holds_up_no_call() {
    let Some(mount) = support::HungMount::mount() else { return };
    let dir = scratch_dir("hung-reload");
    let path = dir.join("warden.yaml");
    let servers = config(&[("keep", &[], "")]);
    std::fs::write(&path, &servers).expect("write config");
    let mut client = Client::start(&["serve", "--config", path.to_str().expect("utf-8")], &[]);
    client.initialize();
    client.wait_for_tool("keep__echo");
    let secret = mount.path.join("secret").display().to_string();
    std::fs::write(&path, format!("{servers}policy:\n  protectedPaths: [{secret:?}]\n")).expect("rewrite config");
    client.wait_stderr("the configuration changed: reloading");
    retry("the reload to wait on the mount", || support::waits_on_fuse(client.pid()).then_some(()));
    assert_eq!(text(&client.call_tool("keep__echo", json!({"text": "during"}))), "during");
    assert!(!client.stderr().contains("configuration reloaded"), "the reload cannot have read the mount");
    drop(mount);
    let ended = |stderr: &str| stderr.contains("configuration reloaded") || stderr.contains("config reload rejected");
    retry("the reload to end", || ended(&client.stderr()).then_some(()));
    assert_eq!(text(&client.call_tool("keep__echo", json!({"text": "after"}))), "after");
}

/// Sends a call on its own connection (the answer may take a while), with
/// an id no other request of the session uses.
fn call_in_background(client: &McpHttp, id: u64, name: &str, arguments: Value) -> std::thread::JoinHandle<Value> {
    let mut other = McpHttp::new(&client.addr, &client.path);
    other.session = client.session.clone();
    let body =
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    std::thread::spawn(move || {
        let response = other.post_raw(&body.to_string());
        if !response.is_sse() {
            return response.json();
        }
        let mut response = response;
        while let Some((_, message)) = response.next_message() {
            if message["id"] == json!(id) {
                return message;
            }
        }
        Value::Null
    })
}

#[test]
fn server_changes_apply_live_to_every_http_session_and_shared_servers_once() {
    let shared = "    share: true\n";
    let start = config(&[
        ("keep", &[], ""),
        ("gone", &[], ""),
        ("grow", &["--extra-tools", "1"], ""),
        ("common", &["--extra-tools", "1"], shared),
    ]);
    let mut warden = HttpWarden::start(&start);
    let (mut one, mut two) = (warden.client(), warden.client());
    one.initialize();
    two.initialize();
    for client in [&mut one, &mut two] {
        retry("every server's tools", || {
            let names = client.tool_names();
            ["keep__echo", "gone__echo", "grow__extra_0001", "common__extra_0001"]
                .iter()
                .all(|tool| names.contains(&tool.to_string()))
                .then_some(())
        });
    }
    let pid = |client: &mut McpHttp, server: &str| text(&client.call(&format!("{server}__pid"), json!({})));
    let keep_pids = (pid(&mut one, "keep"), pid(&mut two, "keep"));
    assert_ne!(keep_pids.0, keep_pids.1, "each session has its own process");
    let common_pid = pid(&mut one, "common");
    assert_eq!(pid(&mut two, "common"), common_pid, "a shared server runs once");

    // How many requests a session's `gone` has had, this one included.
    let gone_requests = |client: &mut McpHttp| fixture_requests(&text(&client.call("gone__stats", json!({}))));
    let before = (gone_requests(&mut one), gone_requests(&mut two));
    let running = [
        call_in_background(&one, 9001, "keep__slow", json!({"ms": 1500})),
        call_in_background(&two, 9001, "keep__slow", json!({"ms": 1500})),
    ];
    let doomed = [
        call_in_background(&one, 9002, "gone__slow", json!({"ms": 20000})),
        call_in_background(&two, 9002, "gone__slow", json!({"ms": 20000})),
    ];
    // The doomed calls are in flight at each session's `gone`.
    wait_for_fixture_requests(before.0, 1, || gone_requests(&mut one));
    wait_for_fixture_requests(before.1, 1, || gone_requests(&mut two));
    let end = config(&[
        ("keep", &[], ""),
        ("grow", &["--extra-tools", "2"], ""),
        ("common", &["--extra-tools", "2"], shared),
        ("fresh", &[], ""),
    ]);
    std::fs::write(&warden.config_path, end).expect("rewrite config");

    for call in running {
        let answer = call.join().expect("thread");
        assert!(answer.get("result").is_some(), "the unchanged server's call must finish: {answer}");
    }
    for call in doomed {
        let answer = call.join().expect("thread");
        assert_eq!(answer["error"]["code"], -32010, "{answer}");
        assert!(answer.to_string().contains("removed from the configuration"), "{answer}");
    }
    for client in [&mut one, &mut two] {
        retry("the new set of tools", || {
            let names = client.tool_names();
            let present = ["keep__echo", "fresh__echo", "grow__extra_0002", "common__extra_0002"]
                .iter()
                .all(|tool| names.contains(&tool.to_string()));
            (present && !names.iter().any(|name| name.starts_with("gone__"))).then_some(())
        });
    }
    assert_eq!((pid(&mut one, "keep"), pid(&mut two, "keep")), keep_pids, "unchanged servers keep their processes");
    let new_common = pid(&mut one, "common");
    assert_ne!(new_common, common_pid, "the changed shared server restarted");
    assert_eq!(pid(&mut two, "common"), new_common, "once, for every session");
    assert_eq!(text(&two.call("fresh__echo", json!({"text": "hi"}))), "hi");
    let status = support::http::send(&warden.addr, "GET", "/status", &[], b"").body();
    assert!(status.contains("fresh") && !status.contains("\"gone\""), "{status}");

    // A session that starts now gets the new set.
    let mut three = warden.client();
    three.initialize();
    let names = three.tool_names();
    assert!(names.contains(&"fresh__echo".to_owned()) && !names.iter().any(|n| n.starts_with("gone__")), "{names:?}");
    warden.stop();
}

#[test]
fn naming_changes_apply_live_without_restarting_servers() {
    let dir = scratch_dir("live-naming");
    let path = dir.join("warden.yaml");
    let servers = config(&[("one", &[], ""), ("two", &[], "")]);
    std::fs::write(&path, &servers).expect("write config");
    let mut client = Client::start(&["serve", "--config", path.to_str().expect("utf-8")], &[]);
    client.initialize();
    client.wait_for_tool("one__echo");
    client.wait_for_tool("two__echo");
    let pid = client.call_text("one__pid", json!({}));
    client.drain(Duration::from_millis(300));

    std::fs::write(&path, format!("{servers}naming: {{separator: '-'}}\n")).expect("rewrite config");
    client.wait_method("notifications/tools/list_changed");
    client.wait_for_tool("one-echo");
    assert!(!client.tool_names().contains(&"one__echo".to_owned()));
    assert_eq!(client.call_text("one-pid", json!({})), pid, "renaming restarts nothing");
}

/// An editor's save (a new file renamed over the old one) reloads. A file
/// kept open and appended beside the configuration (here the audit log, one
/// record per call) does not wake the watcher: notify's watcher woke about
/// 1.5 times per call for it.
#[test]
fn an_editors_save_reloads_and_a_log_beside_the_configuration_does_not_wake_the_watcher() {
    let dir = scratch_dir("live-config-save");
    let path = dir.join("warden.yaml");
    let audit = format!("audit: {{path: {:?}, fsync: never}}\n", dir.join("audit.jsonl").to_str().expect("utf-8"));
    std::fs::write(&path, config(&[("a", &[], "")]) + &audit).expect("write config");
    let mut client = Client::start(&["serve", "--config", path.to_str().expect("utf-8")], &[]);
    client.initialize();
    client.wait_for_tool("a__echo");

    let before = support::blocked(client.pid(), Some("config-watch"));
    for n in 0..200 {
        assert_eq!(client.call_text("a__echo", json!({"text": format!("call {n}")})), format!("call {n}"));
    }
    let woken = support::blocked(client.pid(), Some("config-watch")) - before;
    // Every call appends a record (waited for: the writer may trail the answer).
    support::wait_for_audit(&dir.join("audit.jsonl"), |records| records.len() >= 200);
    assert!(woken <= 5, "the configuration watcher woke {woken} times for 200 audit records");

    let saved = dir.join(".warden.yaml.swp");
    std::fs::write(&saved, config(&[("a", &[], ""), ("b", &[], "")]) + &audit).expect("write the new version");
    std::fs::rename(&saved, &path).expect("rename it over the configuration");
    client.wait_for_tool("b__echo");
    assert_eq!(client.call_text("b__echo", json!({"text": "saved"})), "saved");
}
