//! The members of a request's `params._meta` that Warden's stages read (the
//! 2026-07-28 envelope and the progress token), found while the message is
//! parsed: the envelope is read once, at the front, and taken off for a
//! 2025-era server without reading `_meta` again.

use std::ops::Range;

use crate::frame::Span;

/// The `_meta` keys Warden reads, as MCP names them (the one place they
/// are spelled: the upstream and gateway crates name them from here).
pub mod keys {
    /// The prefix of every key MCP itself defines.
    pub const PROTOCOL_PREFIX: &str = "io.modelcontextprotocol/";
    /// 2026-07-28: the revision a request is written in.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// 2026-07-28: the client's capabilities for this request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// 2026-07-28: who the client is.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// 2026-07-28: the log level the client wants for this request.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The token progress notifications name.
    pub const PROGRESS_TOKEN: &str = "progressToken";
}

/// Whether a result's member with key `key` (its bytes as written) may be
/// one of those a 2026-07-28 result gains from Warden (`_meta`,
/// `resultType`, `ttlMs`, `cacheScope`): it is, or it is escaped and
/// could spell one.
#[allow(
    clippy::manual_contains,
    reason = "a key is a few bytes: measured, the call into memchr cost 40 instructions a response"
)]
pub(crate) fn may_be_added_to_results(key: &[u8]) -> bool {
    matches!(key, b"_meta" | b"resultType" | b"ttlMs" | b"cacheScope") || key.iter().any(|&byte| byte == b'\\')
}

/// Where `progressToken` is in [`NOTED`] (and its span in [`MetaSpans::values`]).
const PROGRESS_TOKEN_SLOT: usize = 4;

/// The keys noted, in the order of [`MetaSpans::values`].
const NOTED: [&[u8]; 5] = [
    keys::PROTOCOL_VERSION.as_bytes(),
    keys::CLIENT_CAPABILITIES.as_bytes(),
    keys::CLIENT_INFO.as_bytes(),
    keys::LOG_LEVEL.as_bytes(),
    keys::PROGRESS_TOKEN.as_bytes(),
];

/// Where the members are, as offsets into `_meta`'s own text: they stay
/// true when the frame's id is replaced before it.
#[derive(Debug, Clone, Default)]
pub(crate) struct MetaSpans {
    /// The values of [`NOTED`]'s keys; none when absent.
    values: [Span; 5],
    /// The members with a key of MCP's prefix.
    protocol_keys: ProtocolKeys,
}

/// Where the members whose keys MCP defines (`io.modelcontextprotocol/…`)
/// are in a `_meta`, for taking them off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProtocolKeys {
    /// There are none.
    #[default]
    None,
    /// They follow one another: this range of `_meta`'s text holds them and
    /// one comma beside them, so the text without it is `_meta` without them.
    Together(Range<u32>),
    /// Other members come between them: `_meta` must be read again to take
    /// them off.
    Apart,
}

/// The members of a request's `_meta` that the stages read, as JSON text,
/// from [`Frame::meta_members`](crate::Frame::meta_members). Each key was
/// named at most once, and none is escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaMembers<'a> {
    /// `_meta` itself.
    pub text: &'a str,
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: Option<&'a str>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: Option<&'a str>,
    /// `io.modelcontextprotocol/clientInfo`.
    pub client_info: Option<&'a str>,
    /// `io.modelcontextprotocol/logLevel`.
    pub log_level: Option<&'a str>,
    /// `progressToken`.
    pub progress_token: Option<&'a str>,
    /// Where the members whose keys MCP defines are.
    pub protocol_keys: ProtocolKeys,
}

impl MetaMembers<'_> {
    /// `_meta` without the members whose keys MCP defines, every other byte
    /// as it was; `None` unless they are [`ProtocolKeys::Together`].
    pub fn without_protocol_keys(&self) -> Option<String> {
        let ProtocolKeys::Together(cut) = &self.protocol_keys else { return None };
        let (start, end) = (cut.start as usize, cut.end as usize);
        let mut out = String::with_capacity(self.text.len() - (end - start));
        out.push_str(self.text.get(..start)?);
        out.push_str(self.text.get(end..)?);
        Some(out)
    }
}

impl MetaSpans {
    /// Where `progressToken`'s value is, as an offset into `_meta`.
    pub(crate) fn progress_token(&self) -> Option<Range<usize>> {
        self.values[PROGRESS_TOKEN_SLOT].range()
    }

    /// Where the members whose keys MCP defines are.
    pub(crate) fn protocol_keys(&self) -> &ProtocolKeys {
        &self.protocol_keys
    }

