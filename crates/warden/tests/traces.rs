//! End to end: Warden exports a SERVER span per client request and a
//! CLIENT span per forwarded one to an OTLP/HTTP receiver that decodes them
//! with the official OpenTelemetry protobuf definitions
//! (interop/otlp_receiver.py, opentelemetry-proto from PyPI); it continues
//! the client's `traceparent` and puts its own in the `_meta` of the
//! request the server gets.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::approvals::{approvals, call_echo, pending};
use support::{Client, PATIENCE, fixtures, scratch_dir};

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// The receiver, and the file it writes each span to.
struct Receiver {
    child: Child,
    port: u16,
    spans: PathBuf,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// Starts the receiver; `None` when the interop tools are not installed
    /// (interop/install.sh installs them; CI requires them).
    fn start(dir: &Path) -> Option<Receiver> {
        let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
        let python = interop.join(".venv/bin/python");
        if !python.exists() {
            assert!(
                std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(),
                "interop/.venv is missing: run interop/install.sh"
            );
            eprintln!("skipped: interop/.venv is missing (interop/install.sh)");
            return None;
        }
        let spans = dir.join("spans.jsonl");
        let mut child = Command::new(python)
            .arg(interop.join("otlp_receiver.py"))
            .arg(&spans)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the OTLP receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the receiver's port");
        let port = line.trim().strip_prefix("listening on ").and_then(|port| port.parse().ok()).expect("a port");
        Some(Receiver { child, port, spans })
    }

