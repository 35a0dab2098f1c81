//! The first list after `initialize` is complete: it waits for servers that
//! are still starting, within a bound, on both fronts.

mod support;

use serde_json::json;
use support::http::HttpWarden;
use support::{Client, fixtures};

/// Two quick servers, one slow to start, and one that never answers
/// `initialize`. The list may wait for at most the start timeout (3 s, below
/// the 60 s `listWaitMs`): the hanging server must not hold it longer than
/// the test's patience.
fn config() -> String {
    config_with("1500", "supervision: {startTimeoutMs: 3000, listWaitMs: 60000}\n")
}

fn config_with(slow_ms: &str, supervision: &str) -> String {
    fixtures(
        &[("quick", &[]), ("other", &[]), ("slow", &["--delay-init", slow_ms]), ("stuck", &["--hang-start"])],
        supervision,
    )
}

fn names(list: &serde_json::Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list: {list}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

fn assert_complete(names: &[String]) {
    for tool in ["quick__echo", "other__echo", "slow__echo"] {
        assert!(names.contains(&tool.to_owned()), "{tool} missing from the first list: {names:?}");
    }
    assert!(!names.iter().any(|name| name.starts_with("stuck__")), "{names:?}");
}

#[test]
fn the_first_stdio_list_waits_for_starting_servers_within_the_bound() {
    first_stdio_list(&config());
}

#[test]
fn the_list_wait_is_bounded_by_its_setting_too() {
    // A 60 s start timeout would outlast the test's patience: listWaitMs
    // (2 s) is what lets the list go.
    first_stdio_list(&config_with("300", "supervision: {startTimeoutMs: 60000, listWaitMs: 2000}\n"));
}

fn first_stdio_list(config: &str) {
    let mut client = Client::serve(config);
    // No pause between initialize and the list: the client lists once.
    let init = client.send_request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "once", "version": "1"}}),
    );
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = client.send_request("tools/list", json!({}));
    assert!(client.response(&init).value.get("result").is_some());
    assert_complete(&names(&client.response(&list).value));
}

#[test]
fn the_first_http_list_waits_the_same_way() {
    let mut warden = HttpWarden::start(&config());
    let mut client = warden.client();
    client.initialize();
    assert_complete(&client.tool_names());
    warden.stop();
}
