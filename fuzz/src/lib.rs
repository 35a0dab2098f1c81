//! Helpers shared by the fuzz targets: independent reference readings
//! (serde_json, the `url` crate) that the targets compare Warden's parsers with.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// Whether serde_json reads `text` as one JSON value (no range limit on
/// numbers, as in RFC 8259).
pub fn is_json(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

/// The top-level members of a JSON object in order, duplicates kept, read by
/// serde_json alone; `None` when `text` is not an object.
pub fn members(text: &str) -> Option<Vec<(String, Box<RawValue>)>> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(String, Box<RawValue>)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = de.deserialize_map(Members).ok()?;
    de.end().ok()?;
    Some(out)
}

/// A JSON text as a `Value`, if serde_json can hold it.
pub fn value(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}
