//! End to end: the approval page in a real headless Chromium, its CSRF,
//! Host and Origin checks, and approvals over the HTTP front's sessions.

mod support;

use std::time::Instant;

use serde_json::json;
use support::approvals::{approval_config, audit_records, call_echo, page_url, pending, verify_audit, wait_for_step};
use support::browser::{Browser, screenshot_path};
use support::http::{HttpWarden, send};
use support::{Client, scratch_dir};

const TOKEN: &str = "page-token-0123456789abcdef";
const MCP_TOKEN: &str = "mcp-token-0123456789";

fn page_section() -> String {
    format!("  listen: 127.0.0.1:0\n  token: {TOKEN}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_on_the_page_in_chromium_runs_exactly_the_call_shown() {
    let dir = scratch_dir("web");
    let mut client = Client::serve_initialized(&approval_config(&dir, None, &page_section()));
    client.wait_for_tool("fx__echo");
    let url = page_url(|| client.stderr());
    let arguments = json!({"text": "DROP TABLE users", "n": [1, 2], "options": {"cascade": true, "apiKey": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}});
    let id = client.send_request("tools/call", json!({"name": "fx__echo", "arguments": arguments}));
    pending(&dir, 1);

    let mut browser = Browser::start(1100, 760).await;
    browser.navigate(&url).await;
    // A click before the layout settles can miss the field: wait for the
    // loaded page, and check where the focus went before typing.
    browser.wait_until("document.readyState === 'complete' && document.getElementById('token')").await;
    browser.click("#token").await;
    if browser.eval("document.activeElement && document.activeElement.id").await != json!("token") {
        browser.eval("document.getElementById('token').focus()").await;
    }
    browser.type_text(TOKEN).await;
    browser.wait_until(&format!("document.getElementById('token').value === '{TOKEN}'")).await;
    browser.click("button[type=submit]").await;
    browser.wait_until("document.querySelector('meta[name=csrf-token]')").await;
    browser.wait_until("document.querySelector('article.pending')").await;

    let tool = browser.eval("document.querySelector('article.pending .tool').textContent").await;
    assert_eq!(tool, "fx / echo");
    let rule = browser.eval("document.querySelector('article.pending .rule').textContent").await;
    assert_eq!(rule, "Rule drops-need-a-human: DROP changes the schema");
    let shown = browser.eval("document.querySelector('article.pending pre').innerText").await;
    let shown = shown.as_str().unwrap();
    assert!(shown.contains(r#""text": "DROP TABLE users""#) && shown.contains(r#""cascade": true"#), "{shown}");
    assert!(shown.contains(r#""apiKey": "[secret: 39 chars, show]""#), "the key is a marker: {shown}");
    assert!(!shown.contains("sk-ant-api03"), "{shown}");
    let meta = browser.eval("document.querySelector('article.pending .meta').textContent").await;
    assert!(meta.as_str().unwrap().contains("warden-tests/1.0.0"), "{meta}");
    browser.screenshot(&screenshot_path(&dir, "approvals-pending.png")).await;

    browser.wait_until("document.querySelector('article.pending.armed')").await;
    let clicked = Instant::now();
    browser.click("article.pending button.approve").await;
    let answer = client.response(&id);
    eprintln!("click → answer: {:.1} ms", clicked.elapsed().as_secs_f64() * 1000.0);
    assert_eq!(answer["result"]["structuredContent"]["arguments"], arguments, "{}", answer.raw);

    browser.wait_until("document.querySelector('#history .state.executed, #history .state.approved')").await;
    // A second approval of the same id, from the page itself, changes nothing.
    let full_id = audit_records(&dir)[0]["approval"]["id"].as_str().unwrap().to_owned();
    let again = browser
        .eval(&format!(
            "fetch('/api/approvals/{full_id}/approve', {{method: 'POST', headers: {{'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content}}, body: JSON.stringify({{digest: '{digest}'}})}}).then(r => r.status)",
            digest = audit_records(&dir)[0]["approval"]["argsDigest"].as_str().unwrap()
        ))
        .await;
    assert_eq!(again, 409);
    // Approve the next one for the session: the one after runs at once,
    // the entry is listed, and revoking it makes calls wait again.
    let second = client.send_request(
        "tools/call",
        json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE audit_2025; -- cleanup requested in ticket 481"}}),
    );
    browser.wait_until("document.querySelector('article.pending.armed button.session')").await;
    // The page says what else the session approval covers, before the click.
    let scope = browser.eval("document.querySelector('article.pending.armed .hint .scope').textContent").await;
    let expected = r#"fx/echo in session s1 escalated by rule drops-need-a-human with exactly text = "DROP TABLE audit_2025; -- cleanup requested in ticket 481""#;
    assert_eq!(scope, expected);
    browser.click("article.pending.armed button.session").await;
    assert!(
        client.response(&second)["result"]["content"][0]["text"].as_str().unwrap().starts_with("DROP TABLE audit_2025")
    );
    browser.wait_until("document.querySelector('#grants .grant')").await;
    let grant = browser.eval("document.querySelector('#grants .grant').textContent").await;
    assert!(grant.as_str().unwrap().contains(expected), "{grant}");
    let again = json!({"text": "DROP TABLE audit_2025; -- cleanup requested in ticket 481"});
    assert!(client.call_text("fx__echo", again).starts_with("DROP TABLE audit_2025"), "whitelisted");
    // Other arguments, even to the same tool under the same rule, wait.
    let other = client.send_request("tools/call", json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE t3"}}));
    // A card arms once it has been on screen for a moment: show it.
    browser.wait_until("document.querySelector('article.pending')").await;
    browser.eval("document.querySelector('article.pending').scrollIntoView({block: 'nearest'})").await;
    browser.wait_until("document.querySelector('article.pending.armed button.deny')").await;
    browser.click("article.pending.armed button.deny").await;
    assert_eq!(client.response(&other)["result"]["isError"], true);
    browser.wait_until("document.querySelectorAll('#history tr').length >= 4").await;
    browser.screenshot(&screenshot_path(&dir, "approvals-history.png")).await;
    browser.click("#grants .grant button").await;
    browser.wait_until("!document.querySelector('#grants .grant')").await;
    let _ = client.send_request("tools/call", json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE t4"}}));
    browser.wait_until("document.querySelector('article.pending')").await;

    wait_for_step(&dir, &full_id, "executed");
    let approved = wait_for_step(&dir, &full_id, "approved");
    assert_eq!(approved["approval"]["channel"], "web");
    assert!(approved["approval"]["by"].as_str().unwrap().starts_with("web:"));
    verify_audit(&dir);
}

/// Logs in over plain HTTP: the session cookie and the page's CSRF token.
fn login(addr: &str) -> (String, String) {
    let origin = format!("http://{addr}");
    let body = format!("token={TOKEN}");
    let response = send(
        addr,
        "POST",
        "/login",
        &[("origin", &origin), ("content-type", "application/x-www-form-urlencoded")],
        body.as_bytes(),
    );
    assert_eq!(response.status, 303);
    let cookie = response.header("set-cookie").expect("a cookie").to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let page = send(addr, "GET", "/", &[("cookie", &cookie)], b"").body();
    let marker = "name=\"csrf-token\" content=\"";
    let at = page.find(marker).expect("a CSRF token") + marker.len();
    let csrf = page[at..].split('"').next().unwrap().to_owned();
    (cookie, csrf)
}

#[test]
fn posts_without_the_csrf_token_or_from_elsewhere_and_gets_change_nothing() {
    let dir = scratch_dir("csrf");
    let mut client = Client::serve_initialized(&approval_config(&dir, None, &page_section()));
    client.wait_for_tool("fx__echo");
    let url = page_url(|| client.stderr());
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let id = call_echo(&mut client, "DROP TABLE csrf", "t");
    let listed = pending(&dir, 1);
    let approval_id = listed[0]["id"].as_str().unwrap().to_owned();
    let digest = listed[0]["argsDigest"].as_str().unwrap().to_owned();
    let path = format!("/api/approvals/{approval_id}/approve");
    let origin = format!("http://{addr}");

    let wrong = send(&addr, "POST", "/login", &[("origin", &origin)], b"token=not-the-token-at-all");
    assert_eq!(wrong.status, 401);
    let (cookie, csrf) = login(&addr);
    let attempts: [(&str, Vec<(&str, &str)>); 6] = [
        ("no CSRF token", vec![("cookie", &cookie), ("origin", &origin)]),
        (
            "a wrong CSRF token",
            vec![("cookie", &cookie), ("origin", &origin), ("x-csrf-token", "0123456789abcdef0123456789abcdef")],
        ),
        ("a foreign Origin", vec![("cookie", &cookie), ("origin", "http://evil.example"), ("x-csrf-token", &csrf)]),
        ("no Origin", vec![("cookie", &cookie), ("x-csrf-token", &csrf)]),
        (
            "a foreign Host",
            vec![
                ("host", "evil.example"),
                ("cookie", &cookie),
                ("origin", "http://evil.example"),
                ("x-csrf-token", &csrf),
            ],
        ),
        ("no session", vec![("origin", &origin), ("x-csrf-token", &csrf)]),
    ];
    for (what, headers) in &attempts {
        let response = send(&addr, "POST", &path, headers, b"");
        assert!(matches!(response.status, 401 | 403), "{what}: {}", response.status);
    }
    let get = send(&addr, "GET", &path, &[("cookie", &cookie)], b"");
    assert_eq!(get.status, 405, "a GET never decides");
    let rebinding = send(&addr, "GET", "/api/approvals", &[("host", "evil.example"), ("cookie", &cookie)], b"");
    assert_eq!(rebinding.status, 403);
    assert_eq!(pending(&dir, 1)[0]["state"], "pending", "nothing changed");

    // The same request with the token from the page's own origin decides.
    let denied = send(
        &addr,
        "POST",
        &format!("/api/approvals/{approval_id}/deny"),
        &[("cookie", &cookie), ("origin", &origin), ("x-csrf-token", &csrf), ("content-type", "application/json")],
        json!({"reason": "checked by hand", "digest": digest}).to_string().as_bytes(),
    );
    assert_eq!(denied.status, 200);
    let answer = client.response(&id);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Escalation denied:") && text.contains("checked by hand"), "{text}");
}

#[test]
fn over_http_a_waiting_call_holds_up_no_other_session_and_a_bearer_token_decides() {
    let dir = scratch_dir("http-sessions");
    let auth = format!("{}auth:\n  tokens: [{{name: laptop, token: {MCP_TOKEN}}}]\n", page_section());
    let warden = HttpWarden::start(&approval_config(&dir, None, &auth));
    let url = page_url(|| warden.stderr());
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let bearer = format!("Bearer {MCP_TOKEN}");
    let mut waiting = warden.client().with_header("authorization", &bearer);
    waiting.initialize();
    let (_, response) = waiting.start_request(
        "tools/call",
        json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE s"}, "_meta": {"progressToken": 7}}),
    );
    let listed = pending(&dir, 1);
    let approval_id = listed[0]["id"].as_str().unwrap().to_owned();

    // Another session, and the waiting session itself, go on.
    let mut other = warden.client().with_header("authorization", &bearer);
    other.initialize();
    assert_eq!(other.call("fx__echo", json!({"text": "other"}))["content"][0]["text"], "other");
    assert_eq!(waiting.call("fx__echo", json!({"text": "same"}))["content"][0]["text"], "same");
    assert_ne!(listed[0]["session"], "", "the page shows which session asked");
    assert_eq!(listed[0]["principal"], "laptop", "and with which token");

    // A remote operator's CLI over the page's API, with the token.
    let remote = |args: &[&str]| {
        let output = std::process::Command::new(support::warden_bin())
            .arg("approvals")
            .args(args)
            .args(["--url", &url, "--token", TOKEN])
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status.success(), text)
    };
    let (ok, listed) = remote(&["list"]);
    assert!(ok && listed.contains("fx/echo") && listed.contains("DROP TABLE s"), "{listed}");
    let unauthorised = send(&addr, "GET", "/api/approvals", &[("authorization", "Bearer wrong-token-0123456789")], b"");
    assert_eq!(unauthorised.status, 401);
    let clicked = Instant::now();
    let (ok, approved) = remote(&["approve", &approval_id[..8]]);
    assert!(ok && approved.contains("approved"), "{approved}");
    let mut response = response;
    assert!(response.is_sse(), "progress came first, so the answer streams");
    let mut progress = Vec::new();
    let answer = loop {
        let (_, message) = response.next_message().expect("the stream ends with the answer");
        if message.get("method").is_some() {
            progress.push(message);
        } else {
            break message;
        }
    };
    eprintln!("warden approvals approve --url → answer: {:.1} ms", clicked.elapsed().as_secs_f64() * 1000.0);
    assert_eq!(answer["result"]["content"][0]["text"], "DROP TABLE s", "{answer}");
    let message = progress[0]["params"]["message"].as_str().unwrap();
    assert!(message.contains(&approval_id[..8]) && message.contains(&url), "{message}");
    let approved = wait_for_step(&dir, &approval_id, "approved");
    assert_eq!(approved["approval"]["by"], "web:token");

    // A session that ends withdraws what it was waiting for.
    // (With a progress token the answer streams, so the POST returns at once.)
    let (_, _stream) = other.start_request(
        "tools/call",
        json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE gone"}, "_meta": {"progressToken": 9}}),
    );
    let gone = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    assert!(matches!(other.delete().status, 200 | 202 | 204));
    let withdrawn = wait_for_step(&dir, &gone, "withdrawn");
    assert_eq!(withdrawn["approval"]["note"], "the session ended");
    pending(&dir, 0);
}
