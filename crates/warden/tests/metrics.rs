//! End to end: Warden counts what it does and serves it at `/metrics`, on
//! the HTTP front's port and on a listener of its own for stdio use, to a
//! caller with the metrics token; a real Prometheus scrapes it and answers
//! PromQL queries with what the test did.

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::approvals::{approvals, call_echo, pending};
use support::http::{HttpWarden, send};
use support::metrics::{listener, sample};
use support::{Client, PATIENCE, fixtures, scratch_dir};

const TOKEN: &str = "metrics-token-0123456789";

/// Two servers, a policy with a deny and an escalate rule, approval over the
/// control socket, an audit log, and metrics (on their own listener when
/// `listen`).
fn config(dir: &Path, listen: bool) -> String {
    let listen = if listen { "listen: 0, " } else { "" };
    fixtures(
        &[("fx", &[]), ("other", &[])],
        &format!(
            "policy:\n  rules:\n    - {{name: no-secrets, if: {{tool: [echo], args: {{arg: text, contains: SECRET}}}}, then: deny}}\n    - {{name: drops-need-a-human, if: {{tool: [echo], args: {{arg: text, contains: DROP}}}}, then: escalate}}\napproval:\n  socket: {socket:?}\naudit: {{path: {audit:?}}}\nmetrics: {{{listen}token: {TOKEN}}}\n",
            socket = dir.join("approvals.sock").to_str().unwrap(),
            audit = dir.join("audit.jsonl").to_str().unwrap(),
        ),
    )
}

/// `GET /metrics` on `addr` with these headers: status and body.
fn scrape(addr: &str, headers: &[(&str, &str)]) -> (u16, String, Option<String>) {
    let response = send(addr, "GET", "/metrics", headers, b"");
    let (status, kind) = (response.status, response.header("content-type").map(str::to_owned));
    (status, response.body(), kind)
}

fn authorized(addr: &str) -> String {
    let bearer = format!("Bearer {TOKEN}");
    let (status, body, kind) = scrape(addr, &[("authorization", &bearer)]);
    assert_eq!(status, 200, "{body}");
    assert!(kind.is_some_and(|kind| kind.starts_with("application/openmetrics-text")), "{body}");
    assert!(body.ends_with("# EOF\n"), "{body}");
    body
}

/// Runs the test's calls through `client`: two allowed, three denied, one
/// escalated and approved with the CLI, one to the other server.
fn make_calls(client: &mut Client, dir: &Path) {
    client.wait_for_tool("fx__echo");
    client.wait_for_tool("other__echo");
    for text in ["a", "b"] {
        assert_eq!(client.call_text("fx__echo", json!({"text": text})), text);
    }
    for _ in 0..3 {
        let refused = client.call_tool("fx__echo", json!({"text": "my SECRET"}));
        assert_eq!(refused["isError"], true, "{refused}");
    }
    assert_eq!(client.call_text("other__echo", json!({"text": "c"})), "c");
    let id = call_echo(client, "DROP TABLE t", "tok");
    let waiting = pending(dir, 1);
    let (ok, text) = approvals(dir, &["approve", waiting[0]["id"].as_str().unwrap()]);
    assert!(ok, "{text}");
    let answer = client.response(&id);
    assert_eq!(answer["result"]["content"][0]["text"], "DROP TABLE t", "{}", answer.raw);
}

