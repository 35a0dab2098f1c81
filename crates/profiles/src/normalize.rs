//! Resource URI normalisation: one canonical form for the URIs servers and
//! clients name and for the patterns of profiles, so that a glob written for
//! `file://docs/**` cannot be side-stepped with `..`, percent-encoding,
//! backslashes or doubled slashes.

use std::borrow::Cow;

/// How many rounds of percent-decoding are applied before a URI that still
/// changes is given up on.
pub const MAX_DECODE_ROUNDS: usize = 5;

/// The canonical form of `uri`, or `None` when it has none (and must then
/// never be shown). The rules:
///
/// 1. the URI is split at its first `?` or `#`: what comes before is the path
///    part; what comes after (query and fragment) is kept and matched as
///    written, only percent-decoded;
/// 2. percent-escapes are decoded again and again until nothing changes (to
///    defeat double encoding such as `%252e%252e`), at most
///    [`MAX_DECODE_ROUNDS`] times;
/// 3. backslashes become `/`;
/// 4. the scheme is lowercased; for `scheme://...` URIs, everything after the
///    `//` is resolved as a path whose first segment is the authority (people
///    write `file://docs/**` meaning a path), and that first segment is
///    lowercased after resolution;
/// 5. `.` segments are dropped, `..` segments remove the segment before them,
///    and repeated slashes collapse into one.
///
/// A URI without a normal form: a `..` climbing above its start, a NUL byte,
/// percent-escapes that are not UTF-8 or still nested after
/// [`MAX_DECODE_ROUNDS`], or a segment of dots and spaces such as `...` that
/// Windows would read as `..`.
///
/// ```
/// use warden_profiles::normalize_uri;
///
/// assert_eq!(normalize_uri("FILE://Docs/a/../b.md").as_deref(), Some("file://docs/b.md"));
/// assert_eq!(normalize_uri("file://docs/%252e%252e/secret").as_deref(), Some("file://secret"));
/// assert_eq!(normalize_uri("file://docs/../../etc/passwd"), None);
/// ```
pub fn normalize_uri(uri: &str) -> Option<String> {
    normalize(uri, Mode::Uri)
}

/// The canonical form of a resource glob, normalised like a URI but with glob
/// syntax kept: characters that only percent-decoding produces (`%2A` for
/// `*`) are escaped so they match literally, as they would in a URI.
pub(crate) fn normalize_pattern(pattern: &str) -> Option<String> {
    normalize(pattern, Mode::Pattern)
}

/// What is being normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A URI or URI template from a server or client.
    Uri,
    /// A glob from a profile.
    Pattern,
}

fn normalize(text: &str, mode: Mode) -> Option<String> {
    let split = text.find(['?', '#']).unwrap_or(text.len());
    let (head, tail) = text.split_at(split);
    let head = decode(head, mode)?.replace('\\', "/");
    let tail = decode(tail, mode)?;
    let mut normal = normalize_head(&head)?;
    normal.push_str(&tail);
    Some(normal)
}

/// Percent-decodes `text` until it no longer changes.
fn decode(text: &str, mode: Mode) -> Option<String> {
    let mut current = Cow::Borrowed(text);
    // One more round than allowed, to see that the last one changed nothing.
    for _ in 0..=MAX_DECODE_ROUNDS {
        match decode_once(&current, mode)? {
            Some(next) => current = Cow::Owned(next),
            None if current.contains('\0') => return None,
            None => return Some(current.into_owned()),
        }
    }
    None
}

/// One round of percent-decoding: `Ok(None)` when there was nothing to
/// decode, `None` (outer) when the result is not UTF-8.
fn decode_once(text: &str, mode: Mode) -> Option<Option<String>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut changed = false;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let escaped = (byte == b'%').then(|| hex_pair(bytes.get(at + 1..at + 3)?)).flatten();
        match escaped {
            Some(decoded) => {
                changed = true;
                at += 3;
                match glob_escape(decoded) {
                    Some(escape) if mode == Mode::Pattern => out.extend_from_slice(escape),
                    _ => out.push(decoded),
                }
            }
            None => {
                out.push(byte);
                at += 1;
            }
        }
    }
    if !changed {
        return Some(None);
    }
    String::from_utf8(out).ok().map(Some)
}

