//! Tenants on a shared server (`share: true`), end to end over HTTP: what
//! the server asks or tells during one tenant's call reaches that tenant
//! alone, or nobody. Over stdio nothing tells which call a server request
//! or a log message belongs to, so Warden refuses the request (the call
//! gets an error that says why) and keeps the notification; both count in
//! `/status`. A Streamable HTTP server sends them on the answer stream of
//! their call, and Warden follows it, however many tenants are in flight.
//! Both eras: 2025 sessions and 2026-07-28 requests (one lane per token).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::http::{HttpSseClient, HttpWarden, McpHttp, Response, send};
use support::{PATIENCE, fixture_bin, fixture_requests, wait_for_fixture_requests};

const MODERN: &str = "2026-07-28";

/// `auth.tokens` for tenants `t0` .. `t{n-1}`.
fn tokens(n: usize) -> String {
    let mut config = String::from("auth:\n  tokens:\n");
    for i in 0..n {
        config.push_str(&format!("    - {{name: t{i}, token: t{i}-secret-0123456789}}\n"));
    }
    config
}

fn bearer(i: usize) -> String {
    format!("Bearer t{i}-secret-0123456789")
}

/// An initialized 2025 client of tenant `i`.
fn tenant(warden: &HttpWarden, i: usize) -> McpHttp {
    let mut client = warden.client().with_header("authorization", &bearer(i));
    client.initialize();
    client
}

/// The same client again (same session), for a second connection.
fn again(client: &McpHttp) -> McpHttp {
    let mut copy = McpHttp::new(&client.addr, &client.path);
    copy.headers = client.headers.clone();
    copy.session = client.session.clone();
    copy
}

/// A Warden whose one server, shared, is the fixture over stdio.
fn stdio_shared(tenants: usize) -> HttpWarden {
    HttpWarden::start(&format!(
        "servers:\n  fx:\n    share: true\n    transport: {{kind: stdio, command: {:?}}}\n{}",
        fixture_bin(),
        tokens(tenants)
    ))
}

/// A 2025 Streamable HTTP server that sends its requests and notifications
/// on each call's own answer stream.
struct RelatedServer {
    child: Child,
    port: u16,
}

impl RelatedServer {
    fn start() -> RelatedServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("port").port();
        let python = interop().join(".venv1/bin/python");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/related_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python server");
        let deadline = Instant::now() + PATIENCE;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(child.try_wait().expect("wait").is_none(), "the Python server exited");
            assert!(Instant::now() < deadline, "the Python server did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        RelatedServer { child, port }
    }

    /// A Warden whose one server, shared, is this one.
    fn shared_by(&self, tenants: usize) -> HttpWarden {
        HttpWarden::start(&format!(
            "servers:\n  py:\n    share: true\n    protocol: legacy\n    transport: {{kind: http, url: \"http://127.0.0.1:{}/mcp\"}}\n{}",
            self.port,
            tokens(tenants)
        ))
    }
}

impl Drop for RelatedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// What tenant `who` answers to a server's request: its own words.
fn answer_of(who: &str, method: &str) -> Value {
    match method {
        "sampling/createMessage" => {
            json!({"role": "assistant", "content": {"type": "text", "text": format!("text of {who}")}, "model": "m"})
        }
        "elicitation/create" => json!({"action": "accept", "content": {"name": format!("name of {who}")}}),
        "roots/list" => json!({"roots": [{"uri": format!("file:///home/{who}"), "name": who}]}),
        _ => json!({}),
    }
}

