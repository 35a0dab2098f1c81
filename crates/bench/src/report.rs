//! Output of results: one JSON line per phase, or a readable table.

use std::time::Duration;

use serde::Serialize;

use crate::stats::{self, Summary};

/// Results of one measured phase.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseReport {
    /// The run's `--label`.
    pub label: String,
    /// Phase name: "sequential" or "concurrent".
    pub phase: &'static str,
    /// Calls made in the phase.
    pub calls: u64,
    /// Requests in flight at once.
    pub concurrency: u64,
    /// Throughput over the phase's wall time.
    pub calls_per_sec: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 90th percentile latency, µs.
    pub p90_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
    /// Largest latency, µs.
    pub max_us: f64,
    /// Calls answered with a JSON-RPC error or a result with `isError`.
    pub errors: u64,
    /// Over HTTP: the MCP sessions the phase's calls were spread over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u64>,
    /// CPU time (user + system) of the measured process per call, µs: the
    /// child over stdio, `--cpu-of` over HTTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_call: Option<f64>,
    /// The part of `cpu_us_per_call` spent in user space, µs (10 ms
    /// resolution over the phase).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_user_us_per_call: Option<f64>,
}

impl PhaseReport {
    /// Builds a report from a phase's measurements.
    pub fn new(
        label: &str,
        phase: &'static str,
        concurrency: u64,
        wall: Duration,
        latencies: &mut [Duration],
        errors: u64,
    ) -> Self {
        let calls = latencies.len() as u64;
        let Summary { p50_us, p90_us, p99_us, max_us } = stats::summarize(latencies);
        let secs = wall.as_secs_f64();
        let calls_per_sec = if secs > 0.0 { stats::round1(calls as f64 / secs) } else { 0.0 };
        Self {
            label: label.to_owned(),
            phase,
            calls,
            concurrency,
            calls_per_sec,
            p50_us,
            p90_us,
            p99_us,
            max_us,
            errors,
            sessions: None,
            cpu_us_per_call: None,
            cpu_user_us_per_call: None,
        }
    }

    /// The same report, with the measured process's CPU time per call.
    pub fn with_cpu(mut self, cpu: Option<crate::cpu::PerCall>) -> Self {
        self.cpu_us_per_call = cpu.map(|cpu| cpu.total_us);
        self.cpu_user_us_per_call = cpu.and_then(|cpu| cpu.user_us);
        self
    }

    /// The same report, noting the number of HTTP sessions (if any).
    pub fn with_sessions(mut self, sessions: Option<u64>) -> Self {
        self.sessions = sessions;
        self
    }
}

/// Idle memory of the child process.
#[derive(Debug, Clone, Serialize)]
pub struct RssReport {
    /// The run's `--label`.
    pub label: String,
    /// Always "idle_rss".
    pub phase: &'static str,
    /// Child process id.
    pub pid: u32,
    /// How long the client waited after startup before reading.
    pub after_ms: u64,
    /// VmRSS in kB (as in /proc/PID/status).
    pub rss_kb: u64,
    /// VmRSS in MB (kB / 1024), rounded to 0.1.
    pub rss_mb: f64,
}

/// Prints results either as JSON lines or as a table (header printed once).
pub struct Printer {
    json: bool,
    header_done: bool,
}

impl Printer {
    /// A printer for JSON lines (`json`) or a table.
    pub fn new(json: bool) -> Self {
        Self { json, header_done: false }
    }

    /// Prints one phase's results.
    pub fn phase(&mut self, r: &PhaseReport) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string(r)?);
            return Ok(());
        }
        if !self.header_done {
            self.header_done = true;
            println!(
                "{:<24} {:<11} {:>7} {:>5} {:>10} {:>9} {:>9} {:>9} {:>10} {:>6} {:>11}",
                "label",
                "phase",
                "calls",
                "conc",
                "calls/s",
                "p50 µs",
                "p90 µs",
                "p99 µs",
                "max µs",
                "errors",
                "cpu µs/call"
            );
        }
        let cpu = r.cpu_us_per_call.map_or_else(|| "-".to_owned(), |cpu| format!("{cpu:.1}"));
        println!(
            "{:<24} {:<11} {:>7} {:>5} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>6} {:>11}",
            r.label,
            r.phase,
            r.calls,
            r.concurrency,
            r.calls_per_sec,
            r.p50_us,
            r.p90_us,
            r.p99_us,
            r.max_us,
            r.errors,
            cpu
        );
        Ok(())
    }

    /// Prints the child's idle memory.
    pub fn rss(&self, r: &RssReport) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string(r)?);
        } else {
            let label = if r.label.is_empty() { "child" } else { &r.label };
            println!("{label}: pid {} VmRSS {} kB ({:.1} MB) after {} ms idle", r.pid, r.rss_kb, r.rss_mb, r.after_ms);
        }
        Ok(())
    }
}