#[test]
fn stdio_serves_what_warden_did_on_its_own_listener_to_the_token_only() {
    let dir = scratch_dir("metrics-stdio");
    let mut client = Client::serve_initialized(&config(&dir, true));
    let addr = listener(&mut client);
    make_calls(&mut client, &dir);

    // Who may read it: the token, on this listener's own host.
    assert_eq!(scrape(&addr, &[]).0, 401);
    assert_eq!(scrape(&addr, &[("authorization", "Bearer metrics-token-012345678")]).0, 401);
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(scrape(&addr, &[("authorization", &bearer), ("host", "evil.example")]).0, 403);
    let page = [("authorization", bearer.as_str()), ("origin", "http://evil.example")];
    assert_eq!(scrape(&addr, &page).0, 403);
    assert_eq!(send(&addr, "GET", "/other", &[], b"").status, 404);
    assert_eq!(send(&addr, "POST", "/metrics", &[], b"").status, 405);

    let text = authorized(&addr);
    let decisions = |labels: &str| sample(&text, &format!("warden_policy_decisions_total{{{labels}}}"));
    assert_eq!(decisions(r#"decision="deny",rule="no-secrets""#), Some(3.0), "{text}");
    assert_eq!(decisions(r#"decision="escalate",rule="drops-need-a-human""#), Some(1.0), "{text}");
    assert_eq!(decisions(r#"decision="allow""#), Some(3.0), "{text}");
    let approved = sample(&text, r#"warden_approval_decisions_total{outcome="approved",channel="cli"}"#);
    assert_eq!(approved, Some(1.0), "{text}");
    assert_eq!(sample(&text, "warden_approvals_pending"), Some(0.0), "{text}");
    assert_eq!(sample(&text, r#"warden_approval_wait_seconds_count{outcome="approved"}"#), Some(1.0), "{text}");

    // The conventions' histograms: what clients asked (a refusal is a tool
    // error), and what Warden asked each server.
    let served = |labels: &str| sample(&text, &format!("mcp_server_operation_duration_seconds_count{{{labels}}}"));
    let call = r#"mcp_method_name="tools/call",gen_ai_tool_name="echo""#;
    assert_eq!(served(&format!(r#"{call},server="fx""#)), Some(3.0), "{text}");
    assert_eq!(served(&format!(r#"{call},server="fx",error_type="tool_error""#)), Some(3.0), "{text}");
    assert_eq!(served(&format!(r#"{call},server="other""#)), Some(1.0), "{text}");
    assert_eq!(served(r#"mcp_method_name="initialize""#), Some(1.0), "{text}");
    let called = |labels: &str| sample(&text, &format!("mcp_client_operation_duration_seconds_count{{{labels}}}"));
    assert_eq!(called(&format!(r#"{call},server="fx""#)), Some(3.0), "refused calls never reach it: {text}");
    assert_eq!(sample(&text, r#"warden_sessions{front="stdio"}"#), Some(1.0), "{text}");
    // Every decision and approval step was audited, and each append timed.
    let appended = sample(&text, r#"warden_audit_appends_total{result="ok"}"#).unwrap_or(0.0);
    assert!(appended >= 8.0, "{text}");
    assert_eq!(sample(&text, "warden_audit_append_seconds_count"), Some(appended), "{text}");
    // No argument and no session id is a label.
    assert!(!text.contains("SECRET") && !text.contains("DROP TABLE"), "{text}");

    // The servers' states, read at each scrape; a crash is counted and
    // the server comes back.
    assert_eq!(sample(&text, r#"warden_upstreams{server="fx",state="ready"}"#), Some(1.0), "{text}");
    assert_eq!(sample(&text, r#"warden_upstreams{server="other",state="ready"}"#), Some(1.0), "{text}");
    let crashed = client.request("tools/call", json!({"name": "other__crash", "arguments": {}}));
    assert!(crashed.value.get("error").is_some(), "{}", crashed.raw);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = authorized(&addr);
        let down = sample(&text, r#"warden_upstream_down_total{server="other"}"#);
        let ready = sample(&text, r#"warden_upstreams{server="other",state="ready"}"#);
        if down == Some(1.0) && ready == Some(1.0) {
            break;
        }
        assert!(Instant::now() < deadline, "the crash was not counted, or the server did not come back: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_http_front_serves_metrics_at_its_port_and_counts_sessions() {
    let dir = scratch_dir("metrics-http");
    let mut warden = HttpWarden::start(&config(&dir, false));
    assert_eq!(scrape(&warden.addr, &[]).0, 401);
    let mut client = warden.client();
    client.initialize();
    assert_eq!(client.call("fx__echo", json!({"text": "hello"}))["content"][0]["text"], "hello");
    let text = authorized(&warden.addr);
    let labels = r#"mcp_method_name="tools/call",gen_ai_tool_name="echo",server="fx""#;
    assert_eq!(sample(&text, &format!("mcp_server_operation_duration_seconds_count{{{labels}}}")), Some(1.0));
    assert_eq!(sample(&text, r#"warden_sessions{front="http"}"#), Some(1.0), "{text}");
    // Each scrape is a connection of its own; the client's may be kept alive too.
    let connections = sample(&text, r#"warden_connections{front="http"}"#).unwrap_or(0.0);
    assert!((1.0..=2.0).contains(&connections), "{text}");
    // The front's own DNS-rebinding check applies here too.
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(scrape(&warden.addr, &[("authorization", &bearer), ("host", "evil.example")]).0, 403);
    warden.stop();
}

#[test]
fn the_breakers_state_is_the_calls_it_refuses_at_the_scrape() {
    let extra =
        format!("breaker: {{identicalCalls: 2, withinSeconds: 3600}}\nmetrics: {{listen: 0, token: {TOKEN}}}\n");
    let mut client = Client::serve_initialized(&fixtures(&[("fx", &[]), ("other", &[])], &extra));
    let addr = listener(&mut client);
    client.wait_for_tool("fx__echo");
    client.wait_for_tool("other__echo");
    let open = |text: &str, server: &str| sample(text, &format!("warden_breaker_open{{server=\"{server}\"}}"));
    assert_eq!(open(&authorized(&addr), "fx"), None, "nothing is refused yet");

    // A loop on one call: the third identical call is refused.
    for _ in 0..2 {
        assert_eq!(client.call_text("fx__echo", json!({"text": "again"})), "again");
    }
    assert_eq!(client.call_tool("fx__echo", json!({"text": "again"}))["isError"], true);
    // Another call of the same server, once, and the other server twice: not loops.
    assert_eq!(client.call_text("fx__echo", json!({"text": "once"})), "once");
    assert_eq!(client.call_text("other__echo", json!({"text": "twice?"})), "twice?");
    let text = authorized(&addr);
    assert_eq!(open(&text, "fx"), Some(1.0), "{text}");
    assert_eq!(open(&text, "other"), None, "{text}");
    let refused = sample(&text, r#"warden_limit_decisions_total{decision="deny",rule="breaker"}"#);
    assert_eq!(refused, Some(1.0), "{text}");

    // The other server's second identical call fills its window: open too.
    assert_eq!(client.call_text("other__echo", json!({"text": "twice?"})), "twice?");
    assert_eq!(open(&authorized(&addr), "other"), Some(1.0));
}

#[test]
fn a_config_without_a_metrics_token_is_refused_unless_open() {
    let dir = scratch_dir("metrics-config");
    let path = dir.join("warden.yaml");
    std::fs::write(&path, fixtures(&[("fx", &[])], "metrics: {listen: 9464}\n")).unwrap();
    let (ok, _, stderr) = support::run_warden(&["validate", "--config", path.to_str().unwrap()]);
    assert!(!ok && stderr.contains("metrics needs a token"), "{stderr}");
    std::fs::write(&path, fixtures(&[("fx", &[])], "metrics: {listen: 9464, open: true}\n")).unwrap();
    let (ok, stdout, stderr) = support::run_warden(&["validate", "--config", path.to_str().unwrap()]);
    assert!(ok, "{stdout}{stderr}");
}

/// A running Prometheus, scraping one target every second.
struct Prometheus {
    child: Child,
    addr: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Starts Debian's `prometheus` scraping `target` with the metrics
    /// token; `None` when it is not installed (CI installs it).
    fn start(dir: &Path, target: &str) -> Option<Prometheus> {
        let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].into_iter().find(|p| Path::new(p).exists());
        let Some(binary) = binary else {
            assert!(
                std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(),
                "prometheus is not installed (.ci/system-packages.sh installs it)"
            );
            eprintln!("skipped: prometheus is not installed");
            return None;
        };
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\nscrape_configs:\n  - job_name: warden\n    authorization: {{credentials: {TOKEN}}}\n    static_configs: [{{targets: [\"{target}\"]}}]\n"
            ),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus");
        Some(Prometheus { child, addr })
    }

    /// The value PromQL `query` returns (its first sample), once it returns
    /// `want` (Prometheus scrapes every second; the wait has no other bound
    /// than the tests' patience).
    fn wait_for(&self, query: &str, want: f64) {
        let deadline = Instant::now() + PATIENCE;
        let path = format!("/api/v1/query?query={}", encode(query));
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(response) = std::panic::catch_unwind(|| send(&self.addr, "GET", &path, &[], b"").body()) {
                if let Ok(answer) = serde_json::from_str::<Value>(&response) {
                    let value = answer["data"]["result"][0]["value"][1].as_str().and_then(|v| v.parse::<f64>().ok());
                    if value == Some(want) {
                        return;
                    }
                }
                last = response;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("PromQL {query} never returned {want}; last answer: {last}");
    }
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (byte as char).to_string(),
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

#[test]
fn a_real_prometheus_scrapes_warden_and_answers_with_what_the_test_did() {
    let dir = scratch_dir("metrics-prometheus");
    let mut client = Client::serve_initialized(&config(&dir, true));
    let target = listener(&mut client);
    let Some(prometheus) = Prometheus::start(&dir, &target) else { return };
    make_calls(&mut client, &dir);

    prometheus.wait_for(r#"up{job="warden"}"#, 1.0);
    prometheus.wait_for(r#"sum(warden_policy_decisions_total{decision="deny",rule="no-secrets"})"#, 3.0);
    prometheus.wait_for(r#"sum(warden_approval_decisions_total{outcome="approved",channel="cli"})"#, 1.0);
    prometheus.wait_for(
        r#"sum by (server) (mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",server="other"})"#,
        1.0,
    );
    // A question users ask: the share of a tool's calls that failed.
    prometheus.wait_for(
        r#"sum(mcp_server_operation_duration_seconds_count{gen_ai_tool_name="echo",server="fx",error_type!=""}) / sum(mcp_server_operation_duration_seconds_count{gen_ai_tool_name="echo",server="fx"})"#,
        0.5,
    );
    // And its latency, from the histogram's buckets.
    prometheus.wait_for(
        r#"count(histogram_quantile(0.95, sum by (le) (mcp_server_operation_duration_seconds_bucket{gen_ai_tool_name="echo"})) >= 0)"#,
        1.0,
    );
}
