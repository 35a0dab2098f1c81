//! MCP 2026-07-28 ("modern") on the HTTP front: each POST stands alone,
//! its headers mirror its body, and the status codes are the ones clients
//! detect the era by. The upstream is the repository's 2025-era fixture.

mod support;

use serde_json::{Value, json};
use support::fixtures;
use support::http::{HttpWarden, Response, send};

const VERSION: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-http-test", "version": "1"}
    })
}

fn warden() -> HttpWarden {
    HttpWarden::start(&fixtures(&[("fx", &[])], "naming: {prefix: never}\nexposePerServer: true\n"))
}

/// POSTs `method` with `params` and the standard headers, adjusted by `edit`.
fn post(
    warden: &HttpWarden,
    path: &str,
    id: Value,
    method: &str,
    params: Value,
    edit: &[(&str, Option<&str>)],
) -> Response {
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let mut headers: Vec<(String, String)> = vec![
        ("content-type".into(), "application/json".into()),
        ("accept".into(), "application/json, text/event-stream".into()),
        ("mcp-protocol-version".into(), VERSION.into()),
        ("mcp-method".into(), method.into()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name".into(), name));
    }
    for (header, value) in edit {
        headers.retain(|(name, _)| name != header);
        if let Some(value) = value {
            headers.push(((*header).into(), (*value).into()));
        }
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    send(&warden.addr, "POST", path, &headers, body.as_bytes())
}

/// The final message of a response, JSON or event stream.
fn last(mut response: Response) -> (u16, Value) {
    let status = response.status;
    if response.is_sse() {
        let mut last = Value::Null;
        while let Some((_, message)) = response.next_message() {
            last = message;
        }
        return (status, last);
    }
    (status, response.json())
}

#[test]
fn modern_requests_need_no_session() {
    let warden = warden();
    let (status, discover) = last(post(&warden, "/mcp", json!(1), "server/discover", json!({"_meta": meta()}), &[]));
    assert_eq!(status, 200, "{discover}");
    assert_eq!(discover["result"]["supportedVersions"], json!([VERSION]));
    assert!(!warden.stderr().contains("modern lane started"), "a probe starts no server: {}", warden.stderr());

    for path in ["/mcp", "/mcp/fx"] {
        let response = post(&warden, path, json!("a"), "tools/list", json!({"_meta": meta()}), &[]);
        assert!(response.header("mcp-session-id").is_none(), "no session is minted");
        let (status, tools) = last(response);
        assert_eq!(status, 200);
        assert_eq!(tools["id"], "a");
        assert_eq!(tools["result"]["resultType"], "complete", "{tools}");
        assert!(tools["result"]["tools"].as_array().unwrap().iter().any(|tool| tool["name"] == "echo"));

        let params = json!({"_meta": meta(), "name": "echo", "arguments": {"text": "hello"}});
        let (status, echoed) = last(post(&warden, path, json!(2), "tools/call", params, &[]));
        assert_eq!(status, 200);
        assert_eq!(echoed["result"]["content"][0]["text"], "hello", "{echoed}");
    }
    // A session id on a modern request is ignored.
    let (status, tools) = last(post(
        &warden,
        "/mcp",
        json!(3),
        "tools/list",
        json!({"_meta": meta()}),
        &[("mcp-session-id", Some("nonsense"))],
    ));
    assert_eq!((status, tools["result"]["resultType"].clone()), (200, json!("complete")), "{tools}");
}

#[test]
fn bad_envelopes_headers_versions_and_methods_get_the_exact_status() {
    let warden = warden();
    let call = json!({"_meta": meta(), "name": "echo", "arguments": {"text": "x"}});
    // (what, params, header changes, status, JSON-RPC code)
    type Case<'a> = (&'a str, Value, Vec<(&'a str, Option<&'a str>)>, u16, i64);
    let cases: Vec<Case> = vec![
        ("missing _meta", json!({}), vec![], 400, -32602),
        (
            "missing capabilities",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}),
            vec![],
            400,
            -32602,
        ),
        ("no version header", json!({"_meta": meta()}), vec![("mcp-protocol-version", None)], 400, -32020),
        ("method header differs", json!({"_meta": meta()}), vec![("mcp-method", Some("tools/call"))], 400, -32020),
        (
            "unknown version",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}),
            vec![("mcp-protocol-version", Some("1900-01-01"))],
            400,
            -32022,
        ),
    ];
    for (what, params, edit, status, code) in cases {
        let (got, body) = last(post(&warden, "/mcp", json!(7), "tools/list", params, &edit));
        assert_eq!((got, body["error"]["code"].as_i64()), (status, Some(code)), "{what}: {body}");
        assert_eq!(body["id"], 7, "{what}: errors answer the request's id");
    }
    let (status, body) = last(post(&warden, "/mcp", json!(8), "tools/call", call.clone(), &[("mcp-name", None)]));
    assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32020)), "{body}");
    let (status, body) =
        last(post(&warden, "/mcp", json!(8), "tools/call", call.clone(), &[("mcp-name", Some("other"))]));
    assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32020)), "{body}");
    // Base64-sentinel names are decoded before comparing.
    let (status, body) =
        last(post(&warden, "/mcp", json!(8), "tools/call", call, &[("mcp-name", Some("=?base64?ZWNobw==?="))]));
    assert_eq!(status, 200, "{body}");
    for method in ["ping", "logging/setLevel", "vendor/unknown"] {
        let (status, body) = last(post(&warden, "/mcp", json!(9), method, json!({"_meta": meta()}), &[]));
        assert_eq!((status, body["error"]["code"].as_i64()), (404, Some(-32601)), "{method}: {body}");
    }
    // A notification is accepted and ignored.
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string();
    let headers =
        [("content-type", "application/json"), ("mcp-protocol-version", VERSION), ("accept", "application/json")];
    assert_eq!(send(&warden.addr, "POST", "/mcp", &headers, body.as_bytes()).status, 202);
    // 2025-era clients are served as before.
    let mut client_2025 = warden.client();
    client_2025.initialize();
    assert!(client_2025.tool_names().contains(&"echo".to_owned()));
}

