//! `warden-bench`: a load client for MCP servers and gateways over stdio or
//! Streamable HTTP.
//!
//! It spawns the command given after `--` (or, with `--url`, opens
//! `--sessions` sessions on an HTTP endpoint), performs the MCP handshake,
//! waits for the tool to be listed, then measures `tools/call` latency and
//! throughput in a sequential and a concurrent phase (or, with
//! `--rss-of-child-after-ms`, only reports the child's idle memory; with
//! `--disk-sync-in`, only the disk's latency of a durable append). With
//! `--serve-bare`, `--forward-bare`, `--bridge-bare` or `--relay-bare` it
//! is instead the floor a gateway is compared with.
//!
//! The client runs on a single-threaded Tokio runtime so that it takes at most
//! one core away from the processes being measured.

mod bare;
mod bridge;
mod caller;
mod cli;
mod client;
mod cpu;
mod disk;
mod forward;
mod http;
#[cfg(test)]
mod http_tests;
mod load;
mod modern;
mod relay;
mod report;
mod rss;
mod stats;
mod tools;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;

use crate::caller::Caller;
use crate::cli::Cli;
use crate::client::McpClient;
use crate::cpu::CpuMeter;
use crate::http::HttpSessions;
use crate::load::{CallParams, PhaseResult};
use crate::report::{PhaseReport, Printer, RssReport};

