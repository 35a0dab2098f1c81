//! Hidden servers stay invisible, end to end over HTTP: to a token whose
//! profile hides server `secret`, everything about it answers exactly as a
//! server that does not exist (after authentication: 401 first, for both),
//! on every endpoint and transport and for every method, known or not; and
//! nothing of it starts.

mod support;

use serde_json::{Value, json};
use support::fixture_bin;
use support::http::{HttpWarden, McpHttp, Response, children_of, send};

const ALICE: &str = "Bearer alice-secret-0123456789";
const BOB: &str = "Bearer bob-secret-0123456789";

/// `fx` for both; `secret` and `vault` (which fails to start) for alice
/// only; `exposePerServer`, so each has its own endpoint too.
fn warden() -> HttpWarden {
    let fixture = fixture_bin();
    HttpWarden::start(&format!(
        r#"servers:
  fx:
    transport: {{kind: stdio, command: {fixture:?}}}
  secret:
    transport: {{kind: stdio, command: {fixture:?}}}
  vault:
    transport: {{kind: stdio, command: {fixture:?}, args: ["--fail-start"]}}
exposePerServer: true
defaultProfile: narrow
profiles:
  full: {{servers: {{fx: {{}}, secret: {{}}, vault: {{}}}}}}
  narrow: {{servers: {{fx: {{}}}}}}
auth:
  tokens:
    - {{name: alice, token: alice-secret-0123456789, profiles: [full]}}
    - {{name: bob, token: bob-secret-0123456789, profiles: [narrow]}}
"#
    ))
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const VENDOR: &str = r#"{"jsonrpc":"2.0","id":2,"method":"x-vendor/op-session","params":{}}"#;

/// Status and body of a request, for comparing two answers whole.
fn seen(response: Response) -> (u16, String) {
    let status = response.status;
    (status, response.body())
}

fn post(warden: &HttpWarden, path: &str, auth: Option<&str>, extra: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut headers = vec![("content-type", "application/json"), ("accept", "application/json, text/event-stream")];
    headers.extend(auth.map(|auth| ("authorization", auth)));
    headers.extend_from_slice(extra);
    seen(send(&warden.addr, "POST", path, &headers, body.as_bytes()))
}

fn get(warden: &HttpWarden, path: &str, auth: Option<&str>) -> (u16, String) {
    let mut headers = vec![("accept", "text/event-stream")];
    headers.extend(auth.map(|auth| ("authorization", auth)));
    seen(send(&warden.addr, "GET", path, &headers, b""))
}

fn modern_headers(method: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method), ("mcp-name", "echo")]
}

fn modern_body(method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {
        "name": "echo", "arguments": {"text": "x"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }})
    .to_string()
}

#[test]
fn a_hidden_server_answers_as_one_that_does_not_exist() {
    let warden = warden();
    // Without a token, a hidden server and a missing one both get 401.
    for path in ["/mcp/secret", "/mcp/no-such-server"] {
        assert_eq!(post(&warden, path, None, &[], INITIALIZE).0, 401, "{path}");
        assert_eq!(get(&warden, path, None).0, 401, "{path}");
    }
    for path in ["/sse/secret", "/sse/no-such-server"] {
        assert_eq!(get(&warden, path, None).0, 401, "{path}");
    }
    // With bob's token, every method and transport gets the same 404 for both.
    let same = |hidden: (u16, String), missing: (u16, String), what: &str| {
        assert_eq!(hidden.0, 404, "{what}: {hidden:?}");
        assert_eq!(hidden, missing, "{what}");
    };
    let both = |path: &str| (format!("/mcp/{path}"), format!("/sse/{path}"));
    let ((hidden_mcp, hidden_sse), (missing_mcp, missing_sse)) = (both("secret"), both("no-such-server"));
    for body in [INITIALIZE, VENDOR] {
        same(post(&warden, &hidden_mcp, Some(BOB), &[], body), post(&warden, &missing_mcp, Some(BOB), &[], body), body);
    }
    let session = [("mcp-session-id", "0123456789abcdef0123456789abcdef")];
    same(
        post(&warden, &hidden_mcp, Some(BOB), &session, VENDOR),
        post(&warden, &missing_mcp, Some(BOB), &session, VENDOR),
        "a vendor method in a session",
    );
    for method in ["tools/call", "x-vendor/op"] {
        let headers = modern_headers(if method == "tools/call" { "tools/call" } else { "x-vendor/op" });
        same(
            post(&warden, &hidden_mcp, Some(BOB), &headers, &modern_body(method)),
            post(&warden, &missing_mcp, Some(BOB), &headers, &modern_body(method)),
            method,
        );
    }
    same(get(&warden, &hidden_mcp, Some(BOB)), get(&warden, &missing_mcp, Some(BOB)), "GET");
    same(get(&warden, &hidden_sse, Some(BOB)), get(&warden, &missing_sse, Some(BOB)), "HTTP+SSE");
    assert!(children_of(warden.pid()).is_empty(), "nothing started for bob");

    // Alice sees it.
    assert_eq!(post(&warden, &hidden_mcp, Some(ALICE), &[], INITIALIZE).0, 200);
}

#[test]
fn on_the_hub_a_hidden_server_is_not_started_named_or_counted() {
    let warden = warden();
    let mut bob = McpHttp::new(&warden.addr, "/mcp").with_header("authorization", BOB);
    bob.initialize();
    assert_eq!(bob.tool_names().iter().filter(|name| name.starts_with("secret")).count(), 0);
    assert_eq!(bob.call("fx__pid", json!({}))["isError"], Value::Null);
    assert_eq!(children_of(warden.pid()).len(), 1, "only fx started for bob");
    // A hidden server that is down answers like a tool that does not exist.
    let unknown = |client: &mut McpHttp, name: &str| {
        let answer = client.request("tools/call", json!({"name": name, "arguments": {}}));
        answer["error"]["message"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(unknown(&mut bob, "vault__echo"), "Unknown tool: vault__echo");
    assert_eq!(unknown(&mut bob, "nothere__echo"), "Unknown tool: nothere__echo");
    // A method Warden does not route goes to the one server bob can see.
    let vendor = bob.request("x-vendor/op-session", json!({}));
    assert!(!vendor.to_string().contains("2 upstreams"), "{vendor}");
    // Bob's status shows only what his profile shows.
    let status = send(&warden.addr, "GET", "/status", &[("authorization", BOB)], b"").body();
    assert!(!status.contains("secret") && !status.contains("vault"), "{status}");
    assert!(status.contains("\"fx\""), "{status}");

    // Alice is told why her server is unavailable.
    let mut alice = McpHttp::new(&warden.addr, "/mcp").with_header("authorization", ALICE);
    alice.initialize();
    let down = unknown(&mut alice, "vault__echo");
    assert!(down.contains("unavailable"), "{down}");
    let status: Value = send(&warden.addr, "GET", "/status", &[("authorization", ALICE)], b"").json();
    assert!(status.to_string().contains("vault"), "{status}");
}
