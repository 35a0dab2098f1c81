//! A request id's JSON text, kept inline when short.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use smallvec::SmallVec;

/// A request id as JSON text (`7`, `"abc"`), kept inline up to 24 bytes:
/// most clients number their requests, so a map keyed by the ids of the
/// requests in flight allocates nothing for them. It hashes and compares
/// as its text, so such a map is looked up with a `&str`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IdText(SmallVec<[u8; 24]>);

impl IdText {
    /// The id's text.
    pub fn as_str(&self) -> &str {
        // Only ever made from a `&str`: always UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl From<&str> for IdText {
    fn from(text: &str) -> IdText {
        IdText(SmallVec::from_slice(text.as_bytes()))
    }
}

impl Deref for IdText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for IdText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Hash for IdText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::IdText;

    #[test]
    fn a_map_keyed_by_ids_is_read_with_their_text() {
        let long = r#""a-request-id-longer-than-twenty-four-bytes""#;
        let mut map = HashMap::new();
        map.insert(IdText::from("7"), 1);
        map.insert(IdText::from(long), 2);
        assert_eq!((map.get("7"), map.get(long), map.get("8")), (Some(&1), Some(&2), None));
        assert_eq!(IdText::from(long).as_str(), long);
        assert_eq!(format!("{:?} {}", IdText::from("\"x\""), IdText::from("1")), r#""\"x\"" 1"#);
    }
}
