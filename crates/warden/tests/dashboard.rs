//! End to end: the dashboard beside the approval page and `warden status`
//! show what a running Warden did: its servers (a crash and the restart
//! after it), its sessions, each tool's calls and errors, the denials by
//! rule, and the audit trail searched and its chain checked; behind the
//! page's login, and in a real headless Chromium.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};
use support::approvals::{approvals, call_echo, page_url, pending};
use support::browser::{Browser, screenshot_path};
use support::http::{HttpWarden, send};
use support::{Client, PATIENCE, fixtures, scratch_dir, warden_bin};

const TOKEN: &str = "page-token-0123456789abcdef";

/// Two servers, a deny and an escalate rule, the approval page and socket,
/// an audit log.
fn config(dir: &Path) -> String {
    fixtures(
        &[("fx", &[]), ("other", &[])],
        &format!(
            "policy:\n  rules:\n    - {{name: no-secrets, if: {{tool: [echo], args: {{arg: text, contains: SECRET}}}}, then: deny}}\n    - {{name: drops-need-a-human, if: {{tool: [echo], args: {{arg: text, contains: DROP}}}}, then: escalate}}\napproval:\n  socket: {socket:?}\n  listen: 127.0.0.1:0\n  token: {TOKEN}\naudit: {{path: {audit:?}}}\n",
            socket = dir.join("approvals.sock").to_str().unwrap(),
            audit = dir.join("audit.jsonl").to_str().unwrap(),
        ),
    )
}

/// Two allowed calls, three denied, one escalated and approved with the
/// CLI, one to the other server.
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
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE t");
}

/// `GET path` on the page with the bearer token: status and JSON body.
fn get(addr: &str, path: &str) -> (u16, Value) {
    let bearer = format!("Bearer {TOKEN}");
    let response = send(addr, "GET", path, &[("authorization", &bearer)], b"");
    let status = response.status;
    let body = response.body();
    (status, serde_json::from_str(&body).unwrap_or_else(|_| panic!("{path} answered {status}: {body}")))
}

fn server<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["servers"].as_array().and_then(|servers| servers.iter().find(|s| s["name"] == name)).expect(name)
}

