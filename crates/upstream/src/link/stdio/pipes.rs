//! The tasks that move bytes between Warden and an upstream process.

use std::sync::Arc;

use tokio::net::unix::pipe;
use tokio::process::ChildStdout;
use tokio::sync::mpsc;
use warden_jsonrpc::{DirectPipe, Line, LineReader};
use warden_sandbox::SandboxReport;
use warden_sandbox::annotate::annotate_line;

use crate::connection::Outgoing;
use crate::dispatch::Dispatch;

/// Writes queued messages to the process, one per line, gathering whatever
/// is queued into one write so that bursts cost one system call. Lines
/// written at once by their requesters (see [`DirectPipe`]) never overlap
/// these: they are written only while this writer is idle.
pub(crate) async fn write_all(mut outbox: mpsc::UnboundedReceiver<Outgoing>, stdin: Arc<DirectPipe<pipe::Sender>>) {
    let mut gathered = Vec::with_capacity(64 * 1024);
    while let Some(first) = outbox.recv().await {
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outgoing::Line(text) => {
                    gathered.extend_from_slice(text.as_bytes());
                    gathered.push(b'\n');
                }
                Outgoing::Rest(bytes) => gathered.extend_from_slice(&bytes),
                // Dropping the pipe closes it: the server's sign to exit.
                Outgoing::Close => {
                    let _ = stdin.write_all(&gathered).await;
                    return;
                }
            }
            next = outbox.try_recv().ok();
            if next.is_none() {
                if stdin.write_all(&gathered).await.is_err() {
                    return;
                }
                gathered.clear();
                // One big message does not keep its room for good.
                gathered.shrink_to(64 * 1024);
                next = stdin.next_or_idle(|| outbox.try_recv().ok());
            }
        }
    }
}

/// Reads the process's stdout until it ends, handing every line to `dispatch`.
/// From a `sandboxed` process, tool errors the sandbox caused are marked, and
/// each marked refusal is reported.
pub(crate) async fn read_all(stdout: ChildStdout, dispatch: Dispatch, sandboxed: Option<SandboxReport>) {
    let name = dispatch.connection().name().to_owned();
    let mut lines = LineReader::new(stdout, dispatch.limit());
    loop {
        match lines.next().await {
            Ok(Line::Text(line)) => {
                match sandboxed.as_ref().and_then(|report| Some((report, annotate_line(line.as_bytes())?))) {
                    Some((report, marked)) => {
                        for refusal in &marked.refusals {
                            report.blocked(&name, *refusal);
                        }
                        dispatch.text(String::from_utf8_lossy(&marked.line).into_owned())
                    }
                    None => dispatch.text(line),
                }
            }
            Ok(Line::TooLong { bytes, head, tail }) => dispatch.oversized(bytes, &head, &tail),
            Ok(Line::NotUtf8) => {
                tracing::warn!(server = %name, "dropped a line that is not UTF-8 from upstream stdout")
            }
            Ok(Line::Eof) => return,
            Err(err) => {
                tracing::warn!(server = %name, %err, "reading upstream stdout failed");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;
    use warden_jsonrpc::Unwritten;

    use super::*;

    /// Lines written at once and lines queued reach the pipe whole and in
    /// the order they were sent, though the pipe (64 KiB) takes the big
    /// ones only in part and the reader is slower than the writers.
    #[tokio::test]
    async fn lines_written_at_once_and_queued_arrive_whole_and_in_order() {
        let (sender, mut receiver) = pipe::pipe().unwrap();
        let stdin = Arc::new(DirectPipe::new(sender));
        let (queue, outbox) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_all(outbox, stdin.clone()));
        let lines: Vec<String> =
            (0..12).map(|n| format!("{n:02}:{}", char::from(b'a' + n as u8).to_string().repeat(40_000))).collect();
        for (n, line) in lines.iter().enumerate() {
            if n % 3 == 2 {
                // A line queued the way notifications are.
                stdin.queue(|| queue.send(Outgoing::Line(line.clone()))).unwrap();
            } else {
                let queued = |unwritten| match unwritten {
                    Unwritten::Line(text) => queue.send(Outgoing::Line(text)),
                    Unwritten::Rest(bytes) => queue.send(Outgoing::Rest(bytes)),
                };
                stdin.send(line.clone(), queued).unwrap();
            }
        }
        queue.send(Outgoing::Close).unwrap();
        // The writer holds the pipe from now on, and closes it when done.
        drop(stdin);
        let mut read = Vec::new();
        receiver.read_to_end(&mut read).await.unwrap();
        writer.await.unwrap();
        let expected: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert!(read == expected.as_bytes(), "{} bytes read, {} sent", read.len(), expected.len());
    }
}
