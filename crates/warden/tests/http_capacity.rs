//! The HTTP front under real traffic: clients that open sessions and walk
//! away never lock a new client out, server processes stay within their
//! budget, and half-open or dripping connections cannot exhaust the front.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::fixtures;
use support::http::{HttpWarden, McpHttp, live_children_of, rss_kib, send};

/// Two fixture servers, so each session of its own holds two processes.
fn two_fixtures(http: &str) -> String {
    fixtures(&[("one", &[]), ("two", &[])], &format!("http: {http}\n"))
}

/// Records the most live server processes warden had at once, sampled until
/// the returned guard is dropped.
struct ProcessWatch {
    most: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProcessWatch {
    fn start(pid: u32) -> ProcessWatch {
        let (most, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let thread = std::thread::spawn({
            let (most, stop) = (most.clone(), stop.clone());
            move || {
                while !stop.load(Ordering::Relaxed) {
                    most.fetch_max(live_children_of(pid), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        });
        ProcessWatch { most, stop, thread: Some(thread) }
    }

    fn most(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.most.load(Ordering::Relaxed)
    }
}

/// One client that initializes, makes one call, checks its answer and walks
/// away without DELETE; returns the client.
fn call_and_walk_away(warden: &HttpWarden, n: usize) -> McpHttp {
    let mut client = warden.client();
    client.initialize();
    let text = format!("session {n}");
    let result = client.call("one__echo", json!({"text": text}));
    assert_eq!(result["content"][0]["text"], json!(text), "session {n} was answered");
    client
}

fn status(warden: &HttpWarden) -> Value {
    send(&warden.addr, "GET", "/status", &[], b"").json()
}

#[test]
fn a_thousand_abandoned_sessions_never_lock_a_new_client_out() {
    const BUDGET: usize = 20;
    let warden = HttpWarden::start(&two_fixtures(&format!("{{processBudget: {BUDGET}}}")));
    let watch = ProcessWatch::start(warden.pid());
    let first = call_and_walk_away(&warden, 0);
    let mut rss_after_warm_up = 0;
    for n in 1..1000 {
        call_and_walk_away(&warden, n);
        if n == 100 {
            rss_after_warm_up = rss_kib(warden.pid());
        }
    }
    // A fresh client at the end is served.
    call_and_walk_away(&warden, 1000);
    let most = watch.most();
    assert!(most <= BUDGET, "at most {BUDGET} server processes at once, saw {most}");
    assert!(most >= BUDGET - 2, "the budget was used (saw {most}), so the bound was really tested");
    // The first session was ended to make room: its client is told to start anew.
    let gone = first.post_raw(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#);
    assert_eq!(gone.status, 404, "an evicted session is unknown");
    let rss = rss_kib(warden.pid());
    assert!(
        rss < rss_after_warm_up + 48 * 1024,
        "memory stays bounded: {rss} KiB after 1,000 sessions, {rss_after_warm_up} KiB after 100"
    );
    let status = status(&warden);
    assert_eq!(status["processes"]["budget"], json!(BUDGET));
    assert!(status["processes"]["reserved"].as_u64().is_some_and(|reserved| reserved <= BUDGET as u64));
}

#[test]
fn sixteen_clients_abandoning_sessions_at_once_are_all_served() {
    const BUDGET: usize = 64;
    // The session cap binds first here: 24 sessions of two processes each.
    let warden = Arc::new(HttpWarden::start(&two_fixtures(&format!("{{processBudget: {BUDGET}, maxSessions: 24}}"))));
    let watch = ProcessWatch::start(warden.pid());
    let clients: Vec<_> = (0..16)
        .map(|thread| {
            let warden = warden.clone();
            std::thread::spawn(move || {
                for n in 0..63 {
                    call_and_walk_away(&warden, thread * 1000 + n);
                }
            })
        })
        .collect();
    for client in clients {
        client.join().expect("every session of every client was served");
    }
    call_and_walk_away(&warden, 99_999);
    let most = watch.most();
    assert!(most <= 48, "at most 24 sessions of two processes, saw {most} processes");
    let sessions = status(&warden)["sessions"].as_array().map_or(0, Vec::len);
    assert!(sessions <= 24, "the session cap holds: {sessions}");
}

#[test]
fn when_every_session_is_busy_a_new_one_gets_503_with_retry_after() {
    let warden = HttpWarden::start(&two_fixtures("{maxSessions: 2}"));
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut client = warden.client();
        client.initialize();
        // An open GET stream makes a session busy.
        busy.push((client.get_stream(None), client));
    }
    let refused = warden.client().post_raw(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "late", "version": "1"}
        }})
        .to_string(),
    );
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("2"));
    let body = refused.json();
    assert!(body["error"]["message"].as_str().unwrap_or_default().contains("busy"), "{body}");
    // Once a stream closes, its session is idle and gives way.
    busy.pop();
    support::http::eventually("a new client to be served", || {
        let mut client = warden.client();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| client.initialize())).is_ok()
    });
}