    /// The members, given `_meta`'s text.
    pub(crate) fn members<'a>(&self, meta: &'a str) -> MetaMembers<'a> {
        let at = |span: Span| span.range().and_then(|range| meta.get(range));
        MetaMembers {
            text: meta,
            protocol_version: at(self.values[0]),
            client_capabilities: at(self.values[1]),
            client_info: at(self.values[2]),
            log_level: at(self.values[3]),
            progress_token: at(self.values[PROGRESS_TOKEN_SLOT]),
            protocol_keys: self.protocol_keys.clone(),
        }
    }
}

/// Reads the `_meta` object that starts at `at` in `text`: where it ends,
/// and its spans, unless a key is escaped (it may spell one of those read)
/// or one of [`NOTED`] is named twice (parsers differ on which of two they
/// keep): then the stages read `_meta` themselves.
///
/// Out of line: most requests have no `_meta`, and the parse's member loop
/// stays small enough to be inlined.
#[inline(never)]
pub(crate) fn read(text: &str, at: usize) -> Option<(usize, Option<MetaSpans>)> {
    let b = text.as_bytes();
    let mut reader = MetaReader { start: at, ..MetaReader::default() };
    let end = crate::scan::object_end(text, at, |key, member, value| {
        let end = crate::scan::value_end(b, value)?;
        reader.note(key, member, value..end);
        Some(end)
    })?;
    Some((end, reader.finish()))
}

/// Notes `_meta`'s members as the scan passes them.
#[derive(Default)]
struct MetaReader {
    /// Where `_meta` starts in the message.
    start: usize,
    spans: MetaSpans,
    unreadable: bool,
    /// Where the previous member's value ended.
    previous_end: Option<usize>,
    /// The members of MCP's prefix read so far, while no other member has
    /// followed them.
    run: Option<Run>,
}

/// Members of MCP's prefix side by side, as offsets in the message.
struct Run {
    /// Where the first starts (its key's quote).
    first: usize,
    /// Where the member before it ended, if there is one.
    before: Option<usize>,
    /// Where the last one's value ends.
    last: usize,
}

impl MetaReader {
    /// One member: its key as written, where it starts (its key's quote)
    /// and where its value is, in the message.
    fn note(&mut self, key: &[u8], member: usize, value: Range<usize>) {
        if let Some(slot) = NOTED.iter().position(|noted| *noted == key) {
            let span = Span::of(Some(value.start - self.start..value.end - self.start));
            self.unreadable |= std::mem::replace(&mut self.spans.values[slot], span).range().is_some();
        } else {
            // A key that is one of those noted has no escape: only the
            // others are searched (an envelope's keys all are noted).
            self.unreadable |= memchr::memchr(b'\\', key).is_some();
        }
        if key.starts_with(keys::PROTOCOL_PREFIX.as_bytes()) {
            if let Some(run) = &mut self.run {
                run.last = value.end;
            } else if self.spans.protocol_keys == ProtocolKeys::None {
                self.run = Some(Run { first: member, before: self.previous_end, last: value.end });
            } else {
                // One of the prefix after others that followed some.
                self.spans.protocol_keys = ProtocolKeys::Apart;
            }
        } else if let Some(run) = self.run.take() {
            // The run and the comma after it.
            self.spans.protocol_keys = self.cut(run.first..member);
        }
        self.previous_end = Some(value.end);
    }

    fn finish(mut self) -> Option<MetaSpans> {
        if let Some(run) = self.run.take() {
            // The last members: the comma before them goes too, if any.
            self.spans.protocol_keys = self.cut(run.before.unwrap_or(run.first)..run.last);
        }
        (!self.unreadable).then_some(self.spans)
    }

    /// Range `cut` of the message, as offsets into `_meta`.
    fn cut(&self, cut: Range<usize>) -> ProtocolKeys {
        ProtocolKeys::Together((cut.start - self.start) as u32..(cut.end - self.start) as u32)
    }
}

#[cfg(test)]
mod tests {
    use crate::Frame;

