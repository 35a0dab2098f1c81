//! A real MCP client for end-to-end tests: it starts the `warden` binary,
//! speaks newline-delimited JSON-RPC on its stdio, and keeps every message.

#![allow(dead_code)]

pub mod approvals;
pub mod browser;
pub mod http;
pub mod metrics;
pub mod servers;
pub mod tls;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single expectation may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The warden binary under test.
pub fn warden_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_warden"))
}

/// The fixture server, built beside warden by `cargo test --workspace`.
pub fn fixture_bin() -> String {
    let path = warden_bin().with_file_name("warden-fixture");
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p warden-fixture` (or `cargo test --workspace`)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// Runs `warden` with `args` to the end (no input): whether it succeeded,
/// its stdout and its stderr.
pub fn run_warden(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(warden_bin()).args(args).stdin(Stdio::null()).output().expect("run warden");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A unique scratch directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(sweep_scratch_dirs);
    let dir = std::env::temp_dir().join(format!(
        "warden-test-{}-{}-{name}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Removes the scratch directories of test processes that are gone: tests
/// keep theirs (a failure leaves something to look at), so without this
/// every run would leave its directories in the temporary directory, where
/// thousands of them once crowded a sandbox's allowed paths.
fn sweep_scratch_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_prefix("warden-test-"))
            .and_then(|rest| rest.split('-').next().and_then(|pid| pid.parse::<u32>().ok()));
        if let Some(pid) = pid
            && pid != std::process::id()
            && !alive(pid)
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A FUSE filesystem that never answers, as a network mount that hangs: a
/// `stat` under it blocks until it is dropped (then it fails). Mounted by
/// a Python helper (root with `/dev/fuse`, as on CI); `None` where this
/// machine cannot mount one.
pub struct HungMount {
    helper: std::process::Child,
    /// Where it is mounted.
    pub path: std::path::PathBuf,
}

impl HungMount {
    const HELPER: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL("libc.so.6", use_errno=True)
fd = os.open("/dev/fuse", os.O_RDWR)
options = f"fd={fd},rootmode=40000,user_id=0,group_id=0".encode()
if libc.mount(b"warden-hung", sys.argv[1].encode(), b"fuse", 0, options) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
print("mounted", flush=True)
sys.stdin.read()
os.close(fd)
libc.umount2(sys.argv[1].encode(), 2)
"#;

    /// Mounts one, or says why it cannot.
    pub fn mount() -> Option<HungMount> {
        use std::io::BufRead;
        let path = scratch_dir("hung-mount").join("mnt");
        std::fs::create_dir_all(&path).expect("the mount point");
        let mut helper = std::process::Command::new("python3")
            .arg("-c")
            .arg(Self::HELPER)
            .arg(&path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        let mut line = String::new();
        let stdout = helper.stdout.take()?;
        std::io::BufReader::new(stdout).read_line(&mut line).ok()?;
        if line.trim() != "mounted" {
            let _ = helper.kill();
            let output = helper.wait_with_output().ok()?;
            eprintln!("skipped: cannot mount a FUSE filesystem here: {}", String::from_utf8_lossy(&output.stderr));
            return None;
        }
        Some(HungMount { helper, path })
    }
}

impl Drop for HungMount {
    fn drop(&mut self) {
        // Its stdin closed, the helper closes the connection (what was
        // blocked fails) and unmounts.
        drop(self.helper.stdin.take());
        let _ = self.helper.wait();
    }
}

/// Whether a thread of process `pid` waits on a FUSE filesystem's answer
/// (the kernel names where each thread sleeps in `wchan`).
pub fn waits_on_fuse(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks
        .flatten()
        .any(|task| std::fs::read_to_string(task.path().join("wchan")).is_ok_and(|wchan| wchan.starts_with("fuse")))
}

/// One message from warden: its exact text and its parsed value.
#[derive(Debug, Clone)]
pub struct Message {
    pub raw: String,
    pub value: Value,
}

impl std::ops::Index<&str> for Message {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        &self.value[key]
    }
}

/// A client connected to a running warden.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Message>,
    backlog: VecDeque<Message>,
    not_json: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
}

impl Client {
    /// `warden serve` with `config` (YAML) written to a scratch file.
    pub fn serve(config: &str) -> Client {
        let dir = scratch_dir("serve");
        let path = dir.join("warden.yaml");
        std::fs::write(&path, config).expect("write config");
        Client::start(&["serve", "--config", path.to_str().expect("utf-8 path")], &[])
    }

    /// Starts warden with `args` and extra environment variables.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Client {
        Client::start_under(&[], args, env)
    }

    /// Starts warden through `wrapper` (a program and its arguments, warden's
    /// path and `args` appended; e.g. `unshare -n` for a network namespace).
    pub fn start_under(wrapper: &[&str], args: &[&str], env: &[(&str, &str)]) -> Client {
        let warden = warden_bin();
        let mut command = match wrapper {
            [program, rest @ ..] => {
                let mut command = Command::new(program);
                command.args(rest).arg(&warden);
                command
            }
            [] => Command::new(&warden),
        };
        let mut child = command
            .args(args)
            .envs(env.iter().copied())
            .env("WARDEN_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start warden");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (sender, incoming) = channel();
        let not_json = Arc::new(Mutex::new(Vec::new()));
        let bad = not_json.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                match serde_json::from_str::<Value>(&line) {
                    Ok(value) => {
                        if sender.send(Message { raw: line, value }).is_err() {
                            return;
                        }
                    }
                    Err(_) => bad.lock().unwrap().push(line),
                }
            }
        });
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                let mut sink = sink.lock().unwrap();
                sink.push_str(&line);
                sink.push('\n');
            }
        });
        let stdin = child.stdin.take();
        Client { child, stdin, incoming, backlog: VecDeque::new(), not_json, stderr: log, next_id: 1 }
    }

    /// `serve` and `initialize`.
    pub fn serve_initialized(config: &str) -> Client {
        let mut client = Client::serve(config);
        client.initialize();
        client
    }

    /// Sends one raw line.
    pub fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).expect("write to warden");
        stdin.write_all(b"\n").expect("write to warden");
        stdin.flush().expect("flush");
    }

    /// Sends `bytes` as they are, in one write (a line may end in the
    /// middle of them, or not at all).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to warden");
        stdin.flush().expect("flush");
    }

    /// Sends a JSON value as one line.
    pub fn send(&mut self, value: Value) {
        self.send_raw(&value.to_string());
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its response (other messages are kept).
    pub fn request(&mut self, method: &str, params: Value) -> Message {
        let id = self.send_request(method, params);
        self.response(&id)
    }

    /// Waits for the response to `id`.
    pub fn response(&mut self, id: &Value) -> Message {
        let id = id.clone();
        self.wait_for(&format!("the response to id {id}"), move |m| m["id"] == id && m.value.get("method").is_none())
    }

    /// A tools/call that must succeed; returns its result.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(response.value.get("result").is_some(), "tools/call {name} failed: {}", response.raw);
        response["result"].clone()
    }

    /// The text of a tools/call that must succeed.
    pub fn call_text(&mut self, name: &str, arguments: Value) -> String {
        let result = self.call_tool(name, arguments);
        result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
    }

    /// `initialize` and `notifications/initialized`, with sampling,
    /// elicitation and roots capabilities.
    pub fn initialize(&mut self) -> Message {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}},
                "clientInfo": {"name": "warden-tests", "version": "1.0.0"}
            }),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }

    /// Waits for the first message (kept or new) that `matches`, and removes it.
    pub fn wait_for(&mut self, what: &str, matches: impl Fn(&Message) -> bool) -> Message {
        if let Some(at) = self.backlog.iter().position(&matches) {
            return self.backlog.remove(at).expect("position is valid");
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(message) if matches(&message) => return message,
                Ok(message) => self.backlog.push_back(message),
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "timed out waiting for {what}; kept messages: {:#?}\nwarden stderr:\n{}",
                        self.backlog,
                        self.stderr()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("warden closed stdout while waiting for {what}\nwarden stderr:\n{}", self.stderr())
                }
            }
        }
    }

    /// Waits for a notification or request with `method`.
    pub fn wait_method(&mut self, method: &str) -> Message {
        let wanted = method.to_owned();
        self.wait_for(method, move |m| m["method"] == wanted.as_str())
    }

    /// Messages that arrive within `period`, without waiting longer.
    pub fn drain(&mut self, period: Duration) -> Vec<Message> {
        let deadline = Instant::now() + period;
        let mut all: Vec<Message> = self.backlog.drain(..).collect();
        while let Ok(message) = self.incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            all.push(message);
        }
        all
    }

    /// Polls tools/list until `name` is listed.
    pub fn wait_for_tool(&mut self, name: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let list = self.request("tools/list", json!({}));
            if let Some(tool) =
                list["result"]["tools"].as_array().and_then(|tools| tools.iter().find(|t| t["name"] == name))
            {
                return tool.clone();
            }
            assert!(Instant::now() < deadline, "tool {name} never appeared; last list: {}", list.raw);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The names in tools/list.
    pub fn tool_names(&mut self) -> Vec<String> {
        let list = self.request("tools/list", json!({}));
        list["result"]["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    }

    /// Everything warden wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until warden's stderr contains `text`.
    pub fn wait_stderr(&self, text: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.stderr().contains(text) {
            assert!(Instant::now() < deadline, "stderr never said {text:?}:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes warden's stdin and waits for it to exit.
    pub fn close(&mut self) -> std::process::ExitStatus {
        self.stdin.take();
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "warden did not exit after stdin closed");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id of warden.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            let bad = self.not_json.lock().unwrap();
            assert!(bad.is_empty(), "warden wrote non-JSON on stdout: {bad:?}");
        }
    }
}

/// A config with one fixture server per `(name, extra args)`.
/// The records of a JSON-lines audit log that Warden may still be writing.
///
/// Only complete lines count: a reader can catch the writer between the
/// bytes of a record and its newline, and that unfinished tail is not a
/// record yet.
pub fn audit_records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("audit line is JSON ({error}): {line}")))
        .collect()
}

/// Waits until the audit log at `path` holds records that `ready` accepts,
/// and returns them.
pub fn wait_for_audit(path: &Path, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let records = audit_records(path);
        if ready(&records) {
            return records;
        }
        assert!(Instant::now() < deadline, "the audit log never got there: {records:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn fixtures(servers: &[(&str, &[&str])], extra: &str) -> String {
    let fixture = fixture_bin();
    let mut config = String::from("servers:\n");
    for (name, args) in servers {
        let args: Vec<String> = args.iter().map(|arg| format!("{arg:?}")).collect();
        config.push_str(&format!(
            "  {name}:\n    transport: {{kind: stdio, command: {fixture:?}, args: [{}]}}\n",
            args.join(", ")
        ));
    }
    config.push_str(extra);
    config
}

/// The `requests` count in the text of the fixture's `stats` tool: every
/// request the fixture has read, the `stats` call itself included.
pub fn fixture_requests(stats: &str) -> u64 {
    let stats: serde_json::Value = serde_json::from_str(stats).expect("the fixture's stats");
    stats["requests"].as_u64().expect("a request count")
}

/// Waits until `calls` requests sent after a fixture counted `before` have
/// reached it, asking with `count` (its `stats`, see [`fixture_requests`]):
/// each asking is a request too, so the count must cover those as well.
pub fn wait_for_fixture_requests(before: u64, calls: u64, mut count: impl FnMut() -> u64) {
    let mut asked = 0;
    retry("the calls to reach the fixture", || {
        asked += 1;
        (count() >= before + asked + calls).then_some(())
    });
}

/// Tries `attempt` until it gives a value, up to the patience.
pub fn retry<T>(what: &str, mut attempt: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = attempt() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a process is still alive.
pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).map(|stat| !stat.contains(") Z ")).unwrap_or(false)
}

/// The times `pid`'s threads blocked (voluntary context switches): all of
/// them, or only those named `thread`.
pub fn blocked(pid: u32, thread: Option<&str>) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("list the threads");
    let counts: Vec<u64> = tasks
        .flatten()
        .filter(|task| {
            thread
                .is_none_or(|name| std::fs::read_to_string(task.path().join("comm")).unwrap_or_default().trim() == name)
        })
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .filter_map(|status| {
            let line = status.lines().find(|line| line.starts_with("voluntary_ctxt_switches:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .collect();
    assert!(!counts.is_empty(), "process {pid} has no thread named {thread:?}");
    counts.iter().sum()
}
