//! Command-line interface of `warden-bench`.

use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use serde_json::value::RawValue;

/// Load client that benchmarks an MCP server (or a gateway in front of one)
/// spoken to over the child process's stdin/stdout.
#[derive(Debug, Parser)]
#[command(name = "warden-bench", version, about)]
pub struct Cli {
    /// Label copied into every output line (e.g. "fixture/direct").
    #[arg(long, default_value = "")]
    pub label: String,

    /// Number of tools/call requests in each measured phase.
    #[arg(long, default_value_t = 5000)]
    pub calls: u64,

    /// Requests in flight at once during the concurrent phase.
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
    #[arg(long, value_name = "MS")]
    pub rss_of_child_after_ms: Option<u64>,

    /// Give up on any single request after this many seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout_secs: u64,

    /// Child command and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
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

    /// Per-request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }
}
