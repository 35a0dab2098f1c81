//! A real MCP client over Streamable HTTP for end-to-end tests: it starts
//! `warden serve --http`, and speaks raw HTTP/1.1 on std TCP sockets, so a
//! test controls every header and can drop a stream mid-way.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{PATIENCE, scratch_dir, warden_bin};

/// A `warden serve --http` process on a free loopback port.
pub struct HttpWarden {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The port it listens on.
    pub port: u16,
    /// Its configuration file (rewrite it to test reloading).
    pub config_path: std::path::PathBuf,
    stderr: Arc<Mutex<String>>,
}

impl HttpWarden {
    /// Starts warden with `config` (YAML) on 127.0.0.1:0 and waits until it listens.
    pub fn start(config: &str) -> HttpWarden {
        HttpWarden::start_on(config, 0)
    }

    /// Starts warden with `config` on 127.0.0.1:`port` (0: any free port).
    pub fn start_on(config: &str, port: u16) -> HttpWarden {
        HttpWarden::start_with(config, &["--http", &format!("127.0.0.1:{port}")], &[("WARDEN_LOG", "info")])
    }

    /// Starts warden with `config` on a free loopback port, its runtime
    /// given `workers` worker threads (`TOKIO_WORKER_THREADS`: 1 makes it
    /// single-threaded, as on one or two cores), and waits until its log
    /// says it has them.
    pub fn start_with_workers(config: &str, workers: usize) -> HttpWarden {
        let workers_text = workers.to_string();
        let env = [("WARDEN_LOG", "info"), ("TOKIO_WORKER_THREADS", workers_text.as_str())];
        let warden = HttpWarden::start_with(config, &["--http", "127.0.0.1:0"], &env);
        let threads = if workers == 1 { "threads=one".to_owned() } else { format!("threads={workers} workers") };
        eventually("the log to name the runtime's threads", || warden.stderr().contains(&threads));
        warden
    }

    /// Starts warden with `config` and these arguments after `serve --config F`.
    pub fn start_with(config: &str, args: &[&str], env: &[(&str, &str)]) -> HttpWarden {
        HttpWarden::start_wrapped(&[], config, args, env)
    }

    /// The same, run by `wrapper` (a command that execs its arguments, such
    /// as `prlimit --nofile=256`), so its pid is warden's.
    pub fn start_wrapped(wrapper: &[&str], config: &str, args: &[&str], env: &[(&str, &str)]) -> HttpWarden {
        let dir = scratch_dir("http");
        let path = dir.join("warden.yaml");
        std::fs::write(&path, config).expect("write config");
        let mut command = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut command = Command::new(program);
                command.args(rest).arg(warden_bin());
                command
            }
            None => Command::new(warden_bin()),
        };
        command.arg("serve").arg("--config").arg(&path).args(args);
        command.envs(env.iter().copied()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("start warden");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, addr) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().expect("stderr");
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let _ = found.send(rest.trim_end_matches("/mcp").to_owned());
                }
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let addr = addr
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("warden did not start listening; stderr:\n{}", stderr.lock().unwrap()));
        let port = addr.rsplit(':').next().and_then(|port| port.parse().ok()).expect("a port");
        HttpWarden { child, addr, port, config_path: path, stderr }
    }

    /// `http://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Kills it at once (its upstreams die with it).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Everything warden wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Warden's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A client of the hub at `/mcp`.
    pub fn client(&self) -> McpHttp {
        McpHttp::new(&self.addr, "/mcp")
    }

    /// Stops warden with SIGTERM and waits for it.
    pub fn stop(&mut self) {
        unsafe_kill(self.child.id(), "TERM");
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
    }
}

impl Drop for HttpWarden {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unsafe_kill(pid: u32, signal: &str) {
    let _ = Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
}

/// One HTTP response, its body not yet read.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    length: Option<usize>,
    /// Decoded body bytes read but not yet consumed as lines.
    pending: Vec<u8>,
    chunk_left: usize,
    done: bool,
}

impl Response {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// Whether the body is an event stream.
    pub fn is_sse(&self) -> bool {
        self.header("content-type").is_some_and(|kind| kind.starts_with("text/event-stream"))
    }

