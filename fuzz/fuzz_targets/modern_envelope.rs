//! The 2026-07-28 per-request envelope (`params._meta`) against serde_json:
//! an envelope read from a frame names the version and capabilities that
//! serde_json finds there; one serde_json finds complete is read. The
//! header mirror (`Mcp-Name`, `Mcp-Param-*`) decodes what it encodes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use warden_gateway::modern::envelope::client_info;
use warden_gateway::modern::{Envelope, is_modern};
use warden_jsonrpc::Frame;
use warden_upstream::mirror;

/// Whether some object in the JSON `text` names a key twice (serde_json's
/// `Value` keeps the last silently).
fn has_duplicate_keys(text: &str) -> bool {
    struct Unique;
    impl<'de> serde::Deserialize<'de> for Unique {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(Unique)
        }
    }
    impl<'de> serde::de::Visitor<'de> for Unique {
        type Value = Unique;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key) {
                    return Err(serde::de::Error::custom("duplicate key"));
                }
                map.next_value::<Unique>()?;
            }
            Ok(Unique)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
            while seq.next_element::<Unique>()?.is_some() {}
            Ok(Unique)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_unit<E>(self) -> Result<Unique, E> {
            Ok(Unique)
        }
    }
    serde_json::from_str::<Unique>(text).is_err()
}

const VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(frame) = Frame::parse(text) {
        let read = Envelope::read(&frame);
        let modern = is_modern(&frame);
        let _ = client_info(&frame);
        // serde_json's view of params._meta (None when it cannot hold it).
        let meta = frame
            .params()
            .and_then(|params| serde_json::from_str::<Value>(params).ok())
            .map(|params| params.get("_meta").cloned());
        if let Some(meta) = meta {
            let version = meta.as_ref().and_then(|meta| meta.get(VERSION));
            let capabilities = meta.as_ref().and_then(|meta| meta.get(CAPABILITIES));
            match &read {
                Ok(envelope) => {
                    assert_eq!(version, Some(&Value::String(envelope.version.to_string())), "version of {text:?}");
                    assert!(capabilities.is_some_and(Value::is_object), "capabilities of {text:?}");
                    assert!(modern, "an envelope that is_modern does not see: {text:?}");
                    let _ = envelope.check_version();
                    for method in ["elicitation/create", "sampling/createMessage", "roots/list", "x"] {
                        let _ = envelope.capabilities.lacks_for(method, frame.params());
                    }
                }
                Err(err) => {
                    // Only when the version is a string and the capabilities an
                    // object whose `elicitation` (if any) is an object or null
                    // must it be read.
                    let elicitation_ok =
                        capabilities.and_then(|c| c.get("elicitation")).is_none_or(|e| e.is_object() || e.is_null());
                    let complete = version.is_some_and(Value::is_string)
                        && capabilities.is_some_and(Value::is_object)
                        && elicitation_ok;
                    // serde_json keeps the last of duplicate keys, Warden
                    // refuses them (in params, in `_meta`, in the
                    // capabilities): judge only without them.
                    let duplicates = text.matches(VERSION).count() > 1
                        || text.matches(CAPABILITIES).count() > 1
                        || capabilities.is_some_and(|_| frame.params().is_some_and(has_duplicate_keys));
                    assert!(!complete || duplicates, "refused a complete envelope ({}): {text:?}", err.message);
                }
            }
        }
    }
    // The header mirror: what is encoded decodes to itself, and the encoding
    // is a valid header value (visible ASCII).
    let encoded = mirror::header_value(text);
    assert!(encoded.bytes().all(|b| (0x20..=0x7e).contains(&b)), "header value {encoded:?}");
    assert_eq!(mirror::decode_header_value(&encoded).as_deref(), Some(text));
    let _ = mirror::decode_header_value(text);
    if let Some((schema, arguments)) = text.split_once('\u{0}') {
        for (_, value) in mirror::param_headers(schema, Some(arguments)) {
            let header = mirror::header_value(&value);
            let sent = mirror::decode_header_value(&header).expect("decodes");
            assert!(mirror::same_value(&sent, &value), "mirrored {value:?} is not the same value");
        }
        let _ = mirror::annotated_tools(schema);
    }
});
