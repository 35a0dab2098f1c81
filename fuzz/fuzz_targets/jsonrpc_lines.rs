//! `LineReader` on hostile byte streams against a plain split on `\n`:
//! the same lines (without `\r\n` or `\n`), blank ones skipped, lines over
//! the cap reported with their length, non-UTF-8 ones flagged; never more
//! than the cap held. The stream arrives in chunks with a wait before each,
//! and the caller gives a read up at some of those waits (as the stdio
//! front's `select!` does) and asks again: nothing may be lost or doubled.
#![no_main]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncRead, ReadBuf};
use warden_jsonrpc::{Line, LineReader};

/// A stream that hands out `chunk` bytes at a time, each after one wait.
struct Chunked<'a> {
    data: &'a [u8],
    chunk: usize,
    waited: bool,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if !self.waited {
            self.waited = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.waited = false;
        let n = self.chunk.min(self.data.len()).min(buf.remaining());
        buf.put_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Poll::Ready(Ok(()))
    }
}

/// Every line `stream` gives, read with a [`LineReader`] capped at `max`
/// that is given up at the waits whose bit in `give_up` (taken in turn) is
/// set, and asked again.
fn read_all(stream: impl AsyncRead + Unpin, max: usize, give_up: u8) -> Vec<Line> {
    let mut reader = LineReader::new(stream, max);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    let mut waits = 0u32;
    'lines: loop {
        let mut read = std::pin::pin!(reader.next());
        loop {
            match read.as_mut().poll(&mut cx) {
                Poll::Ready(line) => {
                    let line = line.expect("reading a slice cannot fail");
                    let end = line == Line::Eof;
                    out.push(line);
                    if end {
                        return out;
                    }
                    continue 'lines;
                }
                Poll::Pending => {
                    waits += 1;
                    if give_up.rotate_left(waits) & 1 == 1 {
                        continue 'lines;
                    }
                }
            }
        }
    }
}

fn expected(data: &[u8], max: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut parts: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.ends_with(b"\n") || data.is_empty() {
        parts.pop();
    }
    for part in parts {
        if part.len() > max {
            out.push(Line::TooLong { bytes: part.len(), head: String::new(), tail: String::new() });
            continue;
        }
        let part = part.strip_suffix(b"\r").unwrap_or(part);
        match std::str::from_utf8(part) {
            Ok(text) if text.bytes().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) => {}
            Ok(text) => out.push(Line::Text(text.to_owned())),
            Err(_) => out.push(Line::NotUtf8),
        }
    }
    out.push(Line::Eof);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, data)) = data.split_first() else { return };
    let max = usize::from(first % 64) + 1;
    let got = read_all(data, max, 0);
    let want = expected(data, max);
    assert_eq!(got.len(), want.len(), "lines of {data:?} (max {max}): {got:?}");
    for (got, want) in got.iter().zip(&want) {
        match (got, want) {
            (Line::TooLong { bytes, head, tail }, Line::TooLong { bytes: expected, .. }) => {
                assert_eq!(bytes, expected);
                assert!(head.len() <= 256 * 3 && tail.len() <= 256 * 3);
            }
            _ => assert_eq!(got, want, "in {data:?} (max {max})"),
        }
    }
    // The same stream in pieces, reads given up on the way: the same lines,
    // an oversized one's head and tail included.
    if let [chunk, give_up, data @ ..] = data {
        let chunk = usize::from(chunk % 16) + 1;
        let pieces = read_all(Chunked { data, chunk, waited: false }, max, *give_up);
        let whole = read_all(data, max, 0);
        assert_eq!(pieces, whole, "in {data:?} (max {max}, {chunk}-byte pieces, giving up by {give_up:08b})");
    }
});
