//! End to end: notifications and requests in both directions: progress,
//! cancellation, sampling, elicitation, roots, logging, list changes.

mod support;

use std::collections::HashSet;

use serde_json::{Value, json};
use support::{Client, fixture_requests, fixtures, wait_for_fixture_requests};

fn two_servers() -> Client {
    let mut client = Client::serve_initialized(&fixtures(&[("a", &[]), ("b", &[])], ""));
    client.wait_for_tool("a__echo");
    client.wait_for_tool("b__echo");
    client
}

#[test]
fn progress_keeps_each_clients_token_even_when_upstreams_share_one() {
    let mut client = two_servers();
    let first = client.send_request(
        "tools/call",
        json!({"name": "a__progress", "arguments": {"steps": 3, "delay_ms": 5}, "_meta": {"progressToken": "tok-a"}}),
    );
    let second = client.send_request(
        "tools/call",
        json!({"name": "b__progress", "arguments": {"steps": 2, "delay_ms": 5}, "_meta": {"progressToken": 7}}),
    );
    let done_a = client.response(&first);
    let done_b = client.response(&second);
    assert_eq!(done_a["result"]["content"][0]["text"], "done 3");
    assert_eq!(done_b["result"]["content"][0]["text"], "done 2");
    let progress: Vec<Value> = client
        .drain(std::time::Duration::from_millis(200))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect();
    let for_a: Vec<&Value> = progress.iter().filter(|p| p["progressToken"] == "tok-a").collect();
    let for_b: Vec<&Value> = progress.iter().filter(|p| p["progressToken"] == 7).collect();
    assert_eq!((for_a.len(), for_b.len(), progress.len()), (3, 2, 5), "{progress:?}");
    assert_eq!(for_a[2]["progress"], 3);
    assert_eq!(for_a[2]["total"], 3);
}

#[test]
fn cancellation_reaches_only_the_owning_upstream_under_its_own_id() {
    let mut client = two_servers();
    let requests = |client: &mut Client| fixture_requests(&client.call_text("b__stats", json!({})));
    let before = requests(&mut client);
    client.send(json!({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call", "params": {"name": "b__slow", "arguments": {"ms": 20000}}}));
    // The request is in flight upstream once the fixture counts it.
    wait_for_fixture_requests(before, 1, || requests(&mut client));
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow-1", "reason": "user"}}));
    let deadline = std::time::Instant::now() + support::PATIENCE;
    let cancelled = loop {
        let stats: Value = serde_json::from_str(&client.call_text("b__stats", json!({}))).unwrap();
        if let Some(ids) = stats["cancelled"].as_array().filter(|ids| !ids.is_empty()) {
            break ids.clone();
        }
        assert!(std::time::Instant::now() < deadline, "cancellation never reached b");
    };
    assert_eq!(cancelled.len(), 1);
    assert!(cancelled[0].is_u64(), "upstream saw Warden's numeric id, not the client's \"slow-1\": {cancelled:?}");
    let other: Value = serde_json::from_str(&client.call_text("a__stats", json!({}))).unwrap();
    assert_eq!(other["cancelled"], json!([]), "a was not told");
    let late = client.drain(std::time::Duration::from_millis(300));
    assert!(!late.iter().any(|m| m["id"] == "slow-1"), "no answer after cancellation: {late:?}");
}

#[test]
fn an_id_reused_right_after_its_cancellation_gets_its_own_answer() {
    // The spec forbids reusing an id in a session; a client that does must
    // still get its own answer, not the cancelled request's (over HTTP a
    // late-ending cancelled call once took the new one's place). The cancel
    // and the reuse arrive in one write, as close together as they can.
    let mut client = two_servers();
    for round in 0..3 {
        let id = format!("again-{round}");
        let requests = |client: &mut Client| fixture_requests(&client.call_text("b__stats", json!({})));
        let before = requests(&mut client);
        client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "b__slow", "arguments": {"ms": 20000}}}));
        wait_for_fixture_requests(before, 1, || requests(&mut client));
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        let echo = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "a__echo", "arguments": {"text": id}}});
        client.send_raw(&format!("{cancel}\n{echo}"));
        let answer = client.response(&json!(id));
        assert_eq!(answer["result"]["content"][0]["text"], json!(id), "{}", answer.raw);
    }
}

