//! A JSON string read without a copy where it can be.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use serde::de::{Deserialize, Deserializer, Visitor};

/// A JSON string, borrowed from the text it was read from unless it holds
/// an escape. Serde copies a `Cow<str>` inside an `Option` (its borrowing
/// is for bare `Cow` fields only); this borrows wherever it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'a> Text<'a> {
    /// The string that the JSON text `raw` (one value) holds, or `None`
    /// when it is not a string. Borrowed, without serde, when it has no
    /// escape: the common case, a name or a level, costs one pass over it.
    pub fn read(raw: &'a str) -> Option<Text<'a>> {
        let plain = raw
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .filter(|inner| !inner.bytes().any(|byte| byte == b'"' || byte == b'\\' || byte < 0x20));
        match plain {
            Some(inner) => Some(Text(Cow::Borrowed(inner))),
            None => serde_json::from_str(raw).ok(),
        }
    }
}

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'a>, D::Error> {
        deserializer.deserialize_str(TextVisitor(PhantomData))
    }
}

struct TextVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Text<'a>, E> {
        Ok(Text(Cow::Borrowed(text)))
    }

    fn visit_str<E>(self, text: &str) -> Result<Text<'a>, E> {
        Ok(Text(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E>(self, text: String) -> Result<Text<'a>, E> {
        Ok(Text(Cow::Owned(text)))
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::Text;

    #[test]
    fn borrows_unless_escaped() {
        let plain: Option<Text> = serde_json::from_str(r#""tools/call""#).unwrap();
        assert!(matches!(plain, Some(Text(Cow::Borrowed("tools/call")))));
        let escaped: Option<Text> = serde_json::from_str(r#""tools\/call""#).unwrap();
        assert!(matches!(escaped, Some(Text(Cow::Owned(ref text))) if text == "tools/call"));
        assert!(serde_json::from_str::<Text>("1").is_err());
    }

    /// `read` takes exactly what serde_json takes as a string, and reads it
    /// the same, borrowing when there is no escape.
    #[test]
    fn read_is_serde_jsons_string() {
        for raw in [
            r#""echo""#,
            r#""""#,
            r#""é ok""#,
            r#""a\"b""#,
            r#""tools\/call""#,
            r#""\u0041""#,
            r#""a"b""#,
            "\"tab\there\"",
            r#"""#,
            r#"1"#,
            r#"null"#,
            r#" "x" "#,
            r#""x"#,
            r#"x""#,
        ] {
            let by_serde = serde_json::from_str::<Text>(raw).ok();
            assert_eq!(Text::read(raw), by_serde, "{raw}");
        }
        assert!(matches!(Text::read(r#""echo""#), Some(Text(Cow::Borrowed("echo")))));
    }
}
