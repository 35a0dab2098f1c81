//! Marking errors a sandbox caused, so the model knows to stop retrying
//! (as IronCurtain's `annotateSandboxViolation` does).

use serde::Deserialize;
use serde_json::value::RawValue;

/// The mark put before such an error.
pub const MARK: &str = "[SANDBOX BLOCKED]";

/// Error texts that mean the sandbox stopped a file operation (Landlock,
/// seccomp and read-only mounts answer `EACCES`, `EPERM` or `EROFS`).
const FILESYSTEM_SIGNS: &[&str] =
    &["eacces", "eperm", "erofs", "operation not permitted", "permission denied", "read-only file system"];

/// Error texts that mean the sandbox stopped a connection (no route out of
/// its network namespace, no resolver, or the egress proxy's refusal).
const NETWORK_SIGNS: &[&str] =
    &["enetunreach", "network is unreachable", "temporary failure in name resolution", "blocked-by-warden"];

/// What a sandbox refusal stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A file operation.
    Filesystem,
    /// A connection.
    Network,
}

/// What the sandbox refused, if `text` reads like an error it caused (a
/// connection when it names one, else a file operation); `None` for any
/// other text, and for one already marked.
pub fn refusal_in(text: &str) -> Option<Refusal> {
    let lower = text.to_ascii_lowercase();
    if lower.contains(&MARK.to_ascii_lowercase()) {
        return None;
    }
    let has = |signs: &[&str]| signs.iter().any(|sign| lower.contains(sign));
    if has(NETWORK_SIGNS) {
        Some(Refusal::Network)
    } else if has(FILESYSTEM_SIGNS) {
        Some(Refusal::Filesystem)
    } else {
        None
    }
}

/// Whether `text` reads like an error the sandbox caused.
pub fn caused_by_sandbox(text: &str) -> bool {
    refusal_in(text).is_some()
}

/// A line [`annotate_line`] marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// The line, with the marks.
    pub line: Vec<u8>,
    /// What each marked text's refusal stopped, in order.
    pub refusals: Vec<Refusal>,
}

/// A sandboxed server's stdout line, with `[SANDBOX BLOCKED] ` put before
/// each text of an `isError` tool result that reads like a sandbox refusal;
/// `None` when nothing changes (the line is forwarded as it is). The mark is
/// spliced in after each such string's opening quote: every other byte of
/// the line (key order, numbers, escapes, `_meta`) stays as the server sent it.
pub fn annotate_line(line: &[u8]) -> Option<Marked> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        result: ToolResult<'a>,
    }
    #[derive(Deserialize)]
    struct ToolResult<'a> {
        #[serde(default, rename = "isError")]
        is_error: bool,
        #[serde(borrow)]
        content: Vec<Item<'a>>,
    }
    #[derive(Deserialize)]
    struct Item<'a> {
        #[serde(borrow, default)]
        text: Option<&'a RawValue>,
    }
    // Cheap test first: almost every line is left alone without parsing.
    let text = std::str::from_utf8(line).ok()?;
    if !text.contains("\"isError\"") || !caused_by_sandbox(text) {
        return None;
    }
    let message: Message = serde_json::from_str(text).ok()?;
    if !message.result.is_error {
        return None;
    }
    // Where each marked string's contents start (after its opening quote),
    // and what its refusal stopped.
    let (starts, refusals): (Vec<usize>, Vec<Refusal>) = message
        .result
        .content
        .iter()
        .filter_map(|item| item.text)
        .filter_map(|raw| {
            let refusal = serde_json::from_str::<String>(raw.get()).ok().and_then(|decoded| refusal_in(&decoded))?;
            Some((raw.get().as_ptr() as usize - text.as_ptr() as usize + 1, refusal))
        })
        .unzip();
    if starts.is_empty() {
        return None;
    }
    let mut marked = Vec::with_capacity(line.len() + starts.len() * (MARK.len() + 1));
    let mut from = 0;
    for start in starts {
        marked.extend_from_slice(&line[from..start]);
        marked.extend_from_slice(MARK.as_bytes());
        marked.push(b' ');
        from = start;
    }
    marked.extend_from_slice(&line[from..]);
    Some(Marked { line: marked, refusals })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_sandbox_errors_only() {
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"open /x: Permission denied (os error 13)"}],"isError":true}}"#;
        let marked = annotate_line(line).unwrap();
        assert_eq!(marked.refusals, [Refusal::Filesystem]);
        let marked = String::from_utf8(marked.line).unwrap();
        assert!(marked.contains("[SANDBOX BLOCKED] open /x: Permission denied"), "{marked}");
        assert!(annotate_line(marked.as_bytes()).is_none());
        let fine = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Permission denied"}]}}"#;
        assert!(annotate_line(fine).is_none());
        let other =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"no such tool"}],"isError":true}}"#;
        assert!(annotate_line(other).is_none());
    }

    #[test]
    fn the_mark_is_spliced_in_and_every_other_byte_kept() {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"isError":true,"_meta":{"n":1.50},"content":[{"type":"text","text":"EACCES: \u00e9 \"x\""},{"type":"image","data":"AA=="},{"type":"text","text":"fine"},{"type":"text","text":"blocked-by-warden"}]}}"#;
        let marked = annotate_line(line).unwrap();
        assert_eq!(marked.refusals, [Refusal::Filesystem, Refusal::Network]);
        let marked = String::from_utf8(marked.line).unwrap();
        let expected = r#"{"jsonrpc":"2.0","id":7,"result":{"isError":true,"_meta":{"n":1.50},"content":[{"type":"text","text":"[SANDBOX BLOCKED] EACCES: \u00e9 \"x\""},{"type":"image","data":"AA=="},{"type":"text","text":"fine"},{"type":"text","text":"[SANDBOX BLOCKED] blocked-by-warden"}]}}"#;
        assert_eq!(marked, expected);
        // Not a tool result, or not JSON: forwarded as it is.
        assert!(
            annotate_line(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"EPERM","isError":true}}"#).is_none()
        );
        assert!(annotate_line(br#"{"isError": true, "EPERM"#).is_none());
    }

    #[test]
    fn a_refusal_names_what_it_stopped() {
        assert_eq!(refusal_in("open /etc/x: EROFS: read-only file system"), Some(Refusal::Filesystem));
        assert_eq!(refusal_in("connect: Network is unreachable (os error 101)"), Some(Refusal::Network));
        // A refused connection that also says "permission denied" is the connection's.
        assert_eq!(refusal_in("blocked-by-warden: permission denied"), Some(Refusal::Network));
        assert_eq!(refusal_in("no such file or directory"), None);
        assert_eq!(refusal_in("[SANDBOX BLOCKED] EACCES"), None, "marked once only");
    }
}
