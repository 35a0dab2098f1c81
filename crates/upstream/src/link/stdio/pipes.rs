//! The tasks that move bytes between Warden and an upstream process.

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::process::ChildStdout;
use tokio::sync::mpsc;
use warden_jsonrpc::{Line, LineReader};
use warden_sandbox::SandboxReport;
use warden_sandbox::annotate::annotate_line;

use crate::connection::Outgoing;
use crate::dispatch::Dispatch;

/// Writes queued messages to the process, one per line, flushing whenever the
/// queue runs empty so that bursts cost one system call.
pub(crate) async fn write_all(mut outbox: mpsc::UnboundedReceiver<Outgoing>, stdin: impl AsyncWrite + Unpin) {
    let mut stdin = BufWriter::with_capacity(64 * 1024, stdin);
    while let Some(first) = outbox.recv().await {
        let mut next = Some(first);
        while let Some(item) = next {
            match item {
                Outgoing::Line(text) => {
                    if stdin.write_all(text.as_bytes()).await.is_err() || stdin.write_all(b"\n").await.is_err() {
                        return;
                    }
                }
                Outgoing::Close => {
                    let _ = stdin.flush().await;
                    let _ = stdin.shutdown().await;
                    return;
                }
            }
            next = outbox.try_recv().ok();
        }
        if stdin.flush().await.is_err() {
            return;
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