/// Runs `warden status ARGS`: success and what it printed.
fn warden_status(args: &[&str]) -> (bool, String) {
    let output = Command::new(warden_bin()).arg("status").args(args).output().expect("run warden status");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[test]
fn the_status_the_audit_search_and_warden_status_show_what_warden_did() {
    let dir = scratch_dir("dashboard");
    let mut client = Client::serve_initialized(&config(&dir));
    let url = page_url(|| client.stderr());
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    make_calls(&mut client, &dir);

    // The page's rules: a login or the token, on this page's own host.
    assert_eq!(send(&addr, "GET", "/api/status", &[], b"").status, 401);
    let wrong = send(&addr, "GET", "/api/status", &[("authorization", "Bearer page-token-0123456789abcdeX")], b"");
    assert_eq!(wrong.status, 401);
    let bearer = format!("Bearer {TOKEN}");
    let foreign = send(&addr, "GET", "/api/audit", &[("authorization", &bearer), ("host", "evil.example")], b"");
    assert_eq!(foreign.status, 403);
    assert!(send(&addr, "GET", "/dashboard", &[], b"").body().contains("id=\"token\""), "the login page");

    let (code, status) = get(&addr, "/api/status");
    assert_eq!(code, 200, "{status}");
    assert_eq!(server(&status, "fx")["state"], "ready", "{status}");
    assert_eq!(server(&status, "fx")["restarts"], 0, "{status}");
    let clients = status["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 1, "{status}");
    assert_eq!(clients[0]["front"], "stdio");
    assert!(clients[0]["client"].as_str().unwrap().starts_with("warden-tests/"), "{status}");
    // Each tool's calls in the last 5 minutes: the refusals are errors.
    let tools = status["tools"]["5m"]["tools"].as_array().unwrap();
    let echo = tools.iter().find(|tool| tool["server"] == "fx" && tool["tool"] == "echo").expect("fx echo");
    assert_eq!((echo["calls"].as_u64(), echo["errors"].as_u64()), (Some(6), Some(3)), "{status}");
    assert!(echo["p50Ms"].as_f64().unwrap() > 0.0, "{status}");
    let other = tools.iter().find(|tool| tool["server"] == "other").expect("other echo");
    assert_eq!(other["calls"], 1, "{status}");
    // Denials and escalations by rule; the approval by its channel.
    let policy = status["security"]["policy"].as_array().unwrap();
    let count = |decision: &str, rule: &str| {
        policy.iter().find(|row| row["decision"] == decision && row["rule"] == rule).map(|row| row["count"].clone())
    };
    assert_eq!(count("deny", "no-secrets"), Some(json!(3)), "{status}");
    assert_eq!(count("escalate", "drops-need-a-human"), Some(json!(1)), "{status}");
    assert!(policy.iter().all(|row| row["decision"] != "allow"), "{status}");
    let approvals_row = &status["security"]["approvals"][0];
    assert_eq!((approvals_row["outcome"].as_str(), approvals_row["channel"].as_str()), (Some("approved"), Some("cli")));
    assert_eq!(status["approvalsPending"], 0);
    // No argument is in the overview.
    assert!(!status.to_string().contains("SECRET"), "{status}");

    // A crash: the server is shown down or restarting, then ready with one restart.
    let crashed = client.request("tools/call", json!({"name": "other__crash", "arguments": {}}));
    assert!(crashed.value.get("error").is_some(), "{}", crashed.raw);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (_, status) = get(&addr, "/api/status");
        let other = server(&status, "other");
        if other["state"] == "ready" && other["restarts"] == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "never shown restarted: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // The audit trail, searched.
    let (code, denied) = get(&addr, "/api/audit?decision=deny&since=1h");
    assert_eq!(code, 200, "{denied}");
    let records = denied["records"].as_array().unwrap();
    assert_eq!(records.len(), 3, "{denied}");
    assert!(records.iter().all(|record| record["decision"]["rule"] == "no-secrets"), "{denied}");
    assert_eq!(records[0]["arguments"]["text"], "my SECRET", "the record keeps its (redacted) arguments");
    let (_, on_other) = get(&addr, "/api/audit?server=other&tool=echo");
    assert_eq!(on_other["records"].as_array().unwrap().len(), 1, "{on_other}");
    let (_, last) = get(&addr, "/api/audit?limit=1");
    assert_eq!(last["records"].as_array().unwrap().len(), 1, "{last}");
    let (_, by_client) = get(&addr, "/api/audit?client=nobody-by-this-name");
    assert!(by_client["records"].as_array().unwrap().is_empty(), "{by_client}");
    let (code, bad) = get(&addr, "/api/audit?since=yesterday-ish");
    assert_eq!(code, 400, "{bad}");
    let (code, bad) = get(&addr, "/api/audit?colour=blue");
    assert_eq!(code, 400, "{bad}");
    let (code, chain) = get(&addr, "/api/audit/verify");
    assert_eq!(code, 200);
    assert_eq!(chain["intact"], true, "{chain}");
    assert!(chain["records"].as_u64().unwrap() >= 8, "{chain}");

    // Live: the first event carries the status.
    let mut live = send(&addr, "GET", "/api/status/events", &[("authorization", &bearer)], b"");
    assert!(live.is_sse());
    let (_, data) = live.next_event().expect("a first event");
    let data: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(server(&data, "fx")["state"], "ready");
    drop(live);

    // `warden status`, over the socket and over the page.
    let socket = dir.join("approvals.sock");
    let (ok, text) = warden_status(&["--socket", socket.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(text.contains("· 1 session ·"), "{text}");
    assert!(
        text.lines().any(|line| line.starts_with("other ") && line.contains("ready") && line.contains(" 1 ")),
        "{text}"
    );
    assert!(
        text.lines().any(|line| line.starts_with("deny ") && line.contains("no-secrets") && line.ends_with(" 3")),
        "{text}"
    );
    assert!(
        text.lines().any(|line| line.starts_with("fx ") && line.contains("echo") && line.contains("50.0%")),
        "{text}"
    );
    let (ok, text) = warden_status(&["--socket", socket.to_str().unwrap(), "--json"]);
    assert!(ok, "{text}");
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(server(&json, "fx")["state"], "ready");
    let (ok, remote) = warden_status(&["--url", &url, "--token", TOKEN]);
    assert!(ok && remote.contains("no-secrets"), "{remote}");
    let (ok, refused) = warden_status(&["--url", &url, "--token", "page-token-0123456789abcdeX"]);
    assert!(!ok && refused.contains("log in first"), "{refused}");
}

#[test]
fn over_http_each_session_and_its_client_is_listed() {
    let dir = scratch_dir("dashboard-http");
    let approval = format!("approval:\n  socket: {:?}\n", dir.join("approvals.sock").to_str().unwrap());
    let config = format!("{}{approval}", fixtures(&[("fx", &[])], ""));
    let warden = HttpWarden::start(&config);
    let socket = dir.join("approvals.sock");
    let (ok, before) = warden_status(&["--socket", socket.to_str().unwrap(), "--json"]);
    assert!(ok, "{before}");
    let before: Value = serde_json::from_str(&before).unwrap();
    // Configured, but no session has started it.
    assert_eq!(server(&before, "fx")["state"], "idle", "{before}");
    assert_eq!(server(&before, "fx")["connections"], 0, "{before}");
    let mut first = warden.client();
    first.initialize();
    let mut second = warden.client();
    second.initialize();
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (ok, text) = warden_status(&["--socket", socket.to_str().unwrap(), "--json"]);
        assert!(ok, "{text}");
        let status: Value = serde_json::from_str(&text).unwrap();
        let clients = status["clients"].as_array().unwrap();
        let fx = server(&status, "fx");
        if clients.len() == 2 && fx["connections"] == 2 && fx["state"] == "ready" {
            assert!(clients.iter().all(|client| client["front"] == "http" && client["client"] == "http-test/1"));
            break;
        }
        assert!(Instant::now() < deadline, "never two sessions with fx ready: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // A server added by a reload is listed, one removed is not.
    std::fs::write(&warden.config_path, format!("{}{approval}", fixtures(&[("more", &[])], ""))).unwrap();
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (ok, text) = warden_status(&["--socket", socket.to_str().unwrap(), "--json"]);
        assert!(ok, "{text}");
        let status: Value = serde_json::from_str(&text).unwrap();
        let names: Vec<&str> =
            status["servers"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
        if names == ["more"] {
            break;
        }
        assert!(Instant::now() < deadline, "the reload never showed: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_in_chromium_shows_servers_tools_refusals_and_the_audit_trail() {
    let dir = scratch_dir("dashboard-web");
    let mut client = Client::serve_initialized(&config(&dir));
    let url = page_url(|| client.stderr());
    make_calls(&mut client, &dir);
    // Text that would be markup, were it written as HTML.
    let hostile = r#"<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>"#;
    assert_eq!(client.call_text("fx__echo", json!({"text": hostile})), hostile);

    let mut browser = Browser::start(1180, 1500).await;
    browser.navigate(&format!("{url}dashboard")).await;
    browser.wait_until("document.readyState === 'complete' && document.getElementById('token')").await;
    browser.click("#token").await;
    if browser.eval("document.activeElement && document.activeElement.id").await != json!("token") {
        browser.eval("document.getElementById('token').focus()").await;
    }
    browser.type_text(TOKEN).await;
    browser.wait_until(&format!("document.getElementById('token').value === '{TOKEN}'")).await;
    browser.click("button[type=submit]").await;
    // The login lands on the approval page, whose navigation leads here
    // (followed by URL: a click while the page still lays out can miss).
    browser.wait_until("document.querySelector('nav a[href=\"/dashboard\"]')").await;
    browser.navigate(&format!("{url}dashboard")).await;
    browser.wait_until("document.querySelector('nav a[aria-current=page][href=\"/dashboard\"]')").await;
    browser.wait_until("document.querySelector('#servers .badge.ready')").await;
    browser.wait_until("document.querySelectorAll('#audit tr.record').length >= 9").await;
    browser.wait_until("document.querySelector('#chain.intact')").await;

    let servers = browser
        .eval("[...document.querySelectorAll('#servers tbody tr td:first-child')].map(td => td.textContent).join(',')")
        .await;
    assert_eq!(servers, "fx,other");
    let echo = browser.eval("[...document.querySelectorAll('#tools tbody tr')].find(tr => tr.cells[0].textContent === 'echo' && tr.cells[1].textContent === 'fx').cells[2].textContent").await;
    assert_eq!(echo, "7");
    let refused = browser.eval("[...document.querySelectorAll('#refusals tbody tr')].map(tr => tr.innerText.replace(/\\s+/g, ' ')).join('|')").await;
    assert!(refused.as_str().unwrap().contains("deny no-secrets 3"), "{refused}");
    // What a tool or client sent is text: nothing of it became markup,
    // even opened.
    browser.eval("document.querySelectorAll('#audit tr.record').forEach(row => row.click())").await;
    browser.wait_until("document.querySelectorAll('#audit tr.detail:not([hidden])').length >= 9").await;
    let shown = browser.eval("document.getElementById('audit').textContent.includes('onerror=')").await;
    assert_eq!(shown, true, "the hostile text is shown as text");
    let injected = browser
        .eval("[document.querySelectorAll('img').length, document.querySelectorAll('script').length, typeof window.pwned]")
        .await;
    assert_eq!(injected, json!([0, 1, "undefined"]));
    browser.eval("document.querySelectorAll('#audit tr.record').forEach(row => row.click())").await;
    browser.wait_until("document.querySelectorAll('#audit tr.detail:not([hidden])').length === 0").await;
    browser.screenshot(&screenshot_path(&dir, "dashboard.png")).await;

    // Search the denials and open one: its (redacted) arguments show.
    browser.eval("document.querySelector('select[name=decision]').value = 'deny'").await;
    // DOM clicks from here: a mouse click lands wherever the layout is at
    // that instant, and the table grows as results arrive.
    browser.eval("document.querySelector('#audit-form button[type=submit]').click()").await;
    browser.wait_until("document.querySelectorAll('#audit tr.record').length === 3").await;
    browser.eval("document.querySelector('#audit tr.record button.expand').click()").await;
    browser.wait_until("document.querySelector('#audit tr.detail:not([hidden])')").await;
    let shown = browser.eval("document.querySelector('#audit tr.detail:not([hidden]) pre').textContent").await;
    assert!(shown.as_str().unwrap().contains("\"text\": \"my SECRET\""), "{shown}");
    let expanded = browser.eval("document.querySelector('#audit button.expand').getAttribute('aria-expanded')").await;
    assert_eq!(expanded, "true");
    browser.eval("document.getElementById('audit-title').scrollIntoView()").await;
    browser.screenshot(&screenshot_path(&dir, "dashboard-audit.png")).await;
}