/// Reads a 2025 POST's answer to its end, answering every request on it as
/// `who`; returns the final response and every other message seen. When
/// `seen` is given, each request is reported there before it is answered.
fn read_answering(
    client: &McpHttp,
    who: &str,
    id: u64,
    mut response: Response,
    seen: Option<&mpsc::Sender<Value>>,
) -> (Option<Value>, Vec<Value>) {
    assert_eq!(response.status, 200, "HTTP {}", response.status);
    if !response.is_sse() {
        return (Some(response.json()), Vec::new());
    }
    let mut others = Vec::new();
    while let Some((_, message)) = response.next_message() {
        if message["id"] == json!(id) && message.get("method").is_none() {
            return (Some(message), others);
        }
        if let (Some(method), Some(request)) = (message["method"].as_str(), message.get("id")) {
            if let Some(seen) = seen {
                let _ = seen.send(message.clone());
            }
            let answer = json!({"jsonrpc": "2.0", "id": request, "result": answer_of(who, method)});
            assert_eq!(client.post_raw(&answer.to_string()).status, 202);
        }
        others.push(message);
    }
    (None, others)
}

/// Calls `tool` as tenant `who` (2025 era), answering what it is asked.
fn call_2025(
    client: &mut McpHttp,
    who: &str,
    tool: &str,
    arguments: Value,
    meta: Option<Value>,
) -> (Value, Vec<Value>) {
    let mut params = json!({"name": tool, "arguments": arguments});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let (id, response) = client.start_request("tools/call", params);
    let (answer, others) = read_answering(client, who, id, response, None);
    (answer.unwrap_or_else(|| panic!("{tool}: no answer; saw {others:?}")), others)
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// POSTs a 2026-07-28 request as tenant `i`.
fn post_modern(warden: &HttpWarden, i: usize, id: Value, method: &str, params: Value) -> Response {
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let auth = bearer(i);
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", method),
        ("mcp-name", name.as_str()),
        ("authorization", auth.as_str()),
    ];
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    send(&warden.addr, "POST", "/mcp", &headers, body.as_bytes())
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "tenancy-test", "version": "1"}
    })
}

/// The final message of a modern answer (JSON or stream) and what came before.
fn modern_last(mut response: Response) -> (Value, Vec<Value>) {
    assert_eq!(response.status, 200, "HTTP {}", response.status);
    if !response.is_sse() {
        return (response.json(), Vec::new());
    }
    let mut seen = Vec::new();
    while let Some((_, message)) = response.next_message() {
        seen.push(message);
    }
    let last = seen.pop().expect("a final message");
    (last, seen)
}

/// Calls `tool` as tenant `i` in the 2026-07-28 era, answering each
/// `input_required` round as the tenant; returns the final result and every
/// input request asked.
fn call_modern(warden: &HttpWarden, i: usize, tool: &str, arguments: Value) -> (Value, Vec<Value>) {
    let who = format!("t{i}");
    let params = json!({"_meta": modern_meta(), "name": tool, "arguments": arguments});
    let (mut answer, _) = modern_last(post_modern(warden, i, json!(1), "tools/call", params.clone()));
    let mut asked = Vec::new();
    for round in 2..6 {
        if answer["result"]["resultType"] != "input_required" {
            return (answer, asked);
        }
        let mut responses = serde_json::Map::new();
        for (key, request) in answer["result"]["inputRequests"].as_object().expect("input requests") {
            asked.push(request.clone());
            responses.insert(key.clone(), answer_of(&who, request["method"].as_str().unwrap_or_default()));
        }
        let mut retry = params.clone();
        retry["requestState"] = answer["result"]["requestState"].clone();
        retry["inputResponses"] = Value::Object(responses);
        answer = modern_last(post_modern(warden, i, json!(round), "tools/call", retry)).0;
    }
    panic!("{tool}: too many rounds");
}

/// The `shared` entry of `/status` for server `name`, as tenant `i` sees it.
fn kept(warden: &HttpWarden, i: usize, name: &str) -> (u64, u64) {
    let auth = bearer(i);
    let status = send(&warden.addr, "GET", "/status", &[("authorization", auth.as_str())], b"").json();
    let entry = status["shared"]
        .as_array()
        .and_then(|shared| shared.iter().find(|entry| entry["name"] == name))
        .unwrap_or_else(|| panic!("no shared entry for {name}: {status}"));
    (entry["keptRequests"].as_u64().unwrap_or(0), entry["keptNotifications"].as_u64().unwrap_or(0))
}

