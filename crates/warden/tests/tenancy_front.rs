//! Smaller findings of the tenancy review, end to end over HTTP: the
//! Bearer scheme in any case, `/healthz` behind the Host and Origin checks,
//! and a 2026-07-28 request waiting for input holding up nobody else's.

mod support;

use serde_json::{Value, json};
use support::fixture_bin;
use support::http::{HttpSseClient, HttpWarden, Response, send};

const MODERN: &str = "2026-07-28";

fn warden(extra: &str) -> HttpWarden {
    HttpWarden::start(&format!(
        "servers:\n  fx:\n    transport: {{kind: stdio, command: {:?}}}\nauth:\n  tokens:\n    - {{name: alice, token: alice-secret-0123456789}}\n{extra}",
        fixture_bin()
    ))
}

#[test]
fn the_bearer_scheme_is_matched_in_any_case() {
    let warden = warden("");
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let auth = format!("{scheme} alice-secret-0123456789");
        let status = send(&warden.addr, "GET", "/status", &[("authorization", auth.as_str())], b"").status;
        assert_eq!(status, 200, "{scheme}");
    }
    let basic = send(&warden.addr, "GET", "/status", &[("authorization", "Basic alice-secret-0123456789")], b"");
    assert_eq!(basic.status, 401);
}

#[test]
fn healthz_checks_host_and_origin_and_tells_the_session_count_only_to_a_token() {
    let warden = warden("");
    let health = |headers: &[(&str, &str)]| {
        let response = send(&warden.addr, "GET", "/healthz", headers, b"");
        (response.status, response.body())
    };
    assert_eq!(health(&[("host", "evil.example")]).0, 403, "a rebinding page's Host");
    assert_eq!(health(&[("origin", "http://evil.example")]).0, 403, "a foreign page's Origin");
    let (status, body) = health(&[]);
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), json!({"status": "ok"}));
    let (status, body) = health(&[("authorization", "Bearer alice-secret-0123456789")]);
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["sessions"], 0);
}

fn post_modern(warden: &HttpWarden, id: Value, params: Value) -> Value {
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", name.as_str()),
        ("authorization", "Bearer alice-secret-0123456789"),
    ];
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    last(send(&warden.addr, "POST", "/mcp", &headers, body.as_bytes()))
}

fn last(mut response: Response) -> Value {
    assert_eq!(response.status, 200);
    if !response.is_sse() {
        return response.json();
    }
    let mut last = Value::Null;
    while let Some((_, message)) = response.next_message() {
        last = message;
    }
    last
}

/// Two requests of one token ask for input on the same stdio server: the
/// first, parked waiting for its retry, does not keep the second from
/// being asked; each retry gets its own answer.
#[test]
fn a_request_waiting_for_input_holds_up_no_other() {
    let warden = warden("http: {requestStateSecs: 60}\n");
    let params = |who: &str| {
        json!({
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            },
            "name": "echo",
            "arguments": {"text": who},
        })
    };
    let elicit = |who: &str| {
        let mut params = params(who);
        params["name"] = json!("fx__elicit");
        params["arguments"] = json!({"message": format!("form of {who}")});
        params
    };
    let first = post_modern(&warden, json!(1), elicit("first"));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let second = post_modern(&warden, json!(2), elicit("second"));
    assert_eq!(second["result"]["resultType"], "input_required", "the second is asked too: {second}");
    let asked = |answer: &Value| {
        let (key, request) = answer["result"]["inputRequests"].as_object().unwrap().iter().next().unwrap();
        (key.clone(), request["params"]["message"].as_str().unwrap_or_default().to_owned())
    };
    let (first_key, first_message) = asked(&first);
    let (second_key, second_message) = asked(&second);
    assert_eq!((first_message.as_str(), second_message.as_str()), ("form of first", "form of second"));
    for (who, id, answer, key) in [("second", 3, &second, second_key), ("first", 4, &first, first_key)] {
        let mut retry = elicit(who);
        retry["requestState"] = answer["result"]["requestState"].clone();
        retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": who}}});
        let done = post_modern(&warden, json!(id), retry);
        let text = done["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text.contains(who), "{who}: {done}");
    }
}

/// `http.requestStateSecs` bounds how long a request waits for its retry:
/// past it, the retry is refused as expired (the parked call is cancelled).
#[test]
fn the_request_state_lifetime_is_configurable() {
    let warden = warden("http: {requestStateSecs: 1}\n");
    let params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
        "name": "fx__elicit",
        "arguments": {"message": "late"},
    });
    let first = post_modern(&warden, json!(1), params.clone());
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    // The lifetime is whole seconds: two and a half are past it whatever the rounding.
    std::thread::sleep(std::time::Duration::from_millis(2_500));
    let key = first["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let mut retry = params;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "late"}}});
    let refused = post_modern(&warden, json!(2), retry);
    assert_eq!(refused["error"]["message"], "Invalid or expired requestState", "{refused}");
}

/// Every audit record names who made the call: the token's name, whatever
/// the client calls itself, and the address it called from, in both eras
/// and over the HTTP+SSE transport.
#[test]
fn audit_records_name_the_token_and_address_a_call_came_with() {
    let dir = support::scratch_dir("tenancy-audit");
    let audit = dir.join("audit.jsonl");
    let warden = warden(&format!("audit: {{path: {audit:?}}}\n"));
    let mut client = warden.client().with_header("authorization", "Bearer alice-secret-0123456789");
    client.initialize();
    client.call("fx__echo", json!({"text": "2025"}));
    let params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bob", "version": "1"},
        },
        "name": "fx__echo",
        "arguments": {"text": "modern"},
    });
    let done = post_modern(&warden, json!(1), params);
    assert!(done["result"].is_object(), "{done}");
    http_sse_echo(&warden, "Bearer alice-secret-0123456789");
    let is_call = |record: &Value| record["method"] == "tools/call";
    let records =
        support::wait_for_audit(&audit, |records| records.iter().filter(|record| is_call(record)).count() >= 3);
    let calls: Vec<&Value> = records.iter().filter(|record| is_call(record)).collect();
    assert_eq!(calls.len(), 3, "{records:#?}");
    assert!(calls.iter().all(|record| record["principal"] == "alice"), "{records:#?}");
    assert!(calls.iter().all(|record| record["clientAddress"] == "127.0.0.1"), "{records:#?}");
}

/// One echo call over the HTTP+SSE transport, answered on its stream.
fn http_sse_echo(warden: &HttpWarden, auth: &str) {
    let mut sse = HttpSseClient::open(&warden.addr, auth);
    sse.initialize(json!({}));
    let echo = json!({"name": "fx__echo", "arguments": {"text": "http+sse"}});
    assert_eq!(sse.post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": echo})).status, 202);
    assert!(sse.answer(2)["result"].is_object());
}