/// The byte two hex digits stand for.
fn hex_pair(pair: &[u8]) -> Option<u8> {
    let digit = |b: u8| char::from(b).to_digit(16);
    let (high, low) = (digit(*pair.first()?)?, digit(*pair.get(1)?)?);
    u8::try_from(high * 16 + low).ok()
}

/// How a glob matches `byte` literally, for the bytes globs give a meaning.
fn glob_escape(byte: u8) -> Option<&'static [u8]> {
    Some(match byte {
        b'*' => b"[*]",
        b'?' => b"[?]",
        b'[' => b"[[]",
        b']' => b"[]]",
        b'{' => b"[{]",
        b'}' => b"[}]",
        b',' => b"[,]",
        _ => return None,
    })
}

/// Normalises the part before the query: scheme, authority and path.
fn normalize_head(head: &str) -> Option<String> {
    let Some((scheme, after)) = head.split_once(':').filter(|(scheme, _)| !scheme.contains('/')) else {
        // No scheme: a bare path.
        return resolve(head, head.starts_with('/'));
    };
    let scheme = scheme.to_ascii_lowercase();
    let Some(rest) = after.strip_prefix("//") else {
        // `scheme:path`, such as `urn:x:y` or `file:/etc/hosts`.
        return Some(format!("{scheme}:{}", resolve(after, after.starts_with('/'))?));
    };
    if rest.starts_with('/') {
        // An empty authority (`file:///etc/hosts`): a rooted path.
        return Some(format!("{scheme}://{}", resolve(rest, true)?));
    }
    let path = resolve(rest, false)?;
    let (authority, path) = path.split_once('/').map_or((path.as_str(), None), |(a, p)| (a, Some(p)));
    let mut normal = format!("{scheme}://{}", authority.to_lowercase());
    if let Some(path) = path {
        normal.push('/');
        normal.push_str(path);
    }
    Some(normal)
}

/// Resolves `.` and `..` segments and collapses repeated slashes. `None` when
/// a `..` climbs above the start.
fn resolve(path: &str, rooted: bool) -> Option<String> {
    let mut stack: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                stack.pop()?;
            }
            _ if reads_as_parent(segment) => return None,
            _ => stack.push(segment),
        }
    }
    let last = path.rsplit('/').next().unwrap_or_default();
    let trailing = path.contains('/') && matches!(last, "" | "." | "..") && !stack.is_empty();
    let mut out = String::with_capacity(path.len());
    if rooted {
        out.push('/');
    }
    out.push_str(&stack.join("/"));
    if trailing {
        out.push('/');
    }
    Some(out)
}

/// Segments such as `...` or `.. ` that Windows shortens to `..`.
fn reads_as_parent(segment: &str) -> bool {
    segment.starts_with("..") && segment.bytes().all(|b| b == b'.' || b == b' ')
}

#[cfg(test)]
mod tests {
    use super::{normalize_pattern, normalize_uri};

    fn norm(uri: &str) -> Option<String> {
        normalize_uri(uri)
    }

    #[test]
    fn leaves_plain_uris_alone() {
        for uri in ["file://docs/a/b.md", "https://example.com/a?b=c", "urn:isbn:123", "fixture://items/{id}"] {
            assert_eq!(norm(uri).as_deref(), Some(uri));
        }
    }

    #[test]
    fn lowercases_scheme_and_authority_only() {
        assert_eq!(norm("FILE://Docs/A.md").as_deref(), Some("file://docs/A.md"));
        assert_eq!(norm("HTTPS://Example.COM:8080/Path").as_deref(), Some("https://example.com:8080/Path"));
        assert_eq!(norm("URN:Isbn:X").as_deref(), Some("urn:Isbn:X"));
    }

    #[test]
    fn resolves_dot_segments_over_the_authority() {
        assert_eq!(norm("file://docs/../secret/x").as_deref(), Some("file://secret/x"));
        assert_eq!(norm("file://docs/a/../../Secret/x").as_deref(), Some("file://secret/x"));
        assert_eq!(norm("file://docs/./a/./b").as_deref(), Some("file://docs/a/b"));
        assert_eq!(norm("file://docs/a/..").as_deref(), Some("file://docs/"));
        assert_eq!(norm("file://docs/../..").as_deref(), None);
        assert_eq!(norm("file://../x").as_deref(), None);
    }

