//! Finding the id of a message too large to parse, so it can still be answered.

/// Guesses the id of an oversized message from its first and last bytes.
///
/// Only the layouts SDKs write are recognised: the id right after
/// `"jsonrpc":"2.0"` or first at the start (Python, Rust), or last at the end
/// (TypeScript). Returns the id as JSON text (a number or a plain string).
pub fn guess_id(head: &str, tail: &str) -> Option<String> {
    let head = head.trim_start();
    let after_version = head
        .strip_prefix('{')
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(r#""jsonrpc""#))
        .and_then(|rest| rest.trim_start().strip_prefix(':'))
        .and_then(|rest| rest.trim_start().strip_prefix(r#""2.0""#))
        .and_then(|rest| rest.trim_start().strip_prefix(','));
    let leading = after_version.or_else(|| head.strip_prefix('{'));
    if let Some(id) = leading.and_then(|rest| id_member(rest.trim_start())) {
        return Some(id);
    }
    // The last member: `"id":<id>}` at the very end.
    let tail = tail.trim_end().strip_suffix('}')?.trim_end();
    let start = tail.rfind(r#""id""#)?;
    let id = id_member(&tail[start..])?;
    let rest = tail[start..].split_once(':')?.1.trim();
    (rest == id).then_some(id)
}

/// Reads `"id": <number or plain string>` at the start of `text`.
fn id_member(text: &str) -> Option<String> {
    let value = text.strip_prefix(r#""id""#)?.trim_start().strip_prefix(':')?.trim_start();
    let id = if let Some(string) = value.strip_prefix('"') {
        let end = string.find('"')?;
        let body = &string[..end];
        if body.contains('\\') {
            return None;
        }
        format!("\"{body}\"")
    } else {
        let end = value.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(value.len());
        value[..end].to_owned()
    };
    // The guess is sent back as the id of an error: only JSON will do
    // (not `1-2`, `007` or a string with a raw control character).
    serde_json::from_str::<serde::de::IgnoredAny>(&id).is_ok().then_some(id)
}

#[cfg(test)]
mod tests {
    use super::guess_id;

    #[test]
    fn finds_ids_where_sdks_put_them() {
        assert_eq!(guess_id(r#"{"jsonrpc":"2.0","id":42,"method":"x","params":{"#, ""), Some("42".into()));
        assert_eq!(guess_id(r#"{ "jsonrpc": "2.0", "id": "a-1", "result""#, ""), Some(r#""a-1""#.into()));
        assert_eq!(guess_id(r#"{"id":7,"jsonrpc""#, ""), Some("7".into()));
        assert_eq!(
            guess_id(r#"{"method":"tools/call","params":{"#, r#"xxx"}},"jsonrpc":"2.0","id":9}"#),
            Some("9".into())
        );
        assert_eq!(guess_id(r#"{"result":{"#, r#"{"id":3,"x":1}}"#), None);
        assert_eq!(guess_id(r#"{"result":{"#, r#"xx"}"#), None);
    }

    #[test]
    fn guesses_only_ids_that_are_json() {
        // Found by the jsonrpc_members fuzz target: each guess became the id
        // of the error answering the message, which made that answer invalid JSON.
        assert_eq!(guess_id(r#"{"id":1-2,"method""#, ""), None);
        assert_eq!(guess_id(r#"{"id":007,"method""#, ""), None);
        assert_eq!(guess_id(r#"{"id":-,"method""#, ""), None);
        assert_eq!(guess_id("{\"id\":\"a\u{1}b\",\"method\"", ""), None);
        assert_eq!(guess_id(r#"{"method":"m","#, r#""id":1-2}"#), None);
        assert_eq!(guess_id(r#"{"id":-12,"method""#, ""), Some("-12".into()));
    }

    #[test]
    fn a_number_beyond_f64_is_echoed_as_its_text() {
        // Ids are kept as text everywhere else, so a message of ordinary size
        // with this id is answered with it too. (The fuzz target's old oracle
        // read the guess as a `Value`, which refuses it: CI's fixed-seed run
        // reported that as a crash.)
        let digits = "9".repeat(400);
        let tail = format!(r#":1,"id":{digits}}}"#);
        assert_eq!(guess_id(r#"{"a""#, &tail), Some(digits.clone()));
        assert_eq!(guess_id(&format!(r#"{{"id":{digits},"method""#), ""), Some(digits));
    }
}
