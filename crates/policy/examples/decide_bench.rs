//! Decision latency for a realistic policy (tool globs, value conditions,
//! regexes, lists, role rules, log rules; no path I/O), at 200 rules and,
//! the same kinds of rules for ten times as many servers and tools, at
//! 2,000: the cost of a decision follows the rules that could apply to the
//! call, not the size of the policy.
//!
//! Run with `cargo run --release -p warden-policy --example decide_bench`.
//! Prints p50 / p99 / max in microseconds for 100,000 calls, for the guard
//! path (no trace), for `evaluate` (with the explain trace), and by the
//! reference scan of every rule the index replaced. IronCurtain's
//! imported policy has its own: `cargo run --release -p warden-import
//! --example ironcurtain_bench`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard};
use warden_policy::PolicyEngine;

const CALLS: usize = 100_000;

/// The policy: 200 rules for `scale` 1, `200 * scale` rules over `10 * scale`
/// servers (`srv0`…) and as many more tools.
fn policy(scale: usize) -> String {
    let mut y = String::from(
        "policy:\n  default: allow\n  lists:\n    prod: [prod, production, prod-eu, prod-us]\n  annotations:\n",
    );
    y.push_str("    srv0:\n      search: {sideEffects: false, args: {query: [query]}}\n");
    y.push_str("    db:\n      run_query: {sideEffects: true, args: {sql: [sql]}}\n");
    y.push_str("  rules:\n");
    let mut rules = 0;
    let mut rule = |y: &mut String, text: String| {
        y.push_str(&text);
        rules += 1;
    };
    let servers = 10 * scale;
    for i in 0..10 * scale {
        rule(&mut y, format!("    - {{name: log-{i}, if: {{server: [srv{i}]}}, then: log}}\n"));
    }
    for i in 0..50 * scale {
        rule(
            &mut y,
            format!(
                "    - {{name: block-tool-{i}, if: {{server: [srv{}], tool: [tool_{i}], args: {{arg: query, contains: secret{i}, ignoreCase: true}}}}, then: deny}}\n",
                i % servers
            ),
        );
    }
    for i in 0..40 * scale {
        rule(
            &mut y,
            format!(
                "    - {{name: prefix-{i}, if: {{tool: [\"ns{i}_*\"], args: {{arg: force, equals: true}}}}, then: escalate}}\n"
            ),
        );
    }
    for i in 0..30 * scale {
        // The 30 of the 200-rule policy are on `*_exec`; the others on more suffixes.
        let suffix = if i < 30 { "exec".to_owned() } else { format!("exec{}", i / 30) };
        rule(
            &mut y,
            format!(
                "    - {{name: rx-{i}, if: {{tool: [\"*_{suffix}\"], args: {{arg: cmd, regex: \"rm\\\\s+-[a-z]*r[a-z]*f?\\\\s+/{i}\"}}}}, then: deny}}\n"
            ),
        );
    }
    for i in 0..30 * scale {
        rule(
            &mut y,
            format!(
                "    - {{name: amount-{i}, if: {{tool: [pay_{i}, \"*_transfer_{i}\"], args: {{arg: amount, gt: 1000}}}}, then: escalate}}\n"
            ),
        );
    }
    for i in 0..20 * scale {
        rule(
            &mut y,
            format!(
                "    - {{name: env-{i}, if: {{server: [deploy], tool: [deploy_{i}], args: {{arg: env, inList: prod, ignoreCase: true}}}}, then: escalate}}\n"
            ),
        );
    }
    for i in 0..10 * scale {
        rule(
            &mut y,
            format!(
                "    - {{name: query-{i}, if: {{roles: [query], server: [srv0], args: {{arg: query, startsWith: \"admin{i}\"}}}}, then: deny}}\n"
            ),
        );
    }
    for i in 0..10 * scale {
        // `ops*` for the 200-rule policy; more server prefixes beyond.
        let prefix = if i < 10 { "ops".to_owned() } else { format!("ops{}-", i / 10) };
        rule(
            &mut y,
            format!(
                "    - {{name: combo-{i}, if: {{server: [\"{prefix}*\"], args: {{all: [{{arg: target, in: [host{i}, host{}]}}, {{not: {{arg: dryRun, equals: true}}}}, {{any: [{{arg: level, ge: 3}}, {{arg: reason, notContains: ticket}}]}}]}}}}, then: escalate}}\n",
                i + 10
            ),
        );
    }
    assert_eq!(rules, 200 * scale, "the policy has {} rules", 200 * scale);
    y
}

/// The 200-rule policy `bench/run.sh` loads into `warden serve`
/// (`policy200`): 150 rules for other tools, and 50 on `ec*` that each read
/// the echo call's `text` and `n` and do not match it.
fn serve_policy() -> String {
    let mut y = String::from("policy:\n  default: allow\n  rules:\n");
    for i in 0..150 {
        let _ = writeln!(
            y,
            "    - {{name: other-{i}, if: {{tool: ['tool_{i}_*'], args: {{arg: path, startsWith: '/etc/{i}'}}}}, then: deny, reason: r}}"
        );
    }
    for i in 0..50 {
        let _ = writeln!(
            y,
            "    - {{name: echo-{i}, if: {{tool: ['ec*'], args: {{any: [{{arg: text, contains: 'forbidden-{i}'}}, {{arg: n, gt: {i}}}]}}}}, then: deny, reason: r}}"
        );
    }
    y
}

fn engine(scale: usize) -> PolicyEngine {
    compiled(&policy(scale))
}

