//! `warden-bench --bridge-bare`: the floor of an HTTP front over a stdio
//! server answers every call of a real MCP session over HTTP, calls in
//! flight together included, through the repository's fixture.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// Kills the bridge (and with it the fixture) when the test ends.
struct Bridge(Child);

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn bench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_warden-bench"))
}

#[test]
fn a_session_over_the_bridge_gets_every_answer() {
    let fixture = bench().with_file_name("warden-fixture");
    assert!(fixture.exists(), "{} is missing: run `cargo test --workspace`", fixture.display());
    let mut child = Command::new(bench())
        .args(["--bridge-bare", "127.0.0.1:0", "--"])
        .arg(&fixture)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the bridge");
    let stdout = child.stdout.take().expect("stdout");
    let _bridge = Bridge(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read the address");
    let url = line.trim().strip_prefix("listening on ").expect("the bridge says where it listens").to_owned();
    // The load client's own checks: every call answered with its result,
    // 4 in flight on one session (answers routed by id).
    let output = Command::new(bench())
        .args(["--url", &url, "--calls", "40", "--warmup", "0", "--concurrency", "4", "--timeout-secs", "10"])
        .output()
        .expect("run the load client");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("sequential") && stdout.contains("concurrent"), "{stdout}");
}
