//! A decoder for `text/event-stream` bodies: only each event's `data` is kept.

/// Decodes server-sent events from a body that arrives in chunks.
///
/// Lines end with `\n`, `\r\n` or `\r`; `data:` lines are joined with `\n`;
/// a blank line ends an event; comments (`:`) and other fields are skipped.
/// An event without a `data` field is not reported; one with an empty `data`
/// (a priming event) is reported as an empty string.
#[derive(Default)]
pub struct SseDecoder {
    /// Bytes of an unfinished line.
    line: Vec<u8>,
    /// The data of the event being read.
    data: String,
    /// Whether the event being read has a `data` field.
    has_data: bool,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl SseDecoder {
    /// Feeds a chunk of the body; pushes the data of each completed event to `events`.
    pub fn feed(&mut self, chunk: &[u8], events: &mut Vec<String>) {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, events);
            self.line = line;
            self.line.clear();
            let skip = if rest[end] == b'\r' {
                match rest.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None => {
                        self.after_cr = true;
                        1
                    }
                }
            } else {
                1
            };
            rest = &rest[end + skip..];
        }
        self.line.extend_from_slice(rest);
    }

    /// The body has ended: an unterminated event is dropped, as the standard says.
    pub fn finish(&mut self) {
        self.line.clear();
        self.data.clear();
        self.has_data = false;
        self.after_cr = false;
    }

    fn line_done(&mut self, line: &[u8], events: &mut Vec<String>) {
        if line.is_empty() {
            if self.has_data {
                events.push(std::mem::take(&mut self.data));
                self.has_data = false;
            }
            return;
        }
        if line[0] == b':' {
            return; // a comment, e.g. a keep-alive
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(&String::from_utf8_lossy(value));
            self.has_data = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = SseDecoder::default();
        let mut events = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut events);
        }
        decoder.finish();
        events
    }

    #[test]
    fn one_event() {
        assert_eq!(decode(&[b"event: message\ndata: {\"id\":1}\n\n"]), ["{\"id\":1}"]);
    }

    #[test]
    fn priming_and_comments_are_skipped() {
        let body = b"id: 0\ndata:\n\n: keep-alive\n\nid: 1\nevent: message\ndata: x\n\n";
        // A `data:` line with an empty value is data (an empty string).
        assert_eq!(decode(&[body]), ["", "x"]);
        assert_eq!(decode(&[b"id: 0\nretry: 100\n\n: ping\n\ndata: y\n\n"]), ["y"]);
    }

    #[test]
    fn multi_line_data_and_no_space() {
        assert_eq!(decode(&[b"data:a\ndata: b\n\n"]), ["a\nb"]);
    }

    #[test]
    fn line_endings_and_split_chunks() {
        assert_eq!(decode(&[b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"]), ["a", "b", "c"]);
        assert_eq!(decode(&[b"data: a\r", b"\n\r", b"\ndata: ", b"b\n", b"\n"]), ["a", "b"]);
        let whole = b"event: message\r\ndata: {\"jsonrpc\":\"2.0\"}\r\n\r\n";
        for split in 0..whole.len() {
            let (head, tail) = whole.split_at(split);
            assert_eq!(decode(&[head, tail]), ["{\"jsonrpc\":\"2.0\"}"], "split at {split}");
        }
    }

    #[test]
    fn unterminated_event_is_dropped() {
        assert!(decode(&[b"data: a\n"]).is_empty());
    }
}