/// Tenant `t1` holds a call on the shared fixture in flight (answering
/// anything it is sent with its own words) while tenant `t0`'s tools ask
/// for sampling, elicitation and roots, and log. Nothing of t0's may reach
/// t1: over stdio nothing tells whose they are, so t0's calls get errors
/// that say why, the log stays in Warden's, and `/status` counts them.
#[test]
fn over_stdio_a_shared_servers_requests_reach_no_other_tenant_2025() {
    let warden = stdio_shared(2);
    let mut bob = tenant(&warden, 1);
    let mut alice = tenant(&warden, 0);
    // Both sessions know the server's tools before anything is counted.
    assert_eq!(text_of(&call_2025(&mut bob, "t1", "fx__echo", json!({"text": "b"}), None).0), "b");
    let stats =
        |client: &mut McpHttp| fixture_requests(&text_of(&call_2025(client, "t0", "fx__stats", json!({}), None).0));
    let before = stats(&mut alice);
    let (seen_tx, _seen_rx) = mpsc::channel();
    let held = again(&bob);
    let canceller = again(&bob);
    let bob_call = std::thread::spawn(move || {
        let (id, response) = bob.start_request("tools/call", json!({"name": "fx__slow", "arguments": {"ms": 600_000}}));
        read_answering(&held, "t1", id, response, Some(&seen_tx))
    });
    wait_for_fixture_requests(before, 1, || stats(&mut alice));

    let (sampled, others) = call_2025(&mut alice, "t0", "fx__sample", json!({"prompt": "alice's secret prompt"}), None);
    assert_eq!(sampled["result"]["isError"], true, "{sampled}");
    assert!(text_of(&sampled).contains("shared"), "{sampled}");
    assert!(others.is_empty(), "{others:?}");
    let (elicited, _) = call_2025(&mut alice, "t0", "fx__elicit", json!({"message": "alice's form"}), None);
    assert_eq!(elicited["result"]["isError"], true, "{elicited}");
    let (rooted, _) = call_2025(&mut alice, "t0", "fx__roots", json!({}), None);
    assert_eq!(rooted["result"]["isError"], true, "{rooted}");
    let (logged, others) = call_2025(&mut alice, "t0", "fx__log", json!({"message": "alice's log"}), None);
    assert_eq!(text_of(&logged), "logged");
    assert!(others.is_empty(), "a log nobody can be told is for them stays in Warden: {others:?}");
    // Progress has the token Warden gave alice's call: it reaches her.
    let meta = json!({"progressToken": "alice-progress"});
    let (done, progress) = call_2025(&mut alice, "t0", "fx__progress", json!({"steps": 2, "delay_ms": 1}), Some(meta));
    assert_eq!(text_of(&done), "done 2");
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert!(progress.iter().all(|message| message["params"]["progressToken"] == "alice-progress"), "{progress:?}");

    assert_eq!(kept(&warden, 0, "fx"), (3, 1));
    assert!(warden.stderr().contains("refused a shared server's request"), "{}", warden.stderr());
    // Bob's call ends (cancelled): nothing of alice's ever reached him.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
    assert_eq!(canceller.post_raw(&cancel.to_string()).status, 202);
    let (answer, bobs) = bob_call.join().expect("bob's call");
    assert!(answer.is_none(), "a cancelled call has no answer: {answer:?}");
    assert!(bobs.is_empty(), "alice's messages reached bob: {bobs:?}");
}

