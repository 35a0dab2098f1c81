//! `warden wrap --config F` reloads F's policy on SIGHUP and when F
//! changes, as `serve` does, keeping its one wrapped server running; without
//! `--config`, SIGHUP leaves Warden and the server alone.

mod support;

use std::process::Command;

use serde_json::json;
use support::{Client, alive, fixture_bin, retry, scratch_dir};

const OPEN: &str = "servers: {}\n";
const NO_ECHO: &str = "policy:\n  rules:\n    - {name: no-echo, if: {tool: [echo]}, then: deny, reason: echo is off}\n";

fn hangup(client: &Client) {
    let status = Command::new("kill").args(["-HUP", &client.pid().to_string()]).status().expect("run kill");
    assert!(status.success());
}

/// Whether `echo` is refused by the rule `no-echo` now.
fn echo_refused(client: &mut Client) -> bool {
    let response = client.request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    response.raw.contains("echo is off")
}

#[test]
fn sighup_and_saves_reload_the_policy_of_a_wrapped_server() {
    let dir = scratch_dir("wrap-reload");
    let file = dir.join("warden.yaml");
    // A server in the file is ignored: wrap serves only its command.
    std::fs::write(&file, OPEN).unwrap();
    let fixture = fixture_bin();
    let mut client = Client::start(&["wrap", "--config", file.to_str().unwrap(), "--", &fixture], &[]);
    client.initialize();
    client.wait_for_tool("echo");
    let pid = client.call_text("pid", json!({}));
    assert!(!echo_refused(&mut client));

    // Written, then SIGHUP: whichever comes first, the policy applies.
    std::fs::write(&file, NO_ECHO).unwrap();
    hangup(&client);
    retry("the reloaded policy to refuse echo", || echo_refused(&mut client).then_some(()));
    assert!(alive(client.pid()), "SIGHUP does not kill wrap");

    // A save alone reloads too.
    std::fs::write(&file, OPEN).unwrap();
    retry("the saved policy to allow echo again", || (!echo_refused(&mut client)).then_some(()));

    // A broken file keeps the policy in force.
    std::fs::write(&file, NO_ECHO).unwrap();
    retry("echo refused again", || echo_refused(&mut client).then_some(()));
    std::fs::write(&file, "policy: {rules: [{name: x}]}\n").unwrap();
    hangup(&client);
    client.wait_stderr("config reload rejected");
    assert!(echo_refused(&mut client));

    // The wrapped server was never restarted.
    assert_eq!(client.call_text("pid", json!({})), pid);
    assert_eq!(client.tool_names().iter().filter(|name| name.contains("__")).count(), 0, "names stay unprefixed");
}

#[test]
fn sighup_without_a_config_leaves_wrap_running() {
    let fixture = fixture_bin();
    let mut client = Client::start(&["wrap", "--", &fixture], &[]);
    client.initialize();
    client.wait_for_tool("echo");
    let pid = client.call_text("pid", json!({}));
    hangup(&client);
    client.wait_stderr("SIGHUP: nothing to reload");
    assert_eq!(client.call_text("echo", json!({"text": "still here"})), "still here");
    assert_eq!(client.call_text("pid", json!({})), pid);
}
