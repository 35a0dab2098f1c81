//! Decision latency for IronCurtain's own generated policy (c0aeff9d,
//! vendored under `tests/data/ironcurtain-c0aeff9d`), imported as
//! `warden import ironcurtain` does with the sandbox and protected path its
//! scenarios assume, deciding the calls of its 321 test scenarios in turn.
//!
//! Run with `cargo run --release -p warden-import --example ironcurtain_bench`.
//! Prints p50 / p99 / max in microseconds for 100,000 decisions, without
//! the trace (what the guard runs), with it (`warden policy explain`), and
//! by the reference scan of every rule (the engine before rules were indexed).
//! `HOME` is set to the scenarios' `/home/provos` (it need not exist).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use warden_import::{IronCurtainInput, import_ironcurtain};
use warden_policy::PolicyEngine;

const CALLS: usize = 100_000;
const HOME: &str = "/home/provos";

fn data(name: &str) -> (PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ironcurtain-c0aeff9d").join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => (path, text),
        Err(err) => fail(&format!("{}: {err}", path.display())),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

fn engine() -> PolicyEngine {
    let input = IronCurtainInput {
        compiled_policy: data("compiled-policy.json"),
        tool_annotations: data("tool-annotations.json"),
        dynamic_lists: Some(data("dynamic-lists.json")),
        sandbox: Some(format!("{HOME}/.ironcurtain/sandbox")),
        protected_paths: vec![format!("{HOME}/.ironcurtain")],
        ..IronCurtainInput::default()
    };
    let imported = import_ironcurtain(input).unwrap_or_else(|err| fail(&format!("import: {err}")));
    // As Warden loads it: written, read back.
    let yaml = serde_saphyr::to_string(&imported.config).unwrap_or_else(|err| fail(&format!("yaml: {err}")));
    let config = warden_config::parse(Path::new("imported.yaml"), &yaml, &|name| Some(format!("${{{name}}}")))
        .unwrap_or_else(|err| fail(&format!("{err}")));
    PolicyEngine::compile(&config, None).unwrap_or_else(|err| fail(&format!("{err}")))
}

/// The scenarios' calls: server, tool, arguments as JSON text.
fn calls() -> Vec<(String, String, String)> {
    let (path, text) = data("test-scenarios.json");
    let scenarios: Value =
        serde_json::from_str(&text).unwrap_or_else(|err| fail(&format!("{}: {err}", path.display())));
    let list = scenarios["scenarios"].as_array().map(Vec::as_slice).unwrap_or_default();
    list.iter()
        .filter_map(|scenario| {
            let request = &scenario["request"];
            Some((
                request["serverName"].as_str()?.to_owned(),
                request["toolName"].as_str()?.to_owned(),
                request["arguments"].to_string(),
            ))
        })
        .collect()
}

/// How a call is decided.
#[derive(Clone, Copy)]
enum Mode {
    Untraced,
    Traced,
    /// The reference the index replaced, for comparison.
    Scanned,
}

fn main() {
    // SAFETY: nothing else runs yet; the engine reads HOME when compiled.
    unsafe { std::env::set_var("HOME", HOME) };
    let engine = engine();
    let calls = calls();
    if calls.is_empty() {
        fail("no scenarios");
    }
    let modes = [
        ("guard (no trace)", Mode::Untraced),
        ("evaluate (with trace)", Mode::Traced),
        ("guard, before the index (every rule scanned)", Mode::Scanned),
    ];
    for (label, mode) in modes {
        let mut times = Vec::with_capacity(CALLS);
        for i in 0..CALLS {
            let (server, tool, args) = &calls[i % calls.len()];
            let (server, tool, args) = (black_box(server), black_box(tool), black_box(Some(args.as_str())));
            let start = Instant::now();
            black_box(match mode {
                Mode::Untraced => engine.evaluate_untraced(server, tool, args),
                Mode::Traced => engine.evaluate(server, tool, args),
                Mode::Scanned => engine.evaluate_scanning_all(server, tool, args, false),
            });
            times.push(start.elapsed().as_nanos() as f64 / 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        println!(
            "{label}: {CALLS} calls, IronCurtain c0aeff9d ({} scenario calls): p50 {:.2} µs, p99 {:.2} µs, max {:.1} µs",
            calls.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
}
