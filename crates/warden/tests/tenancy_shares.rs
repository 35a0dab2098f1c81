//! Fair shares between tokens, end to end over HTTP: one token cannot take
//! the whole front (sessions, streams, calls), and the idle session ended
//! to make room is taken from the token that holds the most.

mod support;

use serde_json::{Value, json};
use support::fixture_bin;
use support::http::{HttpSseClient, HttpWarden, McpHttp, Response, send};

fn config(http: &str, tokens: &[(&str, &str)]) -> String {
    let mut config = format!(
        "servers:\n  fx:\n    transport: {{kind: stdio, command: {:?}}}\nhttp: {{{http}}}\nauth:\n  tokens:\n",
        fixture_bin()
    );
    for (name, limits) in tokens {
        config.push_str(&format!("    - {{name: {name}, token: {name}-secret-0123456789{limits}}}\n"));
    }
    config
}

fn client(warden: &HttpWarden, name: &str) -> McpHttp {
    warden.client().with_header("authorization", &format!("Bearer {name}-secret-0123456789"))
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// A session of `name` that keeps its GET stream open (so it is busy).
fn busy_session(warden: &HttpWarden, name: &str) -> (McpHttp, Response) {
    let mut client = client(warden, name);
    client.initialize();
    let stream = client.get_stream(None);
    assert_eq!(stream.status, 200);
    (client, stream)
}

fn status(warden: &HttpWarden, name: &str) -> Value {
    let auth = format!("Bearer {name}-secret-0123456789");
    send(&warden.addr, "GET", "/status", &[("authorization", auth.as_str())], b"").json()
}

/// Bob keeps every session he can busy: he gets half of the front, then
/// 429; alice still gets in, and her idle session is not taken for bob.
#[test]
fn one_token_cannot_take_every_session() {
    let warden = HttpWarden::start(&config("maxSessions: 6", &[("alice", ""), ("bob", "")]));
    let mut bobs = Vec::new();
    let refused = loop {
        let response = client(&warden, "bob").post_raw(INITIALIZE);
        if response.status != 200 {
            break response;
        }
        let mut bob = client(&warden, "bob");
        bob.session = response.header("mcp-session-id").map(str::to_owned);
        let _ = response.body();
        let stream = bob.get_stream(None);
        assert_eq!(stream.status, 200);
        bobs.push((bob, stream));
        assert!(bobs.len() <= 6, "bob took every session");
    };
    assert_eq!(bobs.len(), 3, "half of maxSessions");
    assert_eq!(refused.status, 429);
    assert!(refused.header("retry-after").is_some());
    let why = refused.body();
    assert!(why.contains("bob") && why.contains("sessions"), "{why}");
    let shares = &status(&warden, "bob")["token"]["shares"];
    assert_eq!(shares["sessions"], json!({"held": 3, "limit": 3}), "{shares}");

    let mut alice = client(&warden, "alice");
    alice.initialize();
    // Bob trying again takes nothing of alice's.
    assert_eq!(client(&warden, "bob").post_raw(INITIALIZE).status, 429);
    assert!(!alice.tool_names().is_empty(), "alice's idle session lives");
}

/// When the front is full, the idle session ended for a newcomer is the
/// token holding the most, even when another's is older.
#[test]
fn room_is_taken_from_the_token_holding_the_most() {
    let warden = HttpWarden::start(&config("maxSessions: 4", &[("alice", ""), ("bob", ""), ("carol", "")]));
    let mut alice = client(&warden, "alice");
    alice.initialize();
    let mut bobs: Vec<McpHttp> = (0..2)
        .map(|_| {
            let mut bob = client(&warden, "bob");
            bob.initialize();
            bob
        })
        .collect();
    let mut carol = client(&warden, "carol");
    carol.initialize();
    // The front is full; carol's second session ends one of bob's.
    let mut second = client(&warden, "carol");
    second.initialize();
    assert!(!alice.tool_names().is_empty(), "alice's session, the oldest, lives");
    let gone = bobs
        .iter_mut()
        .filter(|bob| bob.post_raw(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#).status == 404)
        .count();
    assert_eq!(gone, 1, "one of bob's two sessions made room");
    assert!(!carol.tool_names().is_empty());
}

/// Streams and calls have their shares too.
#[test]
fn streams_and_calls_are_limited_per_token() {
    let warden = HttpWarden::start(&config("", &[("alice", ""), ("bob", ", limits: {streams: 1, calls: 1}")]));
    let (_bob, _stream) = busy_session(&warden, "bob");
    let mut other = client(&warden, "bob");
    other.initialize();
    assert_eq!(other.get_stream(None).status, 429, "bob's one stream is open");
    let (_alice, _alice_stream) = busy_session(&warden, "alice");

    let mut held = client(&warden, "bob");
    held.session = other.session.clone();
    let canceller = client(&warden, "bob");
    let slow = std::thread::spawn(move || {
        let (_, response) = held.start_request("tools/call", json!({"name": "fx__slow", "arguments": {"ms": 600_000}}));
        response.body()
    });
    support::retry("bob's call to be counted", || {
        (status(&warden, "bob")["token"]["shares"]["calls"]["held"] == 1).then_some(())
    });
    let refused = other.post_raw(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#);
    assert_eq!(refused.status, 429);
    // A notification is no call: bob can still cancel his slow one.
    let mut canceller = canceller;
    canceller.session = other.session.clone();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    assert_eq!(canceller.post_raw(&cancel.to_string()).status, 202);
    slow.join().expect("bob's call");
    support::retry("bob's call to be given back", || {
        (status(&warden, "bob")["token"]["shares"]["calls"]["held"] == 0).then_some(())
    });
    assert_eq!(other.post_raw(r#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#).status, 200);
}

/// On the HTTP+SSE transport a POST ends at once with 202, and the
/// answer comes on the stream: the request still counts against its
/// token's calls until that answer is sent (or the request is cancelled).
#[test]
fn http_sse_calls_count_against_the_token_until_answered() {
    let warden = HttpWarden::start(&config("", &[("alice", ""), ("bob", ", limits: {calls: 1}")]));
    let mut sse = HttpSseClient::open(&warden.addr, "Bearer bob-secret-0123456789");
    sse.initialize(json!({}));
    let post = |body: Value| sse.post(body);
    let held = |n: u64| {
        support::retry(&format!("bob to hold {n} calls"), || {
            (status(&warden, "bob")["token"]["shares"]["calls"]["held"] == n).then_some(())
        })
    };
    held(0);

    let slow = json!({"name": "fx__slow", "arguments": {"ms": 600_000}});
    assert_eq!(post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": slow})).status, 202);
    held(1);
    let refused = post(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(refused.status, 429, "bob's one call is in flight");
    let why = refused.body();
    assert!(why.contains("calls") && why.contains("\"id\":3"), "{why}");
    // Alice's share is her own.
    let mut alice = client(&warden, "alice");
    alice.initialize();
    assert!(!alice.tool_names().is_empty());

    // A cancelled request gets no answer and gives its share back.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
    assert_eq!(post(cancel).status, 202);
    held(0);
    assert_eq!(post(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).status, 202);
    assert!(sse.answer(4)["result"].is_object());
    held(0);
}

/// A connection belongs to the token of its first authenticated request.
/// At its cap, a token's own longest-idle connection is closed for its new
/// one; with every one of them busy, the new one gets 429 and is closed.
/// Another token's connections are never touched.
#[test]
fn connections_are_limited_per_token() {
    use std::io::Read;
    use std::net::TcpStream;

    // Idle keep-alive connections stay open (until they must give way).
    let http = "headerTimeoutSecs: 600";
    let warden = HttpWarden::start(&config(http, &[("alice", ""), ("bob", ", limits: {connections: 2}")]));
    let keep_alive = |name: &str| {
        let stream = TcpStream::connect(&warden.addr).expect("connect");
        stream.set_read_timeout(Some(support::PATIENCE)).expect("timeout");
        let client = client(&warden, name);
        let response = client.post_on(&stream, INITIALIZE);
        assert_eq!(response.status, 200, "{name}'s keep-alive connection");
        let _ = response.body();
        stream
    };
    let closed_by_warden = |stream: &TcpStream| {
        let mut byte = [0u8; 1];
        match (&*stream).read(&mut byte) {
            Ok(0) => true,
            Err(err) => err.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    };
    let alices = keep_alive("alice");
    let first = keep_alive("bob");
    let second = keep_alive("bob");
    // Bob's third connection: his longest-idle one makes room.
    let third = keep_alive("bob");
    assert!(closed_by_warden(&first), "bob's longest-idle connection gave way");
    drop((second, third));

    // Every one of bob's connections busy (an open event stream each): a
    // new one is refused, and alice's idle connection is not touched.
    support::retry("bob's closed connections to be gone", || {
        (status(&warden, "bob")["token"]["shares"]["connections"]["held"] == 1).then_some(())
    });
    let (_bob1, _stream1) = busy_session(&warden, "bob");
    let (_bob2, _stream2) = busy_session(&warden, "bob");
    // (An initialize's connection may still be closing: it would give way.)
    let refused = support::retry("bob's third connection to be refused", || {
        let response = client(&warden, "bob").post_raw(INITIALIZE);
        (response.status == 429).then_some(response)
    });
    assert!(refused.header("retry-after").is_some());
    assert_eq!(refused.header("connection"), Some("close"));
    let why = refused.body();
    assert!(why.contains("bob") && why.contains("connections"), "{why}");
    let shares = &status(&warden, "alice")["token"]["shares"];
    assert_eq!(shares["connections"]["held"], 2, "alice's idle one and her /status: {shares}");
    let alice = client(&warden, "alice");
    let stream = alices;
    let response = alice.post_on(&stream, INITIALIZE);
    assert_eq!(response.status, 200, "alice's idle connection still serves");
}
