//! How long one scrape of `/metrics` takes to render, for a large
//! deployment: 50 servers × 40 tools, each tool with answers that succeeded
//! and failed, both as clients asked and as Warden forwarded, plus policy
//! decisions by rule and the servers' states.
//!
//! Run with `cargo run --release -p warden-metrics --example scrape_bench`.
//! Prints the series count, the text's size, and p50 / max render time.

use std::time::{Duration, Instant};

use warden_jsonrpc::Method;
use warden_metrics::Metrics;
use warden_pipeline::{ErrorType, Observer, Operation, Target};

const SERVERS: usize = 50;
const TOOLS: usize = 40;
const SCRAPES: usize = 50;

/// The ways each tool's calls ended: `BENCH_ERRORS=1` adds a failed series
/// per tool (twice the series).
fn errors() -> Vec<Option<ErrorType>> {
    match std::env::var("BENCH_ERRORS").as_deref() {
        Ok("1") => vec![None, Some(ErrorType::ToolError)],
        _ => vec![None],
    }
}

fn main() {
    let metrics = Metrics::new();
    let names: Vec<(String, Vec<String>)> =
        (0..SERVERS).map(|s| (format!("server-{s}"), (0..TOOLS).map(|t| format!("tool_{t}")).collect())).collect();
    for (server, tools) in &names {
        for tool in tools {
            for error in errors() {
                let operation = Operation {
                    target: Some(Target::Tool(tool)),
                    server: Some(server),
                    error,
                    ..Operation::new(&Method::ToolsCall, Duration::from_micros(700))
                };
                metrics.served(&operation);
                metrics.called(&operation);
            }
        }
    }
    let states: Vec<(String, &'static str)> = names.iter().map(|(server, _)| (server.clone(), "ready")).collect();
    metrics.count_upstreams_with(Box::new(move || states.clone()));
    let mut times = Vec::with_capacity(SCRAPES);
    let mut size = 0;
    for _ in 0..SCRAPES {
        let started = Instant::now();
        size = std::hint::black_box(metrics.render()).len();
        times.push(started.elapsed());
    }
    times.sort();
    let series = SERVERS * TOOLS * 2 * errors().len();
    println!(
        "scrape of {SERVERS} servers × {TOOLS} tools ({series} histograms, {} KiB): p50 {:.2} ms, max {:.2} ms",
        size / 1024,
        times[SCRAPES / 2].as_secs_f64() * 1e3,
        times[SCRAPES - 1].as_secs_f64() * 1e3
    );
}
