//! End to end: approvals a person can trust (issue 28). What the page, the
//! CLI and the audit show is every byte that runs, secrets only marked; one
//! click decides one call; long arguments stay in view; client text cannot
//! drive the terminal; a typed reason survives live updates.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::approvals::{approval_config, approvals, page_url, pending, wait_for_step};
use support::browser::{Browser, screenshot_path};
use support::http::send;
use support::{Client, scratch_dir};

const TOKEN: &str = "trust-token-0123456789abcdef";
const KEY: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
/// The reported payload: a fake key header with a second statement after it.
const HIDDEN: &str = "DROP TABLE tmp_import; -- -----BEGIN PRIVATE KEY-----\nDROP DATABASE production;";

fn page_section() -> String {
    format!("  listen: 127.0.0.1:0\n  token: {TOKEN}\n")
}

/// A Warden with the page, initialised, its echo tool listed.
fn warden(dir: &Path) -> (Client, String) {
    let mut client = Client::serve_initialized(&approval_config(dir, None, &page_section()));
    client.wait_for_tool("fx__echo");
    let url = page_url(|| client.stderr());
    (client, url)
}

/// Chromium at `width`×`height`, logged in to the page at `url`.
async fn logged_in(url: &str, width: u32, height: u32) -> Browser {
    let mut browser = Browser::start(width, height).await;
    browser.navigate(url).await;
    browser.wait_until("document.readyState === 'complete' && document.getElementById('token')").await;
    browser.eval(&format!("document.getElementById('token').value = '{TOKEN}'")).await;
    browser.eval("document.querySelector('form[action=\"/login\"]').submit()").await;
    browser.wait_until("document.querySelector('meta[name=csrf-token]') && document.readyState === 'complete'").await;
    browser
}