#[test]
fn sampling_elicitation_and_roots_round_trip_through_warden() {
    let mut client = two_servers();
    // Sampling: the client answers under the id Warden chose.
    let call = client.send_request("tools/call", json!({"name": "a__sample", "arguments": {"prompt": "hi"}}));
    let request = client.wait_method("sampling/createMessage");
    assert_eq!(request["params"]["messages"][0]["content"]["text"], "hi");
    client.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "hello from the model"}, "model": "test"}}));
    assert_eq!(client.response(&call)["result"]["content"][0]["text"], "sampled: hello from the model");

    // Elicitation, form mode.
    let call = client.send_request("tools/call", json!({"name": "b__elicit", "arguments": {"message": "name?"}}));
    let request = client.wait_method("elicitation/create");
    assert_eq!(request["params"]["requestedSchema"]["required"], json!(["name"]));
    client.send(
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}),
    );
    assert_eq!(client.response(&call)["result"]["content"][0]["text"], r#"elicited: accept {"name":"Ada"}"#);

    // Elicitation, URL mode, with its completion notification.
    let call = client
        .send_request("tools/call", json!({"name": "a__elicit", "arguments": {"message": "sign in", "mode": "url"}}));
    let request = client.wait_method("elicitation/create");
    assert_eq!(request["params"]["mode"], "url");
    client.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}));
    let complete = client.wait_method("notifications/elicitation/complete");
    assert_eq!(complete["params"]["elicitationId"], "elicit-1");
    assert!(client.response(&call)["result"]["content"][0]["text"].as_str().unwrap().starts_with("elicited: accept"));

    // Roots.
    let call = client.send_request("tools/call", json!({"name": "b__roots", "arguments": {}}));
    let request = client.wait_method("roots/list");
    client.send(
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": [{"uri": "file:///work", "name": "work"}]}}),
    );
    let text = client.response(&call)["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("file:///work"), "{text}");

    // An error answer travels back too.
    let call = client.send_request("tools/call", json!({"name": "a__sample", "arguments": {"prompt": "no"}}));
    let request = client.wait_method("sampling/createMessage");
    client.send(
        json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "User rejected sampling"}}),
    );
    let answer = client.response(&call);
    assert_eq!(answer["result"]["isError"], true, "{}", answer.raw);
}

#[test]
fn simultaneous_requests_from_two_upstreams_get_distinct_ids_and_the_right_answers() {
    let mut client = two_servers();
    let call_a = client.send_request("tools/call", json!({"name": "a__sample", "arguments": {"prompt": "from a"}}));
    let call_b = client.send_request("tools/call", json!({"name": "b__sample", "arguments": {"prompt": "from b"}}));
    let first = client.wait_method("sampling/createMessage");
    let second = client.wait_method("sampling/createMessage");
    assert_ne!(first["id"], second["id"], "both fixtures use id 1 upstream; the client must see two ids");
    // Answer in reverse order, echoing each prompt.
    for request in [&second, &first] {
        let prompt = request["params"]["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
        client.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"role": "assistant", "content": {"type": "text", "text": format!("re {prompt}")}, "model": "m"}}));
    }
    assert_eq!(client.response(&call_a)["result"]["content"][0]["text"], "sampled: re from a");
    assert_eq!(client.response(&call_b)["result"]["content"][0]["text"], "sampled: re from b");
}

#[test]
fn client_capabilities_reach_upstreams_and_roots_changes_fan_out() {
    let mut client = two_servers();
    let seen: Value = serde_json::from_str(&client.call_text("a__whoami", json!({}))).unwrap();
    assert_eq!(seen["clientInfo"]["name"], "warden-tests");
    assert_eq!(seen["capabilities"]["elicitation"], json!({"form": {}, "url": {}}));
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    for server in ["a", "b"] {
        let deadline = std::time::Instant::now() + support::PATIENCE;
        loop {
            let stats: Value = serde_json::from_str(&client.call_text(&format!("{server}__stats"), json!({}))).unwrap();
            if stats["roots_list_changed"] == 1 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{server} never got roots/list_changed");
        }
    }
}

#[test]
fn log_level_fans_out_and_log_messages_flow() {
    let mut client = two_servers();
    let answer = client.request("logging/setLevel", json!({"level": "warning"}));
    assert_eq!(answer["result"], json!({}));
    for server in ["a", "b"] {
        let stats: Value = serde_json::from_str(&client.call_text(&format!("{server}__stats"), json!({}))).unwrap();
        assert_eq!(stats["logLevel"], "warning", "{server}");
    }
    assert_eq!(client.call_text("a__log", json!({"level": "info", "message": "quiet"})), "suppressed");
    assert_eq!(client.call_text("b__log", json!({"level": "error", "message": "loud"})), "logged");
    let message = client.wait_method("notifications/message");
    assert_eq!(message["params"]["data"], "loud");
    assert_eq!(message["params"]["level"], "error");
}

