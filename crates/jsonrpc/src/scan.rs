//! Reads an object's members without allocating: the fast path of
//! [`Members::parse`](crate::Members::parse) and [`Frame::parse`](crate::Frame::parse).
//!
//! serde_json keeps the nesting of a value it skips (to capture it as a
//! `RawValue`) in a buffer it allocates for each parse, so every read of a
//! message whose members nest paid for one. This scanner keeps the nesting
//! in a 128-bit word instead.
//!
//! It is never looser than serde_json, only stricter: what it declines (a
//! key with an escape, nesting deeper than 128, anything malformed) goes to
//! serde_json, which decides it and words the error. So a text it accepts
//! is one serde_json accepts, with the same members and values.

use std::ops::Range;

/// Calls `each` with the key and value (JSON text) of every member of the
/// object `text`, in order, duplicates included. `None` when the fast path
/// declines: serde_json must decide.
pub(crate) fn members<'a>(text: &'a str, mut each: impl FnMut(&'a str, &'a str)) -> Option<()> {
    let b = text.as_bytes();
    members_at(text, |key, at| {
        let end = value_end(b, at)?;
        each(key, &text[at..end]);
        Some(end)
    })
}

/// [`members`] for a reader that reads each value itself: `each` gets a
/// member's key and the index its value starts at, and returns the index
/// the value ends at (`None` declines the whole text).
pub(crate) fn members_at<'a>(text: &'a str, mut each: impl FnMut(&'a str, usize) -> Option<usize>) -> Option<()> {
    members_at_bytes(text, |key, at| each(&text[key], at))
}

/// [`members_at`] with each key as the range of its bytes (between the
/// quotes): for a reader that matches keys against literals and keeps
/// positions, so nothing is sliced as text (the frame's parse).
#[inline(always)]
pub(crate) fn members_at_bytes(text: &str, each: impl FnMut(Range<usize>, usize) -> Option<usize>) -> Option<()> {
    let b = text.as_bytes();
    let end = object_at(b, ws(b, 0), Keys::Plain, each)?;
    (ws(b, end) == b.len()).then_some(())
}

/// The end of the object that starts at `i` (a `{`), for a reader that
/// reads each value itself: `each` gets a member's key (its bytes as
/// written: it may hold escapes), where the member starts (its key's
/// opening quote) and where its value starts, and returns where the value
/// ends (`None` declines the whole text). With [`value_end`] for every
/// value, what it accepts is exactly what [`value_end`] accepts of an object.
#[inline(always)]
pub(crate) fn object_end(
    text: &str,
    i: usize,
    mut each: impl FnMut(&[u8], usize, usize) -> Option<usize>,
) -> Option<usize> {
    let b = text.as_bytes();
    object_at(b, i, Keys::Any, |key, at| each(&b[key.start..key.end], key.start - 1, at))
}

/// Which keys an object read by [`object_at`] may have.
#[derive(Clone, Copy, PartialEq)]
enum Keys {
    /// Without escapes: they are read borrowed, as they are.
    Plain,
    /// Any valid string, passed on as written.
    Any,
}

/// The end of the object at `i`, whose members' values `each` reads (given
/// the range of the key and where the value starts, it returns where it ends).
#[inline(always)]
fn object_at(
    b: &[u8],
    mut i: usize,
    keys: Keys,
    mut each: impl FnMut(Range<usize>, usize) -> Option<usize>,
) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = if keys == Keys::Plain { plain_string_end(b, i + 1)? } else { string_end(b, i + 1)? };
        let key = i + 1..key_end - 1;
        i = ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let end = each(key, i)?;
        i = ws(b, end);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The end of the JSON value that starts at `i` (no whitespace before it).
pub(crate) fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    // One bit per open container, innermost lowest: 1 for an object.
    let mut open: u128 = 0;
    let mut depth = 0u32;
    loop {
        // A value starts at `i`.
        match *b.get(i)? {
            byte @ (b'{' | b'[') => {
                let object = byte == b'{';
                let close = if object { b'}' } else { b']' };
                i = ws(b, i + 1);
                if b.get(i) == Some(&close) {
                    i += 1;
                } else {
                    if depth == 128 {
                        return None;
                    }
                    open = (open << 1) | u128::from(object);
                    depth += 1;
                    if object {
                        i = key_end(b, i)?;
                    }
                    continue;
                }
            }
            b'"' => i = string_end(b, i + 1)?,
            b't' => i = literal_end(b, i, b"true")?,
            b'f' => i = literal_end(b, i, b"false")?,
            b'n' => i = literal_end(b, i, b"null")?,
            b'-' | b'0'..=b'9' => i = number_end(b, i)?,
            _ => return None,
        }
        // A value ended at `i`: close what it ends, or go on to the next.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = ws(b, i);
            let object = open & 1 == 1;
            match *b.get(i)? {
                b',' => {
                    i = ws(b, i + 1);
                    if object {
                        i = key_end(b, i)?;
                    }
                    break;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            i += 1;
            open >>= 1;
            depth -= 1;
        }
    }
}

/// After a member's key, its colon and the whitespace before its value.
fn key_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let i = ws(b, string_end(b, i + 1)?);
    (b.get(i) == Some(&b':')).then(|| ws(b, i + 1))
}

/// The end of a string whose opening quote is before `i`.
#[inline(always)]
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i = plain_run(b, i);
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *b.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' if b.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => i += 6,
                _ => return None,
            },
            0..=0x1f => return None,
            _ => i += 1,
        }
    }
}

