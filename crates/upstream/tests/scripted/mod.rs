//! A scripted MCP server over real HTTP/1.1 on a loopback port, for the
//! situations a well-behaved server does not produce on demand: streams that
//! break before the answer, sessions that vanish. Each connection carries one
//! request and is closed after the answer (`Connection: close`), so an SSE
//! body ends exactly where the script ends it; or, started with
//! [`Server::keep_alive`], connections stay open for further requests until
//! a reply says to close ([`Reply::then_close`]).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use warden_upstream::{Event, EventKind, EventSink};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, `DELETE`.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    /// The body.
    pub body: String,
    /// Which connection it came on: 0 for the first accepted, and so on.
    pub connection: usize,
}

impl Request {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// The body as JSON (`null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the body.
    pub fn rpc(&self) -> String {
        self.json()["method"].as_str().unwrap_or_default().to_owned()
    }
}

/// What the script answers.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    /// On a kept-alive connection: close it after this reply, without
    /// saying so in a header (as a server dropping idle connections does).
    close: bool,
}

impl Reply {
    /// A bare status.
    pub fn status(status: u16) -> Reply {
        Reply { status, headers: Vec::new(), body: String::new(), close: false }
    }

    /// Closes a kept-alive connection after this reply.
    pub fn then_close(mut self) -> Reply {
        self.close = true;
        self
    }

    /// 200 with a JSON body.
    pub fn json(body: Value) -> Reply {
        Reply::status(200).header("content-type", "application/json").body(body.to_string())
    }

    /// 200 with an SSE body, written as it is.
    pub fn sse(events: &str) -> Reply {
        Reply::status(200).header("content-type", "text/event-stream").body(events.to_owned())
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the body.
    pub fn body_text(self, body: &str) -> Reply {
        self.body(body.to_owned())
    }

    fn body(mut self, body: String) -> Reply {
        self.body = body;
        self
    }
}

/// The answer to `initialize` request `request`, opening session `session`.
pub fn initialized(request: &Request, session: &str) -> Reply {
    let id = request.json()["id"].clone();
    Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "1"}
    }}))
    .header("mcp-session-id", session)
}

/// A scripted server and everything it received.
pub struct Server {
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    /// Serves `script`, called once per request with the request and how
    /// many requests came before it.
    pub async fn start(script: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        Server::serve(script, false).await
    }

    /// The same, keeping connections open for further requests.
    pub async fn keep_alive(script: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        Server::serve(script, true).await
    }

    async fn serve(script: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static, keep_alive: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let count = Arc::new(AtomicUsize::new(0));
        let recorded = seen.clone();
        tokio::spawn(async move {
            let mut connections = 0;
            while let Ok((stream, _)) = listener.accept().await {
                let (script, recorded, count) = (script.clone(), recorded.clone(), count.clone());
                let connection = connections;
                connections += 1;
                tokio::spawn(async move {
                    let mut stream = BufReader::new(stream);
                    while let Some(mut request) = read_request(&mut stream).await {
                        request.connection = connection;
                        let reply = script(&request, count.fetch_add(1, Ordering::SeqCst));
                        recorded.lock().unwrap().push(request);
                        let _ = stream.get_mut().write_all(encode(&reply, keep_alive).as_bytes()).await;
                        if !keep_alive || reply.close {
                            break;
                        }
                    }
                    let _ = stream.get_mut().shutdown().await;
                });
            }
        });
        Server { url, seen }
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until a request matches `wanted`, and returns it.
    pub async fn wait_for(&self, what: &str, wanted: impl Fn(&Request) -> bool) -> Request {
        for _ in 0..500 {
            if let Some(request) = self.seen().into_iter().find(&wanted) {
                return request;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the server never received {what}; it received {:#?}", self.seen())
    }
}

async fn read_request(stream: &mut BufReader<tokio::net::TcpStream>) -> Option<Request> {
    let mut line = String::new();
    stream.read_line(&mut line).await.ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).await.ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    let length: usize = headers.get("content-length").and_then(|length| length.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.ok()?;
    Some(Request { method, path, headers, body: String::from_utf8(body).ok()?, connection: 0 })
}

fn encode(reply: &Reply, keep_alive: bool) -> String {
    let mut text = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    if !keep_alive {
        text.push_str("connection: close\r\n");
    }
    for (name, value) in &reply.headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    let streaming = reply.headers.iter().any(|(_, value)| value == "text/event-stream");
    if !streaming {
        // An SSE body runs until the connection closes.
        text.push_str(&format!("content-length: {}\r\n", reply.body.len()));
    }
    text.push_str("\r\n");
    text.push_str(&reply.body);
    text
}

/// Collects an upstream's events.
pub struct Events(pub mpsc::UnboundedSender<Event>);

impl EventSink for Events {
    fn deliver(&self, event: Event) {
        let _ = self.0.send(event);
    }
}

/// Waits for the next event that `wanted` accepts, dropping others.
pub async fn next_event(events: &mut mpsc::UnboundedReceiver<Event>, wanted: impl Fn(&EventKind) -> bool) -> Event {
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = events.recv().await {
            if wanted(&event.kind) {
                return event;
            }
        }
        panic!("the upstream's events ended")
    });
    found.await.expect("no such event within 10 s")
}