#[test]
fn list_changes_upstream_update_routing_and_reach_the_client() {
    let mut client = two_servers();
    client.drain(std::time::Duration::from_millis(100));
    assert_eq!(client.call_text("b__add_tool", json!({"name": "fresh"})), "added fresh");
    client.wait_method("notifications/tools/list_changed");
    assert_eq!(client.call_text("b__fresh", json!({"text": "new tool"})), "new tool");
    let names: HashSet<String> = client.tool_names().into_iter().collect();
    assert!(names.contains("b__fresh") && !names.contains("a__fresh"));
}

#[test]
fn tasks_route_to_the_upstream_that_created_them() {
    let mut client = two_servers();
    let init = client.request("ping", json!({}));
    assert_eq!(init["result"], json!({}));
    let tools = client.request("tools/list", json!({}));
    let slow = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "b__slow").unwrap().clone();
    assert_eq!(slow["execution"]["taskSupport"], "optional", "tool-level task support passes through");

    let created =
        client.request("tools/call", json!({"name": "b__slow", "arguments": {"ms": 50}, "task": {"ttl": 60000}}));
    let task_id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let status = client.request("tasks/get", json!({"taskId": task_id}));
    assert_eq!(status["result"]["taskId"], task_id.as_str(), "{}", status.raw);
    let result = client.request("tasks/result", json!({"taskId": task_id}));
    assert_eq!(result["result"]["content"][0]["text"], "slept 50", "{}", result.raw);
    let list = client.request("tasks/list", json!({}));
    let tasks = list["result"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "only b has a task: {}", list.raw);
    let unknown = client.request("tasks/get", json!({"taskId": "task-999"}));
    assert_eq!(unknown["error"]["code"], -32602);
}

/// MCP names every parameter: params by position (a JSON array) are refused
/// for the methods Warden reads, not read by position. serde's derived
/// readers would take `["a__echo", {...}]` as a name and arguments, and a
/// server behind Warden could read the array otherwise.
#[test]
fn params_by_position_are_refused_for_the_methods_warden_reads() {
    let mut client = two_servers();
    let echo = client.request("tools/call", json!({"name": "a__echo", "arguments": {"text": "by name"}}));
    assert_eq!(echo["result"]["content"][0]["text"], "by name", "{}", echo.raw);
    for (method, params) in [
        ("tools/call", json!(["a__echo", {"text": "by position"}])),
        ("prompts/get", json!(["a__greet", {}])),
        ("resources/read", json!(["fixture://a/readme"])),
        ("tools/list", json!([null])),
        ("tasks/get", json!(["task-1"])),
        ("completion/complete", json!([{"type": "ref/prompt", "name": "a__greet"}, {"name": "n", "value": "v"}])),
    ] {
        let refused = client.request(method, params);
        assert_eq!(refused["error"]["code"], -32602, "{method}: {}", refused.raw);
        assert!(
            refused["error"]["message"].as_str().unwrap_or_default().contains("params must be an object"),
            "{}",
            refused.raw
        );
    }
    // The session goes on.
    let again = client.request("tools/call", json!({"name": "a__echo", "arguments": {"text": "still here"}}));
    assert_eq!(again["result"]["content"][0]["text"], "still here", "{}", again.raw);
}

/// A notification's params by position are not read as if named either: a
/// `notifications/cancelled` whose params are `["slow-2"]` cancels nothing
/// (serde's derived reader took the array's first item as the requestId,
/// and Warden stopped waiting for a call the server still ran).
#[test]
fn a_cancellation_by_position_cancels_nothing() {
    let mut client = two_servers();
    let requests = |client: &mut Client| fixture_requests(&client.call_text("b__stats", json!({})));
    let before = requests(&mut client);
    client.send(json!({"jsonrpc": "2.0", "id": "slow-2", "method": "tools/call", "params": {"name": "b__slow", "arguments": {"ms": 300}}}));
    wait_for_fixture_requests(before, 1, || requests(&mut client));
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": ["slow-2"]}));
    let answer = client.response(&json!("slow-2"));
    assert_eq!(answer["result"]["content"][0]["text"], "slept 300", "{}", answer.raw);
    let stats: Value = serde_json::from_str(&client.call_text("b__stats", json!({}))).unwrap();
    assert_eq!(stats["cancelled"], json!([]), "the server was told nothing");
}
