//! Command-line interface of `warden-bench`.

use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use serde_json::value::RawValue;

/// Load client that benchmarks an MCP server (or a gateway in front of one)
/// spoken to over the child process's stdin/stdout, or over Streamable HTTP
/// with `--url`.
#[derive(Debug, Parser)]
#[command(name = "warden-bench", version, about)]
pub struct Cli {
    /// Label copied into every output line (e.g. "fixture/direct").
    #[arg(long, default_value = "")]
    pub label: String,

    /// Number of tools/call requests in each measured phase.
    #[arg(long, default_value_t = 5000)]
    pub calls: u64,

    /// Requests in flight at once during the concurrent phase (over HTTP, each
    /// on a keep-alive connection of its own).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency: u64,

    /// Unmeasured calls made before the phases (with `--concurrency` in flight).
    #[arg(long, default_value_t = 500)]
    pub warmup: u64,

    /// Tool to call; a listed tool named exactly this, or ending in `__NAME`, is used.
    #[arg(long, default_value = "echo")]
    pub tool: String,

    /// Tool arguments, as a JSON object.
    #[arg(long, default_value = r#"{"text":"hello"}"#)]
    pub args: String,

    /// Print one JSON line per phase instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Instead of running calls: after startup and the tools/list wait, sleep
    /// this many milliseconds and print the child's resident memory (VmRSS).
    #[arg(long, value_name = "MS", conflicts_with = "url")]
    pub rss_of_child_after_ms: Option<u64>,

    /// Give up on any single request after this many seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout_secs: u64,

    /// Speak Streamable HTTP to this MCP endpoint (`http://host:port/path`)
    /// instead of spawning a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,

    /// With `--url`: MCP sessions to open; in-flight slot `i` calls on session
    /// `i % N` (1: every call on one session). At most `--concurrency`.
    #[arg(long, default_value_t = 1, value_name = "N", requires = "url",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub sessions: u64,

    /// With `--url`: the process whose CPU time per call is reported (the
    /// gateway serving the URL). Over stdio the child is measured.
    #[arg(long, value_name = "PID", requires = "url")]
    pub cpu_of: Option<u32>,

    /// Send `ping` instead of `tools/call` (no tool is looked up): what a
    /// gateway's front costs by itself.
    #[arg(long)]
    pub ping: bool,

    /// With `--url`: speak MCP 2026-07-28: no `initialize` and no session,
    /// every request with the `_meta` envelope and the headers mirroring it.
    #[arg(long, requires = "url", conflicts_with = "ping")]
    pub modern: bool,

    /// Instead of calling anything: serve a bare HTTP endpoint on this
    /// address that answers every JSON-RPC request with an empty result (and
    /// `initialize` with a session id), the floor a gateway's HTTP front is
    /// compared with. Prints `listening on http://ADDR/mcp` and runs until
    /// killed.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["url", "command", "disk_sync_in"])]
    pub serve_bare: Option<std::net::SocketAddr>,

    /// Instead of calling anything: serve a bare HTTP forwarder on this
    /// address that passes every request on to `--to` over one upstream
    /// connection per client connection, the floor an added gateway hop is
    /// compared with. Prints `listening on http://ADDR/PATH` and runs until
    /// killed.
    #[arg(long, value_name = "ADDR", requires = "to", conflicts_with_all = ["url", "command", "serve_bare", "disk_sync_in"])]
    pub forward_bare: Option<std::net::SocketAddr>,

    /// With `--forward-bare`: the MCP endpoint to forward to (`http://host:port/path`).
    #[arg(long, value_name = "URL", requires = "forward_bare")]
    pub to: Option<String>,

    /// Instead of calling anything: start the command after `--` and serve a
    /// bare HTTP-to-stdio bridge to it on this address (each POST body
    /// written to its stdin, the line answering the request's id sent back),
    /// the floor a gateway's HTTP front over a stdio server is compared
    /// with. For one client session. Prints `listening on http://ADDR/mcp`
    /// and runs until killed.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["url", "serve_bare", "forward_bare", "disk_sync_in", "relay_bare", "rss_of_child_after_ms"])]
    pub bridge_bare: Option<std::net::SocketAddr>,

    /// Instead of calling anything: measure the disk's own latency of a
    /// durable append (one write and one fdatasync of a line about the size
    /// of an audit record, `--calls` times) in a file in this directory.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "command", "rss_of_child_after_ms"])]
    pub disk_sync_in: Option<std::path::PathBuf>,

    /// Instead of calling anything: run the command after `--` with its
    /// stdin and stdout relayed to this process's own by two threads with
    /// blocking reads and writes, the floor a stdio gateway's hop is
    /// compared with. Runs until stdin closes and the command exits.
    #[arg(long, conflicts_with_all = ["url", "serve_bare", "forward_bare", "disk_sync_in", "rss_of_child_after_ms"])]
    pub relay_bare: bool,

    /// Child command and its arguments (after `--`).
    #[arg(last = true, required_unless_present_any = ["url", "serve_bare", "forward_bare", "disk_sync_in"], value_name = "CMD")]
    pub command: Vec<String>,
}

impl Cli {
    /// The `--args` value checked to be a JSON object, kept as raw JSON text.
    pub fn tool_arguments(&self) -> anyhow::Result<Box<RawValue>> {
        let value: serde_json::Value = serde_json::from_str(&self.args).context("--args is not valid JSON")?;
        if !value.is_object() {
            bail!("--args must be a JSON object, got {}", self.args);
        }
        Ok(serde_json::value::to_raw_value(&value)?)
    }

    /// Checks what clap cannot: sessions fit in the slots.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.url.is_some() && self.sessions > self.concurrency {
            bail!(
                "--sessions {} is more than --concurrency {}: each session needs a slot",
                self.sessions,
                self.concurrency
            );
        }
        Ok(())
    }

    /// Per-request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }
}
