//! Decision latency for a realistic 200-rule policy (tool globs, value
//! conditions, regexes, lists, role rules, log rules; no path I/O).
//!
//! Run with `cargo run --release -p warden-policy --example decide_bench`.
//! Prints p50 / p99 / max in microseconds for 100,000 calls, for the guard
//! path (no trace) and for `evaluate` (with the explain trace).

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard};
use warden_policy::PolicyEngine;

const CALLS: usize = 100_000;

fn policy() -> String {
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
    for i in 0..10 {
        rule(&mut y, format!("    - {{name: log-{i}, if: {{server: [srv{i}]}}, then: log}}\n"));
    }
    for i in 0..50 {
        rule(
            &mut y,
            format!(
                "    - {{name: block-tool-{i}, if: {{server: [srv{}], tool: [tool_{i}], args: {{arg: query, contains: secret{i}, ignoreCase: true}}}}, then: deny}}\n",
                i % 10
            ),
        );
    }
    for i in 0..40 {
        rule(
            &mut y,
            format!(
                "    - {{name: prefix-{i}, if: {{tool: [\"ns{i}_*\"], args: {{arg: force, equals: true}}}}, then: escalate}}\n"
            ),
        );
    }
    for i in 0..30 {
        rule(
            &mut y,
            format!(
                "    - {{name: rx-{i}, if: {{tool: [\"*_exec\"], args: {{arg: cmd, regex: \"rm\\\\s+-[a-z]*r[a-z]*f?\\\\s+/{i}\"}}}}, then: deny}}\n"
            ),
        );
    }
    for i in 0..30 {
        rule(
            &mut y,
            format!(
                "    - {{name: amount-{i}, if: {{tool: [pay_{i}, \"*_transfer_{i}\"], args: {{arg: amount, gt: 1000}}}}, then: escalate}}\n"
            ),
        );
    }
    for i in 0..20 {
        rule(
            &mut y,
            format!(
                "    - {{name: env-{i}, if: {{server: [deploy], tool: [deploy_{i}], args: {{arg: env, inList: prod, ignoreCase: true}}}}, then: escalate}}\n"
            ),
        );
    }
    for i in 0..10 {
        rule(
            &mut y,
            format!(
                "    - {{name: query-{i}, if: {{roles: [query], server: [srv0], args: {{arg: query, startsWith: \"admin{i}\"}}}}, then: deny}}\n"
            ),
        );
    }
    for i in 0..10 {
        rule(
            &mut y,
            format!(
                "    - {{name: combo-{i}, if: {{server: [\"ops*\"], args: {{all: [{{arg: target, in: [host{i}, host{}]}}, {{not: {{arg: dryRun, equals: true}}}}, {{any: [{{arg: level, ge: 3}}, {{arg: reason, notContains: ticket}}]}}]}}}}, then: escalate}}\n",
                i + 10
            ),
        );
    }
    assert_eq!(rules, 210 - 10, "the policy has 200 rules");
    y
}

fn main() {
    let text = policy();
    let config = match warden_config::parse(Path::new("bench.yaml"), &text, &|_| None) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(1);
        }
    };
    let engine = match PolicyEngine::compile(&config, None) {
        Ok(engine) => engine,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(1);
        }
    };
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
    let mut report = String::new();
    for (label, traced) in [("guard (no trace)", false), ("evaluate (with trace)", true)] {
        let mut times = Vec::with_capacity(CALLS);
        for i in 0..CALLS {
            let (server, tool, args) = calls[i % calls.len()];
            let start = Instant::now();
            if traced {
                black_box(engine.evaluate(black_box(server), black_box(tool), black_box(Some(args))));
            } else {
                let call =
                    Call { session: "bench", server, method: &Method::ToolsCall, name: tool, arguments: Some(args) };
                black_box(engine.decide(black_box(&call)));
            }
            times.push(start.elapsed().as_nanos() as f64 / 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        let _ = writeln!(
            report,
            "{label}: {CALLS} calls, 200 rules: p50 {:.2} µs, p99 {:.2} µs, max {:.1} µs",
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
    print!("{report}");
    for (server, tool, args) in calls {
        let e = engine.evaluate(server, tool, Some(args));
        println!("  {server}/{tool}: {} by {} ({} trace steps)", e.action, e.rule, e.trace.len());
    }
}