    /// The whole body.
    pub fn body(mut self) -> String {
        let mut all = std::mem::take(&mut self.pending);
        while let Some(chunk) = self.read_more() {
            all.extend_from_slice(&chunk);
        }
        String::from_utf8(all).expect("utf-8 body")
    }

    /// The body as JSON.
    pub fn json(self) -> Value {
        let body = self.body();
        serde_json::from_str(&body).unwrap_or_else(|err| panic!("not JSON ({err}): {body}"))
    }

    /// The next SSE event with data (id, data), or `None` when the stream ends.
    /// Comments and events without data (priming) are skipped.
    /// Panics after the patience: keep-alive comments must not hide a hang.
    pub fn next_event(&mut self) -> Option<(Option<String>, String)> {
        let (mut id, mut data) = (None, Vec::<String>::new());
        let deadline = Instant::now() + PATIENCE;
        loop {
            assert!(Instant::now() < deadline, "no event within {PATIENCE:?}");
            let line = self.next_line()?;
            if line.is_empty() {
                if data.iter().any(|line| !line.is_empty()) {
                    return Some((id, data.join("\n")));
                }
                data.clear();
                continue;
            }
            if let Some(value) = line.strip_prefix("id:") {
                id = Some(value.trim_start().to_owned());
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push(value.strip_prefix(' ').unwrap_or(value).to_owned());
            }
        }
    }

    /// The next message on an event stream, as JSON.
    pub fn next_message(&mut self) -> Option<(Option<String>, Value)> {
        let (id, data) = self.next_event()?;
        Some((id, serde_json::from_str(&data).unwrap_or_else(|err| panic!("bad event data ({err}): {data}"))))
    }

    fn next_line(&mut self) -> Option<String> {
        loop {
            if let Some(at) = self.pending.iter().position(|byte| *byte == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=at).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Some(String::from_utf8(line).expect("utf-8 line"));
            }
            let chunk = self.read_more()?;
            self.pending.extend_from_slice(&chunk);
        }
    }

    /// More decoded body bytes, or `None` at the end.
    fn read_more(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        if self.chunked {
            if self.chunk_left == 0 {
                let mut size = String::new();
                self.reader.read_line(&mut size).ok()?;
                if size.trim().is_empty() {
                    size.clear();
                    self.reader.read_line(&mut size).ok()?;
                }
                let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
                if size == 0 {
                    // The blank line after the last chunk: a kept-alive
                    // connection's next response starts after it.
                    let mut end = String::new();
                    let _ = self.reader.read_line(&mut end);
                    self.done = true;
                    return None;
                }
                self.chunk_left = size;
            }
            let mut buf = vec![0; self.chunk_left];
            let read = self.reader.read(&mut buf).ok()?;
            if read == 0 {
                self.done = true;
                return None;
            }
            buf.truncate(read);
            self.chunk_left -= read;
            if self.chunk_left == 0 {
                let mut crlf = String::new();
                let _ = self.reader.read_line(&mut crlf);
            }
            return Some(buf);
        }
        let want = match self.length {
            Some(0) => {
                self.done = true;
                return None;
            }
            Some(left) => left.min(64 * 1024),
            None => 64 * 1024,
        };
        let mut buf = vec![0; want];
        let read = self.reader.read(&mut buf).ok()?;
        if read == 0 {
            self.done = true;
            return None;
        }
        buf.truncate(read);
        if let Some(left) = &mut self.length {
            *left -= read;
        }
        Some(buf)
    }
}

/// Sends one HTTP request on a new connection and reads the status and headers.
pub fn send(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let stream = TcpStream::connect(addr).unwrap_or_else(|err| panic!("connect {addr}: {err}"));
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    write_request(&stream, addr, &format!("{method} {path}"), headers, body, "close");
    read_response(stream)
}

