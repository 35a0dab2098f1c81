//! Random and hostile input never panics the framing code: every line is
//! either a frame or an error with a JSON-RPC code.

use warden_jsonrpc::{Frame, Line, LineReader, guess_id};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// JSON-ish fragments, so the inputs get deep into the parser.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\"jsonrpc\"",
    "\"2.0\"",
    "\"id\"",
    "\"method\"",
    "\"params\"",
    "\"result\"",
    "\"error\"",
    "null",
    "true",
    "1",
    "-0",
    "1e999",
    "\"\\u0000\"",
    "\"\\ud800\"",
    " ",
    "\n",
    "\"tools/call\"",
    "\"name\"",
    "{\"a\":",
    "\u{feff}",
    "é",
    "\\",
    "\"_meta\"",
    "\"progressToken\"",
];

#[test]
fn random_messages_parse_or_fail_cleanly() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for _ in 0..50_000 {
        let length = random.next() % 24;
        let text: String = (0..length).map(|_| random.pick(PIECES)).collect();
        match Frame::parse(text.clone()) {
            Ok(frame) => {
                // Whatever parsed can be re-addressed without panicking.
                let _ = frame.with_id("\"x\"");
                assert!(frame.text().len() <= text.len());
            }
            Err(err) => assert!(err.code.code() <= -32000, "{text:?}: {err}"),
        }
        let half = text.len() / 2;
        let cut = (0..=half).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let _ = guess_id(&text[..cut], &text[cut..]);
    }
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    // Params are skipped as raw text, not decoded: deep nesting is forwarded
    // as it is (stages that decode arguments have serde_json's depth limit).
    let deep =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
    let frame = Frame::parse(deep).expect("a deep but valid message");
    assert_eq!(frame.id(), Some("1"));
    let unbalanced = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}}}"#, "[".repeat(100_000));
    assert!(Frame::parse(unbalanced).is_err());
    assert!(Frame::parse("[".repeat(100_000)).is_err());
}

#[tokio::test]
async fn random_bytes_split_into_lines_without_panics() {
    let mut random = Random(42);
    let bytes: Vec<u8> = (0..200_000).map(|_| (random.next() % 256) as u8).collect();
    let mut reader = LineReader::new(bytes.as_slice(), 4096);
    let mut lines = 0;
    loop {
        match reader.next().await.unwrap() {
            Line::Eof => break,
            Line::Text(text) => assert!(text.len() <= 4096),
            Line::TooLong { bytes, .. } => assert!(bytes > 4096),
            Line::NotUtf8 => {}
        }
        lines += 1;
    }
    assert!(lines > 100);
}
