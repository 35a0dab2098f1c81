//! The two eras of MCP as an upstream sees them: 2025-11-25 and earlier
//! (`initialize`, then a session) and 2026-07-28 (no handshake, an envelope
//! on every request). A connection's era is set by its handshake; requests
//! are adapted to it here, whoever wrote them.

use warden_jsonrpc::{Members, Needle, Splice, json_string, span_in};

/// The 2026-07-28 revision, the one modern revision Warden speaks.
pub const MODERN: &str = "2026-07-28";

/// The `_meta` key of the revision a request is written in.
pub const VERSION_KEY: &str = warden_jsonrpc::meta_keys::PROTOCOL_VERSION;

/// The prefix of the `_meta` keys the protocol defines.
const PROTOCOL_PREFIX: &str = warden_jsonrpc::meta_keys::PROTOCOL_PREFIX;

/// Finds [`VERSION_KEY`] in a message: whether it may carry the modern
/// envelope, asked of every message, from clients and to upstreams.
pub static HAS_VERSION_KEY: Needle = Needle::new(VERSION_KEY);

/// Which era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` and a session: the 2025 era (2025-11-25 and earlier).
    Mcp2025,
    /// Stateless, enveloped requests.
    Modern,
}

/// The `_meta` members a modern request carries, from the client's
/// `initialize` params (JSON text): its capabilities and who it is.
pub fn envelope_members(init_params: &str) -> String {
    let params = Members::parse(init_params).ok();
    let get = |key: &str| params.as_ref().and_then(|params| params.get(key)).filter(|raw| raw.starts_with('{'));
    let mut members = vec![
        format!("{}:{}", json_string(VERSION_KEY), json_string(MODERN)),
        format!("\"io.modelcontextprotocol/clientCapabilities\":{}", get("capabilities").unwrap_or("{}")),
    ];
    if let Some(info) = get("clientInfo") {
        members.push(format!("\"io.modelcontextprotocol/clientInfo\":{info}"));
    }
    members.join(",")
}

/// Whether a JSON-RPC error object is `UnsupportedProtocolVersion` naming
/// the modern revision among the versions the server supports.
pub fn offers_modern(error: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Error {
        code: i64,
        #[serde(default)]
        data: Option<Data>,
    }
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(default)]
        supported: Vec<String>,
    }
    serde_json::from_str::<Error>(error).is_ok_and(|error| {
        error.code == -32022 && error.data.is_some_and(|data| data.supported.iter().any(|v| v == MODERN))
    })
}

/// A request for a modern server: with the envelope, unless it already
/// carries one (a modern client's own, forwarded as it is).
pub fn enveloped(text: String, members: &str) -> String {
    if HAS_VERSION_KEY.is_in(&text) {
        return text;
    }
    with_envelope(&text, members).unwrap_or(text)
}

/// `text` with `members` first in `params._meta`, which is added (and
/// `params` too) where missing. Done for every request to a modern server,
/// so the members are inserted and every other byte is kept: no member is
/// rendered again. `None` when `text` is not a request with object params.
fn with_envelope(text: &str, members: &str) -> Option<String> {
    let message = Members::parse(text).ok()?;
    message.get("method")?;
    let (at, insert) = match message.get("params") {
        Some(params) => {
            let fields = Members::parse(params).ok()?;
            match fields.get("_meta") {
                Some(meta) => {
                    let inside = span_in(text, meta).start + 1;
                    match Members::parse(meta) {
                        Ok(old) if old.is_empty() => (inside..inside, members.to_owned()),
                        Ok(_) => (inside..inside, format!("{members},")),
                        // Not an object: replaced.
                        Err(_) => (span_in(text, meta), format!("{{{members}}}")),
                    }
                }
                None => {
                    let open = span_in(text, params).start + 1;
                    let comma = if fields.is_empty() { "" } else { "," };
                    (open..open, format!("\"_meta\":{{{members}}}{comma}"))
                }
            }
        }
        None => {
            // Before the message's closing brace.
            let close = text.trim_end().len().checked_sub(1)?;
            (close..close, format!(",\"params\":{{\"_meta\":{{{members}}}}}"))
        }
    };
    let mut splice = Splice::new();
    splice.replace(at, insert);
    Some(splice.apply(text))
}