/// The same over 2026-07-28: tenant t0's modern request, served by its own
/// lane, while t1's 2025 call is in flight on the shared fixture.
#[test]
fn over_stdio_a_shared_servers_requests_reach_no_other_tenant_2026() {
    let warden = stdio_shared(2);
    let mut bob = tenant(&warden, 1);
    assert_eq!(text_of(&call_2025(&mut bob, "t1", "fx__echo", json!({"text": "b"}), None).0), "b");
    let stats = || fixture_requests(&text_of(&call_modern(&warden, 0, "fx__stats", json!({})).0));
    let before = stats();
    let held = again(&bob);
    let canceller = again(&bob);
    let bob_call = std::thread::spawn(move || {
        let (id, response) = bob.start_request("tools/call", json!({"name": "fx__slow", "arguments": {"ms": 600_000}}));
        read_answering(&held, "t1", id, response, None)
    });
    wait_for_fixture_requests(before, 1, stats);

    for (tool, arguments) in [
        ("fx__sample", json!({"prompt": "alice's secret prompt"})),
        ("fx__elicit", json!({"message": "alice's form"})),
        ("fx__roots", json!({})),
    ] {
        let (answer, asked) = call_modern(&warden, 0, tool, arguments);
        assert!(asked.is_empty(), "{tool}: {asked:?}");
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
        assert!(text_of(&answer).contains("shared"), "{tool}: {answer}");
    }
    let (logged, _) = call_modern(&warden, 0, "fx__log", json!({"message": "alice's log"}));
    assert_eq!(text_of(&logged), "logged");
    assert_eq!(kept(&warden, 0, "fx"), (3, 1));

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
    assert_eq!(canceller.post_raw(&cancel.to_string()).status, 202);
    let (answer, bobs) = bob_call.join().expect("bob's call");
    assert!(answer.is_none(), "{answer:?}");
    assert!(bobs.is_empty(), "alice's messages reached bob: {bobs:?}");
}

/// Ten tenants at once on the shared stdio fixture, half of them 2025
/// sessions and half 2026-07-28 requests: none is ever asked anything (nor
/// told another's log); each gets its own progress; every refusal counts.
#[test]
fn ten_tenants_at_once_on_a_shared_stdio_server() {
    let warden = std::sync::Arc::new(stdio_shared(10));
    let tenants: Vec<_> = (0..10)
        .map(|i| {
            let warden = warden.clone();
            std::thread::spawn(move || {
                let who = format!("t{i}");
                let modern = i % 2 == 1;
                let mut client = (!modern).then(|| tenant(&warden, i));
                let mut call = |tool: &str, arguments: Value, meta: Option<Value>| match &mut client {
                    Some(client) => call_2025(client, &who, tool, arguments, meta),
                    None => call_modern(&warden, i, tool, arguments),
                };
                for (tool, arguments) in [
                    ("fx__sample", json!({"prompt": format!("prompt of {who}")})),
                    ("fx__elicit", json!({"message": format!("form of {who}")})),
                    ("fx__roots", json!({})),
                ] {
                    let (answer, seen) = call(tool, arguments, None);
                    assert!(seen.is_empty(), "{who} {tool}: {seen:?}");
                    assert_eq!(answer["result"]["isError"], true, "{who} {tool}: {answer}");
                }
                let (logged, seen) = call("fx__log", json!({"message": format!("log of {who}")}), None);
                assert_eq!(text_of(&logged), "logged");
                assert!(seen.is_empty(), "{who}: {seen:?}");
                if !modern {
                    let token = format!("progress of {who}");
                    let meta = json!({"progressToken": token});
                    let (done, seen) = call("fx__progress", json!({"steps": 3, "delay_ms": 1}), Some(meta));
                    assert_eq!(text_of(&done), "done 3");
                    assert_eq!(seen.len(), 3, "{who}: {seen:?}");
                    assert!(seen.iter().all(|message| message["params"]["progressToken"] == json!(token)), "{seen:?}");
                }
            })
        })
        .collect();
    for tenant in tenants {
        tenant.join().expect("a tenant");
    }
    assert_eq!(kept(&warden, 0, "fx"), (30, 10));
}

