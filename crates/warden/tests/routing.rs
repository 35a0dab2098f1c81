//! End to end: how the upstreams' tools, prompts and resources reach the
//! client, under which names, and how requests find their way back.

mod support;

use serde_json::{Value, json};
use support::{Client, fixture_bin, fixtures};

#[test]
fn tools_of_two_servers_are_prefixed_and_calls_route_back() {
    let mut client = Client::serve_initialized(&fixtures(&[("alpha", &[]), ("beta", &["--name", "beta"])], ""));
    client.wait_for_tool("alpha__echo");
    client.wait_for_tool("beta__echo");
    let names = client.tool_names();
    assert!(names.iter().all(|n| n.starts_with("alpha__") || n.starts_with("beta__")), "{names:?}");
    assert_eq!(client.call_text("alpha__echo", json!({"text": "to alpha"})), "to alpha");
    assert_eq!(client.call_text("beta__echo", json!({"text": "to beta"})), "to beta");
    // Each call reached its own process.
    let alpha_pid = client.call_text("alpha__pid", json!({}));
    let beta_pid = client.call_text("beta__pid", json!({}));
    assert_ne!(alpha_pid, beta_pid);
    let unknown = client.request("tools/call", json!({"name": "gamma__echo", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{}", unknown.raw);
    assert_eq!(unknown["error"]["message"], "Unknown tool: gamma__echo");
}

#[test]
fn definitions_and_arguments_pass_byte_for_byte() {
    let mut client = Client::serve_initialized(&fixtures(&[("fx", &[])], ""));
    client.wait_for_tool("fx__echo");
    let list = client.request("tools/list", json!({}));
    // Unknown fields, _meta, annotations and the 2020-12 schema survive, number text included.
    for fragment in [
        r#""x-unknown-field":{"nested":[1,2.50,"é"]}"#,
        r#""_meta":{"fixture/keep":true}"#,
        r#""$schema":"https://json-schema.org/draft/2020-12/schema""#,
        r#""annotations":{"readOnlyHint":true}"#,
    ] {
        assert!(list.raw.contains(fragment), "lost {fragment} in {}", list.raw);
    }
    let arguments =
        r#"{"text":"ü \"quoted\" \u00e9","n":1.50,"big":123456789012345678901234567890,"nested":{"k":[true,null]}}"#;
    client.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{{"name":"fx__echo","arguments":{arguments},"x-extra":1}}}}"#
    ));
    let response = client.response(&json!("call-1"));
    assert!(response.raw.contains(&format!(r#""structuredContent":{{"arguments":{arguments}}}"#)), "{}", response.raw);
}

#[test]
fn wrap_passes_names_through_unchanged() {
    let fixture = fixture_bin();
    let mut client = Client::start(&["wrap", "--", &fixture, "--extra-tools", "2"], &[]);
    client.initialize();
    client.wait_for_tool("echo");
    let names = client.tool_names();
    assert!(names.contains(&"extra_0002".to_owned()) && !names.iter().any(|n| n.contains("__")), "{names:?}");
    assert_eq!(client.call_text("echo", json!({"text": "plain"})), "plain");
    // With a single upstream, methods Warden does not know pass through to it.
    let vendor = client.request("vendor/unknown", json!({"x": 1}));
    assert_eq!(vendor["error"]["code"], -32601);
    assert!(vendor["error"]["message"].as_str().unwrap().contains("vendor/unknown"), "{}", vendor.raw);
}

#[test]
fn unprefixed_collisions_are_reported_and_the_first_server_wins() {
    let config = fixtures(&[("first", &[]), ("second", &["--extra-tools", "1"])], "naming: {prefix: never}\n");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("extra_0001");
    let names = client.tool_names();
    assert_eq!(names.iter().filter(|n| *n == "echo").count(), 1, "{names:?}");
    client.wait_stderr("tool 'echo' of server 'second' is hidden: server 'first' already exposes that name");
    // `extra_0001` exists only on the second server: it routes there.
    assert_eq!(client.call_text("extra_0001", json!({"text": "x"})), "x");
}

#[test]
fn separator_and_multiple_mode_are_configurable() {
    let single = fixtures(&[("solo", &[])], "naming: {prefix: multiple, separator: '-'}\n");
    let mut client = Client::serve_initialized(&single);
    client.wait_for_tool("echo");
    let double = fixtures(&[("a", &[]), ("b", &[])], "naming: {prefix: multiple, separator: '-'}\n");
    let mut client = Client::serve_initialized(&double);
    client.wait_for_tool("a-echo");
    assert_eq!(client.call_text("b-echo", json!({"text": "dash"})), "dash");
}

#[test]
fn long_names_are_shortened_and_mapped_back() {
    let mut client = Client::serve_initialized(&fixtures(&[("fixture", &["--long-names"])], ""));
    client.wait_for_tool("fixture__echo");
    let names = client.tool_names();
    let long: Vec<&String> = names.iter().filter(|n| n.starts_with("fixture__a_tool_with")).collect();
    assert_eq!(long.len(), 1, "{names:?}");
    assert!(long[0].len() <= 64, "{}", long[0]);
    let name = long[0].clone();
    assert_eq!(client.call_text(&name, json!({"text": "long"})), "long");
}

#[test]
fn paginated_upstream_lists_are_read_to_the_end() {
    let config = fixtures(&[("paged", &["--extra-tools", "25", "--page-size", "4"])], "");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("paged__extra_0025");
    let names = client.tool_names();
    for n in 1..=25 {
        assert!(names.contains(&format!("paged__extra_{n:04}")), "missing extra_{n:04} in {names:?}");
    }
    let list = client.request("tools/list", json!({}));
    assert!(list["result"].get("nextCursor").is_none(), "Warden returns whole lists");
    let prompts = client.request("prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"].as_array().map(Vec::len), Some(2), "{}", prompts.raw);
    let bad = client.request("tools/list", json!({"cursor": "nope"}));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn prompts_resources_templates_and_completion_route_to_their_owner() {
    let config = fixtures(&[("fx", &[])], "");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    let prompts = client.request("prompts/list", json!({}));
    let names: Vec<&str> =
        prompts["result"]["prompts"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["fx__greeting", "fx__plain"]);
    let greeting = client.request("prompts/get", json!({"name": "fx__greeting", "arguments": {"name": "Ada"}}));
    assert_eq!(greeting["result"]["messages"][0]["content"]["text"], "Hello, Ada!", "{}", greeting.raw);

    let resources = client.request("resources/list", json!({}));
    let uris: Vec<&str> =
        resources["result"]["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert_eq!(uris, ["fixture://readme", "fixture://data.json"], "URIs are not rewritten");
    let templates = client.request("resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"][0]["uriTemplate"], "fixture://items/{id}");
    let readme = client.request("resources/read", json!({"uri": "fixture://readme"}));
    assert_eq!(readme["result"]["contents"][0]["text"], "Fixture readme", "{}", readme.raw);
    let item = client.request("resources/read", json!({"uri": "fixture://items/42"}));
    assert_eq!(item["result"]["contents"][0]["text"], "item 42", "{}", item.raw);

    let completion = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "fx__greeting"}, "argument": {"name": "name", "value": "a"}}),
    );
    assert_eq!(completion["result"]["completion"]["values"], json!(["alice"]), "{}", completion.raw);
    let completion = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "fixture://items/{id}"}, "argument": {"name": "id", "value": "1"}}),
    );
    assert_eq!(completion["result"]["completion"]["values"], json!(["1", "10"]), "{}", completion.raw);

    let subscribe = client.request("resources/subscribe", json!({"uri": "fixture://readme"}));
    assert_eq!(subscribe["result"], json!({}), "{}", subscribe.raw);
    assert_eq!(client.call_text("fx__touch", json!({"uri": "fixture://readme"})), "touched subscribed=true");
    let updated = client.wait_method("notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "fixture://readme");
    client.request("resources/unsubscribe", json!({"uri": "fixture://readme"}));
    assert_eq!(client.call_text("fx__touch", json!({"uri": "fixture://readme"})), "touched subscribed=false");
}

