//! Real Claude Code (`@anthropic-ai/claude-code`, pinned by
//! `interop/package.json`) through Warden, driven offline: its Messages API
//! is `interop/claude_api.py`, which answers with a call to Warden's echo
//! tool and then with the tool's result. Claude Code probes
//! `server/discover` and, since Warden answers it, speaks 2026-07-28 to
//! Warden over stdio and over HTTP.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use support::http::HttpWarden;
use support::{fixture_bin, warden_bin};

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// The fake Messages API, stopped when dropped.
struct Api {
    child: Child,
    port: u16,
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn api(dir: &Path) -> Api {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap();
    let mut child = Command::new("python3")
        .arg(interop().join("claude_api.py"))
        .arg(port.to_string())
        .arg(dir.join("api.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the fake Messages API");
    let deadline = std::time::Instant::now() + support::PATIENCE;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "the fake Messages API exited");
        assert!(std::time::Instant::now() < deadline, "the fake Messages API did not listen");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Api { child, port }
}

/// Runs `claude -p` with `mcp_config`; returns its final text.
fn claude(dir: &Path, api: &Api, mcp_config: &str) -> String {
    let claude = interop().join("node_modules/.bin/claude");
    assert!(claude.exists(), "Claude Code is not installed: run interop/install.sh first");
    let config = dir.join("mcp.json");
    std::fs::write(&config, mcp_config).unwrap();
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let output = Command::new(claude)
        .args(["-p", "Use the echo tool", "--allowedTools", "mcp__warden__echo", "--output-format", "json"])
        .arg("--mcp-config")
        .arg(&config)
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", api.port))
        .env("ANTHROPIC_API_KEY", "sk-offline-test")
        // MCP tools straight in the tool list (not behind tool search), and
        // nothing sent anywhere but the fake API.
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .current_dir(dir)
        .output()
        .expect("run claude");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|err| {
        panic!("claude printed no JSON ({err}): {stdout}\n{}", String::from_utf8_lossy(&output.stderr))
    });
    result["result"].as_str().unwrap_or_default().to_owned()
}

fn warden_config() -> String {
    format!(
        "naming: {{prefix: never}}\nservers:\n  fx:\n    transport: {{kind: stdio, command: {:?}}}\n",
        fixture_bin()
    )
}

#[test]
fn claude_code_calls_a_tool_through_warden_over_stdio_in_2026_07_28() {
    let dir = support::scratch_dir("claude-stdio");
    let api = api(&dir);
    let config = dir.join("warden.yaml");
    std::fs::write(&config, warden_config()).unwrap();
    let log = dir.join("warden.log");
    let mcp = serde_json::json!({"mcpServers": {"warden": {
        "command": warden_bin(),
        "args": ["serve", "--config", config, "--log-file", log],
    }}});
    let text = claude(&dir, &api, &mcp.to_string());
    assert!(text.contains("hi from claude"), "the tool's result reached the model: {text}");
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(log.contains("the client speaks MCP 2026-07-28"), "{log}");
}

#[test]
fn claude_code_calls_a_tool_through_warden_over_http_in_2026_07_28() {
    let dir = support::scratch_dir("claude-http");
    let api = api(&dir);
    // With metrics on: what Claude Code did is counted.
    let warden = HttpWarden::start(&format!("{}metrics: {{open: true}}\n", warden_config()));
    let mcp = serde_json::json!({"mcpServers": {"warden": {"type": "http", "url": warden.url("/mcp")}}});
    let text = claude(&dir, &api, &mcp.to_string());
    assert!(text.contains("hi from claude"), "the tool's result reached the model: {text}");
    let log = warden.stderr();
    assert!(log.contains("modern lane started"), "{log}");
    assert!(!log.contains("HTTP session started"), "no 2025 session: {log}");
    let metrics = support::http::send(&warden.addr, "GET", "/metrics", &[], b"").body();
    let served = metrics
        .lines()
        .find(|line| {
            line.starts_with("mcp_server_operation_duration_seconds_count{")
                && line.contains(r#"mcp_method_name="tools/call""#)
                && line.contains(r#"server="fx""#)
                && !line.contains("error_type")
        })
        .unwrap_or_else(|| panic!("no tools/call counted: {metrics}"));
    assert!(served.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n >= 1), "{served}");
}
