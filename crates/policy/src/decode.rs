//! A call's arguments decoded for the policy, refusing what servers would
//! read differently.
//!
//! An object that names a key twice (`{"sql": "DROP TABLE t", "sql": "ok"}`)
//! is read by serde_json, Python, Go and JavaScript as its last value, and by
//! other parsers (cJSON, for one) as its first. Warden forwards the client's
//! bytes as they are, so a policy that judged the last value would let a
//! server that reads the first run what no rule saw. Such arguments are
//! refused, at any depth. Everything else decodes exactly as
//! [`serde_json::Value`] does (the same numbers, the same errors).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::roles::type_name;

/// The arguments as a JSON object (absent, blank or `null`: empty); `Err`
/// says why they are refused.
pub(crate) fn arguments(arguments: Option<&str>) -> Result<Value, String> {
    let Some(text) = arguments.filter(|t| !t.trim().is_empty()) else {
        return Ok(Value::Object(Map::new()));
    };
    match serde_json::from_str::<Strict>(text) {
        Ok(Strict(Value::Object(map))) => Ok(Value::Object(map)),
        Ok(Strict(Value::Null)) => Ok(Value::Object(Map::new())),
        Ok(Strict(other)) => Err(format!("the arguments must be a JSON object, not {}", type_name(&other))),
        // The visitor's own error: a key named twice.
        Err(err) if err.is_data() => Err(format!("the arguments {err}, which servers read differently")),
        Err(err) => Err(format!("the arguments are not valid JSON: {err}")),
    }
}

/// A value decoded as [`serde_json::Value`] decodes it, but failing on an
/// object that names a key twice.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Strict, E> {
        Ok(Strict(Value::Number(value.into())))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Strict, E> {
        Ok(Strict(Value::Number(value.into())))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Strict, E> {
        // As `Value` does: a float that is not finite becomes `null`.
        Ok(Strict(Number::from_f64(value).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(value.to_owned())))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(value)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Strict(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Strict, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom(format_args!("name the key {key:?} twice")));
            }
            let Strict(value) = access.next_value()?;
            map.insert(key, value);
        }
        Ok(Strict(Value::Object(map)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_as_serde_json_does_and_refuses_a_key_named_twice() {
        for text in [
            r#"{"a": 1, "b": [1, 2.5, -3, {"c": null}], "d": "x\u00e9\n", "e": true, "f": 18446744073709551615}"#,
            r#"{"a": -9223372036854775808, "b": 1.7976931348623157e308, "c": 5e-324, "d": 0.1}"#,
            r#"{"a": 18446744073709551616, "b": {"b": {"b": "b"}}}"#,
            r#"{"$serde_json::private::RawValue": 1}"#,
        ] {
            let ours = arguments(Some(text)).unwrap();
            // serde_json's `Value` reads that one key as its raw-value
            // marker; here it is a key like any other, as a server reads it.
            if !text.contains("RawValue") {
                assert_eq!(ours, serde_json::from_str::<Value>(text).unwrap(), "{text}");
            }
            assert!(ours.is_object());
        }
        for (text, key) in [
            (r#"{"sql": "DROP TABLE t", "sql": "ok"}"#, "sql"),
            (r#"{"a": {"x": 1, "y": 2, "x": 3}}"#, "x"),
            (r#"{"a": [{"k": 1, "k": 1}]}"#, "k"),
            (r#"{"s\u0071l": 1, "sql": 2}"#, "sql"),
        ] {
            let refused = arguments(Some(text)).unwrap_err();
            assert!(refused.contains(&format!("name the key {key:?} twice")), "{text}: {refused}");
        }
        // Everything else is refused as before.
        assert!(arguments(Some("[1]")).unwrap_err().contains("not an array"));
        assert!(arguments(Some("{not json")).unwrap_err().starts_with("the arguments are not valid JSON"));
        assert!(arguments(Some(r#"{"n": 1e400}"#)).unwrap_err().starts_with("the arguments are not valid JSON"));
        assert_eq!(arguments(Some(" null ")).unwrap(), Value::Object(Map::new()));
        assert_eq!(arguments(None).unwrap(), Value::Object(Map::new()));
    }
}
