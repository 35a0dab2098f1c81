//! MCP 2026-07-28 ("modern") clients on the stdio front: no `initialize`,
//! an envelope on every request, `input_required` for what an upstream asks
//! during a call, `subscriptions/listen` for changes. The upstream is the
//! repository's fixture, a 2025-era server: Warden translates.

mod support;

use serde_json::{Value, json};
use support::{Client, Message, fixtures};

const VERSION: &str = "2026-07-28";

/// The envelope of a client that can do everything.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}, "roots": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "1"}
    })
}

/// `params` with the full envelope added.
fn enveloped(mut params: Value) -> Value {
    params["_meta"] = meta();
    params
}

fn modern_client() -> Client {
    Client::serve(&fixtures(&[("fx", &[])], "naming: {prefix: never}\n"))
}

fn call(client: &mut Client, params: Value) -> Message {
    client.request("tools/call", params)
}

#[test]
fn discover_lists_and_calls_are_served_without_initialize() {
    let mut client = modern_client();
    let discover = client.request("server/discover", json!({"_meta": meta()}));
    assert_eq!(discover["result"]["supportedVersions"], json!([VERSION]), "{}", discover.raw);
    assert_eq!(discover["result"]["resultType"], "complete");
    assert!(discover["result"]["capabilities"]["tools"].is_object());
    assert_eq!(discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "warden");

    let tools = client.request("tools/list", json!({"_meta": meta()}));
    assert_eq!(tools["result"]["resultType"], "complete", "{}", tools.raw);
    assert_eq!(tools["result"]["ttlMs"], 0);
    assert_eq!(tools["result"]["cacheScope"], "private");
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(names.contains(&"echo"), "{names:?}");
    // The upstream's definition keeps its bytes.
    assert!(tools.raw.contains(r#""x-unknown-field":{"nested":[1,2.50,"é"]}"#), "{}", tools.raw);

    let echoed = call(&mut client, enveloped(json!({"name": "echo", "arguments": {"text": "hi"}})));
    assert_eq!(echoed["result"]["content"][0]["text"], "hi", "{}", echoed.raw);
    assert_eq!(echoed["result"]["resultType"], "complete");
    assert!(echoed["result"].get("ttlMs").is_none());

    // The upstream saw a 2025-era client that declared what Warden bridges,
    // and none of the modern envelope.
    let whoami = call(&mut client, enveloped(json!({"name": "whoami", "arguments": {}})));
    let init: Value = serde_json::from_str(whoami["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(init["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(init["clientInfo"]["name"], "modern-test");
    assert!(init["capabilities"]["elicitation"].is_object() && init["capabilities"]["sampling"].is_object());
}

#[test]
fn envelopes_are_checked_and_removed_methods_are_unknown() {
    let mut client = modern_client();
    let no_capabilities =
        client.request("tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}));
    assert_eq!(no_capabilities["error"]["code"], -32602, "{}", no_capabilities.raw);
    let unknown = client.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(unknown["error"]["code"], -32022, "{}", unknown.raw);
    assert_eq!(unknown["error"]["data"]["supported"], json!([VERSION]));
    assert_eq!(unknown["error"]["data"]["requested"], "1900-01-01");

    // The first enveloped request pinned the connection to 2026-07-28.
    let first = client.request("tools/list", json!({"_meta": meta()}));
    assert!(first["result"]["tools"].is_array(), "{}", first.raw);
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let removed = client.request(method, json!({"_meta": meta(), "level": "info", "uri": "x:/y"}));
        assert_eq!(removed["error"]["code"], -32601, "{method}: {}", removed.raw);
    }
    let initialize = client.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(initialize["error"]["code"], -32601, "{}", initialize.raw);
    let bare = client.request("tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602, "{}", bare.raw);
}

#[test]
fn clients_of_2025_still_initialize_after_a_discover_probe() {
    let mut client = modern_client();
    let discover = client.request("server/discover", json!({"_meta": meta()}));
    assert!(discover["result"]["supportedVersions"].is_array());
    client.initialize();
    assert!(client.tool_names().contains(&"echo".to_owned()));
    let enveloped = client.request("tools/list", json!({"_meta": meta()}));
    assert_eq!(enveloped["error"]["code"], -32600, "{}", enveloped.raw);
}

#[test]
fn an_upstream_elicitation_becomes_input_required_and_the_retry_finishes_the_call() {
    let mut client = modern_client();
    let params = enveloped(json!({"name": "elicit", "arguments": {"message": "Your name?"}}));
    let first = call(&mut client, params.clone());
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{}", first.raw);
    let requests = result["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your name?");
    let state = result["requestState"].as_str().expect("requestState").to_owned();

    // A tampered state, or the state on other arguments, is refused.
    let mut tampered = params.clone();
    tampered["requestState"] = json!(format!("{state}x"));
    tampered["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(call(&mut client, tampered)["error"]["code"], -32602);
    let mut other = enveloped(json!({"name": "elicit", "arguments": {"message": "Something else?"}}));
    other["requestState"] = json!(state);
    other["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(call(&mut client, other)["error"]["code"], -32602);

    // A retry without the answer is asked again.
    let mut empty = params.clone();
    empty["requestState"] = json!(state);
    let again = call(&mut client, empty);
    assert_eq!(again["result"]["resultType"], "input_required", "{}", again.raw);
    let state = again["result"]["requestState"].as_str().unwrap().to_owned();
    let key = again["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();

    let mut retry = params;
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Ada"}}, "unasked": {"x": 1}});
    let done = call(&mut client, retry.clone());
    assert_eq!(done["result"]["resultType"], "complete", "{}", done.raw);
    assert!(done.raw.contains("Ada"), "{}", done.raw);
    // The state is spent.
    assert_eq!(call(&mut client, retry)["error"]["code"], -32602);
}

#[test]
fn sampling_and_roots_ride_the_same_loop_within_the_declared_capabilities() {
    let mut client = modern_client();
    let params = enveloped(json!({"name": "sample", "arguments": {"prompt": "2+2?"}}));
    let first = call(&mut client, params.clone());
    let (key, request) = first["result"]["inputRequests"].as_object().expect(&first.raw).iter().next().unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    let mut retry = params;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"role": "assistant", "content": {"type": "text", "text": "four"}, "model": "m", "stopReason": "endTurn"}});
    let done = call(&mut client, retry);
    assert!(done.raw.contains("four"), "{}", done.raw);

    let params = enveloped(json!({"name": "roots", "arguments": {}}));
    let first = call(&mut client, params.clone());
    let (key, request) = first["result"]["inputRequests"].as_object().expect(&first.raw).iter().next().unwrap();
    assert_eq!(request["method"], "roots/list");
    let mut retry = params;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"roots": [{"uri": "file:///work", "name": "work"}]}});
    let done = call(&mut client, retry);
    assert!(done.raw.contains("file:///work"), "{}", done.raw);

    // A client that declared no sampling is never asked: the upstream is told so.
    let mut params = json!({"name": "sample", "arguments": {"prompt": "2+2?"}});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let refused = call(&mut client, params);
    assert!(refused.value.get("result").is_some() || refused.value.get("error").is_some(), "{}", refused.raw);
    assert_ne!(refused["result"]["resultType"], "input_required", "{}", refused.raw);
}

/// A 2025 server that asks for roots right after `initialized` (as
/// server-everything does, 350 ms later, and caches the answer) is refused
/// rather than told "no roots": a modern client can be asked only within one
/// of its requests, and an empty list would be a claim the client never made.
/// The server's later call asks for real, through `input_required`.
#[test]
fn roots_asked_outside_any_call_are_refused_not_answered_empty() {
    let mut client = Client::serve(&fixtures(&[("fx", &["--roots-at-start"])], "naming: {prefix: never}\n"));
    // Wait (without a clock) until the fixture has had its answer.
    let mut at_start = Value::Null;
    for _ in 0..2000 {
        let stats = call(&mut client, enveloped(json!({"name": "stats", "arguments": {}})));
        let text = stats["result"]["content"][0]["text"].as_str().unwrap_or("{}").to_owned();
        at_start = serde_json::from_str::<Value>(&text).unwrap_or_default()["roots_at_start"].clone();
        if !at_start.is_null() {
            break;
        }
    }
    assert!(at_start["error"].is_object(), "roots/list outside a call was answered: {at_start}");
    assert!(
        at_start["error"]["message"].as_str().is_some_and(|m| m.contains("only during one of its requests")),
        "{at_start}"
    );

    let params = enveloped(json!({"name": "roots", "arguments": {}}));
    let first = call(&mut client, params.clone());
    let (key, request) = first["result"]["inputRequests"].as_object().expect(&first.raw).iter().next().unwrap();
    assert_eq!(request["method"], "roots/list");
    let mut retry = params;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"roots": [{"uri": "file:///work", "name": "work"}]}});
    let done = call(&mut client, retry);
    assert!(done.raw.contains("file:///work"), "{}", done.raw);
}

