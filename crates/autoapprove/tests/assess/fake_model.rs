//! A scripted fake model API: a real HTTP server on 127.0.0.1 that serves
//! `/v1/messages` and `/v1/chat/completions`, answers each request with the
//! next queued reply, and records every request it gets.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use futures_util::stream;
use serde_json::{Value, json};
use warden_autoapprove::Api;

/// One canned reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    /// How long to wait before answering at all.
    pub delay: Duration,
    /// Send the status and the first half of the body, then nothing more.
    pub stall_body: bool,
}

impl Reply {
    /// A 200 with `body`.
    pub fn ok(body: Value) -> Reply {
        Reply { status: 200, body: body.to_string(), delay: Duration::ZERO, stall_body: false }
    }

    /// An error status with `body`.
    pub fn status(status: u16, body: Value) -> Reply {
        Reply { status, body: body.to_string(), delay: Duration::ZERO, stall_body: false }
    }

    /// The model calling `record_decision` with `decision` and `reasoning`,
    /// as `api` answers.
    pub fn decision(api: Api, decision: &str, reasoning: &str) -> Reply {
        Reply::tool_call(api, json!({ "decision": decision, "reasoning": reasoning }))
    }

    /// The model calling `record_decision` with `arguments`, as `api` answers.
    pub fn tool_call(api: Api, arguments: Value) -> Reply {
        Reply::ok(match api {
            Api::Anthropic => json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "test-model",
                "content": [{ "type": "tool_use", "id": "toolu_1", "name": "record_decision", "input": arguments }],
                "stop_reason": "tool_use",
                "usage": { "input_tokens": 900, "output_tokens": 40 },
            }),
            Api::OpenAi => json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
                "choices": [{
                    "index": 0,
                    "message": { "role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_1", "type": "function",
                        "function": { "name": "record_decision", "arguments": arguments.to_string() },
                    }]},
                    "finish_reason": "stop",
                }],
            }),
        })
    }

    /// The model answering in plain text, calling no tool.
    pub fn text(api: Api, text: &str) -> Reply {
        Reply::ok(match api {
            Api::Anthropic => json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{ "type": "text", "text": text }], "stop_reason": "end_turn",
            }),
            Api::OpenAi => json!({
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
            }),
        })
    }

    /// This reply, `delay` later.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// This reply, its body never finished.
    pub fn stalled(mut self) -> Reply {
        self.stall_body = true;
        self
    }
}

/// One request the fake got.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub raw: Bytes,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Reply>>,
    seen: Mutex<Vec<Seen>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

/// The running fake; it stops when dropped.
pub struct FakeModel {
    /// `http://127.0.0.1:PORT`, without `/v1`.
    pub base_url: String,
    script: Arc<Script>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeModel {
    /// Starts a fake that answers with `replies`, in order (a 500 when they
    /// have run out).
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> FakeModel {
        let script = Arc::new(Script::default());
        script.replies.lock().unwrap().extend(replies);
        let router = Router::new()
            .route("/v1/messages", post(answer))
            .route("/v1/chat/completions", post(answer))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the fake model");
        let base_url = format!("http://{}", listener.local_addr().expect("fake model address"));
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.expect("serve the fake model");
        });
        FakeModel { base_url, script, server }
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.script.seen.lock().unwrap().clone()
    }

    /// The most requests that were ever being answered at once.
    pub fn most_in_flight(&self) -> usize {
        self.script.most_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn answer(State(script): State<Arc<Script>>, uri: Uri, headers: HeaderMap, raw: Bytes) -> Response {
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    script.seen.lock().unwrap().push(Seen { path: uri.path().to_owned(), headers, raw, body });
    let now = script.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    script.most_in_flight.fetch_max(now, Ordering::SeqCst);
    let reply = script.replies.lock().unwrap().pop_front();
    let reply = reply.unwrap_or_else(|| Reply::status(500, json!({ "error": { "type": "no_reply_queued" } })));
    tokio::time::sleep(reply.delay).await;
    script.in_flight.fetch_sub(1, Ordering::SeqCst);

    let body = if reply.stall_body {
        let half = Bytes::from(reply.body[..reply.body.len() / 2].to_owned());
        let first = stream::once(async move { Ok::<_, Infallible>(half) });
        Body::from_stream(futures_util::StreamExt::chain(first, stream::pending()))
    } else {
        Body::from(reply.body)
    };
    Response::builder()
        .status(StatusCode::from_u16(reply.status).expect("a valid status"))
        .header("content-type", "application/json")
        .body(body)
        .expect("a valid response")
}