/// Finds [`PROTOCOL_PREFIX`]: whether a text may hold envelope keys.
static PREFIX: Needle = Needle::new(PROTOCOL_PREFIX);

/// A request's `_meta` (JSON text) without the modern envelope keys, for a
/// 2025-era server; `None` when it has none to take off (or is not an object).
/// A key may spell the prefix with escapes (`io.modelcontextprotocol\/…`,
/// `\u0069o.…`): a `_meta` with a backslash is read with its keys decoded.
pub fn meta_without_envelope(meta: &str) -> Option<String> {
    if !PREFIX.is_in(meta) && !warden_jsonrpc::has_escape(meta) {
        return None;
    }
    warden_jsonrpc::without_members(meta, |key| key.starts_with(PROTOCOL_PREFIX))
}

/// A request for a 2025-era server: without the modern envelope keys.
/// Found by their text: a key that spells the prefix with escapes stays
/// here (the gateway takes those off a client's `_meta` before, unless it
/// splices a progress token or a trace parent into it; a 2025-era server
/// ignores `_meta` keys it does not know). Decoding every request with a
/// backslash, most of those that carry code or text, to find them would
/// cost each of them a second read.
pub fn unenveloped(text: String) -> String {
    // Asked of every request to a 2025-era server.
    if !PREFIX.is_in(&text) {
        return text;
    }
    if let Some(copy) = without_envelope_keys(&text) {
        return copy;
    }
    rewrite_meta(&text, |meta| match meta {
        Some(mut meta) => {
            meta.remove_where(|key| key.starts_with(PROTOCOL_PREFIX));
            meta.render(&[], &[])
        }
        None => "{}".to_owned(),
    })
    .unwrap_or(text)
}

/// The usual request for a 2025-era server in one copy: its `params._meta`
/// (an object, named once) without the envelope keys, every byte outside
/// `_meta` as it was. `None` when the request is not that simple.
fn without_envelope_keys(text: &str) -> Option<String> {
    let message = Members::parse(text).ok()?;
    message.get("method")?;
    let params = Members::parse(message.get("params")?).ok()?;
    let old = params.get_once("_meta").ok()??;
    let mut meta = Members::parse(old).ok()?;
    meta.remove_where(|key| key.starts_with(PROTOCOL_PREFIX));
    let at = span_in(text, old);
    let mut copy = String::with_capacity(text.len());
    copy.push_str(&text[..at.start]);
    meta.render_into(&mut copy, &[], &[]);
    copy.push_str(&text[at.end..]);
    Some(copy)
}

