//! Marking errors a sandbox caused, so the model knows to stop retrying
//! (as IronCurtain's `annotateSandboxViolation` does).

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
/// `None` when nothing changes (the line is forwarded as it is).
pub fn annotate_line(line: &[u8]) -> Option<Vec<u8>> {
    // Cheap test first: almost every line is left alone without parsing.
    let text = std::str::from_utf8(line).ok()?;
    if !text.contains("\"isError\"") || !caused_by_sandbox(text) {
        return None;
    }
    let mut message: serde_json::Value = serde_json::from_str(text).ok()?;
    let result = message.get_mut("result")?;
    if result.get("isError") != Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let mut changed = false;
    for item in result.get_mut("content")?.as_array_mut()? {
        if let Some(serde_json::Value::String(text)) = item.get_mut("text")
            && caused_by_sandbox(text)
        {
            *text = format!("{MARK} {text}");
            changed = true;
        }
    }
    changed.then(|| serde_json::to_vec(&message).ok()).flatten()
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
}
