//! Answers as a modern client expects them: every result says its
//! `resultType`; lists and reads say how long they may be cached (never,
//! for Warden: what a client sees depends on its profile and policies);
//! results name the server; errors use the codes of 2026-07-28.

use std::sync::LazyLock;

use warden_jsonrpc::{ErrorCode, Frame, Kind, Members, Needle, error_response, json_string};

use super::meta;

/// Warden's `serverInfo` (a package version needs no escaping).
pub const SERVER_INFO: &str =
    concat!(r#"{"name":"warden","title":"Warden MCP gateway","version":""#, env!("CARGO_PKG_VERSION"), r#""}"#);

/// `_meta` holding only Warden's `serverInfo`, made once: most results
/// have no `_meta` of their own.
static META: LazyLock<String> = LazyLock::new(|| format!("{{{}:{SERVER_INFO}}}", json_string(meta::SERVER_INFO)));

/// Whether results of `method` carry caching fields (SEP-2549).
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "server/discover"
    )
}

/// The 2025-era answer `text` to a request of `method`, rewritten for a
/// modern client whose request id is `id`. Only the envelope changes; the
/// result's own members keep their bytes.
pub fn complete(text: impl Into<String>, id: &str, method: &str) -> String {
    // The session writes what it answers: a message it cannot read again
    // is Warden's own fault, said as one rather than passed on.
    let Ok(frame) = Frame::parse(text) else {
        return error_response(Some(id), ErrorCode::InternalError, "the answer could not be read", None);
    };
    match frame.kind() {
        Kind::Response => {
            let Some(result) = frame.payload().and_then(|payload| Members::parse(payload).ok()) else {
                return frame.with_id(id);
            };
            // The message is written around the result: one allocation.
            const HEAD: &str = r#"{"jsonrpc":"2.0","id":"#;
            let mut out = String::with_capacity(HEAD.len() + id.len() + 12 + result.rendered_len(&[]) + 160);
            out.push_str(HEAD);
            out.push_str(id);
            out.push_str(r#","result":"#);
            push_modern_result(&mut out, &result, method);
            out.push('}');
            out
        }
        Kind::ErrorResponse => modern_error(&frame, id),
        _ => frame.with_id(id),
    }
}

/// A result with `resultType`, caching fields and Warden's `serverInfo`,
/// appended to `out`.
fn push_modern_result(out: &mut String, result: &Members, method: &str) {
    const COMPLETE: (&str, &str) = ("resultType", r#""complete""#);
    const UNCACHED: [(&str, &str); 2] = [("ttlMs", "0"), ("cacheScope", r#""private""#)];
    let cacheable = cacheable(method);
    match result.get("_meta") {
        Some(own) => {
            let meta = with_server_info(own);
            let extra: &[_] = if cacheable { &[COMPLETE, UNCACHED[0], UNCACHED[1]] } else { &[COMPLETE] };
            result.render_into(out, extra, &[("_meta", &meta)]);
        }
        None => {
            let meta = ("_meta", META.as_str());
            let extra: &[_] = if cacheable { &[COMPLETE, UNCACHED[0], UNCACHED[1], meta] } else { &[COMPLETE, meta] };
            result.render_into(out, extra, &[]);
        }
    }
}

/// A result's own `_meta` with Warden's `serverInfo` added (an upstream's
/// own is kept).
fn with_server_info(own: &str) -> String {
    match Members::parse(own) {
        Ok(members) => members.render(&[(meta::SERVER_INFO, SERVER_INFO)], &[]),
        Err(_) => META.clone(),
    }
}

/// An error with 2026-07-28's codes: an unknown resource is -32602 now.
fn modern_error(frame: &Frame, id: &str) -> String {
    let Some(error) = frame.payload().and_then(|payload| Members::parse(payload).ok()) else {
        return frame.with_id(id);
    };
    let resource_not_found = error.get("code").is_some_and(|code| code.trim() == "-32002");
    if !resource_not_found {
        return frame.with_id(id);
    }
    let error = error.render(&[], &[("code", "-32602")]);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

/// The JSON-RPC error code of an answer, if it is an error.
pub fn error_code(text: &str) -> Option<i64> {
    static ERROR: Needle = Needle::new(r#""error""#);
    // Asked of every answer: most are results, and need no parse.
    if !ERROR.is_in(text) {
        return None;
    }
    let frame = Frame::parse(text).ok().filter(|frame| frame.kind() == Kind::ErrorResponse)?;
    let error = Members::parse(frame.payload()?).ok()?;
    error.get("code")?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_gain_the_modern_fields() {
        let text = r#"{"jsonrpc":"2.0","id":"wm1","result":{"tools":[{"name":"a","x":1.50}],"_meta":{"k":1}}}"#;
        let modern: serde_json::Value = serde_json::from_str(&complete(text, "7", "tools/list")).unwrap();
        assert_eq!(modern["id"], 7);
        assert_eq!(modern["result"]["resultType"], "complete");
        assert_eq!(modern["result"]["ttlMs"], 0);
        assert_eq!(modern["result"]["cacheScope"], "private");
        assert_eq!(modern["result"]["_meta"]["k"], 1);
        assert_eq!(modern["result"]["_meta"][meta::SERVER_INFO]["name"], "warden");
        assert!(complete(text, "7", "tools/list").contains(r#""x":1.50"#), "values keep their bytes");
        let call = complete(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#, "2", "tools/call");
        assert!(!call.contains("ttlMs") && call.contains(r#""resultType":"complete""#));
    }

    #[test]
    fn unknown_resources_are_invalid_params() {
        let text = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}"#;
        let modern = complete(text, "\"r\"", "resources/read");
        assert_eq!(error_code(&modern), Some(-32602));
        assert!(modern.contains(r#""id":"r""#));
        let other = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
        assert_eq!(error_code(&complete(other, "3", "x")), Some(-32601));
    }
}