#[test]
fn sessions_that_never_opened_a_stream_are_reclaimed_sooner() {
    let warden = HttpWarden::start(&two_fixtures("{sessionIdleSecs: 3600, sessionIdleNoStreamSecs: 1}"));
    let walked_away = call_and_walk_away(&warden, 0);
    let mut streaming = warden.client();
    streaming.initialize();
    let stream = streaming.get_stream(None);
    drop(stream);
    // Asking the session itself would keep it alive: watch the status.
    support::http::eventually("the session without a stream to be reclaimed", || {
        status(&warden)["sessions"].as_array().map_or(0, Vec::len) == 1
    });
    let gone = walked_away.post_raw(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#);
    assert_eq!(gone.status, 404, "the session without a stream was reclaimed");
    let kept = streaming.post_raw(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#);
    assert_eq!(kept.status, 200, "a session that had a stream keeps its longer timeout");
}

/// Opens `count` connections that send the start of a request and stop.
fn half_open(addr: &str, count: usize, start: &str) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..count {
        let Ok(mut stream) = TcpStream::connect(addr) else { continue };
        let _ = stream.write_all(start.as_bytes());
        held.push(stream);
    }
    held
}

fn a_fresh_client_is_served(warden: &HttpWarden) {
    let mut client = warden.client();
    client.initialize();
    let result = client.call("one__echo", json!({"text": "fresh"}));
    assert_eq!(result["content"][0]["text"], "fresh");
}

/// Warden under a low open-file limit (both soft and hard), so the attack
/// below exceeds what it can hold.
fn under_fd_limit(http: &str) -> HttpWarden {
    HttpWarden::start_wrapped(
        &["prlimit", "--nofile=256:256", "--"],
        &two_fixtures(http),
        &["--http", "127.0.0.1:0"],
        &[],
    )
}

#[test]
fn half_open_connections_beyond_the_descriptor_limit_never_lock_the_front() {
    let warden = under_fd_limit("{processBudget: 8, headerTimeoutSecs: 2}");
    let status = status(&warden);
    assert_eq!(status["connections"]["openFilesLimit"], 256);
    let max = status["connections"]["max"].as_u64().expect("a connection cap");
    assert!(max < 256, "the cap leaves room for the servers' pipes: {max}");
    let held = half_open(&warden.addr, 400, "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n");
    assert!(held.len() > 256, "more connections than descriptors were attempted");
    a_fresh_client_is_served(&warden);
    // The header timeout closes them from Warden's side while the attacker
    // still holds them open: only the status request itself stays.
    support::http::eventually("the half-open connections to be closed by the header timeout", || {
        status_of_connections(&warden) <= 1
    });
    drop(held);
}

fn status_of_connections(warden: &HttpWarden) -> u64 {
    status(warden)["connections"]["open"].as_u64().unwrap_or(u64::MAX)
}

#[test]
fn dripping_bodies_beyond_the_descriptor_limit_never_lock_the_front() {
    let warden = under_fd_limit("{processBudget: 8, headerTimeoutSecs: 2, bodyTimeoutSecs: 2}");
    let start = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
                 accept: application/json, text/event-stream\r\ncontent-length: 1000\r\n\r\n{";
    let held = half_open(&warden.addr, 400, start);
    assert!(held.len() > 256, "more connections than descriptors were attempted");
    // Their bodies never finish: each is cut off after the body timeout, and
    // the fresh client gets a place within it.
    a_fresh_client_is_served(&warden);
    drop(held);
}

#[test]
fn the_soft_descriptor_limit_is_raised_to_the_hard_one() {
    let warden = HttpWarden::start_wrapped(
        &["prlimit", "--nofile=256:2048", "--"],
        &two_fixtures("{}"),
        &["--http", "127.0.0.1:0"],
        &[],
    );
    assert_eq!(status(&warden)["connections"]["openFilesLimit"], 2048);
}
