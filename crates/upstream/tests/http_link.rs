//! The Streamable HTTP link against a scripted server over real HTTP: broken
//! answer streams, forgotten sessions, refused connections, error statuses,
//! and the headers every message carries.

mod scripted;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use scripted::{Events, Reply, Request, Server, initialized, next_event};
use serde_json::json;
use tokio::sync::{mpsc, watch};
use warden_config::{Supervision, Transport};
use warden_upstream::{Connection, Event, EventKind, Upstream, UpstreamError, UpstreamSpec, UpstreamState};

/// The client's `initialize` params, with spacing a re-encoder would lose.
const INIT_PARAMS: &str =
    r#"{"protocolVersion":"2025-11-25", "capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1.0"}}"#;

struct Running {
    upstream: Upstream,
    connection: Arc<Connection>,
    events: mpsc::UnboundedReceiver<Event>,
    _init: watch::Sender<Option<Arc<str>>>,
}

fn spec(url: &str) -> UpstreamSpec {
    UpstreamSpec {
        name: "remote".into(),
        transport: Transport::Http {
            url: url.to_owned(),
            headers: [("X-Team".to_owned(), "blue".to_owned())].into_iter().collect(),
        },
        supervision: Supervision { backoff_initial_ms: 20, backoff_max_ms: 200, ..Supervision::default() },
        max_message_bytes: 4096,
        watch: None,
        sandbox: None,
        // These tests script a 2025-era server's every answer.
        protocol: warden_config::ProtocolEra::Mcp2025,
    }
}

fn start(url: &str) -> (Upstream, mpsc::UnboundedReceiver<Event>, watch::Sender<Option<Arc<str>>>) {
    let (sink, events) = mpsc::unbounded_channel();
    let (init, init_rx) = watch::channel(Some(Arc::from(INIT_PARAMS)));
    (Upstream::spawn(0, spec(url), init_rx, Arc::new(Events(sink)), Default::default()), events, init)
}

async fn ready(server: &Server) -> Running {
    let (upstream, events, init) = start(&server.url);
    let connection = upstream.settled(Duration::from_secs(10)).await.expect("the upstream got ready");
    Running { upstream, connection, events, _init: init }
}

/// The handshake's part of a script: session `session`, no GET stream.
fn handshake(request: &Request, session: &str) -> Option<Reply> {
    match (request.method.as_str(), request.rpc().as_str()) {
        ("POST", "initialize") => Some(initialized(request, session)),
        ("POST", "notifications/initialized") => Some(Reply::status(202)),
        ("GET", _) if request.header("last-event-id").is_none() => Some(Reply::status(405)),
        ("DELETE", _) => Some(Reply::status(200)),
        _ => None,
    }
}

fn response(id: &serde_json::Value, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}).to_string()
}

