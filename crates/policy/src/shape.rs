//! Whether a call's arguments are acceptable, without decoding them.
//!
//! A call whose arguments nothing reads (no annotation, no candidate rule
//! with an `args` condition, no path-like text) still has them checked: they
//! must be a JSON object (or absent, blank or `null`), else the call is
//! denied (`invalid-arguments`). [`acceptable`] walks the text with the
//! same parser and the same callbacks as decoding it into a
//! [`serde_json::Value`] would, so it accepts exactly what decoding accepts
//! (see [`crate::decode`]: no key may be named twice), but keeps nothing
//! and so allocates nothing (up to 16 keys in an object). When it says no (or cannot
//! be sure), the caller decodes the arguments, whose error names the problem.

use std::fmt;

use std::collections::HashSet;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use smallvec::SmallVec;

/// The key `serde_json::Value` decodes specially with the `raw_value`
/// feature (its value is parsed again as JSON): left to the full decoding.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// Whether decoding `arguments` gives an object (absent, blank and `null`
/// count as an empty one). `false` when it does not, or may not: decode them
/// to know why.
pub(crate) fn acceptable(arguments: Option<&str>) -> bool {
    let Some(text) = arguments.filter(|t| !t.trim().is_empty()) else {
        return true;
    };
    // Escapes may spell the raw-value key; decoding settles those.
    if warden_jsonrpc::has_escape(text) || text.contains(RAW_VALUE_KEY) {
        return false;
    }
    matches!(serde_json::from_str::<Shape>(text), Ok(Shape::ObjectOrNull))
}

/// What the top-level value is.
enum Shape {
    ObjectOrNull,
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Shape, D::Error> {
        let Walked(object_or_null) = deserializer.deserialize_any(Walk)?;
        Ok(if object_or_null { Shape::ObjectOrNull } else { Shape::Other })
    }
}

/// Any value, walked as `Value` decodes it (`deserialize_any` all the way
/// down, so numbers are parsed to the same precision and limits, and not
/// skimmed as `IgnoredAny` would); whether it was an object or `null`.
struct Walked(bool);

impl<'de> Deserialize<'de> for Walked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Walked, D::Error> {
        deserializer.deserialize_any(Walk)
    }
}

struct Walk;

impl<'de> Visitor<'de> for Walk {
    type Value = Walked;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Walked, E> {
        Ok(Walked(false))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Walked, E> {
        Ok(Walked(false))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Walked, E> {
        Ok(Walked(false))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Walked, E> {
        Ok(Walked(false))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Walked, E> {
        Ok(Walked(false))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Walked, E> {
        Ok(Walked(true))
    }

    fn visit_none<E: de::Error>(self) -> Result<Walked, E> {
        Ok(Walked(true))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Walked, D::Error> {
        deserializer.deserialize_any(Walk)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Walked, A::Error> {
        while seq.next_element::<Walked>()?.is_some() {}
        Ok(Walked(false))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Walked, A::Error> {
        // Keys are borrowed (a text with an escape is left to decoding): a
        // key named twice is refused, as decoding refuses it (see
        // `crate::decode`); past a few keys, a set keeps the check linear.
        let mut keys: SmallVec<[&'de str; 16]> = SmallVec::new();
        let mut many: HashSet<&'de str> = HashSet::new();
        while let Some(key) = map.next_key::<&'de str>()? {
            let twice = if many.is_empty() && keys.len() < 16 {
                let seen = keys.contains(&key);
                keys.push(key);
                seen
            } else {
                many.extend(keys.drain(..));
                !many.insert(key)
            };
            if twice {
                return Err(de::Error::custom("a key named twice"));
            }
            map.next_value::<Walked>()?;
        }
        Ok(Walked(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine's decoding accepts: an object (no key named twice),
    /// or nothing, or `null`.
    fn decodes_to_object(text: &str) -> bool {
        crate::decode::arguments(Some(text)).is_ok()
    }

    #[test]
    fn accepts_what_decoding_accepts_and_nothing_else() {
        let texts = [
            "",
            "  ",
            "null",
            "{}",
            r#"{"a": 1, "b": [1, 2.5, -3, {"c": null}], "d": "x", "e": true}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": -1e400}"#,
            r#"{"a": 18446744073709551616}"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{"a": [1,]}"#,
            r#"{"a": 01}"#,
            r#"{"a": NaN}"#,
            "[1]",
            "1",
            "\"text\"",
            "true",
            "{",
            &format!("{}{}", "[".repeat(200), "]".repeat(200)),
            &format!("{{\"a\": {}1{}}}", "[".repeat(126), "]".repeat(126)),
            &format!("{{\"a\": {}1{}}}", "[".repeat(127), "]".repeat(127)),
            &format!("{{\"a\": {}1{}}}", "[".repeat(128), "]".repeat(128)),
            r#"{"$serde_json::private::RawValue": "[1]"}"#,
            r#"{"a": "\u0041"}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": {"b": 1, "c": [{"d": 1, "d": 1}]}}"#,
            &format!("{{{}\"k0\": 0}}", (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect::<String>()),
            &format!("{{{}\"k40\": 0}}", (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect::<String>()),
        ];
        for text in texts {
            if acceptable(Some(text)) {
                assert!(decodes_to_object(text), "{text:?} is accepted but decoding refuses it");
            }
            if !text.contains('\\') && !text.contains(RAW_VALUE_KEY) {
                assert_eq!(acceptable(Some(text)), decodes_to_object(text), "{text:?}");
            }
        }
        assert!(acceptable(None));
    }
}
