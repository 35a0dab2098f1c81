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

#[cfg(test)]
mod tests {
    use super::{Needle, has_escape};

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