fn echo(client: &mut Client, arguments: Value) -> Value {
    client.send_request("tools/call", json!({"name": "fx__echo", "arguments": arguments}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fake_key_header_hides_nothing_from_the_page_the_cli_or_the_audit() {
    let dir = scratch_dir("trust-mask");
    let (mut client, url) = warden(&dir);
    let arguments = json!({"text": HIDDEN, "apiKey": KEY});
    let id = echo(&mut client, arguments.clone());
    let listed = pending(&dir, 1);
    assert_eq!(listed[0]["arguments"], arguments, "the record holds the exact arguments");

    // The CLI shows the statement after the fake header, marks the key and says so.
    let (ok, text) = approvals(&dir, &["list"]);
    assert!(ok, "{text}");
    assert!(text.contains("DROP DATABASE production"), "the payload is shown: {text}");
    assert!(text.contains("MASKED: 2 secret-like spans"), "{text}");
    assert!(text.contains("⟦secret private-key, 27 chars⟧") && text.contains("⟦secret secret, 49 chars⟧"), "{text}");
    assert!(!text.contains(KEY), "the key is masked: {text}");
    let (_, revealed) = approvals(&dir, &["list", "--reveal"]);
    assert!(revealed.contains(KEY) && !revealed.contains("MASKED"), "{revealed}");

    // The page: the text after the header is there, as its own line; the
    // masks are markers with kind and length, revealed on demand.
    let mut browser = logged_in(&url, 1100, 760).await;
    browser.wait_until("document.querySelector('article.pending.armed')").await;
    let shown = browser.eval("document.querySelector('article.pending pre').innerText").await;
    let shown = shown.as_str().unwrap();
    assert!(shown.contains("[private-key: 27 chars, show]\nDROP DATABASE production;"), "{shown}");
    assert!(shown.contains("[secret: 49 chars, show]") && !shown.contains(KEY), "{shown}");
    let notice = browser.eval("document.querySelector('article.pending .masked-notice').innerText").await;
    assert!(notice.as_str().unwrap().starts_with("2 secret-like spans are masked"), "{notice}");
    browser.screenshot(&screenshot_path(&dir, "approvals-masked.png")).await;
    browser.click("article.pending button.secret").await;
    browser.wait_until("document.querySelector('article.pending .revealed')").await;
    let revealed = browser.eval("document.querySelector('article.pending .revealed').textContent").await;
    assert_eq!(revealed, KEY, "the first marker (apiKey) shows the key");

    browser.click("article.pending button.approve").await;
    let answer = client.response(&id);
    assert_eq!(answer["result"]["structuredContent"]["arguments"], arguments, "{}", answer.raw);

    // The audit keeps the payload in view and the digest of everything.
    let approval_id = listed[0]["id"].as_str().unwrap();
    let approved = wait_for_step(&dir, approval_id, "approved");
    let logged = approved["arguments"]["text"].as_str().unwrap();
    assert_eq!(logged, "DROP TABLE tmp_import; -- [REDACTED:private-key]\nDROP DATABASE production;");
    assert_eq!(approved["arguments"]["apiKey"], "[REDACTED:secret]");
    assert_eq!(approved["argumentsDigest"], listed[0]["argsDigest"], "{approved}");
    assert_eq!(approved["argumentsDigest"], approved["approval"]["argsDigest"]);
    let executed = wait_for_step(&dir, approval_id, "executed");
    assert_eq!(executed["argumentsDigest"], listed[0]["argsDigest"]);
}

/// "Approve for this session" on the page, widened: the person edits the
/// exact value into a pattern, sees what it means, and grants it; a later
/// call within it runs, one outside it waits (issue 28).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_widens_approve_for_this_session_to_a_pattern_the_person_edits() {
    let dir = scratch_dir("trust-pattern");
    let (mut client, url) = warden(&dir);
    let first = echo(&mut client, json!({"text": "DROP TABLE tmp_1", "n": 1}));
    pending(&dir, 1);
    let mut browser = logged_in(&url, 1000, 800).await;
    browser.wait_until("document.querySelector('article.pending.armed')").await;
    browser.click("article.pending details.widen summary").await;
    let offered = browser
        .eval("[...document.querySelectorAll('article.pending input.pattern')].map(i => [i.dataset.name, i.value])")
        .await;
    assert_eq!(offered, json!([["text", "DROP TABLE tmp_1"]]), "only the string argument, exactly");
    browser
        .eval("(() => { const i = document.querySelector('article.pending input.pattern'); i.focus(); i.select(); })()")
        .await;
    browser.type_text("DROP TABLE tmp_*").await;
    browser.screenshot(&screenshot_path(&dir, "approvals-pattern.png")).await;
    browser.click("article.pending button.session-pattern").await;
    assert_eq!(client.response(&first)["result"]["content"][0]["text"], "DROP TABLE tmp_1");
    browser.wait_until("document.querySelector('article.decided')").await;
    // The page lists the entry with its pattern in words.
    browser.wait_until("document.getElementById('grants').textContent.includes('text matching')").await;
    let grants = browser.eval("document.getElementById('grants').textContent").await;
    assert!(grants.as_str().unwrap().contains(r#"exactly n = 1 and text matching "DROP TABLE tmp_*""#), "{grants}");
    let within = echo(&mut client, json!({"text": "DROP TABLE tmp_9", "n": 1}));
    assert_eq!(client.response(&within)["result"]["content"][0]["text"], "DROP TABLE tmp_9");
    let outside = echo(&mut client, json!({"text": "DROP TABLE customers", "n": 1}));
    let waiting = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    assert!(approvals(&dir, &["deny", &waiting]).0);
    assert_eq!(client.response(&outside)["result"]["isError"], true);
}

/// The visible box of the argument block, and where the text's last
/// character is drawn.
const TAIL_IN_VIEW: &str = r#"(() => {
  const pre = document.querySelector('article.pending pre');
  const box = pre.getBoundingClientRect();
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  let last = null, node;
  while ((node = walker.nextNode())) if (node.textContent.includes('customers')) last = node;
  const range = document.createRange();
  const at = last.textContent.indexOf('customers;');
  range.setStart(last, at); range.setEnd(last, at + 'customers;'.length);
  const tail = range.getBoundingClientRect();
  return {pre: [box.left, box.right, box.bottom], tail: [tail.left, tail.right, tail.bottom],
          scroll: pre.scrollWidth <= pre.clientWidth, view: window.innerWidth};
})()"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_argument_wraps_inside_the_visible_box_and_a_huge_one_says_what_is_left() {
    let dir = scratch_dir("trust-long");
    let (mut client, url) = warden(&dir);
    let sql = format!(
        "SELECT id, name, email, created_at FROM customers WHERE created_at > '2024-01-01' AND status = 'active' AND region IN ('eu-west', 'eu-central', 'us-east') ORDER BY created_at DESC LIMIT {}; DROP TABLE customers;",
        "1".repeat(20)
    );
    assert!(sql.len() >= 227, "{}", sql.len());
    // A value that would pose as another member, with a direction override.
    let label = "a\", \"reviewed\": \"yes\u{202e}";
    let first = echo(&mut client, json!({"text": sql, "label": label}));
    pending(&dir, 1);
    let mut browser = logged_in(&url, 900, 700).await;
    browser.wait_until("document.querySelector('article.pending pre')").await;
    let shown = browser.eval("document.querySelector('article.pending pre').innerText").await;
    assert!(shown.as_str().unwrap().contains(r#""label": "a\", \"reviewed\": \"yes\u202e""#), "{shown}");
    let geometry = browser.eval(TAIL_IN_VIEW).await;
    let (pre, tail) = (&geometry["pre"], &geometry["tail"]);
    assert_eq!(geometry["scroll"], true, "nothing scrolls sideways: {geometry}");
    let f = |v: &Value, i: usize| v[i].as_f64().unwrap();
    assert!(f(tail, 0) >= f(pre, 0) && f(tail, 1) <= f(pre, 1), "the DROP is inside the box: {geometry}");
    assert!(f(tail, 1) <= geometry["view"].as_f64().unwrap(), "and inside the window: {geometry}");
    browser.screenshot(&screenshot_path(&dir, "approvals-long.png")).await;
    browser.wait_until("document.querySelector('article.pending.armed')").await;
    browser.click("article.pending button.deny").await;
    client.response(&first);

    // A huge string shows its start and how much more there is.
    let huge = format!("DROP {}", "x".repeat(10_000));
    let second = echo(&mut client, json!({"text": huge}));
    browser.wait_until("document.querySelector('article.pending button.more')").await;
    let more = browser.eval("document.querySelector('article.pending button.more').textContent").await;
    assert_eq!(more, "8005 more characters / show all");
    browser.eval("document.querySelector('article.pending button.more').scrollIntoView({block: 'center'})").await;
    browser.click("article.pending button.more").await;
    browser.wait_until("!document.querySelector('article.pending button.more')").await;
    let length = browser.eval("document.querySelector('article.pending pre .str').textContent.length").await;
    assert_eq!(length, 10_005);
    browser.wait_until("document.querySelector('article.pending.armed')").await;
    browser.eval("document.querySelector('article.pending button.deny').scrollIntoView({block: 'center'})").await;
    browser.click("article.pending button.deny").await;
    client.response(&second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_click_on_approve_decides_one_call_only() {
    let dir = scratch_dir("trust-double");
    let (mut client, url) = warden(&dir);
    let first = echo(&mut client, json!({"text": "DROP TABLE one"}));
    pending(&dir, 1);
    let second = echo(&mut client, json!({"text": "DROP TABLE two"}));
    let listed = pending(&dir, 2);
    let second_id = listed.iter().find(|a| a["arguments"]["text"] == "DROP TABLE two").unwrap()["id"].clone();

    let mut browser = Browser::start(1000, 900).await;
    browser.navigate(&url).await;
    browser.wait_until("document.readyState === 'complete' && document.getElementById('token')").await;
    // Record, for every card the page adds, whether its buttons were off.
    browser.eval(&format!("document.getElementById('token').value = '{TOKEN}'")).await;
    browser.eval("document.querySelector('form[action=\"/login\"]').submit()").await;
    browser.wait_until("document.querySelector('meta[name=csrf-token]') && document.readyState === 'complete'").await;
    browser
        .wait_until("document.querySelectorAll('article.pending button.approve:not([disabled])').length === 2")
        .await;
    let order = browser
        .eval("[...document.querySelectorAll('article.pending pre')].map(p => p.textContent.includes('one'))")
        .await;
    assert_eq!(order, json!([true, false]), "the first call's card is on top");

    // The first press, at the first card's Approve.
    let rect = browser
        .eval("(() => { const r = document.querySelector('article.pending button.approve').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        .await;
    let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
    let press = |count: u64| {
        [("mousePressed", count), ("mouseReleased", count)]
            .map(|(kind, count)| json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": count}))
    };
    browser.command("Input.dispatchMouseEvent", json!({"type": "mouseMoved", "x": x, "y": y})).await;
    for event in press(1) {
        browser.command("Input.dispatchMouseEvent", event).await;
    }
    // The call ran and the page has heard of it: exactly when the old page
    // re-rendered and slid the second card under the pointer.
    let answer = client.response(&first);
    assert_eq!(answer["result"]["content"][0]["text"], "DROP TABLE one");
    browser.wait_until("document.querySelector('#history .state')").await;
    // The second press of the double click, at the same place.
    for event in press(2) {
        browser.command("Input.dispatchMouseEvent", event).await;
    }
    let under = browser.eval(&format!("document.elementFromPoint({x}, {y}).closest('article').dataset.id")).await;
    assert_ne!(under, second_id, "the next card never slides under the pointer");
    // Nothing decided the second call: it is still pending, to the page and the CLI.
    browser.eval("fetch('/api/approvals').then(r => r.json()).then(d => d.pending.length)").await;
    let still = pending(&dir, 1);
    assert_eq!(still[0]["id"], second_id);
    browser.wait_until("document.querySelector('article.decided .outcome')").await;
    let outcome = browser.eval("document.querySelector('article.decided .outcome').textContent").await;
    assert_eq!(outcome, "Approved — undo not possible.");
    browser.screenshot(&screenshot_path(&dir, "approvals-decided.png")).await;
    let (ok, _) = approvals(&dir, &["deny", second_id.as_str().unwrap()]);
    assert!(ok);
    assert!(client.response(&second)["result"]["isError"] == true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_card_is_unarmed_and_a_typed_reason_survives_live_updates() {
    let dir = scratch_dir("trust-reason");
    let (mut client, url) = warden(&dir);
    let first = echo(&mut client, json!({"text": "DROP TABLE reason"}));
    pending(&dir, 1);
    let mut browser = logged_in(&url, 1000, 900).await;
    browser.wait_until("document.querySelector('article.pending button.deny:not([disabled])')").await;
    // Every card added from now on: were its buttons off when it appeared?
    browser
        .eval("window.added = []; new MutationObserver(ms => ms.forEach(m => m.addedNodes.forEach(n => { if (n.matches && n.matches('article')) window.added.push([...n.querySelectorAll('.actions button')].every(b => b.disabled)); }))).observe(document.getElementById('pending'), {childList: true}); true")
        .await;
    browser.click("article.pending input[type=text]").await;
    browser.type_text("not on the production database").await;
    let second = echo(&mut client, json!({"text": "DROP TABLE other"}));
    browser.wait_until("document.querySelectorAll('article.pending').length === 2").await;
    let kept = browser.eval("document.querySelector('article.pending input[type=text]').value").await;
    assert_eq!(kept, "not on the production database");
    let focused = browser.eval("document.activeElement && document.activeElement.placeholder").await;
    assert_eq!(focused, "Reason (optional)", "the focus stays where the person is typing");
    assert_eq!(browser.eval("window.added").await, json!([true]), "a new card's buttons start off");
    browser.click("article.pending button.deny").await;
    let text = client.response(&first)["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("not on the production database"), "{text}");
    let (ok, _) = approvals(&dir, &["approve", &pending(&dir, 1)[0]["id"].as_str().unwrap()[..8]]);
    assert!(ok);
    client.response(&second);
}

#[test]
fn client_text_cannot_drive_the_terminal_of_list_or_watch() {
    let dir = scratch_dir("trust-escapes");
    let mut client = Client::serve(&approval_config(&dir, None, ""));
    let evil = "evil\u{1b}[2J\u{1b}[H\u{1b}[32mTrusted IDE\u{1b}[0m\u{202e}";
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": evil, "version": "1\u{1b}]0;title\u{7}"}}),
    );
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    client.wait_for_tool("fx__echo");
    let id = echo(&mut client, json!({"text": "DROP TABLE t; \u{1b}[1A\u{1b}[2K looks fine", "\u{1b}[31mkey": "v"}));
    pending(&dir, 1);
    let (ok, text) = approvals(&dir, &["list"]);
    assert!(ok, "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'), "{text:?}");
    assert!(text.contains("evil\\u{1b}[2J"), "the escape is shown, not obeyed: {text}");
    let mut watch = std::process::Command::new(support::warden_bin())
        .args(["approvals", "watch", "--socket"])
        .arg(dir.join("approvals.sock"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let mut seen = String::new();
    let mut reader = std::io::BufReader::new(stdout);
    while !seen.contains("[y/N]") {
        let mut line = Vec::new();
        let read = std::io::BufRead::read_until(&mut reader, b']', &mut line).unwrap();
        assert!(read > 0, "watch ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&line));
    }
    assert!(seen.contains("DROP TABLE t"), "{seen}");
    assert!(!seen.contains('\u{1b}') && !seen.contains('\u{202e}'), "{seen:?}");
    std::io::Write::write_all(watch.stdin.as_mut().unwrap(), b"n\n").unwrap();
    assert_eq!(client.response(&id)["result"]["isError"], true);
    let _ = watch.kill();
    let _ = watch.wait();
}

/// Logs in over plain HTTP: the answer, the session cookie and the CSRF token.
fn login(addr: &str) -> (String, String) {
    let origin = format!("http://{addr}");
    let body = format!("token={TOKEN}");
    let headers = [("origin", origin.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    let response = send(addr, "POST", "/login", &headers, body.as_bytes());
    assert_eq!(response.status, 303);
    let cookie = response.header("set-cookie").expect("a cookie").to_owned();
    assert!(cookie.contains("Max-Age=43200"), "a login has a lifetime: {cookie}");
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let page = send(addr, "GET", "/", &[("cookie", &cookie)], b"");
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("referrer-policy"), Some("same-origin"));
    let page = page.body();
    let marker = "name=\"csrf-token\" content=\"";
    let at = page.find(marker).expect("a CSRF token") + marker.len();
    (cookie, page[at..].split('"').next().unwrap().to_owned())
}

#[test]
fn a_decision_must_carry_the_digest_shown_and_wrong_tokens_are_throttled() {
    let dir = scratch_dir("trust-digest");
    let (mut client, url) = warden(&dir);
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let origin = format!("http://{addr}");
    let id = echo(&mut client, json!({"text": "DROP TABLE digest"}));
    let listed = pending(&dir, 1);
    let (approval_id, digest) = (listed[0]["id"].as_str().unwrap(), listed[0]["argsDigest"].as_str().unwrap());
    assert_eq!(approval_id.len(), 32);
    let (cookie, csrf) = login(&addr);
    let path = format!("/api/approvals/{approval_id}/approve");
    let headers = [("cookie", cookie.as_str()), ("origin", origin.as_str()), ("x-csrf-token", csrf.as_str())];
    let other = "0".repeat(64);
    for (what, body, status) in [
        ("no body", String::new(), 400),
        ("no digest", json!({"reason": null}).to_string(), 400),
        ("another call's digest", json!({"digest": other}).to_string(), 409),
    ] {
        let response = send(&addr, "POST", &path, &headers, body.as_bytes());
        let got = response.status;
        assert_eq!(got, status, "{what}: {}", response.body());
    }
    assert_eq!(pending(&dir, 1)[0]["state"], "pending", "nothing was decided");
    let response = send(&addr, "POST", &path, &headers, json!({"digest": digest}).to_string().as_bytes());
    let got = response.status;
    assert_eq!(got, 200, "{}", response.body());
    client.response(&id);

    // Wrong tokens: a few are free, then the address waits, even with the
    // right token, and the wait grows.
    let wrong = |token: &str| {
        send(&addr, "POST", "/login", &[("origin", origin.as_str())], format!("token={token}").as_bytes()).status
    };
    for attempt in 1..=6 {
        assert_eq!(wrong("wrong-token-0123456789abcdef"), 401, "attempt {attempt} is read");
    }
    // The sixth failure starts a wait of a second: inside it, even the
    // right token is refused unread. (Only a machine that took longer than
    // the wait between two requests could see it let in, and then rightly.)
    let failed = std::time::Instant::now();
    match wrong(TOKEN) {
        429 => assert_eq!(wrong("wrong-token-0123456789abcdef"), 429, "still waiting"),
        status => assert!(failed.elapsed() >= std::time::Duration::from_secs(1), "let in during the wait: {status}"),
    }
}

#[test]
fn a_decision_names_who_made_it_the_token_holder_or_the_kernels_uid() {
    const ALICE: &str = "alice-0123456789abcdef0123456789";
    let dir = scratch_dir("trust-who");
    let section = format!("  listen: 127.0.0.1:0\n  tokens: {{alice: {ALICE}}}\n");
    let mut client = Client::serve_initialized(&approval_config(&dir, None, &section));
    client.wait_for_tool("fx__echo");
    let url = page_url(|| client.stderr());
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let bearer = format!("Bearer {ALICE}");

    // A script with alice's token.
    let first = echo(&mut client, json!({"text": "DROP TABLE by_token"}));
    let listed = pending(&dir, 1);
    let (id, digest) = (listed[0]["id"].as_str().unwrap().to_owned(), listed[0]["argsDigest"].clone());
    // Each waiting call is announced on stderr, with where to decide and the time left.
    client.wait_stderr(&format!(
        "warden: approval {} waits: fx/echo (rule drops-need-a-human); decide at {url}",
        &id[..8]
    ));
    let body = json!({"digest": digest}).to_string();
    let response =
        send(&addr, "POST", &format!("/api/approvals/{id}/approve"), &[("authorization", &bearer)], body.as_bytes());
    assert_eq!(response.status, 200);
    client.response(&first);
    assert_eq!(wait_for_step(&dir, &id, "approved")["approval"]["by"], "web:alice (token)");

    // The local CLI: whatever $USER says, the kernel's uid is recorded.
    let second = echo(&mut client, json!({"text": "DROP TABLE by_cli"}));
    let id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    let output = std::process::Command::new(support::warden_bin())
        .args(["approvals", "approve", &id, "--socket"])
        .arg(dir.join("approvals.sock"))
        .env("USER", "mallory")
        .output()
        .unwrap();
    assert!(output.status.success());
    client.response(&second);
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
    let by = wait_for_step(&dir, &id, "approved")["approval"]["by"].as_str().unwrap().to_owned();
    assert!(by.starts_with(&format!("uid={uid}")) && by.ends_with("(claims cli:mallory)"), "{by}");
}

#[test]
fn a_configured_login_token_needs_128_bits() {
    let dir = scratch_dir("trust-weak");
    let config = approval_config(&dir, None, "  listen: 127.0.0.1:0\n  token: short-token-12345678\n");
    std::fs::write(dir.join("warden.yaml"), config).unwrap();
    let output = std::process::Command::new(support::warden_bin())
        .args(["serve", "--config"])
        .arg(dir.join("warden.yaml"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("at least 128 bits"), "{stderr}");
}

#[test]
fn after_a_kill_the_next_start_closes_the_dangling_pending_record() {
    let dir = scratch_dir("trust-restart");
    let config = approval_config(&dir, None, "");
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    echo(&mut client, json!({"text": "DROP TABLE left_waiting"}));
    let id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    wait_for_step(&dir, &id, "pending");
    // kill -9: nothing gets the chance to close it.
    let killed = std::process::Command::new("kill").args(["-9", &client.pid().to_string()]).status().unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + support::PATIENCE;
    while support::alive(client.pid()) {
        assert!(std::time::Instant::now() < deadline, "warden survived kill -9");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(client);
    assert!(support::approvals::audit_records(&dir).iter().all(|r| r["approval"]["state"] != "withdrawn"));

    let mut again = Client::serve_initialized(&config);
    again.wait_for_tool("fx__echo");
    let closed = wait_for_step(&dir, &id, "withdrawn");
    assert_eq!(closed["approval"]["note"], "warden restarted");
    assert_eq!(closed["approval"]["by"], "warden");
    support::approvals::verify_audit(&dir);
    // Closed once: a third start finds nothing left to close.
    drop(again);
    let mut third = Client::serve_initialized(&config);
    third.wait_for_tool("fx__echo");
    let closings = support::approvals::audit_records(&dir)
        .into_iter()
        .filter(|r| r["approval"]["id"] == id.as_str() && r["approval"]["state"] == "withdrawn")
        .count();
    assert_eq!(closings, 1);
}

#[test]
fn three_wardens_on_one_config_all_serve_and_one_list_shows_every_pending_call() {
    let dir = scratch_dir("trust-three");
    // A fixed page port, so the second and third Warden find it taken.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = approval_config(&dir, None, &format!("  listen: 127.0.0.1:{port}\n  token: {TOKEN}\n"));
    let start = || {
        let mut client = Client::serve_initialized(&config);
        client.wait_for_tool("fx__echo");
        client
    };
    // The first one's call is already waiting when the others start: they
    // must not take it for a leftover of a stopped Warden.
    let mut first = start();
    let first_call = echo(&mut first, json!({"text": "DROP TABLE from_warden_0"}));
    let first_id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    wait_for_step(&dir, &first_id, "pending");
    let mut wardens = vec![first, start(), start()];
    for later in &wardens[1..] {
        later.wait_stderr(&format!("the approval page's address 127.0.0.1:{port} is taken"));
    }
    let mut calls = vec![first_call];
    for (n, client) in wardens.iter_mut().enumerate().skip(1) {
        calls.push(echo(client, json!({"text": format!("DROP TABLE from_warden_{n}")})));
    }
    // One list, whichever Warden holds the call: on the CLI and on the
    // first Warden's page.
    let listed = pending(&dir, 3);
    let addr = format!("127.0.0.1:{port}");
    let bearer = format!("Bearer {TOKEN}");
    let page = send(&addr, "GET", "/api/approvals", &[("authorization", &bearer)], b"").body();
    let page: Value = serde_json::from_str(&page).unwrap();
    assert_eq!(page["pending"].as_array().map(Vec::len), Some(3), "{page}");
    for n in (0..3).rev() {
        let text = format!("DROP TABLE from_warden_{n}");
        let approval = listed.iter().find(|a| a["arguments"]["text"] == text.as_str()).expect("listed");
        let id = approval["id"].as_str().unwrap();
        if n == 2 {
            // The third Warden's call, approved on the first one's page,
            // with the digest of what it showed and only with that.
            let path = format!("/api/approvals/{id}/approve");
            let wrong = json!({"digest": "0".repeat(64)}).to_string();
            let refused = send(&addr, "POST", &path, &[("authorization", &bearer)], wrong.as_bytes());
            assert_eq!(refused.status, 409);
            let body = json!({"digest": approval["argsDigest"]}).to_string();
            let answer = send(&addr, "POST", &path, &[("authorization", &bearer)], body.as_bytes());
            assert_eq!(answer.status, 200);
        } else {
            let (ok, said) = approvals(&dir, &["approve", &id[..8]]);
            assert!(ok, "{said}");
        }
        assert_eq!(wardens[n].response(&calls[n])["result"]["content"][0]["text"], text.as_str());
    }
    let withdrawn = support::approvals::audit_records(&dir)
        .into_iter()
        .filter(|r| r["approval"]["id"] == first_id.as_str() && r["approval"]["state"] == "withdrawn")
        .count();
    assert_eq!(withdrawn, 0, "a live Warden's pending call was closed as a leftover");
    // The first one, the page's owner, exits: the others go on, are still
    // listed together, and one of them takes the page over, showing both.
    drop(wardens.remove(0));
    let more: Vec<Value> = wardens.iter_mut().map(|client| echo(client, json!({"text": "DROP TABLE after"}))).collect();
    let listed = pending(&dir, 2);
    let page = support::retry("another Warden to take the page over", || {
        let answer = std::net::TcpStream::connect(&addr)
            .ok()
            .map(|_| send(&addr, "GET", "/api/approvals", &[("authorization", &bearer)], b""))?;
        let page: Value = serde_json::from_str(&answer.body()).ok()?;
        (page["pending"].as_array().map(Vec::len) == Some(2)).then_some(page)
    });
    let shown: Vec<&str> = page["pending"].as_array().unwrap().iter().filter_map(|a| a["id"].as_str()).collect();
    for approval in &listed {
        assert!(shown.contains(&approval["id"].as_str().unwrap()), "{page}");
    }
    let taken_over =
        wardens.iter().filter(|client| client.stderr().contains(&format!("approvals at http://{addr}/"))).count();
    assert_eq!(taken_over, 1, "one Warden took the page over");
    for approval in &listed {
        assert!(approvals(&dir, &["deny", approval["id"].as_str().unwrap()]).0);
    }
    for (client, call) in wardens.iter_mut().zip(&more) {
        assert_eq!(client.response(call)["result"]["isError"], true);
    }
}

#[test]
fn approvals_open_logs_the_browser_in_with_a_one_time_link() {
    let dir = scratch_dir("trust-open");
    let (_client, url) = warden(&dir);
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let (ok, printed) = approvals(&dir, &["open", "--print"]);
    assert!(ok, "{printed}");
    let link = printed.lines().find(|line| line.starts_with(&format!("{url}login/"))).expect("a link").to_owned();
    let path = link.trim_start_matches(&format!("http://{addr}"));
    let first = send(&addr, "GET", path, &[], b"");
    assert_eq!(first.status, 303);
    let cookie = first.header("set-cookie").expect("a session").split(';').next().unwrap().to_owned();
    assert_eq!(send(&addr, "GET", "/api/approvals", &[("cookie", &cookie)], b"").status, 200);
    // Once only.
    assert_eq!(send(&addr, "GET", path, &[], b"").status, 403);
    assert_eq!(send(&addr, "GET", "/login/0123456789abcdef0123456789abcdef", &[], b"").status, 403);
}