fn compiled(text: &str) -> PolicyEngine {
    let compiled = warden_config::parse(Path::new("bench.yaml"), text, &|_| None)
        .map_err(|err| err.to_string())
        .and_then(|config| PolicyEngine::compile(&config, None).map_err(|err| err.to_string()));
    match compiled {
        Ok(engine) => engine,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(1);
        }
    }
}

/// How a call is decided.
#[derive(Clone, Copy)]
enum Mode {
    /// As the gateway's guard.
    Guard,
    /// With the explain trace.
    Traced,
    /// The guard's evaluation by the reference scan of every rule (the
    /// engine before rules were indexed), for comparison.
    Scanned,
}

/// p50, p99 and max of `CALLS` decisions of `calls` in turn, in µs.
fn measure(engine: &PolicyEngine, calls: &[(&str, &str, &str)], mode: Mode) -> (f64, f64, f64) {
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let (server, tool, args) = calls[i % calls.len()];
        let start = Instant::now();
        match mode {
            Mode::Traced => {
                black_box(engine.evaluate(black_box(server), black_box(tool), black_box(Some(args))));
            }
            Mode::Guard => {
                let call =
                    Call { session: "bench", server, method: &Method::ToolsCall, name: tool, arguments: Some(args) };
                black_box(engine.decide(black_box(&call)));
            }
            Mode::Scanned => {
                let (server, tool, args) = (black_box(server), black_box(tool), black_box(Some(args)));
                black_box(engine.evaluate_scanning_all(server, tool, args, false));
            }
        }
        times.push(start.elapsed().as_nanos() as f64 / 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn main() {
    let calls: [(&str, &str, &str); 10] = [
        ("srv3", "tool_13", r#"{"query": "hello world", "limit": 10}"#),
        ("shell", "run_exec", r#"{"cmd": "ls -la /tmp && echo done", "cwd": "/home/u"}"#),
        ("bank", "pay_7", r#"{"amount": 50, "currency": "EUR", "to": "ACME"}"#),
        ("deploy", "deploy_5", r#"{"env": "staging", "version": "1.2.3"}"#),
        ("srv0", "search", r#"{"query": "rust async", "limit": 20}"#),
        ("misc", "ns12_list", r#"{"force": false}"#),
        ("ops-eu", "restart", r#"{"target": "host3", "dryRun": false, "level": 4, "reason": "ticket 42"}"#),
        ("misc", "unknown_tool", r#"{"a": [1, 2, 3], "b": {"c": "d"}, "e": null}"#),
        ("srv3", "tool_13", r#"{"query": "show me the SECRET13 now"}"#),
        ("shell", "run_exec", r#"{"cmd": "rm -rf /17"}"#),
    ];
    let only_guard = std::env::args().nth(1).is_some_and(|arg| arg == "guard");
    // `decide_bench serve` decides policy200's echo call over and over (for a profiler).
    if std::env::args().nth(1).is_some_and(|arg| arg == "serve") {
        let serve = compiled(&serve_policy());
        for _ in 0..50 {
            black_box(measure(&serve, &[("fixture", "echo", r#"{"text":"hello"}"#)], Mode::Guard));
        }
        return;
    }
    // `decide_bench one N` decides call N over and over (for a profiler).
    if let (Some("one"), Some(n)) = (std::env::args().nth(1).as_deref(), std::env::args().nth(2)) {
        let engine = engine(1);
        let call = n.parse::<usize>().ok().and_then(|n| calls.get(n)).copied().unwrap_or(calls[0]);
        for _ in 0..50 {
            black_box(measure(&engine, &[call], Mode::Guard));
        }
        return;
    }
    let mut report = String::new();
    for scale in [1, 10] {
        let engine = engine(scale);
        let rules = 200 * scale;
        let modes = [
            ("guard (no trace)", Mode::Guard),
            ("evaluate (with trace)", Mode::Traced),
            ("before the index (every rule scanned, no trace)", Mode::Scanned),
        ];
        for (label, mode) in modes {
            // `decide_bench guard` times the guard alone (for a profiler).
            if only_guard && !matches!(mode, Mode::Guard) {
                continue;
            }
            let (p50, p99, max) = measure(&engine, &calls, mode);
            let _ = writeln!(
                report,
                "{label}: {CALLS} calls, {rules} rules: p50 {p50:.2} µs, p99 {p99:.2} µs, max {max:.1} µs"
            );
        }
        for (server, tool, args) in calls {
            let e = engine.evaluate(server, tool, Some(args));
            let (p50, p99, _) = measure(&engine, &[(server, tool, args)], Mode::Guard);
            let _ = writeln!(
                report,
                "  {server}/{tool}: {} by {} ({} trace steps); guard p50 {p50:.2} µs, p99 {p99:.2} µs",
                e.action,
                e.rule,
                e.trace.len()
            );
        }
    }
    // What `bench/run.sh`'s policy200 pays per call in `warden serve`.
    let serve = compiled(&serve_policy());
    let echo = [("fixture", "echo", r#"{"text":"hello"}"#)];
    let (p50, p99, max) = measure(&serve, &echo, Mode::Guard);
    let e = serve.evaluate("fixture", "echo", Some(echo[0].2));
    let _ = writeln!(
        report,
        "bench/run.sh's policy200, its echo call: {} by {}; guard p50 {p50:.2} µs, p99 {p99:.2} µs, max {max:.1} µs",
        e.action, e.rule
    );
    print!("{report}");
}