/// Over Streamable HTTP the server sends each request on its call's own
/// answer stream, and that decides: tenant t1 holds its own sampling
/// request unanswered while t0 samples; each gets exactly its own request
/// and its own answer back.
#[test]
fn over_http_a_shared_servers_requests_follow_their_calls_stream_2025() {
    let server = RelatedServer::start();
    let warden = server.shared_by(2);
    let mut bob = tenant(&warden, 1);
    let mut alice = tenant(&warden, 0);
    assert_eq!(text_of(&call_2025(&mut alice, "t0", "py__slow", json!({"ms": 1}), None).0), "slept");
    let (seen_tx, seen_rx) = mpsc::channel();
    let held = again(&bob);
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let bob_call = std::thread::spawn(move || {
        let (id, mut response) =
            bob.start_request("tools/call", json!({"name": "py__sample", "arguments": {"prompt": "bob's prompt"}}));
        // Bob's own request arrives first; he answers it only once alice is done.
        let (_, first) = response.next_message().expect("bob's sampling request");
        seen_tx.send(first.clone()).expect("report");
        go_rx.recv().expect("go");
        let answer = json!({"jsonrpc": "2.0", "id": first["id"], "result": answer_of("t1", "sampling/createMessage")});
        assert_eq!(held.post_raw(&answer.to_string()).status, 202);
        let (answer, others) = read_answering(&held, "t1", id, response, None);
        (first, answer, others)
    });
    let first = seen_rx.recv_timeout(PATIENCE).expect("bob's request");
    assert_eq!(first["params"]["messages"][0]["content"]["text"], "bob's prompt", "{first}");

    let (sampled, asked) = call_2025(&mut alice, "t0", "py__sample", json!({"prompt": "alice's prompt"}), None);
    assert_eq!(text_of(&sampled), "sampled: text of t0", "{sampled}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["params"]["messages"][0]["content"]["text"], "alice's prompt");
    let (elicited, _) = call_2025(&mut alice, "t0", "py__elicit", json!({"message": "alice's form"}), None);
    assert_eq!(text_of(&elicited), "elicited: accept name of t0", "{elicited}");
    let (rooted, _) = call_2025(&mut alice, "t0", "py__roots", json!({}), None);
    assert_eq!(text_of(&rooted), "file:///home/t0", "{rooted}");
    let (logged, seen) = call_2025(&mut alice, "t0", "py__log", json!({"message": "alice's log"}), None);
    assert_eq!(text_of(&logged), "logged");
    assert!(seen.iter().any(|message| message["params"]["data"] == "alice's log"), "{seen:?}");

    go_tx.send(()).expect("go");
    let (_, answer, others) = bob_call.join().expect("bob's call");
    assert_eq!(text_of(&answer.expect("bob's answer")), "sampled: text of t1");
    assert!(others.is_empty(), "alice's messages reached bob: {others:?}");
    assert_eq!(kept(&warden, 0, "py"), (0, 0));
}

/// The same with a 2026-07-28 tenant: t0's request gets `input_required`
/// with its own prompt while t1's 2025 call holds its own request.
#[test]
fn over_http_a_shared_servers_requests_follow_their_calls_stream_2026() {
    let server = RelatedServer::start();
    let warden = server.shared_by(2);
    let mut bob = tenant(&warden, 1);
    let (seen_tx, seen_rx) = mpsc::channel();
    let held = again(&bob);
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let bob_call = std::thread::spawn(move || {
        let (id, mut response) =
            bob.start_request("tools/call", json!({"name": "py__sample", "arguments": {"prompt": "bob's prompt"}}));
        let (_, first) = response.next_message().expect("bob's sampling request");
        seen_tx.send(first.clone()).expect("report");
        go_rx.recv().expect("go");
        let answer = json!({"jsonrpc": "2.0", "id": first["id"], "result": answer_of("t1", "sampling/createMessage")});
        assert_eq!(held.post_raw(&answer.to_string()).status, 202);
        read_answering(&held, "t1", id, response, None)
    });
    seen_rx.recv_timeout(PATIENCE).expect("bob's request");

    let (sampled, asked) = call_modern(&warden, 0, "py__sample", json!({"prompt": "alice's prompt"}));
    assert_eq!(text_of(&sampled), "sampled: text of t0", "{sampled}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["params"]["messages"][0]["content"]["text"], "alice's prompt");
    let (elicited, _) = call_modern(&warden, 0, "py__elicit", json!({"message": "alice's form"}));
    assert_eq!(text_of(&elicited), "elicited: accept name of t0", "{elicited}");
    let (rooted, _) = call_modern(&warden, 0, "py__roots", json!({}));
    assert_eq!(text_of(&rooted), "file:///home/t0", "{rooted}");

    go_tx.send(()).expect("go");
    let (answer, others) = bob_call.join().expect("bob's call");
    assert_eq!(text_of(&answer.expect("bob's answer")), "sampled: text of t1");
    assert!(others.is_empty(), "alice's messages reached bob: {others:?}");
}

/// Ten tenants at once on the shared HTTP server, both eras: each is asked
/// exactly its own questions, gets its own answers back, and sees only its
/// own log and progress.
#[test]
fn ten_tenants_at_once_on_a_shared_http_server() {
    let server = RelatedServer::start();
    let warden = std::sync::Arc::new(server.shared_by(10));
    let tenants: Vec<_> = (0..10)
        .map(|i| {
            let warden = warden.clone();
            std::thread::spawn(move || {
                let who = format!("t{i}");
                let modern = i % 2 == 1;
                let mut client = (!modern).then(|| tenant(&warden, i));
                let mut call = |tool: &str, arguments: Value, meta: Option<Value>| match &mut client {
                    Some(client) => call_2025(client, &who, tool, arguments, meta),
                    None => call_modern(&warden, i, tool, arguments),
                };
                let (sampled, asked) = call("py__sample", json!({"prompt": format!("prompt of {who}")}), None);
                assert_eq!(text_of(&sampled), format!("sampled: text of {who}"), "{sampled}");
                assert_eq!(asked.len(), 1, "{who}: {asked:?}");
                assert_eq!(asked[0]["params"]["messages"][0]["content"]["text"], format!("prompt of {who}"));
                let (elicited, _) = call("py__elicit", json!({"message": format!("form of {who}")}), None);
                assert_eq!(text_of(&elicited), format!("elicited: accept name of {who}"), "{elicited}");
                let (rooted, _) = call("py__roots", json!({}), None);
                assert_eq!(text_of(&rooted), format!("file:///home/{who}"), "{rooted}");
                if !modern {
                    let (logged, seen) = call("py__log", json!({"message": format!("log of {who}")}), None);
                    assert_eq!(text_of(&logged), "logged");
                    assert!(
                        seen.iter().all(|message| message["params"]["data"] == json!(format!("log of {who}"))),
                        "{seen:?}"
                    );
                    assert_eq!(seen.len(), 1, "{who}: {seen:?}");
                    let token = format!("progress of {who}");
                    let (done, seen) = call("py__progress", json!({"steps": 3}), Some(json!({"progressToken": token})));
                    assert_eq!(text_of(&done), "done 3");
                    assert_eq!(seen.len(), 3, "{who}: {seen:?}");
                    assert!(seen.iter().all(|message| message["params"]["progressToken"] == json!(token)), "{seen:?}");
                }
            })
        })
        .collect();
    for tenant in tenants {
        tenant.join().expect("a tenant");
    }
    assert_eq!(kept(&warden, 0, "py"), (0, 0));
}

/// The same with the HTTP+SSE transport: tenant t1's one stream,
/// open while its call is in flight on the shared fixture, never carries
/// what tenant t0's tools ask or log.
#[test]
fn over_stdio_a_shared_servers_requests_reach_no_http_sse_tenant() {
    let warden = stdio_shared(2);
    let mut sse = HttpSseClient::open(&warden.addr, &bearer(1));
    sse.initialize(json!({"sampling": {}, "roots": {}}));
    let post = |body: Value| sse.post(body).status;
    let mut alice = tenant(&warden, 0);
    let stats =
        |client: &mut McpHttp| fixture_requests(&text_of(&call_2025(client, "t0", "fx__stats", json!({}), None).0));
    let before = stats(&mut alice);
    let slow = json!({"name": "fx__slow", "arguments": {"ms": 600_000}});
    assert_eq!(post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": slow})), 202);
    wait_for_fixture_requests(before, 1, || stats(&mut alice));

    let (sampled, _) = call_2025(&mut alice, "t0", "fx__sample", json!({"prompt": "alice's secret prompt"}), None);
    assert_eq!(sampled["result"]["isError"], true, "{sampled}");
    let (logged, _) = call_2025(&mut alice, "t0", "fx__log", json!({"message": "alice's log"}), None);
    assert_eq!(text_of(&logged), "logged");
    // Everything bob's stream carried up to the answer of his ping.
    assert_eq!(post(json!({"jsonrpc": "2.0", "id": 99, "method": "ping"})), 202);
    loop {
        let (_, message) = sse.events.next_message().expect("bob's stream");
        if message["id"] == 99 {
            break;
        }
        let method = message["method"].as_str().unwrap_or_default();
        assert!(method.ends_with("list_changed") || message["id"] == 1, "reached bob: {message}");
    }
    assert_eq!(kept(&warden, 0, "fx"), (1, 1));
}

/// A shared server lists every tenant's tasks: each tenant sees only the
/// tasks it created, and cannot ask about another's.
#[test]
fn a_shared_servers_tasks_are_each_tenants_own() {
    let warden = stdio_shared(2);
    let mut alice = tenant(&warden, 0);
    let mut bob = tenant(&warden, 1);
    let created =
        alice.request("tools/call", json!({"name": "fx__slow", "arguments": {"ms": 50}, "task": {"ttl": 60000}}));
    let task = created["result"]["task"]["taskId"].as_str().expect("a task id").to_owned();
    let listed = |client: &mut McpHttp| -> Vec<String> {
        let list = client.request("tasks/list", json!({}));
        let tasks = list["result"]["tasks"].as_array().unwrap_or_else(|| panic!("{list}"));
        tasks.iter().filter_map(|task| task["taskId"].as_str().map(str::to_owned)).collect()
    };
    assert_eq!(listed(&mut alice), std::slice::from_ref(&task));
    assert_eq!(listed(&mut bob), Vec::<String>::new(), "bob sees none of alice's tasks");
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let asked = bob.request(method, json!({"taskId": task}));
        assert_eq!(asked["error"]["code"], -32602, "{method}: {asked}");
    }
    let result = alice.request("tasks/result", json!({"taskId": task}));
    assert_eq!(result["result"]["content"][0]["text"], "slept 50", "{result}");
}

/// Each tenant asks for its own log level on a shared server: the server
/// logs at the most verbose one asked for, and each tenant gets only the
/// messages at or above its own level.
#[test]
fn a_shared_servers_log_level_is_each_tenants_own() {
    let server = RelatedServer::start();
    let warden = server.shared_by(2);
    let mut bob = tenant(&warden, 1);
    let mut alice = tenant(&warden, 0);
    assert!(bob.request("logging/setLevel", json!({"level": "debug"}))["result"].is_object());
    assert!(alice.request("logging/setLevel", json!({"level": "error"}))["result"].is_object());
    // (Set when the shared server is ready, which may be after the requests.)
    support::retry("the shared server's level to be the most verbose asked for, not the last", || {
        let (level, _) = call_2025(&mut alice, "t0", "py__level", json!({}), None);
        (text_of(&level) == "debug").then_some(())
    });
    let logs = |client: &mut McpHttp, who: &str, level: &str| -> Vec<Value> {
        let arguments = json!({"message": format!("{who} at {level}"), "level": level});
        let (answer, seen) = call_2025(client, who, "py__log", arguments, None);
        assert_eq!(text_of(&answer), "logged");
        seen.into_iter().filter(|message| message["method"] == "notifications/message").collect()
    };
    assert_eq!(logs(&mut alice, "t0", "info").len(), 0, "below alice's level");
    assert_eq!(logs(&mut alice, "t0", "error").len(), 1);
    assert_eq!(logs(&mut bob, "t1", "info").len(), 1, "bob asked for debug");
    assert_eq!(logs(&mut bob, "t1", "debug").len(), 1);
}