    /// Every span received so far.
    fn spans(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.spans)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a span"))
            .collect()
    }

    /// The spans, once `ready` holds of them (spans leave Warden in batches,
    /// every second).
    fn wait_for(&self, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let spans = self.spans();
            if ready(&spans) {
                return spans;
            }
            assert!(Instant::now() < deadline, "never received {what}; spans: {spans:#?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn config(receiver: &Receiver, extra: &str) -> String {
    fixtures(
        &[("fx", &["--meta-tool"])],
        &format!(
            "policy:\n  rules:\n    - {{name: no-secrets, if: {{tool: [echo], args: {{arg: text, contains: SECRET}}}}, then: deny}}\ntracing:\n  otlp: http://127.0.0.1:{}\n  headers: {{x-test-key: k1}}\n{extra}",
            receiver.port
        ),
    )
}

/// The `_meta` the fixture got with a `meta` call carrying `meta`.
fn meta_seen(client: &mut Client, meta: Option<Value>) -> Value {
    let mut params = json!({"name": "fx__meta", "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let response = client.request("tools/call", params);
    let text = response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{}", response.raw));
    serde_json::from_str(text).expect("the fixture's _meta")
}

fn named<'a>(spans: &'a [Value], name: &str, kind: i64) -> Vec<&'a Value> {
    spans.iter().filter(|span| span["name"] == name && span["kind"] == kind).collect()
}

#[test]
fn one_trace_runs_from_the_client_through_warden_to_the_server() {
    let dir = scratch_dir("traces");
    let Some(receiver) = Receiver::start(&dir) else { return };
    let mut client = Client::serve_initialized(&config(&receiver, ""));
    client.wait_for_tool("fx__meta");

    // Under the client's span: Warden's CLIENT span is the server's parent.
    let parent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let seen =
        meta_seen(&mut client, Some(json!({"traceparent": parent, "tracestate": "vendor=1", "progressToken": "t"})));
    let forwarded = seen["traceparent"].as_str().expect("a traceparent reached the server").to_owned();
    let parts: Vec<&str> = forwarded.split('-').collect();
    assert_eq!((parts[0], parts[1], parts[3]), ("00", PARENT_TRACE, "01"), "{forwarded}");
    assert_ne!(parts[2], PARENT_SPAN, "the server's parent is Warden's span, not the client's");
    assert_eq!(seen["tracestate"], "vendor=1", "the rest of _meta arrives as sent: {seen}");
    let forwarded_span = parts[2].to_owned();

    // Without one: Warden starts the trace, and adds _meta to carry it.
    let seen = meta_seen(&mut client, None);
    let root = seen["traceparent"].as_str().expect("a traceparent in an added _meta").to_owned();
    assert_ne!(root.split('-').nth(1), Some(PARENT_TRACE));

    // Refused: a SERVER span with the decision, and nothing forwarded.
    let refused = client.call_tool("fx__echo", json!({"text": "my SECRET"}));
    assert_eq!(refused["isError"], true);

    let spans = receiver.wait_for("the calls' spans", |spans| {
        named(spans, "tools/call meta", 2).len() == 2
            && named(spans, "tools/call meta", 3).len() == 2
            && named(spans, "tools/call echo", 2).len() == 1
    });
    let servers = named(&spans, "tools/call meta", 2);
    let server = servers.iter().find(|span| span["trace_id"] == PARENT_TRACE).expect("the continued trace");
    assert_eq!(server["parent_span_id"], PARENT_SPAN, "{server}");
    assert_eq!(server["trace_state"], "vendor=1");
    assert_eq!(server["attributes"]["mcp.method.name"], "tools/call");
    assert_eq!(server["attributes"]["gen_ai.tool.name"], "meta");
    assert_eq!(server["attributes"]["gen_ai.operation.name"], "execute_tool");
    assert_eq!(server["attributes"]["warden.server"], "fx");
    assert_eq!((server["service"].as_str(), server["scope"].as_str()), (Some("warden"), Some("warden")));
    assert_eq!(server["header"], "k1", "the configured headers go with each export");
    let clients = named(&spans, "tools/call meta", 3);
    let client_span = clients.iter().find(|span| span["trace_id"] == PARENT_TRACE).expect("the forwarded call's span");
    assert_eq!(client_span["span_id"], forwarded_span.as_str(), "the span the server was told is the CLIENT span");
    assert_eq!(client_span["parent_span_id"], server["span_id"]);
    assert!(
        client_span["start"].as_u64() >= server["start"].as_u64()
            && client_span["end"].as_u64() <= server["end"].as_u64()
    );
    let rooted = servers.iter().find(|span| span["trace_id"] != PARENT_TRACE).expect("Warden's own trace");
    assert_eq!(rooted["parent_span_id"], "", "a new trace's first span has no parent");

    let denied = named(&spans, "tools/call echo", 2)[0];
    assert_eq!(denied["attributes"]["error.type"], "tool_error");
    assert_eq!(denied["status"]["code"], 2, "ERROR");
    assert_eq!(denied["events"][0]["name"], "warden.policy.decision");
    assert_eq!(denied["events"][0]["attributes"]["warden.policy.rule"], "no-secrets");
    assert!(named(&spans, "tools/call echo", 3).is_empty(), "a refused call is not forwarded");
    assert!(!named(&spans, "initialize", 2).is_empty(), "{spans:#?}");
    // Arguments and results are never recorded.
    let text = serde_json::to_string(&spans).unwrap();
    assert!(!text.contains("SECRET") && !text.contains("progressToken"), "{text}");
}

#[test]
fn new_traces_follow_the_ratio_and_a_clients_sampled_flag_decides_its_own() {
    let dir = scratch_dir("traces-sampled");
    let Some(receiver) = Receiver::start(&dir) else { return };
    let mut client = Client::serve_initialized(&config(&receiver, "  sampleRatio: 0\n"));
    client.wait_for_tool("fx__meta");
    // Not sampled: the client's own _meta reaches the server untouched.
    let unsampled = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-00");
    let seen = meta_seen(&mut client, Some(json!({"traceparent": unsampled})));
    assert_eq!(seen["traceparent"], unsampled.as_str());
    let seen = meta_seen(&mut client, None);
    assert_eq!(seen, Value::Null, "nothing is added to an untraced request");
    // Sampled by the client: recorded, whatever the ratio.
    let sampled = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    meta_seen(&mut client, Some(json!({"traceparent": sampled})));
    let spans = receiver.wait_for("the sampled call's spans", |spans| named(spans, "tools/call meta", 3).len() == 1);
    assert!(spans.iter().all(|span| span["trace_id"] == PARENT_TRACE), "only the client's sampled trace: {spans:#?}");
    assert_eq!(named(&spans, "tools/call meta", 2).len(), 1);
}

#[test]
fn the_http_front_continues_a_traceparent_sent_as_a_header() {
    let dir = scratch_dir("traces-http");
    let Some(receiver) = Receiver::start(&dir) else { return };
    let mut warden = support::http::HttpWarden::start(&config(&receiver, ""));
    let header_trace = "0af7651916cd43dd8448eb211c80319c";
    let header_span = "b7ad6b7169203331";
    let mut client = warden
        .client()
        .with_header("traceparent", &format!("00-{header_trace}-{header_span}-01"))
        .with_header("tracestate", "rojo=00f067aa0ba902b7");
    client.initialize();
    let result = client.call("fx__meta", json!({}));
    let seen: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    let forwarded = seen["traceparent"].as_str().expect("a traceparent reached the server");
    assert_eq!(forwarded.split('-').nth(1), Some(header_trace), "{forwarded}");
    // _meta wins over the header when both name a parent.
    let parent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let (answer, _) = client
        .request_all("tools/call", json!({"name": "fx__meta", "arguments": {}, "_meta": {"traceparent": parent}}));
    let seen: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen["traceparent"].as_str().and_then(|t| t.split('-').nth(1)), Some(PARENT_TRACE));
    let spans = receiver.wait_for("the header's trace", |spans| {
        spans
            .iter()
            .any(|span| span["trace_id"] == header_trace && span["kind"] == 2 && span["name"] == "tools/call meta")
    });
    let server = spans
        .iter()
        .find(|span| span["trace_id"] == header_trace && span["kind"] == 2 && span["name"] == "tools/call meta")
        .unwrap();
    assert_eq!(server["parent_span_id"], header_span);
    assert_eq!(server["trace_state"], "rojo=00f067aa0ba902b7");
    warden.stop();
}

