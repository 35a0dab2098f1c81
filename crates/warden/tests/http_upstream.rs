//! End to end: remote upstreams. The warden under test speaks stdio to the
//! test and reaches its upstream over HTTP: a second warden's HTTP front
//! (`warden serve --http`), which runs the fixture server. Everything
//! crosses two gateways and a real HTTP hop.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{HttpWarden, blocks_per_call};
use support::{Client, fixture_requests, fixtures, wait_for_fixture_requests};

/// The remote warden: one fixture server named `fx`.
fn remote_config() -> String {
    fixtures(&[("fx", &[])], "")
}

/// A warden whose one upstream, `remote`, is `url` over `kind`, spoken to
/// in the 2025 era (sessions, DELETE, re-initialization).
fn through(kind: &str, url: &str) -> Client {
    through_in(kind, url, "legacy")
}

/// The same, in era `protocol` (`auto` probes).
fn through_in(kind: &str, url: &str, protocol: &str) -> Client {
    let mut client = Client::serve_initialized(&format!(
        "servers:\n  remote:\n    transport: {{kind: {kind}, url: {url:?}}}\n    protocol: {protocol}\nsupervision: {{backoffInitialMs: 100}}\n"
    ));
    client.wait_for_tool("remote__fx__echo");
    client
}

/// Calls, concurrency, sampling and progress through the remote upstream.
fn exercise(client: &mut Client) {
    // A call, its raw arguments intact.
    let result = client.call_tool("remote__fx__echo", json!({"text": "hello", "n": 1.50}));
    assert_eq!(result["content"][0]["text"], "hello");
    assert_eq!(result["structuredContent"]["arguments"]["n"], 1.5);

    // Requests are not serialized: a quick call overtakes a slow one.
    let slow = client.send_request("tools/call", json!({"name": "remote__fx__slow", "arguments": {"ms": 1500}}));
    assert_eq!(client.call_text("remote__fx__echo", json!({"text": "quick"})), "quick");
    let early = client.drain(Duration::ZERO);
    assert!(!early.iter().any(|m| m["id"] == slow), "the slow call answered before the quick one: {early:?}");
    assert_eq!(client.response(&slow)["result"]["content"][0]["text"], "slept 1500");

    // Sampling: the fixture asks, the request crosses both gateways to this
    // client, and the answer finds its way back.
    let call = client.send_request("tools/call", json!({"name": "remote__fx__sample", "arguments": {"prompt": "hi"}}));
    let request = client.wait_method("sampling/createMessage");
    assert_eq!(request["params"]["messages"][0]["content"]["text"], "hi");
    client.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "from the model"}, "model": "m"}}));
    assert_eq!(client.response(&call)["result"]["content"][0]["text"], "sampled: from the model");

    // Progress arrives under the client's token, before the result.
    let call = client.send_request(
        "tools/call",
        json!({"name": "remote__fx__progress", "arguments": {"steps": 3, "delay_ms": 5}, "_meta": {"progressToken": "tok"}}),
    );
    assert_eq!(client.response(&call)["result"]["content"][0]["text"], "done 3");
    let progress: Vec<Value> = client
        .drain(Duration::ZERO)
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(progress.len(), 3, "three progress notifications before the result: {progress:?}");
    assert!(progress.iter().all(|p| p["progressToken"] == "tok"), "{progress:?}");
    assert_eq!(progress[2]["progress"], 3);
}

/// A remote Warden answers `server/discover`, so the probe finds it modern:
/// no session, an envelope on every request, and its `input_required`
/// (the fixture's sampling, through the remote's lane) met by asking this
/// 2025-era client a real `sampling/createMessage`.
#[test]
fn a_modern_http_upstream_is_found_by_the_probe_and_serves_everything() {
    let remote = HttpWarden::start_on(&remote_config(), 0);
    let mut client = through_in("http", &remote.url("/mcp"), "auto");
    exercise(&mut client);
    assert!(client.stderr().contains("upstream speaks MCP 2026-07-28"), "{}", client.stderr());
    assert!(remote.stderr().contains("modern lane started"), "{}", remote.stderr());
    assert!(!remote.stderr().contains("HTTP session started"), "no 2025 session: {}", remote.stderr());
}

