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

/// Where an answer's result is in its text, as its sender knows it.
#[derive(Debug, Clone)]
pub struct ResultAt {
    /// The result's bytes.
    pub span: std::ops::Range<usize>,
    /// Whether the answer's parse found it plain
    /// ([`Frame::result_is_plain`]): it is then written around unsearched.
    pub plain: bool,
}

/// The 2025-era answer `text` to a request of `method`, rewritten for a
/// modern client whose request id is `id`. Only the envelope changes; the
/// result's own members keep their bytes.
///
/// `result` is where the result is in `text`, when the sender knows: a plain
/// result is then rewritten without `text` being parsed again.
pub fn complete(text: &str, result: Option<ResultAt>, id: &str, method: &str) -> String {
    let known = result.and_then(|at| Some((text.get(at.span)?, at.plain)));
    if let Some(out) = known.and_then(|(result, plain)| plain_result(result, plain, id, method)) {
        return out;
    }
    // The session writes what it answers: a message it cannot read again
    // is Warden's own fault, said as one rather than passed on.
    let Ok(frame) = Frame::parse(text) else {
        return error_response(Some(id), ErrorCode::InternalError, "the answer could not be read", None);
    };
    match frame.kind() {
        Kind::Response => {
            if let Some(out) =
                frame.payload().and_then(|result| plain_result(result, frame.result_is_plain(), id, method))
            {
                return out;
            }
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

/// The modern answer around `result`, written without reading it, when it
/// has none of the members Warden adds: no `_meta`, `resultType`, `ttlMs`
/// or `cacheScope`, and no escape that could spell one. `known_plain`: the
/// answer's parse found so (else its text is searched, where they may be
/// nested too). Those go in after its `{`, the rest keeps its bytes.
/// `None`: the result must be read ([`push_modern_result`]).
fn plain_result(result: &str, known_plain: bool, id: &str, method: &str) -> Option<String> {
    static ADDED: [Needle; 4] = [
        Needle::new(r#""_meta""#),
        Needle::new(r#""resultType""#),
        Needle::new(r#""ttlMs""#),
        Needle::new(r#""cacheScope""#),
    ];
    let inner = result.strip_prefix('{')?;
    if !known_plain && (warden_jsonrpc::has_escape(result) || ADDED.iter().any(|added| added.is_in(result))) {
        return None;
    }
    const HEAD: &str = r#"{"jsonrpc":"2.0","id":"#;
    const COMPLETE: &str = r#""resultType":"complete""#;
    const UNCACHED: &str = r#","ttlMs":0,"cacheScope":"private""#;
    let mut out = String::with_capacity(HEAD.len() + id.len() + result.len() + META.len() + 96);
    out.push_str(HEAD);
    out.push_str(id);
    out.push_str(r#","result":{"#);
    out.push_str(COMPLETE);
    if cacheable(method) {
        out.push_str(UNCACHED);
    }
    out.push_str(r#","_meta":"#);
    out.push_str(&META);
    if !inner.trim_start().starts_with('}') {
        out.push(',');
    }
    out.push_str(inner);
    out.push('}');
    Some(out)
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
    // Asked of every answer: most are results Warden wrote (see
    // `plain_result`), whose head says so, or else have no error key.
    if written_result(text) || !ERROR.is_in(text) {
        return None;
    }
    let frame = Frame::parse(text).ok().filter(|frame| frame.kind() == Kind::ErrorResponse)?;
    let error = Members::parse(frame.payload()?).ok()?;
    error.get("code")?.trim().parse().ok()
}

/// Whether `text` starts as the results Warden writes: the `jsonrpc`
/// member, an id that is a number or a string without escapes, then
/// `result` (a message names each member once: it has no `error`).
fn written_result(text: &str) -> bool {
    let Some(rest) = text.strip_prefix(r#"{"jsonrpc":"2.0","id":"#) else { return false };
    let id_end = match rest.strip_prefix('"') {
        Some(string) => string.find(['"', '\\']).filter(|&end| string.as_bytes()[end] == b'"').map(|end| end + 2),
        None => rest.find(|c: char| !matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E')),
    };
    id_end.is_some_and(|end| end > 0 && rest[end..].starts_with(r#","result":"#))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_gain_the_modern_fields() {
        let text = r#"{"jsonrpc":"2.0","id":"wm1","result":{"tools":[{"name":"a","x":1.50}],"_meta":{"k":1}}}"#;
        let modern: serde_json::Value = serde_json::from_str(&complete(text, None, "7", "tools/list")).unwrap();
        assert_eq!(modern["id"], 7);
        assert_eq!(modern["result"]["resultType"], "complete");
        assert_eq!(modern["result"]["ttlMs"], 0);
        assert_eq!(modern["result"]["cacheScope"], "private");
        assert_eq!(modern["result"]["_meta"]["k"], 1);
        assert_eq!(modern["result"]["_meta"][meta::SERVER_INFO]["name"], "warden");
        assert!(complete(text, None, "7", "tools/list").contains(r#""x":1.50"#), "values keep their bytes");
        let call = complete(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#, None, "2", "tools/call");
        assert!(!call.contains("ttlMs") && call.contains(r#""resultType":"complete""#));
    }

    fn read(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    /// The modern answer with id 7 around `result`, read and rendered.
    fn rendered(result: &str, method: &str) -> String {
        let members = Members::parse(result).unwrap();
        let mut rendered = String::from(r#"{"jsonrpc":"2.0","id":7,"result":"#);
        push_modern_result(&mut rendered, &members, method);
        rendered.push('}');
        rendered
    }

    /// A result written around without being read means what the read and
    /// rendered one means, for every method's fields.
    #[test]
    fn a_plain_result_is_the_rendered_one() {
        for (result, method) in [
            (r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#, "tools/call"),
            (r#"{ "tools" : [ ] }"#, "tools/list"),
            (r#"{}"#, "tools/call"),
            (r#" {  } "#, "resources/read"),
        ] {
            let plain = plain_result(result.trim(), false, "7", method).expect("plain");
            assert_eq!(read(&plain), read(&rendered(result, method)), "{result}");
        }
        // Known plain by the answer's parse, a result whose content names
        // the keys Warden adds is written around as well, and the same.
        for result in [r#"{"content":[{"_meta":{"k":1},"ttlMs":"x"}]}"#, r#"{"a":"\u0041","b":{"cacheScope":1}}"#] {
            let answer = format!(r#"{{"jsonrpc":"2.0","id":"wm1","result":{result}}}"#);
            let frame = Frame::parse(answer.as_str()).unwrap();
            assert!(frame.result_is_plain(), "{result}");
            let span = frame.payload_span().unwrap();
            let written = complete(&answer, Some(ResultAt { span, plain: true }), "7", "tools/call");
            assert_eq!(read(&written), read(&rendered(result, "tools/call")), "{result}");
            assert!(written.contains(&result[1..]), "its bytes kept: {written}");
        }
        for read in
            [r#"{"_meta":{}}"#, r#"{"resultType":"x"}"#, r#"{"\u0074tlMs":1}"#, r#"{"a":{"cacheScope":1}}"#, "[]"]
        {
            assert!(plain_result(read, false, "7", "tools/list").is_none(), "{read}");
        }
    }

    /// The shortcut reads a result only where the whole message is one.
    #[test]
    fn a_written_result_is_known_by_its_head() {
        for (text, result) in [
            (r#"{"jsonrpc":"2.0","id":7,"result":{"error":1}}"#, true),
            (r#"{"jsonrpc":"2.0","id":"a,b","result":{}}"#, true),
            (r#"{"jsonrpc":"2.0","id":-1.5e3,"result":{}}"#, true),
            (r#"{"jsonrpc":"2.0","id":"a\",\"result\":","error":{"code":1}}"#, false),
            (r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"x"}}"#, false),
            (r#"{"jsonrpc":"2.0","id":,"result":{}}"#, false),
            (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, false),
            (r#"{"id":7,"result":{}}"#, false),
        ] {
            assert_eq!(written_result(text), result, "{text}");
        }
        let tricky = r#"{"jsonrpc":"2.0","id":"a\",\"result\":","error":{"code":-32601,"message":"x"}}"#;
        assert_eq!(error_code(tricky), Some(-32601));
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":7,"result":{"error":{"code":1}}}"#), None);
    }

    #[test]
    fn unknown_resources_are_invalid_params() {
        let text = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}"#;
        let modern = complete(text, None, "\"r\"", "resources/read");
        assert_eq!(error_code(&modern), Some(-32602));
        assert!(modern.contains(r#""id":"r""#));
        let other = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
        assert_eq!(error_code(&complete(other, None, "3", "x")), Some(-32601));
    }
}