    #[test]
    fn rooted_paths_cannot_climb_out() {
        assert_eq!(norm("file:///etc/./hosts").as_deref(), Some("file:///etc/hosts"));
        assert_eq!(norm("file:///a/../etc").as_deref(), Some("file:///etc"));
        assert_eq!(norm("file:///../etc").as_deref(), None);
        assert_eq!(norm("file:/a/../../etc").as_deref(), None);
        assert_eq!(norm("/a/b/../c").as_deref(), Some("/a/c"));
        assert_eq!(norm("a/../../b").as_deref(), None);
    }

    #[test]
    fn decodes_until_stable() {
        assert_eq!(norm("file://docs/%2e%2e/x").as_deref(), Some("file://x"));
        assert_eq!(norm("file://docs/%252E%252E/x").as_deref(), Some("file://x"));
        assert_eq!(norm("file://docs/%25252525252e").as_deref(), None, "too deeply nested");
        assert_eq!(norm("file://docs/%70rivate").as_deref(), Some("file://docs/private"));
        assert_eq!(norm("file://docs/100%").as_deref(), Some("file://docs/100%"));
        assert_eq!(norm("file://docs/%zz").as_deref(), Some("file://docs/%zz"));
    }

    #[test]
    fn rejects_nul_and_invalid_utf8() {
        assert_eq!(norm("file://docs/%00/x"), None);
        assert_eq!(norm("file://docs/\0/x"), None);
        assert_eq!(norm("file://docs/%2500"), None);
        assert_eq!(norm("file://docs/%ff"), None);
        assert_eq!(norm("file://docs/a?q=%00"), None);
    }

    #[test]
    fn backslashes_and_repeated_slashes() {
        assert_eq!(norm("file://docs\\..\\secret\\x").as_deref(), Some("file://secret/x"));
        assert_eq!(norm("file://docs/..%5csecret").as_deref(), Some("file://secret"));
        assert_eq!(norm("file://docs//a///b.md").as_deref(), Some("file://docs/a/b.md"));
        assert_eq!(norm("file:////etc").as_deref(), Some("file:///etc"));
    }

    #[test]
    fn windows_parent_lookalikes_fail_closed() {
        assert_eq!(norm("file://docs/.../x"), None);
        assert_eq!(norm("file://docs/.. /x"), None);
        assert_eq!(norm("file://docs/.a/x").as_deref(), Some("file://docs/.a/x"));
    }

    #[test]
    fn keeps_the_query_as_written() {
        assert_eq!(norm("http://h/a/../b?x=../../y//z").as_deref(), Some("http://h/b?x=../../y//z"));
        assert_eq!(norm("http://h/a#../../frag").as_deref(), Some("http://h/a#../../frag"));
        assert_eq!(norm("http://h/a?x=%41").as_deref(), Some("http://h/a?x=A"));
        // An encoded `?` belongs to the path, as the server reads it.
        assert_eq!(norm("file://x/y%3F/../../docs/a").as_deref(), Some("file://docs/a"));
    }

    #[test]
    fn patterns_keep_glob_syntax_and_escape_decoded_metacharacters() {
        assert_eq!(normalize_pattern("FILE://Docs/**").as_deref(), Some("file://docs/**"));
        assert_eq!(normalize_pattern("file://docs/%70rivate/*").as_deref(), Some("file://docs/private/*"));
        assert_eq!(normalize_pattern("file://a%2Ab/{x,y}").as_deref(), Some("file://a[*]b/{x,y}"));
        assert_eq!(normalize_pattern("file://a/%5B%5D%3F").as_deref(), Some("file://a/[[][]][?]"));
        assert_eq!(normalize_pattern("*://docs/**").as_deref(), Some("*://docs/**"));
        assert_eq!(normalize_pattern("file://docs/../**"), Some("file://**".into()));
        assert_eq!(normalize_pattern("file://../**"), None);
    }
}