/// [`string_end`] for a string with no escape (a key read borrowed).
fn plain_string_end(b: &[u8], i: usize) -> Option<usize> {
    let at = plain_run(b, i);
    (*b.get(at)? == b'"').then_some(at + 1)
}

/// The index of the first byte at or after `i` that ends a run of plain
/// string bytes (a quote, a backslash or a control character), or the
/// length of `b`. Eight bytes a step: the bytes of a word that are a quote
/// or a backslash are those where it XORed with the byte is zero, and
/// `(w - 0x20..20) & !w & 0x80..80` marks those below 0x20; a borrow only
/// carries a mark upwards from a byte that is itself marked, so the lowest
/// mark is always a true one.
fn plain_run(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let marks = below(w ^ (ONES * u64::from(b'"')), 1) | below(w ^ (ONES * u64::from(b'\\')), 1) | below(w, 0x20);
        if marks != 0 {
            return i + (marks.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&byte) = b.get(i) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            return i;
        }
        i += 1;
    }
    i
}

fn literal_end(b: &[u8], i: usize, literal: &[u8]) -> Option<usize> {
    b.get(i..)?.starts_with(literal).then_some(i + literal.len())
}

/// The end of a number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits =
        |from: usize| from + b.get(from..).map_or(0, |rest| rest.iter().take_while(|d| d.is_ascii_digit()).count());
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match *b.get(i)? {
        b'0' => {
            i += 1;
            if b.get(i).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
        b'1'..=b'9' => i = digits(i + 1),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let end = digits(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits(i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(i)
}

/// Past the whitespace JSON allows at `i`. Mostly there is none: one
/// comparison says so (every byte above a space is not whitespace).
#[inline(always)]
fn ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&byte) if byte > b' ' => i,
        _ => ws_run(b, i),
    }
}

fn ws_run(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// `seed` and every text one byte away from it (a byte replaced, deleted or
/// inserted, from the bytes that matter to JSON), for differential tests.
#[cfg(test)]
pub(crate) fn one_byte_changes(seed: &str) -> Vec<String> {
    let alphabet = b"{}[],:\"\\0123456789-+.eEtrufalsn \t\n\rxu\x01\x7f";
    let bytes = seed.as_bytes();
    let mut variants = vec![bytes.to_vec()];
    for at in 0..=bytes.len() {
        if at < bytes.len() {
            variants.push([&bytes[..at], &bytes[at + 1..]].concat());
        }
        for &byte in alphabet {
            variants.push([&bytes[..at], &[byte], &bytes[at..]].concat());
            if at < bytes.len() {
                variants.push([&bytes[..at], &[byte], &bytes[at + 1..]].concat());
            }
        }
    }
    variants.into_iter().filter_map(|variant| String::from_utf8(variant).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::{members, plain_run};

    /// Eight bytes a step finds exactly what one byte a step does: at every
    /// start of texts that put each special byte (and neighbours of it, and
    /// non-ASCII bytes) at every place in a word.
    #[test]
    fn a_plain_run_ends_where_a_byte_by_byte_scan_does() {
        let slow = |b: &[u8], i: usize| {
            (i..b.len()).find(|&at| b[at] == b'"' || b[at] == b'\\' || b[at] < 0x20).unwrap_or(b.len())
        };
        let specials = [b'"', b'\\', 0x00, 0x01, 0x1f];
        let others = [b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff];
        for length in 0..20 {
            for &filler in &others {
                let mut text = vec![filler; length];
                assert_eq!(plain_run(&text, 0), length);
                for at in 0..length {
                    for &special in &specials {
                        text[at] = special;
                        // A second special byte after the first never hides it.
                        if at + 3 < length {
                            text[at + 3] = b'"';
                        }
                        for start in 0..=length {
                            assert_eq!(plain_run(&text, start), slow(&text, start), "{text:?} from {start}");
                        }
                        text.fill(filler);
                    }
                }
            }
        }
    }

    fn by_scan(text: &str) -> Option<Vec<(String, String)>> {
        let mut out = Vec::new();
        members(text, |key, value| out.push((key.to_owned(), value.to_owned())))?;
        Some(out)
    }

    #[test]
    fn reads_members_and_declines_what_it_does_not_take() {
        let text = r#" { "a" : {"b":[1,2.5e-3,{"c":"\u00e9\n"}]}, "d":[] ,"e":{}, "f":-0, "g":true,"h":null } "#;
        let read = by_scan(text).expect("read");
        assert_eq!(read[0], ("a".into(), r#"{"b":[1,2.5e-3,{"c":"\u00e9\n"}]}"#.into()));
        assert_eq!(read.len(), 6);
        for declined in [
            r#"{"\u0061":1}"#,
            r#"{"a":01}"#,
            r#"{"a":1,}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":"x"#,
            "{\"a\":\"\t\"}",
            r#"{"a":1} x"#,
        ] {
            assert!(by_scan(declined).is_none(), "{declined}");
        }
        // 128 open containers around an empty one: the deepest it takes.
        let deep = format!(r#"{{"a":{}{}}}"#, "[".repeat(130), "]".repeat(130));
        assert!(by_scan(&deep).is_none());
        let deep_enough = format!(r#"{{"a":{}{}}}"#, "[".repeat(129), "]".repeat(129));
        assert!(by_scan(&deep_enough).is_some());
    }
}
