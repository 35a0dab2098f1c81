//! `warden-bench --relay-bare`: the stdio floor passes bytes through
//! unchanged, message by message, and ends with its command.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn relay(command: &[&str]) -> Command {
    let mut relay = Command::new(env!("CARGO_BIN_EXE_warden-bench"));
    relay.arg("--relay-bare").arg("--").args(command);
    relay
}

#[test]
fn relays_each_message_as_it_comes_and_ends_with_the_command() {
    let mut child = relay(&["cat"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("start the relay");
    let mut to_relay = child.stdin.take().expect("stdin");
    let mut from_relay = BufReader::new(child.stdout.take().expect("stdout"));
    // One at a time: an answer must arrive before the next request is sent.
    for n in 0..50 {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"ping\",\"params\":{{\"π\":\"✓\"}}}}\n");
        to_relay.write_all(line.as_bytes()).expect("write");
        let mut echoed = String::new();
        from_relay.read_line(&mut echoed).expect("read");
        assert_eq!(echoed, line);
    }
    drop(to_relay);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}

#[test]
fn exits_with_the_commands_code_or_a_clear_error() {
    let output = relay(&["sh", "-c", "exit 3"]).stdin(Stdio::null()).output().expect("run");
    assert_eq!(output.status.code(), Some(3));
    let output = relay(&["/nonexistent/command"]).stdin(Stdio::null()).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot start /nonexistent/command"), "{stderr}");
}
