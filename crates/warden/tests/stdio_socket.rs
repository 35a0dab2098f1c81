//! A client that starts Warden with Unix socket pairs for stdin and stdout,
//! as Node's `child_process` does (libuv's "pipes" are socket pairs): Warden
//! serves it through its event loop, as it serves a pipe.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::{PATIENCE, fixture_bin, warden_bin};

#[test]
fn a_client_on_socket_pairs_is_served() {
    let (ours_in, theirs_in) = UnixStream::pair().expect("a socket pair for stdin");
    let (ours_out, theirs_out) = UnixStream::pair().expect("a socket pair for stdout");
    let mut child = Command::new(warden_bin())
        .args(["wrap", "--", &fixture_bin()])
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs_in)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .spawn()
        .expect("start warden");
    ours_out.set_read_timeout(Some(PATIENCE)).expect("a read timeout");
    let mut writer = ours_in;
    let mut reader = BufReader::new(ours_out);
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        writer.write_all(format!("{line}\n").as_bytes()).expect("write a request");
        loop {
            let mut answer = String::new();
            assert!(reader.read_line(&mut answer).expect("read an answer") > 0, "warden closed its stdout");
            let message: Value = serde_json::from_str(&answer).expect("a JSON line");
            if message["id"] == json!(id) {
                return message;
            }
        }
    };
    let init = request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "socket", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let answer = request(2, "tools/call", json!({"name": "echo", "arguments": {"text": "over a socket"}}));
    assert_eq!(answer["result"]["content"][0]["text"], "over a socket", "{answer}");
    let _ = child.kill();
    let _ = child.wait();
}
