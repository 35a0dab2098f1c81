//! Rewriting a few values inside a JSON text while keeping every other byte.

use std::ops::Range;

use smallvec::SmallVec;

/// A set of replacements in one JSON text.
///
/// Spans are byte ranges of the original text, usually found with
/// [`Frame::span_of`](crate::Frame::span_of) on a `RawValue` borrowed from that
/// same text. Everything outside the spans is copied unchanged.
#[derive(Debug, Default, Clone)]
pub struct Splice {
    /// A request has at most a few (its id, a name, a progress token): kept
    /// inline, they cost no allocation of their own.
    edits: SmallVec<[(Range<usize>, String); 3]>,
}

impl Splice {
    /// An empty set of replacements.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the bytes in `span` with `text`.
    pub fn replace(&mut self, span: Range<usize>, text: impl Into<String>) -> &mut Self {
        self.edits.push((span, text.into()));
        self
    }

    /// Whether there is nothing to replace.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Whether a replacement falls inside `span` or overlaps it.
    pub fn touches(&self, span: &Range<usize>) -> bool {
        self.edits.iter().any(|(edit, _)| edit.start < span.end && span.start < edit.end)
    }

    /// Applies the replacements to `base`.
    ///
    /// # Panics
    /// When spans overlap or fall outside `base`: they come from Warden's own
    /// parsing of `base`, never from input, so that is a bug.
    pub fn apply(&self, base: &str) -> String {
        self.apply_with(base, None)
    }

    /// Applies the replacements, and `extra`, to `base`: `extra` is a value
    /// borrowed for this one text (the id a request gets on its way out),
    /// which costs no copy of its own.
    ///
    /// # Panics
    /// As [`apply`](Splice::apply).
    pub fn apply_with(&self, base: &str, extra: Option<(Range<usize>, &str)>) -> String {
        let mut edits: SmallVec<[(Range<usize>, &str); 4]> =
            self.edits.iter().map(|(span, text)| (span.clone(), text.as_str())).collect();
        edits.extend(extra);
        edits.sort_by_key(|(span, _)| span.start);
        let removed: usize = edits.iter().map(|(span, _)| span.len()).sum();
        let added: usize = edits.iter().map(|(_, text)| text.len()).sum();
        let mut out = String::with_capacity(base.len() - removed.min(base.len()) + added);
        let mut at = 0;
        for (span, text) in &edits {
            assert!(span.start >= at && span.end <= base.len(), "overlapping or out-of-range splice");
            out.push_str(&base[at..span.start]);
            out.push_str(text);
            at = span.end;
        }
        out.push_str(&base[at..]);
        out
    }
}

/// Encodes `value` as a JSON string literal, quotes included.
pub fn json_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    push_json_string(&mut out, value);
    out
}

/// Appends `value` to `out` as a JSON string literal, quotes included.
pub(crate) fn push_json_string(out: &mut String, value: &str) {
    // Most keys and names need no escape: copied as they are.
    if !value.bytes().any(|byte| byte < 0x20 || byte == b'"' || byte == b'\\') {
        out.push('"');
        out.push_str(value);
        out.push('"');
        return;
    }
    // Serialising a &str cannot fail.
    out.push_str(&serde_json::to_string(value).unwrap_or_else(|_| String::from("\"\"")));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_the_spans() {
        let base = r#"{"id": 1 ,"name":"a","x":[1.50,"é"]}"#;
        let mut splice = Splice::new();
        splice.replace(17..20, "\"b\"").replace(7..8, "42");
        assert_eq!(splice.apply(base), r#"{"id": 42 ,"name":"b","x":[1.50,"é"]}"#);
    }

    #[test]
    fn a_borrowed_extra_takes_its_place_among_the_kept_spans() {
        let base = r#"{"id":7,"params":{"name":"a","_meta":{"progressToken":3}}}"#;
        let span = |part: &str| base.find(part).map(|at| at..at + part.len()).expect("in base");
        let mut splice = Splice::new();
        splice.replace(span("\"a\""), "\"b\"").replace(span("3"), "\"w1\"");
        let first = splice.apply_with(base, Some((6..7, "100")));
        assert_eq!(first, r#"{"id":100,"params":{"name":"b","_meta":{"progressToken":"w1"}}}"#);
        assert_eq!(first.capacity(), first.len(), "the text is sized exactly");
        // The splice itself is unchanged: the next id goes in the same place.
        let second = splice.apply_with(base, Some((6..7, "101")));
        assert_eq!(second, r#"{"id":101,"params":{"name":"b","_meta":{"progressToken":"w1"}}}"#);
        assert_eq!(splice.apply(base), r#"{"id":7,"params":{"name":"b","_meta":{"progressToken":"w1"}}}"#);
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(json_string("a\"b\n"), r#""a\"b\n""#);
        assert_eq!(json_string("a\\b\u{1}"), r#""a\\b\u0001""#);
        assert_eq!(json_string("é/x"), r#""é/x""#);
    }
}