#[test]
fn elicitation_over_http_is_a_retry_and_listen_is_a_stream() {
    let warden = warden();
    let params = json!({"_meta": meta(), "name": "elicit", "arguments": {"message": "Name?"}});
    let (status, first) = last(post(&warden, "/mcp", json!(1), "tools/call", params.clone(), &[]));
    assert_eq!(status, 200);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let key = first["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let mut retry = params;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Grace"}}});
    let (status, done) = last(post(&warden, "/mcp", json!(2), "tools/call", retry, &[]));
    assert_eq!(status, 200);
    assert_eq!(done["id"], 2);
    assert!(done.to_string().contains("Grace"), "{done}");

    let listen = json!({"_meta": meta(), "notifications": {"toolsListChanged": true}});
    let mut stream = post(&warden, "/mcp", json!("L"), "subscriptions/listen", listen, &[]);
    assert!(stream.is_sse());
    assert_eq!(stream.header("x-accel-buffering"), Some("no"));
    let (_, ack) = stream.next_message().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    let add = json!({"_meta": meta(), "name": "add_tool", "arguments": {"name": "fresh"}});
    last(post(&warden, "/mcp", json!(3), "tools/call", add, &[]));
    let (_, changed) = stream.next_message().unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
}

/// Modern all the way: a modern client, this Warden, and a remote Warden it
/// finds modern by the probe. The remote's `input_required` (its fixture's
/// elicitation) reaches the client as this Warden's own, with its own state;
/// the remote gets its own state back on the retry.
#[test]
fn modern_clients_reach_modern_upstreams_through_two_states() {
    let remote = HttpWarden::start(&fixtures(&[("fx", &[])], "naming: {prefix: never}\n"));
    let local = HttpWarden::start(&format!(
        "servers:\n  remote:\n    transport: {{kind: http, url: {:?}}}\nnaming: {{prefix: never}}\n",
        remote.url("/mcp")
    ));
    let params = json!({"_meta": meta(), "name": "elicit", "arguments": {"message": "Name?"}});
    let (status, first) = last(post(&local, "/mcp", json!(1), "tools/call", params.clone(), &[]));
    assert_eq!(status, 200);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let key = first["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    assert_eq!(first["result"]["inputRequests"][&key]["method"], "elicitation/create");
    let mut retry = params;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Hopper"}}});
    let (status, done) = last(post(&local, "/mcp", json!(2), "tools/call", retry, &[]));
    assert_eq!(status, 200);
    assert!(done.to_string().contains("Hopper"), "{done}");
    assert!(local.stderr().contains("upstream speaks MCP 2026-07-28"), "{}", local.stderr());
    assert!(!remote.stderr().contains("HTTP session started"), "{}", remote.stderr());
}

/// `Mcp-Param-*`: a tool whose schema mirrors an argument in a header gets
/// it checked on the way in (missing or different: 400 with -32020), and
/// written on the way out to a modern upstream, which checks it in turn
/// (the upstream here is a second Warden, with the same checks).
#[test]
fn mirrored_arguments_are_checked_coming_in_and_written_going_out() {
    let remote = HttpWarden::start(&fixtures(&[("fx", &["--mirrored"])], "naming: {prefix: never}\n"));
    let call = json!({"_meta": meta(), "name": "locate", "arguments": {"text": "hi", "region": "us-west1"}});
    // In front of the fixture: checked.
    let (status, body) = last(post(&remote, "/mcp", json!(1), "tools/call", call.clone(), &[]));
    assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32020)), "missing header: {body}");
    let wrong = [("mcp-param-region", Some("eu-west1"))];
    let (status, body) = last(post(&remote, "/mcp", json!(2), "tools/call", call.clone(), &wrong));
    assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32020)), "different value: {body}");
    let right = [("mcp-param-region", Some("us-west1"))];
    let (status, body) = last(post(&remote, "/mcp", json!(3), "tools/call", call.clone(), &right));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "hi");
    let encoded = [("mcp-param-region", Some("=?base64?dXMtd2VzdDE=?="))];
    assert_eq!(last(post(&remote, "/mcp", json!(4), "tools/call", call.clone(), &encoded)).0, 200);
    let no_value = json!({"_meta": meta(), "name": "locate", "arguments": {"text": "hi"}});
    assert_eq!(last(post(&remote, "/mcp", json!(5), "tools/call", no_value, &[])).0, 200, "nothing to mirror");

    // Through a second Warden, which writes the header the remote checks.
    let local = HttpWarden::start(&format!(
        "servers:\n  remote:\n    transport: {{kind: http, url: {:?}}}\nnaming: {{prefix: never}}\n",
        remote.url("/mcp")
    ));
    let (status, body) = last(post(&local, "/mcp", json!(6), "tools/call", call, &right));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "hi", "{body}");
    let mut client_2025 = local.client();
    client_2025.initialize();
    let result = client_2025.call("locate", json!({"text": "from 2025", "region": "ap-south1"}));
    assert_eq!(result["content"][0]["text"], "from 2025", "{result}");
}