/// A minimal MCP server over Streamable HTTP (2025) whose one tool, `peek`,
/// answers with the trace headers its call arrived with and the
/// `traceparent` of its `_meta`.
fn header_server() -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
                }
            }
            let header = |name: &str| headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
            let length: usize = header("content-length").and_then(|length| length.parse().ok()).unwrap_or(0);
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let result = match message["method"].as_str() {
                _ if !request_line.starts_with("POST") => None,
                Some("initialize") => Some(json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "peek", "version": "1"}
                })),
                Some("tools/list") => Some(json!({"tools": [{"name": "peek", "inputSchema": {"type": "object"}}]})),
                Some("tools/call") => {
                    let seen = json!({
                        "traceparent": header("traceparent"),
                        "tracestate": header("tracestate"),
                        "meta": message["params"]["_meta"]["traceparent"],
                    });
                    Some(json!({"content": [{"type": "text", "text": seen.to_string()}]}))
                }
                Some(_) if message.get("id").is_some() => Some(json!({})),
                _ => None,
            };
            let response = match (result, request_line.starts_with("POST")) {
                (Some(result), _) => {
                    let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                }
                (None, true) => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned(),
                (None, false) => {
                    "HTTP/1.1 405 Method Not Allowed\r\nallow: POST\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned()
                }
            };
            let _ = stream.write_all(response.as_bytes());
        }
    });
    port
}

#[test]
fn an_http_server_gets_the_trace_context_in_its_headers_too() {
    let port = header_server();
    let mut client = Client::serve_initialized(&format!(
        "servers:\n  peek:\n    transport: {{kind: http, url: \"http://127.0.0.1:{port}/mcp\"}}\n    protocol: legacy\n"
    ));
    client.wait_for_tool("peek__peek");
    let parent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let params =
        json!({"name": "peek__peek", "arguments": {}, "_meta": {"traceparent": parent, "tracestate": "vendor=1"}});
    let response = client.request("tools/call", params);
    let text = response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{}", response.raw));
    let seen: Value = serde_json::from_str(text).unwrap();
    assert_eq!(seen["traceparent"], parent.as_str(), "{seen}");
    assert_eq!(seen["meta"], parent.as_str(), "{seen}");
    assert_eq!(seen["tracestate"], "vendor=1", "{seen}");
    // Untraced: no header is made up.
    let response = client.request("tools/call", json!({"name": "peek__peek", "arguments": {}}));
    let seen: Value = serde_json::from_str(response["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!((seen["traceparent"].clone(), seen["meta"].clone()), (Value::Null, Value::Null), "{seen}");
}

#[test]
fn an_escalated_call_s_span_says_how_its_approval_ended() {
    let dir = scratch_dir("traces-approval");
    let Some(receiver) = Receiver::start(&dir) else { return };
    let extra = format!("approval:\n  socket: {:?}\n", dir.join("approvals.sock").to_str().unwrap());
    let config = config(&receiver, &extra).replace(
        "    - {name: no-secrets,",
        "    - {name: drops-need-a-human, if: {tool: [echo], args: {arg: text, contains: DROP}}, then: escalate}\n    - {name: no-secrets,",
    );
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    let id = call_echo(&mut client, "DROP TABLE t", "tok");
    let waiting = pending(&dir, 1);
    let (ok, text) = approvals(&dir, &["approve", waiting[0]["id"].as_str().unwrap()]);
    assert!(ok, "{text}");
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE t");
    let spans = receiver.wait_for("the escalated call's span", |spans| !named(spans, "tools/call echo", 2).is_empty());
    let span = named(&spans, "tools/call echo", 2)[0];
    let events = span["events"].as_array().expect("events");
    let decision = events.iter().find(|event| event["name"] == "warden.policy.decision").expect("the decision");
    assert_eq!(decision["attributes"]["warden.policy.decision"], "escalate");
    assert_eq!(decision["attributes"]["warden.policy.rule"], "drops-need-a-human");
    let approval = events.iter().find(|event| event["name"] == "warden.approval").expect("the approval");
    assert_eq!(approval["attributes"]["warden.approval.outcome"], "approved", "{span}");
    assert_eq!(approval["attributes"]["warden.approval.channel"], "cli", "{span}");
    let (start, at, end) = (span["start"].as_u64(), approval["time"].as_u64(), span["end"].as_u64());
    assert!(start <= at && at <= end && decision["time"].as_u64() <= at, "the decision comes in the span: {span}");
    assert!(span["attributes"].get("error.type").is_none(), "approved and run: {span}");
    assert!(!named(&spans, "tools/call echo", 3).is_empty(), "then forwarded");
}
