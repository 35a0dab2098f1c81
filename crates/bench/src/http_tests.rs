//! The HTTP client against a scripted Streamable HTTP server in the same
//! process: JSON and event-stream answers, sessions, and connections the
//! server closes.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::net::TcpListener;

use crate::caller::Caller;
use crate::http::HttpSessions;

/// How the scripted server answers requests.
#[derive(Clone, Copy)]
struct Script {
    /// Answer with an event stream (a priming event, a notification, a
    /// server request, then the response) instead of a JSON body.
    stream: bool,
    /// Close the connection after every answer.
    close: bool,
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    /// Calls per session id.
    calls: HashMap<String, u64>,
    /// Sessions opened, and deleted.
    opened: u64,
    deleted: Vec<String>,
    /// Requests without the protocol header after initialize.
    missing_version: u64,
}

async fn answer(script: Script, seen: Arc<Mutex<Seen>>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let session = request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let has_version = request.headers().contains_key("mcp-protocol-version");
    if request.method() == Method::DELETE {
        seen.lock().expect("lock").deleted.extend(session);
        return Response::new(Full::new(Bytes::new()));
    }
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let Some(id) = message.get("id").cloned() else {
        return with_status(StatusCode::ACCEPTED, Full::new(Bytes::new()));
    };
    let mut fresh = None;
    let result = match message["method"].as_str() {
        Some("initialize") => {
            let mut seen = seen.lock().expect("lock");
            seen.opened += 1;
            fresh = Some(format!("session-{}", seen.opened));
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s"}})
        }
        Some("tools/list") => serde_json::json!({"tools": [{"name": "srv__echo"}]}),
        _ => {
            let mut seen = seen.lock().expect("lock");
            *seen.calls.entry(session.clone().unwrap_or_default()).or_default() += 1;
            seen.missing_version += u64::from(!has_version);
            serde_json::json!({"content": [{"type": "text", "text": message["params"]["arguments"]["text"]}]})
        }
    };
    let response = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let (kind, text) = if script.stream {
        let events = format!(
            "id: 0\ndata:\n\n: keep-alive\n\nevent: message\ndata: {}\n\ndata: {}\r\n\r\ndata: {response}\n\n",
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":99,"method":"roots/list"}"#,
        );
        ("text/event-stream", events)
    } else {
        ("application/json", response)
    };
    let mut answer = Response::builder().header("content-type", kind);
    if let Some(id) = fresh.or(session) {
        answer = answer.header("mcp-session-id", id);
    }
    if script.close {
        answer = answer.header("connection", "close");
    }
    answer.body(Full::new(Bytes::from(text))).expect("response")
}

fn with_status(status: StatusCode, body: Full<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

/// Starts the scripted server; returns its URL and what it sees.
async fn serve(script: Script) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let state = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = Arc::clone(&state);
            let service = service_fn(move |request| {
                let seen = Arc::clone(&seen);
                async move { Ok::<_, Infallible>(answer(script, seen, request).await) }
            });
            tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    (url, seen)
}

/// Opens `sessions` sessions on `slots` connections, makes `calls` calls on
/// each slot, closes the sessions; returns how often connections were reopened.
async fn exercise(url: &str, sessions: u64, slots: u64, calls: u64) -> u64 {
    let (opened, mut callers) =
        HttpSessions::open(url, sessions, slots, Duration::from_secs(5), false).await.expect("sessions open");
    let params = RawValue::from_string(r#"{"name":"srv__echo","arguments":{"text":"hi"}}"#.into()).expect("raw");
    for caller in &mut callers {
        for _ in 0..calls {
            let done = caller.request("tools/call", &params).await.expect("call answered");
            let result = done.outcome.expect("call succeeded");
            assert_eq!(result.get(), r#"{"content":[{"text":"hi","type":"text"}]}"#);
        }
    }
    let reopened = callers.iter().map(|caller| caller.reopened()).sum();
    opened.close(&mut callers[0]).await;
    reopened
}

#[tokio::test(flavor = "current_thread")]
async fn json_answers_on_one_session() {
    let (url, seen) = serve(Script { stream: false, close: false }).await;
    assert_eq!(exercise(&url, 1, 4, 3).await, 0);
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.opened, 1);
    assert_eq!(seen.calls.get("session-1"), Some(&12));
    assert_eq!(seen.missing_version, 0);
    assert_eq!(seen.deleted, ["session-1"]);
}

#[tokio::test(flavor = "current_thread")]
async fn event_stream_answers_spread_over_sessions() {
    let (url, seen) = serve(Script { stream: true, close: false }).await;
    assert_eq!(exercise(&url, 3, 6, 2).await, 0);
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.opened, 3);
    // Slot i calls on session i % 3: two slots of two calls each per session.
    for session in ["session-1", "session-2", "session-3"] {
        assert_eq!(seen.calls.get(session), Some(&4), "{session}");
    }
    assert_eq!(seen.deleted.len(), 3);
}

#[tokio::test(flavor = "current_thread")]
async fn closed_connections_are_reopened() {
    let (url, seen) = serve(Script { stream: true, close: true }).await;
    assert!(exercise(&url, 1, 2, 3).await >= 4);
    assert_eq!(seen.lock().expect("lock").calls.get("session-1"), Some(&6));
}

#[tokio::test(flavor = "current_thread")]
async fn sessions_need_slots() {
    let (url, _) = serve(Script { stream: false, close: false }).await;
    assert!(HttpSessions::open(&url, 3, 2, Duration::from_secs(1), false).await.is_err());
}
