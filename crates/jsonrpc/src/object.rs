//! A JSON object's members in their order, values kept as text: for
//! changing a few members (adding `resultType`, removing envelope keys)
//! while every other byte stays as it was.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use smallvec::SmallVec;

use crate::splice::push_json_string;
use crate::text::Text;

/// The members of one JSON object, in order. Keys are decoded (borrowed
/// from the text unless they hold escapes); values are slices of the
/// original text.
#[derive(Debug, Default)]
pub struct Members<'a> {
    /// Inline up to a typical params or result object's size: reading one
    /// allocates nothing of its own.
    entries: SmallVec<[(Cow<'a, str>, &'a str); 8]>,
}

impl<'a> Members<'a> {
    /// Reads the members of `text`, which must be a JSON object.
    pub fn parse(text: &'a str) -> Result<Members<'a>, serde_json::Error> {
        let mut entries = SmallVec::new();
        if crate::scan::members(text, |key, value| entries.push((Cow::Borrowed(key), value))).is_some() {
            return Ok(Members { entries });
        }
        Members::parse_by_serde(text)
    }

    /// [`parse`](Members::parse) by serde_json alone: what decides (and
    /// words the error) when the allocation-free scan declines.
    fn parse_by_serde(text: &'a str) -> Result<Members<'a>, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let members = deserializer.deserialize_map(MembersVisitor)?;
        deserializer.end()?;
        Ok(members)
    }

    /// The value of member `key`, as JSON text.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.entries.iter().find(|(name, _)| name == key).map(|(_, value)| *value)
    }

    /// The value of member `key` as a typed reader takes it: `Ok(None)` when
    /// absent, `Err(())` when named twice (serde's derived readers refuse
    /// that, and a server may read either).
    #[allow(clippy::result_unit_err)]
    pub fn get_once(&self, key: &str) -> Result<Option<&'a str>, ()> {
        let mut found = self.entries.iter().filter(|(name, _)| name == key).map(|(_, value)| *value);
        match (found.next(), found.next()) {
            (first, None) => Ok(first),
            (Some(_), Some(_)) | (None, Some(_)) => Err(()),
        }
    }

    /// Member `key` as a typed reader takes an optional field: absent and
    /// `null` are both `None`; `Err(())` when named twice.
    #[allow(clippy::result_unit_err)]
    pub fn optional(&self, key: &str) -> Result<Option<&'a str>, ()> {
        Ok(self.get_once(key)?.filter(|value| *value != "null"))
    }

    /// Whether member `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.entries.iter().any(|(name, _)| name == key)
    }

    /// Removes every member whose key `drop` accepts; returns whether any was.
    pub fn remove_where(&mut self, mut drop: impl FnMut(&str) -> bool) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(name, _)| !drop(name));
        self.entries.len() != before
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(key, _)| key.as_ref())
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The object as JSON text: `extra` members (key, JSON text) first, then
    /// the kept ones with their values byte for byte, then `replaced`
    /// members' new values in place of old ones.
    pub fn render(&self, extra: &[(&str, &str)], replaced: &[(&str, &str)]) -> String {
        let mut out = String::with_capacity(self.rendered_len(extra));
        self.render_into(&mut out, extra, replaced);
        out
    }

    /// About how long [`render`](Members::render) makes the object (a
    /// capacity that rarely needs to grow).
    pub fn rendered_len(&self, extra: &[(&str, &str)]) -> usize {
        let extra: usize = extra.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
        2 + extra + self.entries.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>()
    }

    /// [`render`](Members::render), appended to `out`: a message built
    /// around the object takes it without a copy.
    pub fn render_into(&self, out: &mut String, extra: &[(&str, &str)], replaced: &[(&str, &str)]) {
        out.push('{');
        let mut first = true;
        let mut push = |out: &mut String, key: &str, value: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            push_json_string(out, key);
            out.push(':');
            out.push_str(value);
        };
        for (key, value) in extra {
            if !self.contains(key) {
                push(out, key, value);
            }
        }
        for (key, value) in &self.entries {
            let value = replaced.iter().find(|(name, _)| name == key).map_or(*value, |(_, new)| new);
            push(out, key, value);
        }
        out.push('}');
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
        let mut entries = SmallVec::new();
        // Keys borrowed: parsing a message copies none of them.
        while let Some((Text(key), value)) = map.next_entry::<Text<'de>, &'de RawValue>()? {
            entries.push((key, value.get()));
        }
        Ok(Members { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::Members;

    fn entries(members: &Members) -> Vec<(String, String)> {
        members.entries.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect()
    }

    /// The allocation-free scan against serde_json, on valid objects and on
    /// every one-byte change of them (replaced, deleted, inserted): what
    /// both read is the same, and the scan takes nothing serde_json refuses.
    #[test]
    fn the_scan_reads_what_serde_json_reads_and_nothing_it_refuses() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":[1,-2.5e+3,true,null]},"_meta":{"k":{"a":{}}}}}"#,
            r#" { "a" : [ ] , "b" : { "c" : "d\"\u00e9\/" } , "e" : -0.0E-0 } "#,
            r#"{"content":[{"type":"text","text":"tab\there"}],"isError":false,"n":10}"#,
            r#"{"a":{"b":{"c":{"d":[[[]],[{}],"x"]}}},"a":1}"#,
            r#"{}"#,
        ];
        let mut cases = 0;
        for text in seeds.iter().flat_map(|seed| crate::scan::one_byte_changes(seed)) {
            cases += 1;
            let serde = Members::parse_by_serde(&text);
            let mut scanned = Vec::new();
            if crate::scan::members(&text, |key, value| scanned.push((key.to_owned(), value.to_owned()))).is_some() {
                let serde = serde.unwrap_or_else(|err| panic!("the scan took what serde_json refuses ({err}): {text}"));
                assert_eq!(scanned, entries(&serde), "{text}");
            }
        }
        assert!(cases > 20_000, "{cases}");
    }

    #[test]
    fn keeps_values_byte_for_byte() {
        let text = r#"{"a": 1.50, "b":{"x" :[1,2]},"io.x/y":"z"}"#;
        let mut members = Members::parse(text).unwrap();
        assert_eq!(members.get("b"), Some(r#"{"x" :[1,2]}"#));
        assert!(members.remove_where(|key| key.starts_with("io.")));
        assert_eq!(
            members.render(&[("resultType", "\"complete\"")], &[]),
            r#"{"resultType":"complete","a":1.50,"b":{"x" :[1,2]}}"#
        );
        assert_eq!(members.render(&[("a", "2")], &[("b", "null")]), r#"{"a":1.50,"b":null}"#);
        assert!(Members::parse("[1]").is_err() && Members::parse("{} x").is_err());
        // A key with an escape is decoded; the others are borrowed.
        let escaped = Members::parse(r#"{"a\u0062":1,"c":2}"#).unwrap();
        assert_eq!((escaped.get("ab"), escaped.get("c")), (Some("1"), Some("2")));
        assert_eq!(escaped.keys().collect::<Vec<_>>(), ["ab", "c"]);
    }
}