/// How long to wait for the tool to show up in `tools/list`.
const TOOL_WAIT: Duration = Duration::from_secs(30);
/// How long the child gets to exit after its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli.validate() {
        eprintln!("warden-bench: error: {e:#}");
        return ExitCode::from(2);
    }
    if cli.relay_bare {
        return match relay::run(&cli.command) {
            Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => {
                eprintln!("warden-bench: relay: {e:#}");
                ExitCode::from(2)
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("warden-bench: cannot start runtime: {e}");
            return ExitCode::from(2);
        }
    };
    // The floors serve; otherwise a load run (clap keeps the modes apart).
    let outcome = if let Some(addr) = cli.serve_bare {
        runtime.block_on(bare::serve(addr)).map(|()| 0)
    } else if let Some((addr, to)) = cli.forward_bare.zip(cli.to.as_deref()) {
        runtime.block_on(forward::serve(addr, to)).map(|()| 0)
    } else if let Some(addr) = cli.bridge_bare {
        runtime.block_on(bridge::serve(addr, &cli.command)).map(|()| 0)
    } else if let Some(dir) = &cli.disk_sync_in {
        run_disk(&cli, dir)
    } else if let Some(url) = &cli.url {
        runtime.block_on(run_http(&cli, url))
    } else {
        runtime.block_on(run_stdio(&cli))
    };
    match outcome {
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

/// Runs the benchmark against a child over stdio; returns the number of failed calls.
async fn run_stdio(cli: &Cli) -> anyhow::Result<u64> {
    let arguments = cli.tool_arguments()?;
    let started = Instant::now();
    let client = McpClient::spawn(&cli.command, cli.timeout())?;
    client.initialize().await?;
    let mut rpc = Arc::clone(client.rpc());
    let tool = if cli.ping { "ping".to_owned() } else { tools::wait_for_tool(&mut rpc, &cli.tool, TOOL_WAIT).await? };
    eprintln!(
        "warden-bench: {}ready in {} ms, calling tool {tool}",
        label_prefix(&cli.label),
        started.elapsed().as_millis()
    );

    if let Some(ms) = cli.rss_of_child_after_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        let pid = client.pid().context("child exited before its memory could be read")?;
        let rss_kb = rss::vm_rss_kb(pid)?;
        Printer::new(cli.json).rss(&RssReport {
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

    // Every slot shares the one pipe; ids tell the answers apart.
    let callers = vec![rpc; usize::try_from(cli.concurrency)?];
    let params = Arc::new(if cli.ping { CallParams::ping()? } else { CallParams::new(&tool, &arguments)? });
    let cpu_of = client.pid();
    let (failed, callers) = measure(cli, callers, &params, None, cpu_of).await?;
    drop(callers);
    client.shutdown(EXIT_GRACE).await?;
    Ok(failed)
}

/// Measures the disk's own write + fdatasync latency in `dir`: with a CPU
/// kept busy (`disk_sync`, the figure to compare with) and idle
/// (`disk_sync_idle`); see [`disk::append_sync_latencies_busy`].
fn run_disk(cli: &Cli, dir: &std::path::Path) -> anyhow::Result<u64> {
    let mut printer = Printer::new(cli.json);
    disk::append_sync_latencies(dir, cli.warmup.min(cli.calls))?;
    type Probe = fn(&std::path::Path, u64) -> anyhow::Result<Vec<std::time::Duration>>;
    let probes: [(&'static str, Probe); 2] =
        [("disk_sync", disk::append_sync_latencies_busy), ("disk_sync_idle", disk::append_sync_latencies)];
    for (phase, probe) in probes {
        let started = Instant::now();
        let mut latencies = probe(dir, cli.calls)?;
        printer.phase(&PhaseReport::new(&cli.label, phase, 1, started.elapsed(), &mut latencies, 0))?;
    }
    Ok(0)
}

/// Runs the benchmark against a Streamable HTTP endpoint; returns the number
/// of failed calls.
async fn run_http(cli: &Cli, url: &str) -> anyhow::Result<u64> {
    let arguments = cli.tool_arguments()?;
    let started = Instant::now();
    let (sessions, mut callers) =
        HttpSessions::open(url, cli.sessions, cli.concurrency, cli.timeout(), cli.modern).await?;
    let first = callers.first_mut().context("no connection")?;
    let tool = if cli.ping { "ping".to_owned() } else { tools::wait_for_tool(first, &cli.tool, TOOL_WAIT).await? };
    eprintln!(
        "warden-bench: {}{} session(s) ready in {} ms, calling tool {tool}",
        label_prefix(&cli.label),
        cli.sessions,
        started.elapsed().as_millis()
    );
    let params = Arc::new(if cli.ping { CallParams::ping()? } else { CallParams::new(&tool, &arguments)? });
    let (failed, mut callers) = measure(cli, callers, &params, Some(cli.sessions), cli.cpu_of).await?;
    let reopened: u64 = callers.iter().map(http::HttpCaller::reopened).sum();
    if reopened > 0 {
        eprintln!(
            "warden-bench: {}connections reopened after the server closed them: {reopened}",
            label_prefix(&cli.label)
        );
    }
    if let Some(first) = callers.first_mut() {
        sessions.close(first).await;
    }
    Ok(failed)
}

/// The warm-up, sequential and concurrent phases, over `callers` (one per
/// in-flight slot; the sequential phase uses the first), with the CPU time
/// of process `cpu_of` (the gateway). Prints each phase; returns the number
/// of failed calls and the callers.
async fn measure<C: Caller>(
    cli: &Cli,
    callers: Vec<C>,
    params: &Arc<CallParams>,
    sessions: Option<u64>,
    cpu_of: Option<u32>,
) -> anyhow::Result<(u64, Vec<C>)> {
    let mut printer = Printer::new(cli.json);
    let mut failed = 0;
    let mut callers = callers;

    if cli.warmup > 0 {
        let (warm, back) = load::concurrent(callers, params, cli.warmup).await?;
        callers = back;
        failed += report_errors(cli, "warmup", &warm);
    }

    let first = callers.first_mut().context("no caller")?;
    let cpu = CpuMeter::start(cpu_of);
    let mut seq = load::sequential(first, params, cli.calls).await?;
    let used = cpu.per_call(cli.calls);
    failed += report_errors(cli, "sequential", &seq);
    let report = PhaseReport::new(&cli.label, "sequential", 1, seq.wall, &mut seq.latencies, seq.errors);
    printer.phase(&report.with_sessions(sessions.map(|_| 1)).with_cpu(used))?;

    let cpu = CpuMeter::start(cpu_of);
    let (mut conc, callers) = load::concurrent(callers, params, cli.calls).await?;
    let used = cpu.per_call(cli.calls);
    failed += report_errors(cli, "concurrent", &conc);
    let report =
        PhaseReport::new(&cli.label, "concurrent", cli.concurrency, conc.wall, &mut conc.latencies, conc.errors);
    printer.phase(&report.with_sessions(sessions).with_cpu(used))?;
    Ok((failed, callers))
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