/// A call that needs input goes on across requests: after `input_required`,
/// the client waits on its retry, so the rest of the call's progress comes
/// under the retry's token (it came under the first request's, which the
/// Python SDK no longer follows: the progress check of the SDK matrix failed
/// whenever server-everything asked for roots during the progress call).
#[test]
fn progress_after_a_retry_comes_under_the_retrys_token() {
    let mut client = modern_client();
    let mut params =
        enveloped(json!({"name": "progress", "arguments": {"steps": 3, "delay_ms": 0, "ask_roots": true}}));
    params["_meta"]["progressToken"] = json!("first");
    let id = client.send_request("tools/call", params.clone());
    let mut before = Vec::new();
    let first = loop {
        let message = client.wait_for("the next message", |_| true);
        if message["id"] == id {
            break message;
        }
        before.push(message);
    };
    assert_eq!(first["result"]["resultType"], "input_required", "{}", first.raw);
    let tokens: Vec<&Value> = before.iter().map(|m| &m["params"]["progressToken"]).collect();
    assert_eq!(tokens, [&json!("first")], "step 1 came under the first request's token: {before:?}");

    let key = first["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    params["_meta"]["progressToken"] = json!("retry");
    params["requestState"] = first["result"]["requestState"].clone();
    params["inputResponses"] = json!({key: {"roots": []}});
    let id = client.send_request("tools/call", params);
    let mut after = Vec::new();
    let done = loop {
        let message = client.wait_for("the next message", |_| true);
        if message["id"] == id {
            break message;
        }
        after.push(message);
    };
    assert_eq!(done["result"]["resultType"], "complete", "{}", done.raw);
    let steps: Vec<(&Value, &Value)> =
        after.iter().map(|m| (&m["params"]["progressToken"], &m["params"]["progress"])).collect();
    assert_eq!(steps, [(&json!("retry"), &json!(2)), (&json!("retry"), &json!(3))], "{after:?}");

    // A retry that asks for no progress gets none.
    let mut params =
        enveloped(json!({"name": "progress", "arguments": {"steps": 2, "delay_ms": 0, "ask_roots": true}}));
    params["_meta"]["progressToken"] = json!(7);
    let id = client.send_request("tools/call", params.clone());
    let first = loop {
        let message = client.wait_for("the next message", |_| true);
        if message["id"] == id {
            break message;
        }
        assert_eq!(message["params"]["progressToken"], 7, "{}", message.raw);
    };
    let key = first["result"]["inputRequests"].as_object().expect(&first.raw).keys().next().unwrap().clone();
    params["_meta"].as_object_mut().unwrap().remove("progressToken");
    params["requestState"] = first["result"]["requestState"].clone();
    params["inputResponses"] = json!({key: {"roots": []}});
    let id = client.send_request("tools/call", params);
    let next = client.wait_for("the next message", |_| true);
    assert_eq!(next["id"], id, "no progress for a retry that asked for none: {}", next.raw);
}

#[test]
fn listen_streams_get_the_changes_they_asked_for_tagged_with_their_id() {
    let mut client = modern_client();
    client.request("tools/list", json!({"_meta": meta()}));
    let listen = client.send_request(
        "subscriptions/listen",
        json!({"_meta": meta(), "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["fixture://readme"]}}),
    );
    let ack = client.wait_method("notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen, "{}", ack.raw);
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);

    call(&mut client, enveloped(json!({"name": "add_tool", "arguments": {"name": "fresh"}})));
    let changed = client.wait_method("notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen, "{}", changed.raw);

    // Cancelling the listen request ends the stream: no more notifications.
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": listen}}));
    std::thread::sleep(std::time::Duration::from_millis(200));
    client.drain(std::time::Duration::from_millis(100));
    call(&mut client, enveloped(json!({"name": "add_tool", "arguments": {"name": "later"}})));
    let after = client.drain(std::time::Duration::from_millis(500));
    assert!(after.iter().all(|message| message["method"] != "notifications/tools/list_changed"), "{after:#?}");
}

#[test]
fn progress_reaches_the_request_and_a_cancel_stops_the_call() {
    let mut client = modern_client();
    let mut params = enveloped(json!({"name": "progress", "arguments": {"steps": 2, "delay_ms": 10}}));
    params["_meta"]["progressToken"] = json!("tok");
    let id = client.send_request("tools/call", params);
    let progress = client.wait_method("notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "tok", "{}", progress.raw);
    let done = client.response(&id);
    assert_eq!(done["result"]["resultType"], "complete");

    let slow = client.send_request("tools/call", enveloped(json!({"name": "slow", "arguments": {"ms": 60000}})));
    std::thread::sleep(std::time::Duration::from_millis(300));
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": slow}}));
    support::retry("the fixture to see the cancellation", || {
        let stats = call(&mut client, enveloped(json!({"name": "stats", "arguments": {}})));
        let text = stats["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        let stats: Value = serde_json::from_str(&text).ok()?;
        stats["cancelled"].as_array().is_some_and(|ids| ids.len() == 1).then_some(())
    });
    let late = client.drain(std::time::Duration::from_millis(200));
    assert!(late.iter().all(|message| message["id"] != slow), "a cancelled request is not answered: {late:#?}");
}

/// A 2025-era client in front of a stdio server pinned to 2026-07-28 (a
/// second Warden, which serves both eras): everything a 2025 server would do
/// unasked still reaches the client: elicitation as a real request, list
/// changes, resource updates (over one `subscriptions/listen`).
#[test]
fn a_modern_stdio_upstream_is_translated_for_a_2025_era_client() {
    let inner = support::scratch_dir("modern-inner").join("inner.yaml");
    std::fs::write(&inner, fixtures(&[("fx", &[])], "naming: {prefix: never}\n")).unwrap();
    let warden = support::warden_bin();
    let config = format!(
        "servers:\n  modern:\n    transport: {{kind: stdio, command: {:?}, args: [serve, --config, {:?}]}}\n    protocol: modern\nnaming: {{prefix: never}}\n",
        warden.to_str().unwrap(),
        inner.to_str().unwrap()
    );
    let mut client = Client::serve(&config);
    client.initialize();
    assert_eq!(client.call_text("echo", json!({"text": "through"})), "through");
    client.wait_stderr("upstream speaks MCP 2026-07-28");

    let call = client.send_request("tools/call", json!({"name": "elicit", "arguments": {"message": "Name?"}}));
    let asked = client.wait_method("elicitation/create");
    assert_eq!(asked["params"]["message"], "Name?", "{}", asked.raw);
    client.send(
        json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Lovelace"}}}),
    );
    let done = client.response(&call);
    assert!(done.raw.contains("Lovelace"), "{}", done.raw);

    client.call_tool("add_tool", json!({"name": "fresh"}));
    client.wait_method("notifications/tools/list_changed");
    assert!(client.tool_names().contains(&"fresh".to_owned()));

    let subscribed = client.request("resources/subscribe", json!({"uri": "fixture://readme"}));
    assert!(subscribed.value.get("result").is_some(), "{}", subscribed.raw);
    support::retry("the update to reach the client", || {
        client.call_tool("touch", json!({"uri": "fixture://readme"}));
        let seen = client.drain(std::time::Duration::from_millis(200));
        seen.iter().any(|message| message["method"] == "notifications/resources/updated").then_some(())
    });
}

/// In `auto`, a stdio server is opened with `initialize` (a request before
/// it can kill a 2025 server); one that speaks only 2026-07-28 refuses it,
/// and is then asked `server/discover`, on the same process.
#[test]
fn a_modern_only_stdio_server_is_found_when_it_refuses_initialize() {
    let mut client = Client::serve(&fixtures(&[("fx", &["--modern-only"])], "naming: {prefix: never}\n"));
    client.initialize();
    assert_eq!(client.call_text("echo", json!({"text": "modern"})), "modern");
    client.wait_stderr("upstream speaks MCP 2026-07-28");
    // Only the refused initialize reached it: it kept no parameters.
    let whoami = client.call_text("whoami", json!({}));
    assert_eq!(whoami, "null", "no initialize reached it: {whoami}");
}