#[test]
fn a_streamable_http_upstream_serves_calls_sampling_and_progress() {
    let remote = HttpWarden::start_on(&remote_config(), 0);
    let mut client = through("http", &remote.url("/mcp"));
    exercise(&mut client);

    // Leaving ends the remote session (DELETE) instead of letting it idle.
    assert!(client.close().success());
    let deadline = std::time::Instant::now() + support::PATIENCE;
    while !remote.stderr().contains("HTTP session ended by the client") {
        assert!(std::time::Instant::now() < deadline, "no DELETE reached the remote:\n{}", remote.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_http_sse_upstream_serves_calls_sampling_and_progress() {
    let remote = HttpWarden::start_on(&remote_config(), 0);
    let mut client = through("sse", &remote.url("/sse"));
    exercise(&mut client);
}

#[test]
fn an_upstream_that_restarts_and_forgets_its_sessions_is_initialized_again() {
    let mut remote = HttpWarden::start_on(&remote_config(), 0);
    let port = remote.port;
    let mut client = through("http", &remote.url("/mcp"));
    let first_pid = client.call_text("remote__fx__pid", json!({}));

    remote.kill();
    let remote = HttpWarden::start_on(&remote_config(), port);
    // The old session id means nothing to the new server (404): the next
    // call initializes a new session with the client's parameters and
    // succeeds; the client sees no error.
    assert_eq!(client.call_text("remote__fx__echo", json!({"text": "again"})), "again");
    // The new session's lists are loaded afresh; the remote warden lists its
    // fixture's tools once that fixture (started for the new session) is up.
    client.wait_for_tool("remote__fx__pid");
    let second_pid = client.call_text("remote__fx__pid", json!({}));
    assert_ne!(first_pid, second_pid, "the call reached the new server's fixture");
    client.wait_stderr("initialized a new one");
    // The replayed initialize is the client's own.
    let whoami: Value = serde_json::from_str(&client.call_text("remote__fx__whoami", json!({}))).unwrap();
    assert_eq!(whoami["capabilities"]["elicitation"], json!({"form": {}, "url": {}}), "{whoami}");
    assert!(remote.stderr().matches("HTTP session started").count() >= 1);
}

#[test]
fn an_http_sse_upstream_is_down_when_its_stream_ends_and_comes_back() {
    let mut remote = HttpWarden::start_on(&remote_config(), 0);
    let port = remote.port;
    let mut client = through("sse", &remote.url("/sse"));
    let first_pid = client.call_text("remote__fx__pid", json!({}));

    remote.kill();
    client.wait_stderr("SSE stream");
    let _remote = HttpWarden::start_on(&remote_config(), port);
    // The supervisor opens a new stream (a new session) once the server is back.
    client.wait_for_tool("remote__fx__pid");
    let second_pid = client.call_text("remote__fx__pid", json!({}));
    assert_ne!(first_pid, second_pid);
    assert!(client.stderr().contains("upstream down:"), "{}", client.stderr());
}

#[test]
fn unreachable_and_misaddressed_upstreams_are_down_with_clear_reasons() {
    // Nothing listens on a port that was just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client =
        Client::serve_initialized(&format!("servers:\n  gone:\n    transport: {{kind: http, url: {url:?}}}\n"));
    client.wait_stderr(&format!("upstream down: cannot connect to {url}: connection refused"));

    // A server that is there, at a path that is not an MCP endpoint.
    let remote = HttpWarden::start_on(&remote_config(), 0);
    let wrong = remote.url("/nope");
    let client =
        Client::serve_initialized(&format!("servers:\n  wrong:\n    transport: {{kind: http, url: {wrong:?}}}\n"));
    client.wait_stderr(&format!("upstream down: POST {wrong} answered 404 Not Found"));
    let client =
        Client::serve_initialized(&format!("servers:\n  wrong:\n    transport: {{kind: sse, url: {wrong:?}}}\n"));
    client.wait_stderr(&format!("upstream down: GET {wrong} answered 404 Not Found"));
}

/// Cancelling a call to a modern HTTP upstream closes the call's stream
/// (2026-07-28 has no cancel notification over HTTP); the remote Warden
/// takes the closed stream as the cancel and tells its own server.
#[test]
fn a_cancel_reaches_a_modern_http_upstream_as_a_closed_stream() {
    let remote = HttpWarden::start_on(&remote_config(), 0);
    let mut client = through_in("http", &remote.url("/mcp"), "auto");
    let requests = |client: &mut Client| fixture_requests(&client.call_text("remote__fx__stats", json!({})));
    let before = requests(&mut client);
    let slow = client.send_request("tools/call", json!({"name": "remote__fx__slow", "arguments": {"ms": 60000}}));
    wait_for_fixture_requests(before, 1, || requests(&mut client));
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": slow}}));
    let deadline = std::time::Instant::now() + support::PATIENCE;
    loop {
        let stats: Value = serde_json::from_str(&client.call_text("remote__fx__stats", json!({}))).unwrap();
        if stats["cancelled"].as_array().is_some_and(|ids| ids.len() == 1) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the cancel never reached the fixture: {stats}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let late = client.drain(Duration::from_millis(300));
    assert!(late.iter().all(|message| message["id"] != slow), "a cancelled call is not answered: {late:?}");
}

/// An HTTPS upstream is checked against the system's trust store (here the
/// authority named by `SSL_CERT_FILE`, which the platform verifier reads on
/// Linux): with it, calls go through; a Warden that does not trust the
/// authority keeps the server down and says why, and never sends it a call.
#[test]
fn an_https_upstream_serves_only_with_a_certificate_the_system_trusts() {
    let dir = support::scratch_dir("https-upstream");
    let certificates = support::tls::Certificates::make(&dir);
    let remote = HttpWarden::start_on(&remote_config(), 0);
    let port = support::tls::forward(&certificates, &remote.addr);
    let url = format!("https://localhost:{port}/mcp");
    let config = dir.join("warden.yaml");
    std::fs::write(&config, format!("servers:\n  remote:\n    transport: {{kind: http, url: {url:?}}}\n"))
        .expect("write config");
    let config = config.to_str().expect("utf-8 path");

    let authority = certificates.authority.to_str().expect("utf-8 path");
    let mut trusting = Client::start(&["serve", "--config", config], &[("SSL_CERT_FILE", authority)]);
    trusting.initialize();
    trusting.wait_for_tool("remote__fx__echo");
    assert_eq!(trusting.call_text("remote__fx__echo", json!({"text": "over tls"})), "over tls");

    // The server's own certificate is no authority: trusting it alone is not enough.
    let server = certificates.server.to_str().expect("utf-8 path");
    let mut doubting = Client::start(&["serve", "--config", config], &[("SSL_CERT_FILE", server)]);
    doubting.initialize();
    doubting.wait_stderr(&format!("upstream down: cannot connect to {url}"));
    assert!(doubting.stderr().to_lowercase().contains("certificate"), "{}", doubting.stderr());
    assert!(doubting.tool_names().is_empty(), "{:?}", doubting.tool_names());
}

/// One call at a time through a Streamable HTTP upstream, on a kept-alive
/// connection: the Warden in the middle blocks twice per call (waiting for
/// the request, then for the upstream's answer): 1.90 to 1.93 times
/// measured. When a POST's task woke itself (its connection and the answer
/// awaited on it are driven by one task) and tokio woke the other worker
/// thread to steal it, 2.34 to 2.58 times; before the front's wake-ups
/// went too, 3.4 to 3.9. Measured with two worker threads, where those
/// wake-ups happened (2.01 to 2.02 now), and on one thread, what one or two
/// cores get (2.01 to 2.02).
#[test]
fn a_call_at_a_time_through_an_http_upstream_wakes_no_other_thread() {
    let remote = HttpWarden::start(&remote_config());
    let config = format!(
        "servers:\n  remote:\n    transport: {{kind: http, url: {:?}}}\n    protocol: legacy\n",
        remote.url("/mcp")
    );
    for workers in [2, 1] {
        let middle = HttpWarden::start_with_workers(&config, workers);
        let mut client = middle.client();
        client.initialize();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !client.tool_names().contains(&"remote__fx__echo".to_owned()) {
            assert!(std::time::Instant::now() < deadline, "the remote's tools never showed");
            std::thread::sleep(Duration::from_millis(50));
        }
        let per_call = blocks_per_call(&middle, &client, "remote__fx__echo");
        assert!(per_call <= 2.25, "with {workers} worker(s), the middle Warden blocked {per_call:.2} times per call");
    }
}