#[test]
fn resources_of_two_servers_route_by_listing_and_collisions_are_reported() {
    let config = fixtures(&[("one", &[]), ("two", &[])], "");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("two__echo");
    let resources = client.request("resources/list", json!({}));
    assert_eq!(resources["result"]["resources"].as_array().map(Vec::len), Some(2), "{}", resources.raw);
    client.wait_stderr("resource 'fixture://readme' of server 'two' is hidden: server 'one' lists the same URI");
    let missing = client.request("resources/read", json!({"uri": "nowhere://x"}));
    assert_eq!(missing["error"]["code"], -32002, "{}", missing.raw);
}

#[test]
fn environment_variables_expand_in_yaml_and_json_configs() {
    let fixture = fixture_bin();
    let dir = support::scratch_dir("env");
    let json_path = dir.join("warden.json");
    std::fs::write(
        &json_path,
        r#"{"servers":{"viaenv":{"displayName":"Env","transport":{"kind":"stdio","command":"${FIXTURE_BIN}","args":["--name","${NAME:-fallback}"]}}}}"#,
    )
    .unwrap();
    let mut client = Client::start(&["serve", "--config", json_path.to_str().unwrap()], &[("FIXTURE_BIN", &fixture)]);
    client.initialize();
    client.wait_for_tool("viaenv__echo");

    let yaml_path = dir.join("bad.yaml");
    std::fs::write(&yaml_path, "servers:\n  x:\n    transport: {kind: stdio, command: \"${WARDEN_TEST_UNSET}\"}\n")
        .unwrap();
    let output = std::process::Command::new(support::warden_bin())
        .args(["serve", "--config", yaml_path.to_str().unwrap()])
        .env_remove("WARDEN_TEST_UNSET")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("WARDEN_TEST_UNSET is not set"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing but protocol on stdout");
}

#[test]
fn initialize_advertises_what_warden_routes_and_negotiates_versions() {
    let mut client = Client::serve(&fixtures(&[("fx", &[])], ""));
    let answer = client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}),
    );
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
    let capabilities = &answer["result"]["capabilities"];
    for capability in ["tools", "prompts", "resources", "completions", "logging"] {
        assert!(capabilities.get(capability).is_some(), "{capability} missing: {}", answer.raw);
    }
    assert_eq!(answer["result"]["serverInfo"]["name"], "warden");
    let again = client.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}),
    );
    assert_eq!(again["error"]["code"], -32600);

    let mut future = Client::serve(&fixtures(&[("fx", &[])], ""));
    let answer = future.request(
        "initialize",
        json!({"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "new", "version": "0"}}),
    );
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    let _: Value = answer.value;
}