/// Writes a request (`line`: method and path) on `stream`, with
/// `Connection: connection`.
fn write_request(stream: &TcpStream, addr: &str, line: &str, headers: &[(&str, &str)], body: &[u8], connection: &str) {
    let mut request = format!("{line} HTTP/1.1\r\nconnection: {connection}\r\ncontent-length: {}\r\n", body.len());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut writer = stream;
    writer.write_all(request.as_bytes()).expect("write request");
    // The server may answer (413) before reading everything.
    let _ = writer.write_all(body);
}

/// Reads a response's status and headers from `stream`.
fn read_response(stream: TcpStream) -> Response {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status = status_line.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let chunked = headers.iter().any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let length = headers.iter().find(|(name, _)| name == "content-length").and_then(|(_, value)| value.parse().ok());
    Response { status, headers, reader, chunked, length, pending: Vec::new(), chunk_left: 0, done: false }
}

/// An MCP client of one Streamable HTTP endpoint.
pub struct McpHttp {
    /// `host:port`.
    pub addr: String,
    /// The endpoint path.
    pub path: String,
    /// The session, once initialized.
    pub session: Option<String>,
    /// Extra headers for every request (a token, a profile).
    pub headers: Vec<(String, String)>,
    next_id: u64,
}

impl McpHttp {
    /// A client of `path` on `addr`.
    pub fn new(addr: &str, path: &str) -> McpHttp {
        McpHttp { addr: addr.to_owned(), path: path.to_owned(), session: None, headers: Vec::new(), next_id: 1 }
    }

    /// Adds a header sent with every request.
    pub fn with_header(mut self, name: &str, value: &str) -> McpHttp {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// POSTs a message as it is; the response unread.
    pub fn post_raw(&self, body: &str) -> Response {
        send(&self.addr, "POST", &self.path, &self.post_headers(), body.as_bytes())
    }

    /// The same on `stream`, a connection kept alive from one POST to the
    /// next; read each response to its end before the next POST.
    pub fn post_on(&self, stream: &TcpStream, body: &str) -> Response {
        let line = format!("POST {}", self.path);
        write_request(stream, &self.addr, &line, &self.post_headers(), body.as_bytes(), "keep-alive");
        read_response(stream.try_clone().expect("clone the connection"))
    }

    fn post_headers(&self) -> Vec<(&str, &str)> {
        let mut headers: Vec<(&str, &str)> =
            vec![("content-type", "application/json"), ("accept", "application/json, text/event-stream")];
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session));
        }
        headers.extend(self.headers.iter().map(|(name, value)| (name.as_str(), value.as_str())));
        headers
    }

    /// A GET on the endpoint with the session (and `Last-Event-ID` if given).
    pub fn get_stream(&self, last_event_id: Option<&str>) -> Response {
        let mut headers: Vec<(&str, &str)> = vec![("accept", "text/event-stream")];
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session));
        }
        if let Some(last) = last_event_id {
            headers.push(("last-event-id", last));
        }
        headers.extend(self.headers.iter().map(|(name, value)| (name.as_str(), value.as_str())));
        send(&self.addr, "GET", &self.path, &headers, b"")
    }

    /// DELETE the session.
    pub fn delete(&self) -> Response {
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session));
        }
        headers.extend(self.headers.iter().map(|(name, value)| (name.as_str(), value.as_str())));
        send(&self.addr, "DELETE", &self.path, &headers, b"")
    }

    /// Initializes (with sampling and elicitation capabilities) and sends
    /// `notifications/initialized`; returns the initialize result.
    pub fn initialize(&mut self) -> Value {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}},
            "clientInfo": {"name": "http-test", "version": "1"}
        });
        let response =
            self.post_raw(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).to_string());
        if response.status != 200 {
            let status = response.status;
            panic!("initialize failed: HTTP {status}: {}", response.body());
        }
        self.session = Some(response.header("mcp-session-id").expect("Mcp-Session-Id").to_owned());
        let answer = response.json();
        let accepted = self.post_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(accepted.status, 202);
        answer
    }

    /// Sends a request; the response unread (JSON or a stream).
    pub fn start_request(&mut self, method: &str, params: Value) -> (u64, Response) {
        let id = self.next_id;
        self.next_id += 1;
        (id, self.post_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()))
    }

    /// Sends a request and returns its response message, answering nothing
    /// else (messages on the stream before the response are returned too).
    pub fn request_all(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let (id, mut response) = self.start_request(method, params);
        assert_eq!(response.status, 200, "{method}: HTTP {}", response.status);
        if !response.is_sse() {
            return (response.json(), Vec::new());
        }
        let mut before = Vec::new();
        while let Some((_, message)) = response.next_message() {
            if message["id"] == json!(id) && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
        panic!("the stream of {method} ended without its response; got {before:?}");
    }

    /// A request's response message.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_all(method, params).0
    }

    /// Calls a tool and returns its result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        answer.get("result").cloned().unwrap_or_else(|| panic!("{name} failed: {answer}"))
    }

    /// The names of the tools listed.
    pub fn tool_names(&mut self) -> Vec<String> {
        let answer = self.request("tools/list", json!({}));
        answer["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list: {answer}"))
            .iter()
            .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// Processes whose parent is `pid`.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        // After the command in parentheses: state, then the parent's pid.
        let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if parent == Some(pid) {
            children.push(child);
        }
    }
    children
}

