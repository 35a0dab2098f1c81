//! Marking errors a sandbox caused, so the model knows to stop retrying
//! (as IronCurtain's `annotateSandboxViolation` does).

use serde::Deserialize;
use serde_json::value::RawValue;

/// The mark put before such an error.
pub const MARK: &str = "[SANDBOX BLOCKED]";

/// Error texts that mean the sandbox stopped an operation.
const SIGNS: &[&str] = &[
    "eacces",
    "eperm",
    "erofs",
    "enetunreach",
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "network is unreachable",
    "temporary failure in name resolution",
    "blocked-by-warden",
];

/// Whether `text` reads like an error the sandbox caused.
pub fn caused_by_sandbox(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    !lower.contains(&MARK.to_ascii_lowercase()) && SIGNS.iter().any(|sign| lower.contains(sign))
}

/// A sandboxed server's stdout line, with `[SANDBOX BLOCKED] ` put before
/// each text of an `isError` tool result that reads like a sandbox refusal;
/// `None` when nothing changes (the line is forwarded as it is). The mark is
/// spliced in after each such string's opening quote: every other byte of
/// the line (key order, numbers, escapes, `_meta`) stays as the server sent it.
pub fn annotate_line(line: &[u8]) -> Option<Vec<u8>> {
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
    // Where each marked string's contents start (after its opening quote).
    let starts: Vec<usize> = message
        .result
        .content
        .iter()
        .filter_map(|item| item.text)
        .filter(|raw| serde_json::from_str::<String>(raw.get()).is_ok_and(|decoded| caused_by_sandbox(&decoded)))
        .map(|raw| raw.get().as_ptr() as usize - text.as_ptr() as usize + 1)
        .collect();
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
    Some(marked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_sandbox_errors_only() {
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"open /x: Permission denied (os error 13)"}],"isError":true}}"#;
        let marked = String::from_utf8(annotate_line(line).unwrap()).unwrap();
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
        let marked = String::from_utf8(annotate_line(line).unwrap()).unwrap();
        let expected = r#"{"jsonrpc":"2.0","id":7,"result":{"isError":true,"_meta":{"n":1.50},"content":[{"type":"text","text":"[SANDBOX BLOCKED] EACCES: \u00e9 \"x\""},{"type":"image","data":"AA=="},{"type":"text","text":"fine"},{"type":"text","text":"[SANDBOX BLOCKED] blocked-by-warden"}]}}"#;
        assert_eq!(marked, expected);
        // Not a tool result, or not JSON: forwarded as it is.
        assert!(
            annotate_line(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"EPERM","isError":true}}"#).is_none()
        );
        assert!(annotate_line(br#"{"isError": true, "EPERM"#).is_none());
    }
}
