//! A bare stdio relay: the command's stdin and stdout joined to this
//! process's own by two threads that block in `read` and `write`, with no
//! parsing and no event loop. It is the least a stdio hop can do, so a
//! gateway wrapping a server is measured against it: the floor of a stdio
//! hop on this machine (its CPU per call is mostly the kernel's), not a peer.

use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::thread;

use anyhow::Context;

/// Bytes moved per `read`; a message larger than this takes several.
const BUFFER: usize = 64 * 1024;

/// Runs `command` and relays until the client closes stdin and the command
/// has exited; returns the command's exit code.
pub fn run(command: &[String]) -> anyhow::Result<i32> {
    let (program, args) = command.split_first().context("no command to relay to")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the command's pipes were not opened");
    };
    let answers = thread::spawn(move || copy(&mut from_child, &mut io::stdout().lock()));
    // A client gone or a child that stopped reading ends the requests' side;
    // closing the child's stdin then lets it exit.
    let requests = copy(&mut io::stdin().lock(), &mut to_child);
    drop(to_child);
    let status = child.wait().context("cannot wait for the command")?;
    let answered = answers.join().map_err(|_| anyhow::anyhow!("the answers' thread panicked"))?;
    requests.context("relaying requests")?;
    answered.context("relaying answers")?;
    Ok(status.code().unwrap_or(1))
}

/// Copies until end of input, flushing after every read so that each
/// message leaves as soon as it arrived.
fn copy(from: &mut impl Read, to: &mut impl Write) -> io::Result<()> {
    let mut buffer = vec![0; BUFFER];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        to.write_all(&buffer[..read])?;
        to.flush()?;
    }
}