#[tokio::test]
async fn an_answer_stream_that_breaks_is_resumed_after_its_last_event() {
    let call_id = Arc::new(Mutex::new(serde_json::Value::Null));
    let id = call_id.clone();
    let server = Server::start(move |request, _| {
        if let Some(reply) = handshake(request, "s1") {
            return reply;
        }
        match request.method.as_str() {
            "POST" => {
                *id.lock().unwrap() = request.json()["id"].clone();
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}});
                // Ends after the first event, without the response.
                Reply::sse(&format!("id: e0\ndata:\n\nid: e1\nretry: 10\ndata: {progress}\n\n"))
            }
            _ => Reply::sse(&format!("id: e2\ndata: {}\n\n", response(&id.lock().unwrap(), "resumed"))),
        }
    })
    .await;
    let mut running = ready(&server).await;
    let answer = running.connection.request("tools/call", Some(r#"{"name":"x"}"#)).await.expect("answered");
    assert!(answer.text().contains("resumed"), "{}", answer.text());
    let progress = next_event(&mut running.events, |kind| matches!(kind, EventKind::Message(..))).await;
    let EventKind::Message(_, frame) = progress.kind else { unreachable!() };
    assert!(frame.text().contains("notifications/progress"));

    let resume = server.wait_for("the resumption", |r| r.method == "GET" && r.header("last-event-id").is_some()).await;
    assert_eq!(resume.header("last-event-id"), Some("e1"));
    assert_eq!(resume.header("mcp-session-id"), Some("s1"));
    assert_eq!(resume.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(resume.header("x-team"), Some("blue"));
    assert_eq!(resume.header("accept"), Some("text/event-stream"));

    let post = server.wait_for("the call", |r| r.rpc() == "tools/call").await;
    assert_eq!(post.header("accept"), Some("application/json, text/event-stream"));
    assert_eq!(post.header("content-type"), Some("application/json"));
    assert_eq!(post.header("mcp-session-id"), Some("s1"));
    let init = server.wait_for("initialize", |r| r.rpc() == "initialize").await;
    assert_eq!(init.header("mcp-session-id"), None, "initialize opens a session; it carries none");
    assert_eq!(init.header("x-team"), Some("blue"));

    // Shutting down deletes the session.
    running.upstream.shutdown().await;
    let delete = server.wait_for("DELETE", |r| r.method == "DELETE").await;
    assert_eq!(delete.header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn an_answer_stream_without_ids_that_breaks_fails_its_request() {
    let server = Server::start(|request, _| {
        handshake(request, "s1")
            .unwrap_or_else(|| Reply::sse("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"))
    })
    .await;
    let running = ready(&server).await;
    let error = running.connection.request("tools/call", None).await.expect_err("no answer can come");
    assert!(matches!(&error, UpstreamError::Lost { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "upstream 'remote' went away before answering: the server closed the stream before answering"
    );
    assert!(server.seen().iter().all(|r| r.header("last-event-id").is_none()), "nothing to resume from");
}

#[tokio::test]
async fn a_forgotten_session_is_initialized_again_with_the_same_params_and_the_call_retried() {
    let server = Server::start(|request, _| {
        let initializes = request.rpc() == "initialize";
        if initializes && request.json()["id"].is_number() {
            return initialized(request, "s1");
        }
        if initializes {
            return initialized(request, "s2");
        }
        if let Some(reply) = handshake(request, "unused") {
            return reply;
        }
        match request.header("mcp-session-id") {
            // The server restarted: it knows only the new session.
            Some("s2") => Reply::json(serde_json::from_str(&response(&request.json()["id"], "on s2")).unwrap()),
            _ => Reply::status(404),
        }
    })
    .await;
    let mut running = ready(&server).await;
    next_event(&mut running.events, |kind| matches!(kind, EventKind::Ready(_))).await;

    let answer = running.connection.request("tools/call", Some(r#"{"name":"x"}"#)).await.expect("answered");
    assert!(answer.text().contains("on s2"), "{}", answer.text());
    // The owner hears the connection is ready again, to set the new session up.
    let again = next_event(&mut running.events, |kind| matches!(kind, EventKind::Ready(_))).await;
    let EventKind::Ready(connection) = again.kind else { unreachable!() };
    assert!(Arc::ptr_eq(&connection, &running.connection), "the same connection, a new session");
    assert!(matches!(running.upstream.state(), UpstreamState::Ready(_)));

    let inits: Vec<Request> = server.seen().into_iter().filter(|r| r.rpc() == "initialize").collect();
    assert_eq!(inits.len(), 2);
    for init in &inits {
        assert!(init.body.contains(INIT_PARAMS), "the client's params, byte for byte: {}", init.body);
    }
    let calls: Vec<Request> = server.seen().into_iter().filter(|r| r.rpc() == "tools/call").collect();
    let sessions: Vec<Option<&str>> = calls.iter().map(|r| r.header("mcp-session-id")).collect();
    assert_eq!(sessions, [Some("s1"), Some("s2")]);
    assert!(
        server
            .seen()
            .iter()
            .any(|r| r.rpc() == "notifications/initialized" && r.header("mcp-session-id") == Some("s2")),
        "the new session was completed with notifications/initialized"
    );
}

#[tokio::test]
async fn error_statuses_and_oversized_messages_fail_the_request_clearly() {
    let server = Server::start(|request, _| {
        handshake(request, "s1")
            .unwrap_or_else(|| Reply::status(500).header("content-type", "text/plain").body_text("boom"))
    })
    .await;
    let running = ready(&server).await;
    let error = running.connection.request("tools/call", None).await.expect_err("500");
    assert_eq!(
        error.to_string(),
        format!("upstream 'remote' failed over HTTP: POST {} answered 500 Internal Server Error: boom", server.url)
    );

    let big = format!(r#"{{"text":"{}"}}"#, "x".repeat(5000));
    let error = running.connection.request("tools/call", Some(&big)).await.expect_err("too large");
    assert!(matches!(error, UpstreamError::RequestTooLarge { limit: 4096, .. }), "{error:?}");
    assert!(!server.seen().iter().any(|r| r.body.len() > 4096), "the oversized message was not sent");
}

#[tokio::test]
async fn a_refused_connection_is_a_failed_start_with_a_reason_and_a_retry() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (upstream, mut events, _init) = start(&url);
    let down = next_event(&mut events, |kind| matches!(kind, EventKind::Down { .. })).await;
    let EventKind::Down { reason } = down.kind else { unreachable!() };
    assert_eq!(reason, format!("cannot connect to {url}: connection refused"));
    let unavailable = upstream.unavailable().to_string();
    assert!(unavailable.contains("cannot connect to") && unavailable.contains("(next start in"), "{unavailable}");
    // It keeps trying.
    next_event(&mut events, |kind| matches!(kind, EventKind::Down { .. })).await;
    upstream.shutdown().await;
}

#[tokio::test]
async fn the_get_stream_carries_server_messages_and_resumes_after_its_last_event() {
    let note = |text: &str| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": text}});
    let server = Server::start(move |request, _| match (request.method.as_str(), request.header("last-event-id")) {
        ("GET", None) => Reply::sse(&format!("retry: 10\nid: g1\ndata: {}\n\n", note("first"))),
        ("GET", Some("g1")) => Reply::sse(&format!("id: g2\ndata: {}\n\n", note("second"))),
        ("GET", Some(_)) => Reply::status(405),
        _ => handshake(request, "s1").unwrap_or_else(|| Reply::status(500)),
    })
    .await;
    let mut running = ready(&server).await;
    let mut texts = Vec::new();
    for _ in 0..2 {
        let event = next_event(&mut running.events, |kind| matches!(kind, EventKind::Message(..))).await;
        let EventKind::Message(_, frame) = event.kind else { unreachable!() };
        texts.push(frame.into_text());
    }
    assert!(texts[0].contains("first") && texts[1].contains("second"), "{texts:?}");
    let resumed = server.wait_for("the second GET", |r| r.header("last-event-id") == Some("g1")).await;
    assert_eq!(resumed.header("mcp-session-id"), Some("s1"));
    // The stream is opened only after the handshake completed.
    let seen = server.seen();
    let first_get = seen.iter().position(|r| r.method == "GET").unwrap();
    let initialized = seen.iter().position(|r| r.rpc() == "notifications/initialized").unwrap();
    assert!(initialized < first_get, "{seen:#?}");
}

#[tokio::test]
async fn redirects_are_followed_within_the_origin_only() {
    let elsewhere = Arc::new(Mutex::new(String::new()));
    let target = elsewhere.clone();
    let server = Server::start(move |request, _| {
        if request.path == "/mcp" && request.rpc() == "tools/call" && request.json()["params"]["name"] == "away" {
            // Same server, another origin (host name instead of address).
            return Reply::status(307).header("location", &target.lock().unwrap());
        }
        if request.path == "/mcp" {
            return Reply::status(307).header("location", "/moved");
        }
        handshake(request, "s1")
            .unwrap_or_else(|| Reply::json(serde_json::from_str(&response(&request.json()["id"], "moved")).unwrap()))
    })
    .await;
    *elsewhere.lock().unwrap() = server.url.replace("127.0.0.1", "localhost").replace("/mcp", "/moved");
    let running = ready(&server).await;
    let answer = running.connection.request("tools/call", Some(r#"{"name":"here"}"#)).await.expect("followed");
    assert!(answer.text().contains("moved"));
    let error = running.connection.request("tools/call", Some(r#"{"name":"away"}"#)).await.expect_err("not followed");
    assert!(error.to_string().ends_with("answered 307 Temporary Redirect"), "{error}");
    assert!(!server.seen().iter().any(|r| r.header("host").is_some_and(|host| host.starts_with("localhost"))));
}

/// POSTs go on one kept-alive connection, with the configured headers. When
/// the server drops that connection while it is idle (no header says so), the
/// next POST opens another and is answered; no call fails.
#[tokio::test]
async fn posts_reuse_a_kept_alive_connection_and_survive_its_closing() {
    let server = Server::keep_alive(|request, _| {
        if let Some(reply) = handshake(request, "s1") {
            return reply;
        }
        if request.rpc().starts_with("notifications/") {
            return Reply::status(202);
        }
        let params = request.json()["params"].clone();
        let reply = Reply::json(serde_json::from_str(&response(&request.json()["id"], "ok")).unwrap());
        if params["name"] == "last" { reply.then_close() } else { reply }
    })
    .await;
    let running = ready(&server).await;
    for _ in 0..20 {
        let answer = running.connection.request("tools/call", Some(r#"{"name":"again"}"#)).await.expect("answered");
        assert!(answer.text().contains("ok"));
    }
    let calls = |name: &str| -> Vec<Request> {
        server.seen().into_iter().filter(|r| r.rpc() == "tools/call" && r.json()["params"]["name"] == name).collect()
    };
    let again = calls("again");
    assert_eq!(again.len(), 20);
    assert!(again.iter().all(|r| r.connection == again[0].connection), "one connection for all: {again:?}");
    assert!(again.iter().all(|r| r.header("x-team") == Some("blue")), "the configured header on each POST");

    // A notification is answered 202 with no body, which nobody reads: its
    // connection goes back to the pool all the same.
    running.connection.send(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#.into()).unwrap();
    let notified = server.wait_for("the notification", |r| r.rpc() == "notifications/roots/list_changed").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    running.connection.request("tools/call", Some(r#"{"name":"next"}"#)).await.expect("answered");
    assert_eq!(calls("next")[0].connection, notified.connection, "the notification's connection, reused");

    running.connection.request("tools/call", Some(r#"{"name":"last"}"#)).await.expect("answered");
    // The server has closed the connection, and the client has seen it go.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let answer = running.connection.request("tools/call", Some(r#"{"name":"after"}"#)).await.expect("answered");
    assert!(answer.text().contains("ok"));
    let after = calls("after");
    assert_eq!(after.len(), 1, "sent once");
    assert_ne!(after[0].connection, again[0].connection, "on a new connection");
}

/// A user name and password written in the URL go as Basic authorization
/// (percent-decoded), as reqwest sent them, on every POST.
#[tokio::test]
async fn credentials_in_the_url_are_sent_as_basic_authorization() {
    let server = Server::start(|request, _| {
        handshake(request, "s1")
            .unwrap_or_else(|| Reply::json(serde_json::from_str(&response(&request.json()["id"], "ok")).unwrap()))
    })
    .await;
    let url = server.url.replace("http://", "http://ann:s%40cret@");
    let (upstream, _events, _init) = start(&url);
    let connection = upstream.settled(Duration::from_secs(10)).await.expect("the upstream got ready");
    connection.request("tools/call", Some(r#"{"name":"x"}"#)).await.expect("answered");
    let posts: Vec<Request> = server.seen().into_iter().filter(|r| r.method == "POST").collect();
    assert!(posts.len() >= 3, "{posts:?}");
    // base64("ann:s@cret")
    assert!(posts.iter().all(|r| r.header("authorization") == Some("Basic YW5uOnNAY3JldA==")), "{posts:?}");
}
