//! The W3C trace context a request carries in `params._meta`
//! (`traceparent`, `tracestate`, as MCP's SEP-414 and the 2026-07-28
//! revision place them): read from a client's request, and written into
//! the request Warden forwards, so the server's span joins Warden's.

use warden_jsonrpc::{Frame, Members, Splice, Text};

use crate::pipeline::SpanContext;

/// The `_meta` of `frame`'s params: `Ok(None)` when there is none (or it
/// is `null`), `Err` when the params are not one object naming `_meta` at
/// most once (such params are left alone). Mostly what the parse found;
/// params it did not read (an escaped key, `"\u005fmeta"` say) are read here.
fn meta_of(frame: &Frame) -> Result<Option<&str>, ()> {
    Ok(frame.param_meta().ok_or(())??.filter(|meta| *meta != "null"))
}

/// The `traceparent` and `tracestate` of `_meta` (as JSON text, `null` as
/// absent); `Err` when `_meta` is not an object naming each at most once.
fn trace_members(meta: &str) -> Result<(Option<&str>, Option<&str>), ()> {
    let meta = Members::parse(meta).map_err(drop)?;
    Ok((meta.optional("traceparent")?, meta.optional("tracestate")?))
}

/// The client's span (a valid `traceparent`) and its `tracestate`, if the
/// request names them.
pub(crate) fn read(frame: &Frame) -> (Option<SpanContext>, Option<String>) {
    let members = meta_of(frame).ok().flatten().map(trace_members);
    let Some(Ok((traceparent, tracestate))) = members else { return (None, None) };
    fn text(raw: Option<&str>) -> Option<Text<'_>> {
        raw.and_then(|raw| serde_json::from_str(raw).ok())
    }
    let parent = text(traceparent).and_then(|text| SpanContext::parse(&text));
    // A tracestate without a valid parent means nothing (W3C).
    let state = parent.and(text(tracestate)).filter(|state| !state.trim().is_empty()).map(|state| state.0.into_owned());
    (parent, state)
}

/// Adds to `splice` what sets `traceparent` to `span`'s in the forwarded
/// request's `params._meta`: its value replaced, or the key added to
/// `_meta`, or `_meta` added to the params. A request without params (or
/// whose params or `_meta` are not objects) is left as it is.
pub(crate) fn inject(frame: &Frame, splice: &mut Splice, span: &SpanContext) {
    let Some(params) = frame.params() else { return };
    // Params Warden cannot read as one object (a key twice, say) are left alone.
    let Ok(meta) = meta_of(frame) else { return };
    match meta {
        Some(meta) => {
            let Ok((traceparent, _)) = trace_members(meta) else { return };
            match traceparent {
                Some(old) => {
                    let mut value = String::with_capacity(57);
                    push_quoted(&mut value, span);
                    splice.replace(frame.span_of(old), value);
                }
                None => insert_first(frame.span_of(meta).start, meta, "", span, "", splice),
            }
        }
        None => insert_first(frame.span_of(params).start, params, "\"_meta\":{", span, "}", splice),
    }
}

/// `span`'s traceparent as a JSON string (its characters need no escape).
fn push_quoted(out: &mut String, span: &SpanContext) {
    out.push('"');
    span.write_traceparent(out);
    out.push('"');
}

/// Inserts `"traceparent":"<span's>"` (between `open` and `close`) as the
/// first member of the object `object`, whose text starts at `start` in the
/// frame: written once, in one string.
fn insert_first(start: usize, object: &str, open: &str, span: &SpanContext, close: &str, splice: &mut Splice) {
    if !object.starts_with('{') {
        return;
    }
    let empty = object[1..].trim_start().starts_with('}');
    let mut member = String::with_capacity(open.len() + close.len() + 72);
    member.push_str(open);
    member.push_str("\"traceparent\":");
    push_quoted(&mut member, span);
    member.push_str(close);
    if !empty {
        member.push(',');
    }
    splice.replace(start + 1..start + 1, member);
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const OURS: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01";

    fn injected(text: &str) -> String {
        let frame = Frame::parse(text.to_owned()).unwrap();
        let mut splice = Splice::new();
        inject(&frame, &mut splice, &SpanContext::parse(OURS).unwrap());
        let out = splice.apply(frame.text());
        serde_json::from_str::<serde_json::Value>(&out).expect("still JSON");
        out
    }

    #[test]
    fn the_client_context_is_read_from_meta() {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","_meta":{{"traceparent":"{PARENT}","tracestate":"k=v"}}}}}}"#
        );
        let (parent, state) = read(&Frame::parse(text).unwrap());
        assert_eq!(parent.map(|p| p.traceparent()).as_deref(), Some(PARENT));
        assert_eq!(state.as_deref(), Some("k=v"));
        let invalid = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-zz","tracestate":"k=v"}}}"#;
        assert_eq!(read(&Frame::parse(invalid.to_owned()).unwrap()), (None, None));
        // `_meta` spelled with an escape is still `_meta`: the shortcut that
        // skips params without the word must not skip it.
        let escaped = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","\u005fmeta":{{"traceparent":"{PARENT}"}}}}}}"#
        );
        let (parent, _) = read(&Frame::parse(escaped.clone()).unwrap());
        assert_eq!(parent.map(|p| p.traceparent()).as_deref(), Some(PARENT));
        assert!(injected(&escaped).contains(&format!(r#""traceparent":"{OURS}""#)), "replaced, not added beside");
        assert!(!injected(&escaped).contains(PARENT));
    }

    #[test]
    fn traceparent_is_replaced_added_to_meta_or_meta_added() {
        let replaced = injected(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","_meta":{{"progressToken":1,"traceparent":"{PARENT}"}}}}}}"#
        ));
        assert!(replaced.contains(&format!(r#""progressToken":1,"traceparent":"{OURS}""#)), "{replaced}");
        let added = injected(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#,
        );
        assert!(added.contains(&format!(r#""_meta":{{"traceparent":"{OURS}","progressToken":1}}"#)), "{added}");
        let empty = injected(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{ }}}"#);
        assert!(empty.contains(&format!(r#""_meta":{{"traceparent":"{OURS}" }}"#)), "{empty}");
        let none = injected(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#);
        assert!(none.contains(&format!(r#""params":{{"_meta":{{"traceparent":"{OURS}"}},"name":"x"}}"#)), "{none}");
        let array = r#"{"jsonrpc":"2.0","id":1,"method":"x/y","params":[1,2]}"#;
        assert_eq!(injected(array), array, "params that are not an object are left alone");
        let bare = injected(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#);
        assert!(bare.contains(&format!(r#""params":{{"_meta":{{"traceparent":"{OURS}"}}}}"#)), "{bare}");
        for unchanged in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{},"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"a","traceparent":"b"}}}"#,
        ] {
            let frame = Frame::parse(unchanged.to_owned()).unwrap();
            let mut splice = Splice::new();
            inject(&frame, &mut splice, &SpanContext::parse(OURS).unwrap());
            assert_eq!(splice.apply(frame.text()), unchanged);
        }
    }
}