/// A tool whose `x-mcp-header` annotations are invalid (SEP-2243: here the
/// same header twice, ignoring case, and a header name with a space) is left
/// out for clients of both eras: not listed, and refused as an unknown tool
/// when called anyway, with a warning naming the server, the tool and the
/// reason. The valid mirrored tool beside them is listed and answers.
#[test]
fn tools_with_invalid_header_annotations_are_left_out() {
    let warden =
        HttpWarden::start(&fixtures(&[("fx", &["--mirrored", "--bad-mirrored"])], "naming: {prefix: never}\n"));
    let (status, listed) = last(post(&warden, "/mcp", json!(1), "tools/list", json!({"_meta": meta()}), &[]));
    assert_eq!(status, 200, "{listed}");
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(names.contains(&"locate") && names.contains(&"echo"), "{names:?}");
    assert!(!names.contains(&"relocate") && !names.contains(&"misplace"), "{names:?}");
    let locate = tools.iter().find(|tool| tool["name"] == "locate").expect("locate");
    assert_eq!(locate["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region", "kept as listed");

    for (id, name) in [(2, "relocate"), (3, "misplace")] {
        let call = json!({"_meta": meta(), "name": name, "arguments": {"text": "hi", "region": "us-west1"}});
        let (status, refused) = last(post(&warden, "/mcp", json!(id), "tools/call", call, &[]));
        assert_eq!(status, 200, "{refused}");
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(refused["error"]["message"], format!("Unknown tool: {name}"), "{refused}");
    }
    let right = [("mcp-param-region", Some("us-west1"))];
    let call = json!({"_meta": meta(), "name": "locate", "arguments": {"text": "hi", "region": "us-west1"}});
    let (status, body) = last(post(&warden, "/mcp", json!(4), "tools/call", call, &right));
    assert_eq!((status, &body["result"]["content"][0]["text"]), (200, &json!("hi")), "{body}");

    // A 2025-11-25 client sees the same catalog.
    let mut client_2025 = warden.client();
    client_2025.initialize();
    let names = client_2025.tool_names();
    assert!(names.iter().any(|name| name == "locate"), "{names:?}");
    assert!(!names.iter().any(|name| name == "relocate" || name == "misplace"), "{names:?}");
    let refused = client_2025.request("tools/call", json!({"name": "misplace", "arguments": {"text": "hi"}}));
    assert_eq!(refused["error"]["message"], "Unknown tool: misplace", "{refused}");
    assert_eq!(client_2025.call("locate", json!({"text": "from 2025"}))["content"][0]["text"], "from 2025");
    // Lists read again, by both: no new warnings.
    assert_eq!(client_2025.tool_names(), names);
    assert_eq!(
        last(post(&warden, "/mcp", json!(5), "tools/list", json!({"_meta": meta()}), &[])).1["result"],
        listed["result"]
    );

    let stderr = warden.stderr();
    let warned = |tool: &str, reason: &str| {
        stderr.lines().any(|line| {
            line.contains("tool left out") && line.contains("fx") && line.contains(tool) && line.contains(reason)
        })
    };
    assert!(warned("relocate", "repeats the one at /properties/from"), "{stderr}");
    assert!(warned("misplace", "is not an HTTP token"), "{stderr}");
    // Once per session's upstream (the modern lane's, the 2025-era session's),
    // not on each of the lists read since.
    let left_out: Vec<&str> = stderr.lines().filter(|line| line.contains("tool left out")).collect();
    assert_eq!(left_out.len(), 4, "{stderr}");
    assert!(left_out.iter().all(|line| line.contains("relocate") || line.contains("misplace")), "{stderr}");
}

/// What Warden adds holds for modern requests too: the bearer token is
/// checked on each, it picks the profile (each token and profile has its
/// own lane), a policy refuses, and one principal's `requestState` is
/// worthless to another.
#[test]
fn tokens_profiles_and_policies_apply_to_modern_requests() {
    let config = fixtures(
        &[("fx", &[])],
        r#"naming: {prefix: never}
defaultProfile: all
profiles:
  all: {servers: {fx: {}}}
  echo-only: {servers: {fx: {tools: {allow: [echo]}}}}
auth:
  tokens:
    - {name: alice, token: alice-secret-0123456789, profiles: [all, echo-only]}
    - {name: bob, token: bob-secret-0123456789, profiles: [echo-only, all]}
policy:
  rules:
    - {name: no-drops, if: {tool: [echo], args: {arg: text, contains: DROP}}, then: deny, reason: no DROP here}
"#,
    );
    let warden = HttpWarden::start(&config);
    let alice = [("authorization", Some("Bearer alice-secret-0123456789"))];
    let bob = [("authorization", Some("Bearer bob-secret-0123456789"))];
    let list = json!({"_meta": meta()});
    let (status, _) = last(post(&warden, "/mcp", json!(1), "tools/list", list.clone(), &[]));
    assert_eq!(status, 401, "no token, no answer");
    let names = |body: &Value| -> Vec<String> {
        body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, all) = last(post(&warden, "/mcp", json!(2), "tools/list", list.clone(), &alice));
    assert!(names(&all).len() > 1, "{all}");
    let (_, narrow) = last(post(&warden, "/mcp", json!(3), "tools/list", list.clone(), &bob));
    assert_eq!(names(&narrow), ["echo"]);
    let hidden = json!({"_meta": meta(), "name": "elicit", "arguments": {"message": "x"}});
    let (_, refused) = last(post(&warden, "/mcp", json!(4), "tools/call", hidden.clone(), &bob));
    assert_eq!(refused["error"]["code"], -32602, "hidden tools are unknown: {refused}");

    let drop = json!({"_meta": meta(), "name": "echo", "arguments": {"text": "DROP TABLE t"}});
    let (status, denied) = last(post(&warden, "/mcp", json!(5), "tools/call", drop, &alice));
    assert_eq!(status, 200);
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(denied["result"]["content"][0]["text"].as_str().unwrap().contains("no DROP here"), "{denied}");

    // Alice's state, presented by Bob, opens nothing.
    let (_, first) = last(post(&warden, "/mcp", json!(6), "tools/call", hidden.clone(), &alice));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let key = first["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let mut stolen = hidden;
    stolen["requestState"] = first["result"]["requestState"].clone();
    stolen["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Mallory"}}});
    let wide_bob = [("authorization", Some("Bearer bob-secret-0123456789")), ("warden-profile", Some("all"))];
    let (_, theft) = last(post(&warden, "/mcp", json!(7), "tools/call", stolen.clone(), &wide_bob));
    assert_eq!(theft["error"]["code"], -32602, "{theft}");
    assert!(theft["error"]["message"].as_str().unwrap().contains("requestState"), "{theft}");
    let (_, done) = last(post(&warden, "/mcp", json!(8), "tools/call", stolen, &alice));
    assert!(done.to_string().contains("Mallory"), "the owner's retry still works: {done}");

    // The protected paths hold in this lane too: a resource naming
    // Warden's own configuration is refused, another reaches the server.
    let uri = format!("file://{}", warden.config_path.display());
    let read = json!({"_meta": meta(), "uri": uri});
    let (_, refused) = last(post(&warden, "/mcp", json!(9), "resources/read", read, &alice));
    assert_eq!(refused["error"]["code"], -32011, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("protected-path"), "{refused}");
    let readme = json!({"_meta": meta(), "uri": "fixture://readme"});
    let (_, read) = last(post(&warden, "/mcp", json!(10), "resources/read", readme, &alice));
    assert!(read["result"]["contents"].is_array(), "{read}");
}

