//! The frame scanner against serde_json: a frame `Frame::parse` accepts is
//! valid JSON with the members, id, method, params and payload serde_json
//! reads; a text serde_json reads as a valid JSON-RPC message is accepted,
//! as the same kind. Renaming a frame's id keeps it whole. The members of
//! `_meta` the parse notes (the 2026-07-28 envelope, the progress token)
//! are serde_json's, and taking MCP's keys off leaves the rest as it was.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use warden_fuzz::{is_json, members, value};
use warden_jsonrpc::{Frame, Kind, MetaMembers, ProtocolKeys};

/// What a JSON-RPC message is, read with serde_json only.
#[derive(Debug)]
struct Oracle {
    kind: Option<Kind>,
    id: Option<Value>,
    method: Option<String>,
    params: Option<Value>,
    payload: Option<Value>,
}

const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// The message's reading, or `None` when serde_json cannot hold every
/// envelope value (numbers out of range, lone surrogates) and so cannot judge.
fn oracle(text: &str) -> Option<Oracle> {
    let members = members(text)?;
    let mut found: [Option<Value>; 6] = Default::default();
    let mut duplicate = false;
    for (key, raw) in &members {
        if let Some(at) = ENVELOPE.iter().position(|name| name == key) {
            duplicate |= found[at].is_some();
            found[at] = Some(value(raw.get())?);
        }
    }
    let [jsonrpc, id, method, params, result, error] = found;
    let method_text = match &method {
        Some(Value::String(name)) => Some(name.clone()),
        _ => None,
    };
    let id_ok = |id: &Value| id.is_string() || id.is_number();
    let valid = !duplicate
        && jsonrpc == Some(Value::String("2.0".into()))
        && method.as_ref().is_none_or(Value::is_string)
        && params.as_ref().is_none_or(|p| p.is_object() || p.is_array());
    let kind = if !valid {
        None
    } else if method.is_some() {
        match (&id, &result, &error) {
            (Some(id), None, None) if id_ok(id) => Some(Kind::Request),
            (None, None, None) => Some(Kind::Notification),
            _ => None,
        }
    } else {
        match (&id, &result, &error) {
            (Some(id), Some(_), None) if id_ok(id) => Some(Kind::Response),
            (Some(id), None, Some(Value::Object(_))) if id_ok(id) || id.is_null() => Some(Kind::ErrorResponse),
            _ => None,
        }
    };
    Some(Oracle { kind, id, method: method_text, params, payload: result.or(error) })
}

/// The `_meta` keys the parse notes, in [`MetaMembers`]' order.
const NOTED: [&str; 5] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "progressToken",
];

/// `_meta`'s members as the parse found them, against serde_json's reading.
fn check_meta(found: &MetaMembers, text: &str) {
    let meta = members(found.text).unwrap_or_else(|| panic!("_meta read, yet not an object, in {text:?}"));
    let got = [found.protocol_version, found.client_capabilities, found.client_info, found.log_level, found.progress_token];
    for (key, got) in NOTED.iter().zip(got) {
        let named: Vec<&str> = meta.iter().filter(|(name, _)| name == key).map(|(_, raw)| raw.get()).collect();
        assert!(named.len() <= 1, "{key} named twice, yet read, in {text:?}");
        assert_eq!(got, named.first().copied(), "{key} in {text:?}");
    }
    let kept: Vec<(&str, &str)> = meta
        .iter()
        .filter(|(key, _)| !key.starts_with("io.modelcontextprotocol/"))
        .map(|(key, raw)| (key.as_str(), raw.get()))
        .collect();
    match &found.protocol_keys {
        ProtocolKeys::None => assert_eq!(kept.len(), meta.len(), "MCP's keys missed in {text:?}"),
        ProtocolKeys::Apart => assert!(kept.len() < meta.len(), "no MCP key, yet apart, in {text:?}"),
        ProtocolKeys::Together(_) => {
            let without = found.without_protocol_keys().expect("the keys together are cut");
            let read = members(&without).unwrap_or_else(|| panic!("{without:?} (without MCP's keys) is not an object"));
            let read: Vec<(&str, &str)> = read.iter().map(|(key, raw)| (key.as_str(), raw.get())).collect();
            assert_eq!(read, kept, "taking MCP's keys off {text:?}");
        }
    }
}

fn same(part: Option<&str>, expected: &Option<Value>, what: &str, text: &str) {
    let got = part.map(|part| value(part).unwrap_or_else(|| panic!("{what} {part:?} is not JSON in {text:?}")));
    assert_eq!(&got, expected, "{what} differs from serde_json's in {text:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = Frame::parse(text);
    if let Ok(frame) = &parsed {
        assert!(is_json(frame.text()), "accepted a frame that is not JSON: {text:?}");
    }
    // serde_json's reading of what the frame scanner sees (JSON whitespace
    // around a message is allowed; a frame's text is trimmed of it).
    let judged = oracle(text.trim_matches([' ', '\t', '\n', '\r']));
    let Some(expected) = judged else {
        // serde_json cannot judge the values (or it is not an object):
        // whatever was accepted must at least be a JSON object.
        if let Ok(frame) = &parsed {
            assert!(frame.text().starts_with('{') && members(frame.text()).is_some(), "not an object: {text:?}");
        }
        return;
    };
    match (&parsed, expected.kind) {
        (Ok(frame), Some(kind)) => {
            assert_eq!(frame.kind(), kind, "kind differs in {text:?}");
            assert_eq!(frame.method().map(|m| m.as_str().to_owned()), expected.method, "method in {text:?}");
            same(frame.id(), &expected.id, "id", text);
            same(frame.params(), &expected.params, "params", text);
            same(frame.payload(), &expected.payload, "result/error", text);
            if let Some(found) = frame.meta_members() {
                check_meta(&found, text);
            }
            // A new id changes only the id, as parsing the renamed text says.
            for id in ["\"w-1\"", "12345678901"] {
                let renamed = frame.with_id_frame(id);
                let reparsed = Frame::parse(frame.with_id(id)).expect("a renamed frame parses");
                assert_eq!(renamed.text(), reparsed.text());
                assert_eq!(renamed.meta_members(), reparsed.meta_members());
                assert_eq!(
                    (renamed.id(), renamed.params(), renamed.payload(), renamed.kind()),
                    (reparsed.id(), reparsed.params(), reparsed.payload(), reparsed.kind())
                );
            }
        }
        (Err(_), None) => {}
        (Ok(frame), None) => panic!("accepted an invalid message as {:?}: {text:?}", frame.kind()),
        (Err(err), Some(kind)) => panic!("refused a valid {kind:?} ({}): {text:?}", err.message),
    }
});