/// Live (not zombie) processes whose parent is `pid`.
pub fn live_children_of(pid: u32) -> usize {
    children_of(pid).into_iter().filter(|child| super::alive(*child)).count()
}

/// A process's resident memory, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// Waits until `done` holds, up to the patience.
pub fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Calls `tool` (which must echo `{"text":"hi"}`) as `client`, one call at
/// a time on one kept-alive connection to `warden`: 50 calls to warm up,
/// then 500 measured. Returns how many times Warden's threads blocked per
/// measured call.
pub fn blocks_per_call(warden: &HttpWarden, client: &McpHttp, tool: &str) -> f64 {
    let stream = TcpStream::connect(&warden.addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let call = |id: u32| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"text": "hi"}}});
        let answer = client.post_on(&stream, &request.to_string()).body();
        assert!(answer.contains(r#""text":"hi""#), "call {id} answered {answer}");
    };
    for id in 0..50 {
        call(id);
    }
    let calls = 500;
    let before = super::blocked(warden.pid(), None);
    for id in 0..calls {
        call(100 + id);
    }
    (super::blocked(warden.pid(), None) - before) as f64 / f64::from(calls)
}

/// A client of the HTTP+SSE transport (2024-11-05): its one stream (GET `/sse`)
/// and the endpoint it names for POSTs, with a bearer token.
pub struct HttpSseClient {
    addr: String,
    auth: String,
    endpoint: String,
    /// The stream: answers and everything else arrive here.
    pub events: Response,
}

impl HttpSseClient {
    /// Opens the stream with `auth` (an `Authorization` value).
    pub fn open(addr: &str, auth: &str) -> HttpSseClient {
        let mut events = send(addr, "GET", "/sse", &[("accept", "text/event-stream"), ("authorization", auth)], b"");
        assert_eq!(events.status, 200);
        let (_, endpoint) = events.next_event().expect("endpoint event");
        HttpSseClient { addr: addr.to_owned(), auth: auth.to_owned(), endpoint, events }
    }

    /// POSTs one message to the stream's endpoint; the response unread.
    pub fn post(&self, body: Value) -> Response {
        let headers = [("content-type", "application/json"), ("authorization", self.auth.as_str())];
        send(&self.addr, "POST", &self.endpoint, &headers, body.to_string().as_bytes())
    }

    /// The answer to request `id`, from the stream (what comes before it is skipped).
    pub fn answer(&mut self, id: u64) -> Value {
        loop {
            let (_, message) = self.events.next_message().expect("the stream");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `initialize` (2024-11-05, id 1, with `capabilities`) and `notifications/initialized`.
    pub fn initialize(&mut self, capabilities: Value) {
        let init = json!({"protocolVersion": "2024-11-05", "capabilities": capabilities, "clientInfo": {"name": "old", "version": "1"}});
        assert_eq!(self.post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})).status, 202);
        assert!(self.answer(1)["result"].is_object());
        assert_eq!(self.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).status, 202);
    }
}