    /// A request with these params; its `_meta` members are `meta_members()`.
    fn request(params: &str) -> Frame {
        Frame::parse(format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#)).unwrap()
    }

    const V: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    const C: &str = r#""io.modelcontextprotocol/clientCapabilities":{"a":[1,{"b":2}]}"#;

    #[test]
    fn the_envelope_is_found_where_it_is() {
        let frame = request(&format!(r#"{{"name":"t","_meta":{{"progressToken":7, {V},{C} ,"x":1}}}}"#));
        let members = frame.meta_members().unwrap();
        assert_eq!(members.protocol_version, Some(r#""2026-07-28""#));
        assert_eq!(members.client_capabilities, Some(r#"{"a":[1,{"b":2}]}"#));
        assert_eq!(members.progress_token, Some("7"));
        assert_eq!((members.client_info, members.log_level), (None, None));
        assert_eq!(members.without_protocol_keys().as_deref(), Some(r#"{"progressToken":7, "x":1}"#));
    }

    #[test]
    fn taking_the_protocol_keys_off_leaves_json_wherever_they_are() {
        // Expected: what serde_json reads once the keys are gone.
        let cases = [
            (format!("{{{V},{C}}}"), "{}"),
            (format!("{{ {V} , {C} }}"), "{}"),
            (format!(r#"{{{V},"x":1}}"#), r#"{"x":1}"#),
            (format!(r#"{{"x":1,{V}}}"#), r#"{"x":1}"#),
            (format!(r#"{{"x":1 , {V},{C}, "y":[2]}}"#), r#"{"x":1,"y":[2]}"#),
            (r#"{"x":1,"io.modelcontextprotocol/other":null}"#.to_owned(), r#"{"x":1}"#),
        ];
        for (meta_text, expected) in cases {
            let frame = request(&format!(r#"{{"_meta":{meta_text}}}"#));
            let members = frame.meta_members().unwrap();
            let without = members.without_protocol_keys().unwrap();
            let read: serde_json::Value = serde_json::from_str(&without).unwrap();
            assert_eq!(read, serde_json::from_str::<serde_json::Value>(expected).unwrap(), "{meta_text}");
        }
    }

    #[test]
    fn keys_apart_or_absent_are_said_so() {
        use super::ProtocolKeys;
        let frame = request(&format!(r#"{{"_meta":{{{V},"x":1,{C}}}}}"#));
        let apart = frame.meta_members().unwrap();
        assert_eq!(apart.protocol_keys, ProtocolKeys::Apart);
        assert_eq!(apart.without_protocol_keys(), None);
        let frame = request(r#"{"_meta":{"progressToken":"p"}}"#);
        let none = frame.meta_members().unwrap();
        assert_eq!(none.protocol_keys, ProtocolKeys::None);
        assert_eq!(none.progress_token, Some(r#""p""#));
    }

    #[test]
    fn an_escaped_key_or_one_named_twice_leaves_the_reading_to_the_stages() {
        assert!(request(r#"{"_meta":{"progress\u0054oken":1}}"#).meta_members().is_none());
        assert!(request(r#"{"_meta":{"progressToken":1,"progressToken":2}}"#).meta_members().is_none());
        assert!(request(&format!(r#"{{"_meta":{{{V},{V}}}}}"#)).meta_members().is_none());
        // A second spelling of a noted key, after the plain one: the escaped
        // one is not a noted key's bytes, and is still seen.
        let escaped = r#""io.modelcontextprotocol\/protocolVersion":"2025-06-18""#;
        assert!(request(&format!(r#"{{"_meta":{{{V},{escaped}}}}}"#)).meta_members().is_none());
        assert!(request(&format!(r#"{{"_meta":{{{escaped},{V}}}}}"#)).meta_members().is_none());
        // Not an object, or no `_meta`: nothing to read.
        assert!(request(r#"{"_meta":null}"#).meta_members().is_none());
        assert!(request(r#"{"name":"t"}"#).meta_members().is_none());
        assert!(request("[1]").meta_members().is_none());
    }

    #[test]
    fn a_new_id_keeps_the_members() {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{{V},"progressToken":3}}}}}}"#);
        let frame = Frame::parse(text).unwrap();
        let renamed = frame.with_id_frame(r#""a-much-longer-id""#);
        assert_eq!(renamed.meta_members(), frame.meta_members());
        assert_eq!(renamed.meta_members().and_then(|m| m.progress_token), Some("3"));
        // The token's place alone, in the message: the same value, found
        // without the other members.
        for frame in [&frame, &renamed] {
            let token = frame.noted_progress_token().flatten().map(|span| &frame.text()[span]);
            assert_eq!(token, Some("3"));
        }
        assert_eq!(request(r#"{"_meta":{"x":1}}"#).noted_progress_token(), Some(None));
        assert_eq!(request(r#"{"name":"t"}"#).noted_progress_token(), None);
        assert_eq!(request(r#"{"_meta":{"progress\u0054oken":1}}"#).noted_progress_token(), None);
    }
}
