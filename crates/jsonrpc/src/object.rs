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

/// `object` (an object's JSON text) without the members whose key `drop`
/// selects, every byte of the kept members as it was (the whitespace
/// between them aside); `None` when none is dropped or the text is not an
/// object. What [`Members::remove_where`] and [`Members::render`] make, in
/// one pass that copies the kept members whole instead of writing each key
/// again (a 2025-era server's request loses the 2026-07-28 envelope so).
pub fn without_members(object: &str, mut drop: impl FnMut(&str) -> bool) -> Option<String> {
    let mut kept: SmallVec<[std::ops::Range<usize>; 8]> = SmallVec::new();
    let mut dropped = false;
    let b = object.as_bytes();
    let scanned = crate::scan::members_at(object, |key, at| {
        let end = crate::scan::value_end(b, at)?;
        if drop(key) {
            dropped = true;
        } else {
            // The member from its key's opening quote to its value's end.
            let start = key.as_ptr() as usize - object.as_ptr() as usize - 1;
            kept.push(start..end);
        }
        Some(end)
    });
    if scanned.is_none() {
        // A key with an escape (or a text the scan declines): decoded.
        let mut members = Members::parse(object).ok()?;
        return members.remove_where(drop).then(|| members.render(&[], &[]));
    }
    if !dropped {
        return None;
    }
    let mut out = String::with_capacity(2 + kept.iter().map(|member| member.len() + 1).sum::<usize>());
    out.push('{');
    for (i, member) in kept.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&object[member]);
    }
    out.push('}');
    Some(out)
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

    /// The one-pass removal means what reading, removing and rendering
    /// means, on every one-byte change of an envelope-like object.
    #[test]
    fn without_members_is_remove_where_and_render() {
        let seeds = [
            r#"{"io.m/v":"2026-07-28","k" : {"io.m/x":1},"io.m/c":{},"progressToken":7}"#,
            r#" { "a" : [ ] , "io.m/b" : "d\"\u00e9" } "#,
            r#"{"\u0069o.m/v":1,"x":2}"#,
            r#"{"io.m/only":true}"#,
        ];
        let drop = |key: &str| key.starts_with("io.m/");
        let mut cases = 0;
        for text in seeds.iter().flat_map(|seed| crate::scan::one_byte_changes(seed)) {
            let reference = Members::parse(&text)
                .ok()
                .and_then(|mut members| members.remove_where(drop).then(|| members.render(&[], &[])));
            let fast = super::without_members(&text, drop);
            let read = |text: &str| serde_json::from_str::<serde_json::Value>(text).expect("valid JSON");
            match (&reference, &fast) {
                (Some(reference), Some(fast)) => {
                    cases += 1;
                    assert_eq!(read(reference), read(fast), "{text}");
                }
                (None, None) => {}
                _ => panic!("{text}: {reference:?} against {fast:?}"),
            }
        }
        assert!(cases > 300, "{cases}");
        assert_eq!(
            super::without_members(r#"{"io.m/v":1, "a" :1.50 ,"io.m/w":2,"b":{}}"#, drop).as_deref(),
            Some(r#"{"a" :1.50,"b":{}}"#)
        );
        assert_eq!(super::without_members(r#"{"a":1}"#, drop), None);
        assert_eq!(super::without_members(r#"{"io.m/v":1}"#, drop).as_deref(), Some("{}"));
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
