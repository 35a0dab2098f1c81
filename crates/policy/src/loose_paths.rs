//! Paths in arguments nobody annotated.
//!
//! An argument nobody described may still name a file: any argument of a
//! tool nobody annotated, or one its annotation leaves out (an argument the
//! annotation lists, even with role `none`, is decided by its roles). Any string of it
//! (also inside arrays and objects) whose whole value is an absolute path,
//! a `~` path or a `file:` URL is checked against the protected paths. This
//! only adds refusals: relative paths and other strings are left to the
//! rules, and nothing here allows a call.

use std::borrow::Cow;

use serde_json::Value;

/// Longest string taken for a path (Linux `PATH_MAX`).
const MAX_PATH_BYTES: usize = crate::paths::MAX_PATH_BYTES;

/// Whether the JSON text `text` may hold a path-like string: a cheap test
/// that spares decoding calls whose arguments cannot name a file (`\` for
/// escapes such as `\u002f`).
pub(crate) fn may_hold_paths(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Case-insensitive `file:` without lower-casing a copy (this runs on every call).
    memchr::memchr3(b'/', b'~', b'\\', bytes).is_some()
        || memchr::memchr_iter(b':', bytes).any(|at| {
            at.checked_sub(4).and_then(|start| bytes.get(start..at)).is_some_and(|w| w.eq_ignore_ascii_case(b"file"))
        })
}

/// The path a string names, if its whole value is one: `/abs`, `~`, `~/x`,
/// or a `file:` URL (`file:///x`, `file://localhost/x`, `file:/x`; its
/// percent escapes decoded, its query and fragment dropped). Read as a
/// lenient server reads it: spaces and line breaks around it trimmed, and
/// only up to a NUL (where C stops). A path over `PATH_MAX` or with a line
/// break within is not one; what is measured is that path, not the string,
/// so a long query or what follows a NUL hides nothing.
pub(crate) fn path_in(text: &str) -> Option<Cow<'_, str>> {
    let text = text.trim_ascii();
    if text.starts_with('/') || text == "~" || text.starts_with("~/") {
        return one_path(Cow::Borrowed(text));
    }
    let scheme = text.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = text.get(5..)?;
    let path = match rest.strip_prefix("//") {
        // `file://host/path`: the host (usually empty or localhost) is dropped.
        Some(authority_and_path) => authority_and_path.get(authority_and_path.find('/')?..)?,
        None if rest.starts_with('/') => rest,
        None => return None,
    };
    one_path(Cow::Owned(decoded(path)?))
}

/// `path` up to its first NUL, if that leaves a path: not empty, one line,
/// no longer than `PATH_MAX`.
fn one_path(path: Cow<'_, str>) -> Option<Cow<'_, str>> {
    let path = match path.find('\0') {
        None => path,
        Some(at) => Cow::Owned(path.get(..at)?.to_owned()),
    };
    (!path.is_empty() && path.len() <= MAX_PATH_BYTES && !path.contains(['\n', '\r'])).then_some(path)
}

/// A URL's path part without its query and fragment, percent escapes
/// decoded; `None` when it is too long to decode to a path (an escape is
/// three bytes for one).
fn decoded(path: &str) -> Option<String> {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    (path.len() <= 3 * MAX_PATH_BYTES).then(|| percent_decode(path))
}

/// The other reading of a `file://host/path` URL whose host is neither
/// empty nor `localhost`: `host/path` as a relative path (percent escapes
/// decoded), which is what a server that strips the `file://` prefix
/// opens. `file://home/u/.ssh` names `/u/.ssh` on the host `home` by the
/// standard, and `home/u/.ssh` under such a server's directory.
pub(crate) fn host_as_directory(text: &str) -> Option<String> {
    let text = text.trim_ascii();
    let scheme = text.get(..7)?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = text.get(7..)?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if host.is_empty() || host.eq_ignore_ascii_case("localhost") {
        return None;
    }
    one_path(Cow::Owned(decoded(rest)?)).map(Cow::into_owned)
}

/// `%xx` escapes decoded (invalid ones kept as written; bytes that are not
/// UTF-8 replaced).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(decoded) => {
                out.push(decoded);
                i += 3;
            }
            None => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every string in `value`, depth first.
