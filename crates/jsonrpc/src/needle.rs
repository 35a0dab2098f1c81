//! Fixed strings looked for in many messages.

use std::sync::OnceLock;

use memchr::memmem::Finder;

/// A string searched for in every message on a path (a key that marks a
/// protocol revision, a result type): its searcher is built once, on first
/// use, where `str::contains` builds one per call, which shows in profiles
/// of the forwarding path.
#[derive(Debug)]
pub struct Needle {
    text: &'static str,
    finder: OnceLock<Finder<'static>>,
}

impl Needle {
    /// A needle for `text`, for a `static`.
    pub const fn new(text: &'static str) -> Needle {
        Needle { text, finder: OnceLock::new() }
    }

    /// Whether `haystack` contains the needle.
    pub fn is_in(&self, haystack: &str) -> bool {
        self.finder.get_or_init(|| Finder::new(self.text)).find(haystack.as_bytes()).is_some()
    }
}

/// Whether `text` (JSON) holds a backslash: where there is none, no string
/// in it is escaped, and a key can be found by its bytes alone. Asked of
/// whole `_meta`s, arguments and results on the hot path, so it is the
/// memchr crate's SIMD search (`[u8]::contains` and `str::contains` search
/// a word at a time: about 300 instructions more a 2026-07-28 call, by
/// callgrind).
pub fn has_escape(text: &str) -> bool {
    memchr::memchr(b'\\', text.as_bytes()).is_some()
}

/// Whether `text` (JSON) has no backslash and none of the strings
/// `quoted`, each written with its quotes (`"\"_meta\""`): one pass over
/// its quotes and backslashes, where [`has_escape`] and a [`Needle`] per
/// string read it once each (four keys in a small result: about 1,000
/// instructions more, by callgrind). Every occurrence of a quoted string
/// starts at a quote, and each quote is looked at.
pub fn plain_without(text: &str, quoted: &[&str]) -> bool {
    debug_assert!(quoted.iter().all(|string| string.starts_with('"')));
    let bytes = text.as_bytes();
    !memchr::memchr2_iter(b'"', b'\\', bytes)
        .any(|at| bytes[at] == b'\\' || quoted.iter().any(|string| bytes[at..].starts_with(string.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::{Needle, has_escape, plain_without};

    /// The one pass says what a search for a backslash and for each
    /// string says.
    #[test]
    fn one_pass_finds_what_the_searches_find() {
        let quoted = [r#""_meta""#, r#""ttlMs""#];
        let searched = |text: &str| !has_escape(text) && !quoted.iter().any(|string| text.contains(string));
        for text in [
            r#"{"content":[{"type":"text","text":"hi"}]}"#,
            r#"{"_meta":{}}"#,
            r#"{"a":"_meta","b":"\"_meta\""}"#,
            r#"{"text":"say \"hi\""}"#,
            r#"{"ttlMs":0}"#,
            r#"{"ttlM":0,"_met":1,"x":"_meta"}"#,
            r#""_meta""#,
            r#"{"a":"_meta"}"#,
            r#"{"a":""}"#,
            "\\",
            "",
            "\"",
        ] {
            assert_eq!(plain_without(text, &quoted), searched(text), "{text}");
        }
    }

    #[test]
    fn an_escape_is_any_backslash() {
        assert!(has_escape(r#"{"a\u0062":1}"#));
        assert!(has_escape("\\"));
        assert!(!has_escape(r#"{"progressToken":"t/1"}"#));
        assert!(!has_escape(""));
    }

    static KEY: Needle = Needle::new("io.modelcontextprotocol/protocolVersion");

    #[test]
    fn finds_the_text_anywhere_and_nothing_else() {
        assert!(KEY.is_in(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#));
        assert!(KEY.is_in("io.modelcontextprotocol/protocolVersion"));
        assert!(!KEY.is_in(r#"{"_meta":{"io.modelcontextprotocol/protocolversion":1}}"#));
        assert!(!KEY.is_in("io.modelcontextprotocol/"));
        assert!(!KEY.is_in(""));
    }
}