/// `text` (a request) with `params._meta` replaced by what `change` makes
/// of the old one; `None` when `text` is not an object with object params.
fn rewrite_meta(text: &str, change: impl FnOnce(Option<Members<'_>>) -> String) -> Option<String> {
    let message = Members::parse(text).ok()?;
    message.get("method")?;
    let params = match message.get("params") {
        Some(params) => Members::parse(params).ok()?,
        None => Members::default(),
    };
    let meta = params.get("_meta").and_then(|meta| Members::parse(meta).ok());
    let new_meta = change(meta);
    let params = if params.contains("_meta") {
        params.render(&[], &[("_meta", &new_meta)])
    } else {
        params.render(&[("_meta", &new_meta)], &[])
    };
    Some(if message.contains("params") {
        message.render(&[], &[("params", &params)])
    } else {
        message.render(&[("params", &params)], &[])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT: &str =
        r#"{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}"#;

    #[test]
    fn modern_requests_gain_the_envelope_once() {
        let members = envelope_members(INIT);
        let text = enveloped(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":2}}}"#
                .into(),
            &members,
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["params"]["_meta"][VERSION_KEY], MODERN);
        assert_eq!(
            value["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["sampling"],
            serde_json::json!({})
        );
        assert_eq!(value["params"]["_meta"]["progressToken"], 2);
        assert_eq!(enveloped(text.clone(), &members), text, "an envelope is never added twice");
        let bare = enveloped(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.into(), &members);
        assert!(
            bare.contains(r#""params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28""#),
            "{bare}"
        );
    }

    #[test]
    fn the_envelope_is_inserted_and_every_other_byte_kept() {
        let m = r#""k":1"#;
        let cases = [
            // Escaped keys, spacing and number forms stay as written.
            (
                r#"{"jsonrpc":"2.0", "id":1,"method":"tools/call","params":{"na\u006de":"t", "_meta":{ "progressToken":2.50 }}}"#,
                r#"{"jsonrpc":"2.0", "id":1,"method":"tools/call","params":{"na\u006de":"t", "_meta":{"k":1, "progressToken":2.50 }}}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{ }}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":1 }}}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":null,"a":[1]}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":1},"a":[1]}}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"_meta":{}}}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":1},"a":{"_meta":{}}}}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":1}}}"#,
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"_meta\":{\"k\":1}}}\n",
            ),
        ];
        for (text, expected) in cases {
            let enveloped = enveloped(text.into(), m);
            assert_eq!(enveloped, expected);
            serde_json::from_str::<serde_json::Value>(&enveloped).expect("still JSON");
        }
        // Not a request, or params that are not an object: left alone.
        for text in [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#]
        {
            assert_eq!(enveloped(text.into(), m), text);
        }
    }

    #[test]
    fn a_version_refusal_naming_the_modern_revision_is_told_apart() {
        assert!(offers_modern(r#"{"code":-32022,"message":"m","data":{"supported":["2026-07-28"],"requested":"x"}}"#));
        assert!(!offers_modern(r#"{"code":-32022,"message":"m","data":{"supported":["2027-01-01"]}}"#));
        assert!(!offers_modern(r#"{"code":-32601,"message":"m"}"#));
    }

    #[test]
    fn an_envelope_key_written_with_escapes_is_taken_off_too() {
        for meta in [
            r#"{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","x":1}"#,
            r#"{"\u0069o.modelcontextprotocol/protocolVersion":"2026-07-28","x":1}"#,
            r#"{"x":1,"io.modelcontextprotocol\u002fclientInfo":{"name":"c"}}"#,
        ] {
            assert_eq!(meta_without_envelope(meta).as_deref(), Some(r#"{"x":1}"#), "{meta}");
        }
        // Escapes elsewhere, and no envelope key: nothing to take off, every
        // byte stays.
        assert_eq!(meta_without_envelope(r#"{"note":"a\nb","k\u0065y":1}"#), None);
        assert_eq!(meta_without_envelope(r#"{"progressToken":1}"#), None);
    }

    #[test]
    fn requests_to_a_2025_era_server_lose_only_the_envelope() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1.50},"_meta":{"progressToken":2,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(
            unenveloped(text.into()),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1.50},"_meta":{"progressToken":2}}}"#
        );
        let plain = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        assert_eq!(unenveloped(plain.into()), plain);
        // Outside `_meta`, every byte stays, spaces included.
        let spaced = r#"{ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": [1, 2]} } }"#;
        assert_eq!(
            unenveloped(spaced.into()),
            r#"{ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "t", "_meta": {"k":[1, 2]} } }"#
        );
        // A `_meta` named twice goes the long way: neither keeps the envelope.
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/a":1},"_meta":{"io.modelcontextprotocol/b":2}}}"#;
        assert!(!unenveloped(twice.into()).contains("io.modelcontextprotocol/"));
    }
}