/// What one server sends about one request reaches the client in the order
/// the server sent it: every progress notification before the result, none
/// dropped, whatever the machine's load (the fixture sends them back to back,
/// the closest race there is).
#[test]
fn progress_reaches_a_modern_client_in_order_before_its_result() {
    let warden = warden();
    for round in 0..20 {
        let mut params = json!({"name": "progress", "arguments": {"steps": 5, "delay_ms": 0}});
        params["_meta"] = meta();
        params["_meta"]["progressToken"] = json!(format!("tok-{round}"));
        let mut response = post(&warden, "/mcp", json!(round), "tools/call", params, &[]);
        assert!(response.is_sse(), "progress makes the answer an event stream");
        let mut seen = Vec::new();
        while let Some((_, message)) = response.next_message() {
            seen.push(message);
        }
        let progress: Vec<i64> = seen
            .iter()
            .filter(|message| message["method"] == "notifications/progress")
            .map(|message| message["params"]["progress"].as_i64().unwrap_or(-1))
            .collect();
        assert_eq!(progress, [1, 2, 3, 4, 5], "round {round}: {seen:?}");
        let last = seen.last().expect("an answer");
        assert_eq!(last["id"], json!(round), "the result comes last: {seen:?}");
        assert_eq!(last["result"]["resultType"], "complete", "{last}");
    }
}
