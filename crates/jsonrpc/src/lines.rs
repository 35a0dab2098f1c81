//! Reading newline-delimited messages with a size cap.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// How many bytes of an oversized line's start and end are kept.
const TAIL: usize = 256;

/// One read from a [`LineReader`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line without its terminator (`\n` or `\r\n`).
    Text(String),
    /// A line longer than the cap; its bytes were skipped up to the next newline.
    TooLong {
        /// How many bytes the line had.
        bytes: usize,
        /// Its first bytes (up to 256, lossily decoded), to say what it was.
        head: String,
        /// Its last bytes (up to 256, lossily decoded).
        tail: String,
    },
    /// A line that is not UTF-8.
    NotUtf8,
    /// The stream ended.
    Eof,
}

/// Reads lines from an async stream, never holding more than `max` bytes of one
/// line in memory.
///
/// Blank lines (nothing but JSON whitespace) are skipped; a line of other
/// whitespace (a no-break space) is returned, for the parse to refuse. A
/// last line without a newline is still returned.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    /// The line read so far: kept across a read that was given up, so a
    /// caller may stop waiting for a line and ask again without losing any.
    line: Vec<u8>,
    /// The last bytes of an oversized line.
    tail: Vec<u8>,
    /// How many bytes the line read so far has (past `max`, more than kept).
    seen: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader that refuses lines over `max` bytes.
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, inner),
            max,
            line: Vec::new(),
            tail: Vec::new(),
            seen: 0,
        }
    }

    /// Reads the next line.
    ///
    /// Cancel safe: a line partly read when the future is dropped is kept,
    /// and the next call goes on with it (the front's `select!` gives up
    /// waiting whenever another branch is ready first).
    pub async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            let line = self.next_raw().await?;
            if let Line::Text(text) = &line
                && crate::frame::json_trimmed(text).is_empty()
            {
                continue;
            }
            return Ok(line);
        }
    }

    /// The next line, blank or not. Its only await is the buffer's refill,
    /// before anything of that refill is taken: what was taken is in `self`.
    async fn next_raw(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(if self.seen == 0 { Line::Eof } else { self.finish() });
            }
            let (chunk, done) = match memchr::memchr(b'\n', available) {
                Some(at) => (&available[..at], at + 1),
                None => (available, available.len()),
            };
            let before = self.seen;
            self.seen += chunk.len();
            if before <= self.max && self.seen > self.max {
                // Past the cap from this chunk on: the tail starts with what
                // was kept (all of the line so far), whatever the chunks were.
                self.tail.extend_from_slice(&self.line[self.line.len().saturating_sub(TAIL)..]);
            }
            let room = self.max.saturating_sub(self.line.len());
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if self.seen > self.max {
                self.tail.extend_from_slice(&chunk[chunk.len().saturating_sub(TAIL)..]);
                self.tail.drain(..self.tail.len().saturating_sub(TAIL));
            }
            let found = done > chunk.len();
            self.inner.consume(done);
            if found {
                return Ok(self.finish());
            }
        }
    }

    /// The line read so far, as a [`Line`]; the reader starts afresh.
    fn finish(&mut self) -> Line {
        let seen = std::mem::take(&mut self.seen);
        if seen > self.max {
            let head = String::from_utf8_lossy(&self.line[..self.line.len().min(TAIL)]).into_owned();
            let tail = String::from_utf8_lossy(&self.tail).trim_end_matches('\r').to_owned();
            self.line = Vec::new();
            self.tail.clear();
            return Line::TooLong { bytes: seen, head, tail };
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        match String::from_utf8(std::mem::take(&mut self.line)) {
            Ok(text) => Line::Text(text),
            Err(_) => Line::NotUtf8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            let line = reader.next().await.unwrap();
            let end = line == Line::Eof;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn splits_caps_and_recovers() {
        let input = b"short\r\n\n0123456789abc\nnext\n\xff\xfe\nlast";
        let lines = read_all(input, 10).await;
        assert_eq!(
            lines,
            vec![
                Line::Text("short".into()),
                Line::TooLong { bytes: 13, head: "0123456789".into(), tail: "0123456789abc".into() },
                Line::Text("next".into()),
                Line::NotUtf8,
                Line::Text("last".into()),
                Line::Eof,
            ]
        );
    }

    /// A caller that stops waiting for a line (a `select!` whose other
    /// branch was ready) and asks again gets the whole line, its first
    /// bytes included: the seed 001's lost message.
    #[tokio::test]
    async fn a_read_given_up_loses_nothing() {
        use std::future::Future;
        use std::task::Context;
        use tokio::io::AsyncWriteExt;

        for max in [100, 4] {
            let (mut client, ours) = tokio::io::duplex(64);
            let mut reader = LineReader::new(ours, max);
            client.write_all(b"{\"first\":").await.unwrap();
            {
                let mut read = std::pin::pin!(reader.next());
                let mut cx = Context::from_waker(std::task::Waker::noop());
                assert!(read.as_mut().poll(&mut cx).is_pending(), "half a line is no line yet");
            }
            client.write_all(b"\"half\"}\nnext\n").await.unwrap();
            drop(client);
            let whole = if max == 100 {
                Line::Text(r#"{"first":"half"}"#.into())
            } else {
                Line::TooLong { bytes: 16, head: "{\"fi".into(), tail: r#"{"first":"half"}"#.into() }
            };
            assert_eq!(reader.next().await.unwrap(), whole);
            assert_eq!(reader.next().await.unwrap(), Line::Text("next".into()));
            assert_eq!(reader.next().await.unwrap(), Line::Eof);
        }
    }

    /// An oversized line's tail is its last bytes, those read before it
    /// passed the cap included, however it arrived (found by the fuzz
    /// target reading the same stream in pieces).
    #[tokio::test]
    async fn an_oversized_lines_tail_does_not_depend_on_its_pieces() {
        use std::future::Future;
        use std::task::Context;
        use tokio::io::AsyncWriteExt;

        let (mut client, ours) = tokio::io::duplex(64);
        let mut reader = LineReader::new(ours, 4);
        client.write_all(b"012").await.unwrap();
        {
            let mut read = std::pin::pin!(reader.next());
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(read.as_mut().poll(&mut cx).is_pending());
        }
        client.write_all(b"3456789\n").await.unwrap();
        let line = reader.next().await.unwrap();
        assert_eq!(line, Line::TooLong { bytes: 10, head: "0123".into(), tail: "0123456789".into() });
    }

    /// Only JSON whitespace makes a line blank: a line of a no-break space
    /// is not a message, and is returned for the parse to answer.
    #[tokio::test]
    async fn only_json_whitespace_makes_a_line_blank() {
        let lines = read_all(" \t\r\n\u{a0}\nnext\n".as_bytes(), 100).await;
        assert_eq!(lines, vec![Line::Text("\u{a0}".into()), Line::Text("next".into()), Line::Eof]);
    }

    #[tokio::test]
    async fn long_lines_across_buffer_refills() {
        let mut input = vec![b'a'; 200_000];
        input.push(b'\n');
        input.extend_from_slice(b"ok\n");
        let lines = read_all(&input, 300_000).await;
        assert!(matches!(&lines[0], Line::Text(t) if t.len() == 200_000));
        assert_eq!(lines[1], Line::Text("ok".into()));
        let capped = read_all(&input, 100_000).await;
        assert_eq!(capped[0], Line::TooLong { bytes: 200_000, head: "a".repeat(256), tail: "a".repeat(256) });
        assert_eq!(capped[1], Line::Text("ok".into()));
    }
}
