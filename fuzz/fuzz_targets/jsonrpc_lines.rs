//! `LineReader` on hostile byte streams against a plain split on `\n`:
//! the same lines (without `\r\n` or `\n`), blank ones skipped, lines over
//! the cap reported with their length, non-UTF-8 ones flagged; never more
//! than the cap held.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warden_jsonrpc::{Line, LineReader};

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
            Ok(text) if text.trim().is_empty() => {}
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
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let got = runtime.block_on(async {
        let mut reader = LineReader::new(data, max);
        let mut out = Vec::new();
        loop {
            let line = reader.next().await.expect("reading a slice cannot fail");
            let end = line == Line::Eof;
            out.push(line);
            if end {
                return out;
            }
        }
    });
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
});
