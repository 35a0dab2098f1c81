//! Keeping the last bytes an upstream wrote on stderr.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::io::AsyncRead;
use warden_jsonrpc::{Line, LineReader};

/// The last bytes of an upstream's stderr, quoted in errors about it.
#[derive(Debug)]
pub struct StderrTail {
    limit: usize,
    bytes: Mutex<VecDeque<u8>>,
}

impl StderrTail {
    /// Keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        StderrTail { limit, bytes: Mutex::new(VecDeque::new()) }
    }

    /// Appends one line.
    pub fn push_line(&self, line: &str) {
        let mut bytes = warden_sync::lock(&self.bytes);
        bytes.extend(line.as_bytes());
        bytes.push_back(b'\n');
        let excess = bytes.len().saturating_sub(self.limit);
        bytes.drain(..excess);
    }

    /// The kept text, starting at a line boundary when it was cut.
    pub fn text(&self) -> String {
        let bytes = warden_sync::lock(&self.bytes);
        let (front, back) = bytes.as_slices();
        let all = [front, back].concat();
        let text = String::from_utf8_lossy(&all);
        let text = text.trim_end();
        if all.len() >= self.limit
            && let Some(cut) = text.find('\n')
        {
            return text[cut + 1..].to_owned();
        }
        text.to_owned()
    }

    /// `reason`, followed by the stderr tail when there is one.
    pub fn explain(&self, reason: &str) -> String {
        match self.text() {
            tail if tail.is_empty() => reason.to_owned(),
            tail => format!("{reason}; its stderr ends with:\n{tail}"),
        }
    }
}

/// Copies `stderr` line by line into `tail` and Warden's log until it ends.
pub(crate) async fn pump(name: std::sync::Arc<str>, stderr: impl AsyncRead + Unpin, tail: std::sync::Arc<StderrTail>) {
    let mut lines = LineReader::new(stderr, 64 * 1024);
    loop {
        match lines.next().await {
            Ok(Line::Text(line)) => {
                tracing::info!(target: "warden::upstream::stderr", server = %name, "{line}");
                tail.push_line(&line);
            }
            Ok(Line::TooLong { bytes, .. }) => tail.push_line(&format!("[a stderr line of {bytes} bytes was cut]")),
            Ok(Line::NotUtf8) => tail.push_line("[a stderr line that is not UTF-8 was cut]"),
            Ok(Line::Eof) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StderrTail;

    #[test]
    fn keeps_the_last_whole_lines() {
        let tail = StderrTail::new(16);
        tail.push_line("first line");
        tail.push_line("second");
        tail.push_line("third");
        assert_eq!(tail.text(), "second\nthird");
        assert_eq!(tail.explain("exited"), "exited; its stderr ends with:\nsecond\nthird");
        assert_eq!(StderrTail::new(8).explain("exited"), "exited");
    }
}
