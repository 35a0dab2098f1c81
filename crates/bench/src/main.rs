//! `warden-bench`: a load client for MCP servers and gateways over stdio.
//!
//! It spawns the command given after `--`, performs the MCP handshake, waits
//! for the tool to be listed, then measures `tools/call` latency and
//! throughput in a sequential and a concurrent phase (or, with
//! `--rss-of-child-after-ms`, only reports the child's idle memory).
//!
//! The client runs on a single-threaded Tokio runtime so that it takes at most
//! one core away from the processes being measured.

mod cli;
mod client;
mod load;
mod report;
mod rss;
mod stats;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;

use crate::cli::Cli;
use crate::client::McpClient;
use crate::load::{CallParams, PhaseResult};
use crate::report::{PhaseReport, Printer, RssReport};

/// How long to wait for the tool to show up in `tools/list`.
const TOOL_WAIT: Duration = Duration::from_secs(30);
/// How long the child gets to exit after its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("warden-bench: cannot start runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(errors) => {
            eprintln!("warden-bench: {errors} call(s) failed");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("warden-bench: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs the benchmark; returns the number of failed calls.
async fn run(cli: &Cli) -> anyhow::Result<u64> {
    let arguments = cli.tool_arguments()?;
    let started = Instant::now();
    let client = McpClient::spawn(&cli.command, cli.timeout())?;
    client.initialize().await?;
    let tool = client.wait_for_tool(&cli.tool, TOOL_WAIT).await?;
    eprintln!(
        "warden-bench: {}ready in {} ms, calling tool {tool}",
        label_prefix(&cli.label),
        started.elapsed().as_millis()
    );
    let mut printer = Printer::new(cli.json);

    if let Some(ms) = cli.rss_of_child_after_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        let pid = client.pid().context("child exited before its memory could be read")?;
        let rss_kb = rss::vm_rss_kb(pid)?;
        printer.rss(&RssReport {
            label: cli.label.clone(),
            phase: "idle_rss",
            pid,
            after_ms: ms,
            rss_kb,
            rss_mb: stats::round1(rss_kb as f64 / 1024.0),
        })?;
        client.shutdown(EXIT_GRACE).await?;
        return Ok(0);
    }

    let rpc = Arc::clone(client.rpc());
    let params = Arc::new(CallParams::new(&tool, &arguments)?);
    let mut failed = 0;

    if cli.warmup > 0 {
        let warm = load::concurrent(&rpc, &params, cli.warmup, cli.concurrency).await?;
        failed += report_errors(cli, "warmup", &warm);
    }

    let mut seq = load::sequential(&rpc, &params, cli.calls).await?;
    failed += report_errors(cli, "sequential", &seq);
    printer.phase(&PhaseReport::new(&cli.label, "sequential", 1, seq.wall, &mut seq.latencies, seq.errors))?;

    let mut conc = load::concurrent(&rpc, &params, cli.calls, cli.concurrency).await?;
    failed += report_errors(cli, "concurrent", &conc);
    printer.phase(&PhaseReport::new(
        &cli.label,
        "concurrent",
        cli.concurrency,
        conc.wall,
        &mut conc.latencies,
        conc.errors,
    ))?;

    drop(rpc);
    client.shutdown(EXIT_GRACE).await?;
    Ok(failed)
}

/// Prints a phase's error count and samples to stderr; returns the count.
fn report_errors(cli: &Cli, phase: &str, result: &PhaseResult) -> u64 {
    if result.errors > 0 {
        eprintln!(
            "warden-bench: {}{phase}: {} of {} calls failed; first errors:",
            label_prefix(&cli.label),
            result.errors,
            result.latencies.len()
        );
        for e in &result.error_samples {
            eprintln!("  {e}");
        }
    }
    result.errors
}

/// `"label: "`, or nothing when the label is empty.
fn label_prefix(label: &str) -> String {
    if label.is_empty() { String::new() } else { format!("{label}: ") }
}
