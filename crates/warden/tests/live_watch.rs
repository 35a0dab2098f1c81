//! Watching a server's code: a real Python MCP server in a scratch
//! directory, whose tools are read from its own source, is edited while a
//! client is connected.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use support::http::{HttpWarden, send};
use support::{Client, retry, scratch_dir};

/// A minimal MCP server. Its tools are the `# TOOL name text` lines of its
/// own source; it appends its pid to `$PIDS` when it starts, and refuses
/// every request before `initialize` (so a restart that forgot to replay
/// the client's `initialize` shows).
const SERVER: &str = r#"
import json, os, re, sys, time
SOURCE = open(__file__).read()
TOOLS = dict(re.findall(r"^# TOOL (\w+) (.*)$", SOURCE, re.M))
with open(os.environ["PIDS"], "a") as pids:
    pids.write(f"{os.getpid()}\n")
initialized = False

def answer(id, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": id}
    if error is None:
        message["result"] = result
    else:
        message["error"] = error
    print(json.dumps(message), flush=True)

for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        initialized = True
        version = message["params"]["protocolVersion"]
        answer(id, {"protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "live", "version": "1"}})
    elif not initialized:
        answer(id, error={"code": -32602, "message": "not initialized"})
    elif method == "tools/list":
        answer(id, {"tools": [{"name": name, "description": text, "inputSchema": {"type": "object"}}
                              for name, text in TOOLS.items()]})
    elif method == "tools/call":
        name = message["params"]["name"]
        seconds = message["params"].get("arguments", {}).get("seconds", 0)
        time.sleep(seconds)
        answer(id, {"content": [{"type": "text", "text": TOOLS.get(name, "unknown")}]})
    else:
        answer(id, error={"code": -32601, "message": method})
"#;

/// The server's source with these tools.
fn source(tools: &[(&str, &str)]) -> String {
    let lines: Vec<String> = tools.iter().map(|(name, text)| format!("# TOOL {name} {text}")).collect();
    format!("{}\n{SERVER}", lines.join("\n"))
}

/// A scratch project: `src/server.py` and a pid file outside `src`.
struct Project {
    src: PathBuf,
    pids: PathBuf,
}

impl Project {
    fn new(tools: &[(&str, &str)]) -> Project {
        let dir = scratch_dir("live-watch");
        let src = dir.join("src");
        std::fs::create_dir_all(&src).expect("src dir");
        let project = Project { src, pids: dir.join("pids.txt") };
        project.write(tools);
        project
    }

    fn write(&self, tools: &[(&str, &str)]) {
        std::fs::write(self.src.join("server.py"), source(tools)).expect("write server.py");
    }

    /// Saves the way many editors do: a new file renamed over the old one.
    fn write_by_rename(&self, tools: &[(&str, &str)]) {
        let temp = self.src.join(".server.py.tmp");
        std::fs::write(&temp, source(tools)).expect("write temp");
        std::fs::rename(&temp, self.src.join("server.py")).expect("rename");
    }

    /// How many times the server has started.
    fn starts(&self) -> usize {
        std::fs::read_to_string(&self.pids).map(|pids| pids.lines().count()).unwrap_or(0)
    }

    fn config(&self, debounce_ms: u64) -> String {
        self.config_with(debounce_ms, "supervision: {backoffInitialMs: 100, backoffMaxMs: 400}\n")
    }

    fn config_with(&self, debounce_ms: u64, supervision: &str) -> String {
        let src = self.src.to_str().expect("utf-8");
        let pids = self.pids.to_str().expect("utf-8");
        format!(
            "servers:\n  py:\n    transport: {{kind: stdio, command: python3, args: [server.py], cwd: {src:?}, env: {{PIDS: {pids:?}}}}}\n    watch: {{paths: [.], extensions: [py], debounceMs: {debounce_ms}}}\n{supervision}"
        )
    }
}

#[test]
fn an_edit_restarts_the_server_and_the_client_sees_its_new_tools() {
    let project = Project::new(&[("hello", "hi")]);
    let mut client = Client::serve(&project.config(300));
    client.initialize();
    client.wait_for_tool("py__hello");
    assert_eq!(project.starts(), 1);
    client.drain(Duration::from_millis(200));

    project.write(&[("hello", "hi"), ("added", "new tool")]);
    client.wait_method("notifications/tools/list_changed");
    // Callable at once: the new process got the client's initialize replayed
    // (it refuses everything before initialize).
    assert_eq!(client.call_text("py__added", json!({})), "new tool");
    assert_eq!(project.starts(), 2);
    // Only the list that changed is announced.
    let others = client.drain(Duration::from_millis(500));
    assert!(
        !others.iter().any(|m| m["method"] == "notifications/prompts/list_changed"
            || m["method"] == "notifications/resources/list_changed"),
        "{others:?}"
    );
    client.wait_stderr("restarting");
}

#[test]
fn a_burst_of_writes_is_one_restart() {
    let project = Project::new(&[("hello", "hi")]);
    // A generous quiet period, so that a loaded machine does not split the burst.
    let mut client = Client::serve(&project.config(2500));
    client.initialize();
    client.wait_for_tool("py__hello");
    for round in 0..19 {
        project.write(&[("hello", "hi"), ("round", &format!("{round}"))]);
    }
    project.write_by_rename(&[("hello", "hi"), ("burst", "done")]);
    client.wait_for_tool("py__burst");
    // Twice the quiet period more: no second restart follows.
    std::thread::sleep(Duration::from_millis(5000));
    assert_eq!(project.starts(), 2, "20 writes, {} starts", project.starts());
    assert_eq!(client.call_text("py__burst", json!({})), "done");
}

#[test]
fn a_call_in_flight_during_a_restart_gets_its_answer() {
    let project = Project::new(&[("hello", "hi"), ("slow", "slept")]);
    let mut client = Client::serve(&project.config(200));
    client.initialize();
    client.wait_for_tool("py__slow");
    let id = client.send_request("tools/call", json!({"name": "py__slow", "arguments": {"seconds": 1.5}}));
    std::thread::sleep(Duration::from_millis(300));
    project.write(&[("hello", "hi"), ("slow", "slept"), ("after", "later")]);
    // Answered by the old process within the grace period, or failed with a
    // clear reason: never left hanging (the client's wait is bounded).
    let answer = client.response(&id);
    match answer.value.get("result") {
        Some(result) => assert_eq!(result["content"][0]["text"], "slept", "{}", answer.raw),
        None => assert!(answer["error"]["message"].as_str().unwrap_or("").contains("restart"), "{}", answer.raw),
    }
    client.wait_for_tool("py__after");
    assert_eq!(client.call_text("py__after", json!({})), "later");
}

#[test]
fn a_syntax_error_shows_in_call_errors_and_status_and_the_fix_brings_it_back() {
    let project = Project::new(&[("hello", "hi")]);
    // After a failed start the next one is a minute away: only the fix,
    // which restarts the server at once, brings it back within the test.
    let mut warden =
        HttpWarden::start(&project.config_with(200, "supervision: {backoffInitialMs: 60000, backoffMaxMs: 60000}\n"));
    let mut client = warden.client();
    client.initialize();
    assert!(client.tool_names().contains(&"py__hello".to_owned()));

    std::fs::write(project.src.join("server.py"), "# TOOL hello hi\ndef broken(:\n").expect("write");
    // The server is down: its tools are gone, and naming one says why,
    // quoting Python's stderr.
    let failure = retry("the call to fail with the server's stderr", || {
        let answer = client.request("tools/call", json!({"name": "py__hello", "arguments": {}}));
        (answer["error"]["code"] == -32010 && answer.to_string().contains("SyntaxError")).then_some(answer)
    });
    assert!(failure["error"]["message"].as_str().unwrap_or("").contains("py"), "{failure}");
    let status = send(&warden.addr, "GET", "/status", &[], b"").body();
    assert!(status.contains("SyntaxError") && status.contains("down"), "{status}");

    project.write(&[("hello", "hi"), ("fixed", "back")]);
    retry("the fixed server's tool", || client.tool_names().contains(&"py__fixed".to_owned()).then_some(()));
    assert_eq!(client.call("py__fixed", json!({}))["content"][0]["text"], "back");
    warden.stop();
}

#[test]
fn wrap_watch_restarts_the_wrapped_server_on_edits() {
    let project = Project::new(&[("hello", "hi")]);
    let src = project.src.to_str().expect("utf-8");
    let script = project.src.join("server.py");
    let script = script.to_str().expect("utf-8");
    let pids = project.pids.to_str().expect("utf-8");
    let args = ["wrap", "--watch", src, "--ext", "py,ts", "--", "python3", script];
    let mut client = Client::start(&args, &[("PIDS", pids)]);
    client.initialize();
    client.wait_for_tool("hello");
    // A file of another extension changes nothing.
    std::fs::write(project.src.join("notes.md"), "nothing to see").expect("write notes");
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(project.starts(), 1, "a .md file is not watched");
    project.write(&[("hello", "hi"), ("wrapped", "unprefixed")]);
    client.wait_for_tool("wrapped");
    assert_eq!(client.call_text("wrapped", json!({})), "unprefixed");
    assert_eq!(project.starts(), 2);
}

#[test]
fn over_http_an_edit_restarts_each_sessions_process_once() {
    let project = Project::new(&[("hello", "hi")]);
    let mut warden = HttpWarden::start(&project.config(300));
    let (mut one, mut two) = (warden.client(), warden.client());
    one.initialize();
    two.initialize();
    for client in [&mut one, &mut two] {
        assert!(client.tool_names().contains(&"py__hello".to_owned()));
    }
    assert_eq!(project.starts(), 2, "one process per session");
    project.write(&[("hello", "hi"), ("both", "seen")]);
    for client in [&mut one, &mut two] {
        retry("the new tool in every session", || client.tool_names().contains(&"py__both".to_owned()).then_some(()));
        assert_eq!(client.call("py__both", json!({}))["content"][0]["text"], "seen");
    }
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(project.starts(), 4, "each session's process restarted once");
    warden.stop();
}