pub(crate) fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| strings(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_like_values() {
        let cases = [
            ("/home/u/.ssh/id_rsa", Some("/home/u/.ssh/id_rsa")),
            ("~/.ssh", Some("~/.ssh")),
            ("~", Some("~")),
            ("file:///home/u/.ssh/id_rsa", Some("/home/u/.ssh/id_rsa")),
            ("FILE://localhost/home/u/%2essh/id_rsa", Some("/home/u/.ssh/id_rsa")),
            ("file:/etc/passwd", Some("/etc/passwd")),
            ("file:///x?y#z", Some("/x")),
            ("relative/path", None),
            ("~bob/x", None),
            ("https://example.com/x", None),
            ("/multi\nline", None),
            (" /home/u/.ssh/id_rsa\n", Some("/home/u/.ssh/id_rsa")),
            ("/home/u/.ssh/id_rsa\0.png", Some("/home/u/.ssh/id_rsa")),
            ("file:///home/u/.ssh/id_rsa%00.png", Some("/home/u/.ssh/id_rsa")),
            ("\0/etc/passwd", None),
            ("file://%00", None),
            // The length that counts is the path's: not a query's, not
            // what follows a NUL.
            (&format!("file:///home/u/.ssh/id_rsa?{}", "q".repeat(5000)), Some("/home/u/.ssh/id_rsa")),
            (&format!("/home/u/.ssh/id_rsa\0{}", "x".repeat(5000)), Some("/home/u/.ssh/id_rsa")),
            (&format!("/{}", "a".repeat(5000)), None),
            (&format!("file:///{}", "%61".repeat(5000)), None),
            ("file://host-only", None),
            ("%", None),
        ];
        for (text, expected) in cases {
            assert_eq!(path_in(text).as_deref(), expected, "{text:?}");
        }
        assert!(may_hold_paths(r#"{"a":"\u002fetc"}"#));
        assert!(may_hold_paths(r#"{"a":"FILE:x"}"#));
        assert!(!may_hold_paths(r#"{"a":"hello","n":1}"#));
        for text in ["file:", "xFiLe:y", "fil:", "ile:", ":file", "", "é:file:", "éfile:"] {
            assert_eq!(may_hold_paths(text), text.to_ascii_lowercase().contains("file:"), "{text:?}");
        }
    }

    #[test]
    fn a_host_is_also_read_as_a_directory() {
        let cases = [
            ("file://home/u/.ssh/id_rsa", Some("home/u/.ssh/id_rsa")),
            ("FILE://.ssh", Some(".ssh")),
            ("file://h%6fme/u?x#y", Some("home/u")),
            ("file:///home/u/.ssh", None),
            ("file://localhost/home/u/.ssh", None),
            ("file://LocalHost/x", None),
            ("file:/x", None),
            ("fixture://items/1", None),
            ("file://a\nb", None),
            ("file://home/u/.ssh/id_rsa%00.png ", Some("home/u/.ssh/id_rsa")),
            (&format!("file://home/u/.ssh/id_rsa#{}", "f".repeat(5000)), Some("home/u/.ssh/id_rsa")),
        ];
        for (text, expected) in cases {
            assert_eq!(host_as_directory(text).as_deref(), expected, "{text:?}");
        }
    }

    #[test]
    fn strings_are_found_at_any_depth() {
        let value = serde_json::json!({"a": "x", "b": [1, {"c": "y"}], "d": null});
        let mut found = Vec::new();
        strings(&value, &mut found);
        assert_eq!(found, ["x", "y"]);
    }
}
