//! One JSON-RPC message: its original text plus the positions of its envelope.

use std::ops::Range;
use std::sync::Arc;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::codes::ErrorCode;
use crate::meta::{MetaMembers, MetaSpans, ProtocolKeys};
use crate::method::Method;
use crate::params::{ParamMembers, ParamSpans, ParamsReader};
use crate::text::Text;

/// What kind of message a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Has a method and an id: expects a response.
    Request,
    /// Has a method and no id.
    Notification,
    /// Has an id and a `result`.
    Response,
    /// Has an id and an `error`.
    ErrorResponse,
}

/// A validated JSON-RPC 2.0 message that keeps its original bytes.
///
/// Only the envelope is read. `params`, `result` and `error` stay as text and are
/// reached through [`Frame::params`] and friends, which return slices of the
/// original message.
#[derive(Debug, Clone)]
pub struct Frame {
    text: String,
    kind: Kind,
    method: Option<Method>,
    id: Span,
    params: Span,
    payload: Span,
    /// The params' members that stages read, when the parse found them.
    param_spans: Option<ParamSpans>,
    /// The members of the params' `_meta` that stages read, when the parse
    /// found them.
    meta_spans: Option<Arc<MetaSpans>>,
    /// Whether the parse found the result to be an object with none of the
    /// members a 2026-07-28 result gains (see [`Frame::result_is_plain`]).
    result_plain: bool,
}

/// Where a part of a frame's text is: `u32` offsets, `(0, 0)` for none (no
/// part of a message is empty, or starts where it does). A frame is moved
/// from stage to stage, and held small it is moved in registers, not by a
/// call to `memcpy`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The span of `range`, in a text of at most `u32::MAX` bytes.
    pub(crate) fn of(range: Option<Range<usize>>) -> Span {
        range.map_or_else(Span::default, |range| Span { start: range.start as u32, end: range.end as u32 })
    }

    /// The range, unless this is none.
    pub(crate) fn range(self) -> Option<Range<usize>> {
        (self.end != 0).then_some(self.start as usize..self.end as usize)
    }
}

/// Why a line is not a valid JSON-RPC message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct FrameError {
    /// The JSON-RPC code to answer with.
    pub code: ErrorCode,
    /// What is wrong, for a person.
    pub message: String,
    /// The message's id (JSON text), when it could be read, so the error can
    /// answer it.
    pub id: Option<String>,
}

impl FrameError {
    fn new(code: ErrorCode, message: impl Into<String>, id: Option<&str>) -> Self {
        FrameError { code, message: message.into(), id: id.filter(|raw| is_valid_id(raw)).map(str::to_owned) }
    }
}

/// The members of a message that make its envelope, as JSON text (the
/// method decoded), each present even when `null`.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<Text<'a>>,
    params: Option<&'a str>,
    result: Option<&'a str>,
    error: Option<&'a str>,
    /// The members of object params that stages read, when the scan found
    /// them (serde_json's reading finds none).
    param_spans: Option<ParamSpans>,
    /// The members of the params' `_meta` that stages read, when the parse
    /// found them.
    meta_spans: Option<Arc<MetaSpans>>,
    /// Whether the scan found the result to be an object whose keys are
    /// none of those a 2026-07-28 result gains.
    result_plain: bool,
}

impl<'a> Envelope<'a> {
    /// The envelope read by the allocation-free scan; `None` when serde_json
    /// must decide (a member named twice, a method that is not a plain
    /// string, anything the scan declines).
    fn scanned(text: &'a str) -> Option<Envelope<'a>> {
        let b = text.as_bytes();
        let mut envelope = Envelope::default();
        let mut twice = false;
        let mut method = None;
        crate::scan::members_at_bytes(text, |key, at| {
            let key = &b[key];
            // Object params are read member by member on the way, for the
            // stages that read their name, arguments or `_meta`.
            let end = if key == b"params" && b.get(at) == Some(&b'{') {
                let mut reader = ParamsReader::default();
                let end = crate::scan::object_end(text, at, |key, _, at| reader.read(text, key, at))?;
                if let Some((spans, meta)) = reader.finish() {
                    envelope.param_spans = Some(spans);
                    envelope.meta_spans = meta;
                }
                end
            } else if key == b"result" && b.get(at) == Some(&b'{') {
                // Its keys are noted on the way (its values skipped as
                // any value is): whether the lane may write around it.
                let mut plain = true;
                let end = crate::scan::object_end(text, at, |key, _, at| {
                    plain &= !crate::meta::may_be_added_to_results(key);
                    crate::scan::value_end(b, at)
                })?;
                envelope.result_plain = plain;
                end
            } else {
                crate::scan::value_end(b, at)?
            };
            let slot = match key {
                b"jsonrpc" => &mut envelope.jsonrpc,
                b"id" => &mut envelope.id,
                b"method" => &mut method,
                b"params" => &mut envelope.params,
                b"result" => &mut envelope.result,
                b"error" => &mut envelope.error,
                _ => return Some(end),
            };
            twice |= slot.replace(&text[at..end]).is_some();
            Some(end)
        })?;
        if twice {
            return None;
        }
        if let Some(method) = method {
            let name = method.strip_prefix('"').and_then(|rest| rest.strip_suffix('"'))?;
            if name.contains('\\') {
                return None;
            }
            envelope.method = Some(Text(std::borrow::Cow::Borrowed(name)));
        }
        Some(envelope)
    }
}

/// The envelope as serde_json reads it, for what the scan declines.
#[derive(Deserialize)]
struct SerdeEnvelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present_text")]
    method: Option<Text<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

impl<'a> From<SerdeEnvelope<'a>> for Envelope<'a> {
    fn from(read: SerdeEnvelope<'a>) -> Envelope<'a> {
        Envelope {
            jsonrpc: read.jsonrpc.map(RawValue::get),
            id: read.id.map(RawValue::get),
            method: read.method,
            params: read.params.map(RawValue::get),
            result: read.result.map(RawValue::get),
            error: read.error.map(RawValue::get),
            param_spans: None,
            meta_spans: None,
            result_plain: false,
        }
    }
}

/// Deserializes a field that is present, even as `null`, to `Some`: an explicit
/// `"id": null` must not look like a missing id.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// Deserializes a present `method` to `Some`: a `null` one is refused (a
/// method is a string; a response has none at all), not taken as absent.
fn present_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Text<'de>>, D::Error> {
    Text::deserialize(deserializer).map(Some)
}

/// Whether `raw` is the JSON string "2.0" (escaped or not).
fn is_version_2(raw: &str) -> bool {
    raw == r#""2.0""# || serde_json::from_str::<Text>(raw).is_ok_and(|text| *text == *"2.0")
}

/// `text` without the JSON whitespace (space, tab, line feed, carriage
/// return) around it. Not `str::trim`, which takes any Unicode whitespace
/// off too: a message that begins with a no-break space is not JSON.
pub(crate) fn json_trimmed(text: &str) -> &str {
    let blank = |byte: &u8| matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
    let b = text.as_bytes();
    let start = b.iter().position(|byte| !blank(byte)).unwrap_or(b.len());
    let end = b.iter().rposition(|byte| !blank(byte)).map_or(start, |last| last + 1);
    // Both ends are next to ASCII bytes (or the text's own ends): char boundaries.
    &text[start..end]
}

/// MCP ids are strings or numbers, never null.
fn is_valid_id(raw: &str) -> bool {
    matches!(raw.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9'))
}

impl Frame {
    /// Parses and validates one message.
    ///
    /// Leading and trailing JSON whitespace is ignored. Batches (JSON arrays)
    /// are refused: MCP removed them in 2025-06-18.
    pub fn parse(text: impl Into<String>) -> Result<Frame, FrameError> {
        let mut text: String = text.into();
        let trimmed = json_trimmed(&text);
        if trimmed.len() != text.len() {
            text = trimmed.to_owned();
        }
        if u32::try_from(text.len()).is_err() {
            return Err(FrameError::new(ErrorCode::InvalidRequest, "a message must be shorter than 4 GiB", None));
        }
        let (kind, method, id, params, payload, param_spans, meta_spans, result_plain) = {
            let envelope = Self::envelope(&text)?;
            let span = |raw: Option<&str>| Span::of(raw.map(|raw| span_in(&text, raw)));
            let kind = Self::classify(&envelope)?;
            (
                kind,
                envelope.method.as_deref().map(Method::parse),
                span(envelope.id),
                span(envelope.params),
                span(envelope.result.or(envelope.error)),
                envelope.param_spans,
                envelope.meta_spans,
                envelope.result_plain,
            )
        };
        Ok(Frame { text, kind, method, id, params, payload, param_spans, meta_spans, result_plain })
    }

    fn envelope(text: &str) -> Result<Envelope<'_>, FrameError> {
        match text.as_bytes().first() {
            Some(b'{') => {}
            Some(b'[') => {
                return Err(FrameError::new(
                    ErrorCode::InvalidRequest,
                    "JSON-RPC batches are not supported (MCP removed them in 2025-06-18)",
                    None,
                ));
            }
            _ if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => {
                return Err(FrameError::new(
                    ErrorCode::InvalidRequest,
                    "a JSON-RPC message must be a JSON object",
                    None,
                ));
            }
            _ => {}
        }
        if let Some(envelope) = Envelope::scanned(text) {
            return Ok(envelope);
        }
        serde_json::from_str::<SerdeEnvelope>(text).map(Envelope::from).map_err(|err| {
            let code = if err.is_data() { ErrorCode::InvalidRequest } else { ErrorCode::ParseError };
            FrameError::new(code, format!("invalid JSON-RPC message: {err}"), None)
        })
    }

    fn classify(envelope: &Envelope<'_>) -> Result<Kind, FrameError> {
        let invalid = |message: &str| FrameError::new(ErrorCode::InvalidRequest, message, envelope.id);
        if !envelope.jsonrpc.is_some_and(is_version_2) {
            return Err(invalid(r#"the "jsonrpc" member must be "2.0""#));
        }
        if let Some(id) = envelope.id
            && !is_valid_id(id)
            && (envelope.method.is_some() || envelope.error.is_none() || id != "null")
        {
            return Err(invalid("the id must be a string or a number"));
        }
        if let Some(params) = envelope.params
            && !matches!(params.as_bytes().first(), Some(b'{' | b'['))
        {
            return Err(invalid("params must be an object or an array"));
        }
        match (&envelope.method, envelope.id, envelope.result, envelope.error) {
            (Some(_), _, None, None) if envelope.id.is_some() => Ok(Kind::Request),
            (Some(_), None, None, None) => Ok(Kind::Notification),
            (Some(_), _, _, _) => Err(invalid("a request must not carry a result or an error")),
            (None, None, _, _) => Err(invalid("a message without a method must have an id")),
            (None, Some(_), Some(_), None) => Ok(Kind::Response),
            (None, Some(_), None, Some(error)) if error.starts_with('{') => Ok(Kind::ErrorResponse),
            (None, Some(_), None, Some(_)) => Err(invalid("error must be an object")),
            (None, Some(_), _, _) => Err(invalid("a response must have exactly one of result and error")),
        }
    }

    /// The message as received (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the text out of the frame.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Request, notification or response.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// The id as JSON text (`7`, `"abc"`), if the message has one.
    pub fn id(&self) -> Option<&str> {
        self.id.range().map(|span| &self.text[span])
    }

    /// The byte range of the id, for splicing.
    pub fn id_span(&self) -> Option<Range<usize>> {
        self.id.range()
    }

    /// The params as JSON text.
    pub fn params(&self) -> Option<&str> {
        self.params.range().map(|span| &self.text[span])
    }

    /// The params as JSON text when they are an object. MCP names every
    /// parameter: a reader of named members must not be handed an array,
    /// which serde's derived readers would read by position.
    pub fn named_params(&self) -> Option<&str> {
        self.params().filter(|params| params.starts_with('{'))
    }

    /// The members `name`, `arguments`, `_meta` and `task` of the params,
    /// as found while the message was parsed. `None` when it did not read
    /// them (params that are not an object, a key with an escape, one of
    /// the four named twice): the caller reads [`Frame::params`] itself,
    /// and decides what those mean.
    pub fn param_members(&self) -> Option<ParamMembers<'_>> {
        self.param_spans.map(|spans| spans.members(&self.text))
    }

    /// Whether the params have members besides `name`, `arguments`,
    /// `_meta` and `task`, as the parse found them (the others unsliced:
    /// this is asked of every 2026-07-28 request). `None` when
    /// [`param_members`](Frame::param_members) is `None`.
    pub fn params_have_others(&self) -> Option<bool> {
        self.param_spans.map(|spans| spans.others())
    }

    /// The members of the params' `_meta` that the stages read (the
    /// 2026-07-28 envelope, the progress token), as found while the message
    /// was parsed. `None` when it did not read them (no `_meta`, one that is
    /// not an object, [`param_members`](Frame::param_members) unread, a key
    /// with an escape, one of them named twice): the caller reads `_meta`
    /// itself.
    pub fn meta_members(&self) -> Option<MetaMembers<'_>> {
        let meta = self.param_spans?.meta(&self.text)?;
        Some(self.meta_spans.as_ref()?.members(meta))
    }

    /// Where the value of `_meta.progressToken` is in the message, as the
    /// parse found it, without the other members being looked at (this is
    /// asked of every request): `Some(None)` when it read `_meta` and found
    /// none, `None` when [`meta_members`](Frame::meta_members) is `None`.
    pub fn noted_progress_token(&self) -> Option<Option<Range<usize>>> {
        let meta = self.param_spans?.meta_range()?;
        let token = self.meta_spans.as_ref()?.progress_token();
        Some(token.map(|token| meta.start + token.start..meta.start + token.end))
    }

    /// Where the params' `_meta` is in the message, and where in it the
    /// members whose keys MCP defines are (offsets into `_meta`), as the
    /// parse found them, without the other members being looked at: for
    /// taking a 2026-07-28 envelope off. `None` when
    /// [`meta_members`](Frame::meta_members) is `None`.
    pub fn noted_protocol_keys(&self) -> Option<(Range<usize>, &ProtocolKeys)> {
        let meta = self.param_spans?.meta_range()?;
        Some((meta, self.meta_spans.as_ref()?.protocol_keys()))
    }

    /// The params' `_meta` (JSON text, `null` included), as the parse found
    /// it or else read from the params. `None` without params or when they
    /// are not an object; `Err` when they name `_meta` twice (parsers differ
    /// on which of two they keep).
    #[allow(clippy::result_unit_err)]
    pub fn param_meta(&self) -> Option<Result<Option<&str>, ()>> {
        if let Some(members) = self.param_members() {
            return Some(Ok(members.meta));
        }
        let params = crate::Members::parse(self.params()?).ok()?;
        Some(params.get_once("_meta"))
    }

    /// The `result` of a response, or the `error` of an error response, as JSON text.
    pub fn payload(&self) -> Option<&str> {
        self.payload.range().map(|span| &self.text[span])
    }

    /// Whether the result is an object none of whose members is `_meta`,
    /// `resultType`, `ttlMs` or `cacheScope`, and none of whose keys is
    /// escaped (which could spell one), as the parse found: a 2026-07-28
    /// answer is written around such a result without reading it. `false`
    /// when the parse did not read its keys.
    pub fn result_is_plain(&self) -> bool {
        self.result_plain
    }

    /// The byte range of the payload ([`Frame::payload`]), for splicing.
    pub fn payload_span(&self) -> Option<Range<usize>> {
        self.payload.range()
    }

    /// The byte range of `part`, which must be a slice of this frame's text
    /// (typically a `RawValue` deserialized from [`Frame::params`]).
    pub fn span_of(&self, part: &str) -> Range<usize> {
        span_in(&self.text, part)
    }

    /// The message with its id replaced by `id` (JSON text).
    pub fn with_id(&self, id: &str) -> String {
        match self.id.range() {
            Some(span) => {
                // Exactly the length: a body made of it then takes the bytes
                // as it is, with no allocation (`Bytes::from` a full vector).
                let mut out = String::with_capacity(self.text.len() - span.len() + id.len());
                out.push_str(&self.text[..span.start]);
                out.push_str(id);
                out.push_str(&self.text[span.end..]);
                out
            }
            None => self.text.clone(),
        }
    }

    /// This message under id `id` (JSON text: a string or a number), as a
    /// frame: only the id's bytes change, and nothing is parsed again.
    pub fn with_id_frame(&self, id: &str) -> Frame {
        debug_assert!(is_valid_id(id), "ids are strings or numbers");
        let Some(old) = self.id.range() else { return self.clone() };
        let shift = |span: Option<Range<usize>>| {
            span.map(|span| {
                if span.start >= old.end {
                    span.start - old.end + old.start + id.len()..span.end - old.end + old.start + id.len()
                } else {
                    span
                }
            })
        };
        let moved = id.len() as isize - old.len() as isize;
        Frame {
            text: self.with_id(id),
            kind: self.kind,
            method: self.method.clone(),
            id: Span::of(Some(old.start..old.start + id.len())),
            params: Span::of(shift(self.params.range())),
            payload: Span::of(shift(self.payload.range())),
            param_spans: self.param_spans.map(|spans| spans.shifted(old.end, moved)),
            // Offsets into `_meta`: they do not move.
            meta_spans: self.meta_spans.clone(),
            result_plain: self.result_plain,
        }
    }
}

/// The byte range of `part` within `base`; `part` must be a sub-slice of `base`
/// (for example a `RawValue` deserialized from `base`).
///
/// # Panics
/// When `part` does not lie within `base`.
pub fn span_in(base: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize);
    assert!(start <= base.len() && start + part.len() <= base.len(), "span_of: not a slice of this frame");
    start..start + part.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The envelope's members as serde_json reads them, or its error.
    fn by_serde(text: &str) -> Result<Vec<Option<String>>, String> {
        let read = serde_json::from_str::<SerdeEnvelope>(text).map_err(|err| err.to_string())?;
        Ok(members(&Envelope::from(read)))
    }

    fn members(envelope: &Envelope) -> Vec<Option<String>> {
        let own = |raw: Option<&str>| raw.map(str::to_owned);
        vec![
            own(envelope.jsonrpc),
            own(envelope.id),
            envelope.method.as_ref().map(|method| method.to_string()),
            own(envelope.params),
            own(envelope.result),
            own(envelope.error),
        ]
    }

    /// The scanned envelope against serde_json's, on messages and every
    /// one-byte change of them: the same members, and nothing it refuses.
    #[test]
    fn the_scanned_envelope_is_serde_jsons() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{"x":[1,{"y":2}]}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]},"x":[[]]}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m","data":{"a":[1]}}}"#,
            r#"{"method":"notifications/progress","jsonrpc":"2.0","params":{"progress":1.5e0}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m","method":"n"}"#,
        ];
        let mut scanned = 0;
        for text in seeds.iter().flat_map(|seed| crate::scan::one_byte_changes(seed)) {
            if let Some(envelope) = Envelope::scanned(&text) {
                scanned += 1;
                assert_eq!(Ok(members(&envelope)), by_serde(&text), "{text}");
            }
        }
        assert!(scanned > 1_000, "{scanned}");
    }

    /// The params' members found on the way are those a reading of the
    /// params alone finds, on requests and every one-byte change of them;
    /// and a key written with an escape, or one of them named twice, leaves
    /// the reading to the caller.
    #[test]
    fn param_members_are_the_params_own() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{"x":[1,{"y":2}]},"_meta":{"progressToken":1}}}"#,
            r#"{"params":{"task":{"ttl":5},"name":"p","arguments":null},"jsonrpc":"2.0","id":7,"method":"prompts/get"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","requestState":"s"}}"#,
        ];
        let mut read = 0;
        for text in seeds.iter().flat_map(|seed| crate::scan::one_byte_changes(seed)) {
            let Ok(frame) = Frame::parse(text.as_str()) else { continue };
            let Some(found) = frame.param_members() else { continue };
            read += 1;
            let members = crate::Members::parse(frame.params().expect("params")).expect("valid params");
            let own = |key: &str| members.get_once(key).expect("named once");
            let others = members.keys().any(|key| !["name", "arguments", "_meta", "task"].contains(&key));
            let expected = ParamMembers {
                name: own("name"),
                arguments: own("arguments"),
                meta: own("_meta"),
                task: own("task"),
                others,
            };
            assert_eq!(found, expected, "{text}");
        }
        assert!(read > 500, "{read}");
        for unread in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","name":"u"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
        ] {
            assert_eq!(Frame::parse(unread).expect("valid").param_members(), None, "{unread}");
        }
    }

    /// A frame is moved from stage to stage: up to 128 bytes the compiler
    /// moves it with a few stores, past that with a call to `memcpy` (at
    /// 136 bytes, about 460 more instructions a forwarded stdio call,
    /// counted with callgrind).
    #[test]
    fn a_plain_result_is_known_by_its_own_keys() {
        let answer = |result: &str| format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
        for (result, plain) in [
            (r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#, true),
            ("{}", true),
            (r#"{ "content" : [ ] }"#, true),
            // Nested, they are the content's own.
            (r#"{"content":[{"_meta":{},"resultType":1}],"structuredContent":{"ttlMs":2}}"#, true),
            (r#"{"content":"_meta"}"#, true),
            (r#"{"a":1,"_meta":{}}"#, false),
            (r#"{"resultType":"complete"}"#, false),
            (r#"{"ttlMs":0}"#, false),
            (r#"{"cacheScope":"private"}"#, false),
            // An escape could spell one.
            (r#"{"\u005fmeta":{}}"#, false),
            (r#"{"a\n":1}"#, false),
            ("[]", false),
            ("null", false),
        ] {
            let frame = Frame::parse(answer(result)).unwrap();
            assert_eq!(frame.result_is_plain(), plain, "{result}");
            assert_eq!(frame.with_id_frame("\"w1\"").result_is_plain(), plain, "{result}");
        }
        // Read by serde_json (the scan declines an escaped key), the
        // result's keys are not known.
        let escaped = Frame::parse(r#"{"jsonrpc":"2.0","id":7,"res\u0075lt":{}}"#).unwrap();
        assert_eq!(escaped.payload(), Some("{}"));
        assert!(!escaped.result_is_plain());
        let error = Frame::parse(r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#).unwrap();
        assert!(!error.result_is_plain());
    }

    #[test]
    fn a_frame_is_moved_without_memcpy() {
        assert!(std::mem::size_of::<Frame>() <= 128, "{} bytes", std::mem::size_of::<Frame>());
    }

    #[test]
    fn a_new_id_moves_the_param_members() {
        let text = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"n":1}}}"#;
        let before = r#"{"params":{"name":"a","_meta":{}},"jsonrpc":"2.0","method":"tools/call","id":"long-id-1"}"#;
        for text in [text, before] {
            let frame = Frame::parse(text).unwrap();
            for id in ["\"wm12\"", "3"] {
                let renamed = frame.with_id_frame(id);
                let parsed = Frame::parse(frame.with_id(id)).unwrap();
                assert_eq!(renamed.param_members(), parsed.param_members());
                assert!(renamed.param_members().and_then(|members| members.name).is_some());
            }
        }
    }

    /// JSON whitespace around a message is taken off; other Unicode
    /// whitespace is not JSON, and the message is refused as serde_json
    /// refuses it.
    #[test]
    fn only_json_whitespace_is_trimmed() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let frame = Frame::parse(format!(" \t\r\n{ping}\r\n ")).unwrap();
        assert_eq!(frame.text(), ping);
        for other in ["\u{a0}", "\u{2028}", "\u{3000}", "\u{85}", "\u{c}"] {
            assert!(serde_json::from_str::<serde_json::Value>(&format!("{other}{ping}")).is_err());
            assert!(Frame::parse(format!("{other}{ping}")).is_err(), "{other:?} before a message");
            assert!(Frame::parse(format!("{ping}{other}")).is_err(), "{other:?} after a message");
        }
        assert_eq!(json_trimmed(" \n "), "");
    }

    #[test]
    fn request_keeps_bytes_and_finds_envelope() {
        let text = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"n":1.50}},"x-extra":true}"#;
        let frame = Frame::parse(text).unwrap();
        assert_eq!(frame.kind(), Kind::Request);
        assert_eq!(frame.method(), Some(&Method::ToolsCall));
        assert_eq!(frame.id(), Some("7"));
        assert_eq!(frame.params(), Some(r#"{"name":"a","arguments":{"n":1.50}}"#));
        assert_eq!(frame.with_id("\"w-1\""), text.replace(r#""id":7"#, r#""id":"w-1""#));
    }

    #[test]
    fn a_new_id_keeps_the_frame_whole() {
        // The params before the id and after it, answers too.
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"params":{"name":"a"},"jsonrpc":"2.0","method":"tools/call","id":"long-id-1"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{}}"#,
        ] {
            let frame = Frame::parse(text).unwrap();
            for id in ["\"wm12\"", "3"] {
                let renamed = frame.with_id_frame(id);
                let parsed = Frame::parse(frame.with_id(id)).unwrap();
                assert_eq!(renamed.text(), parsed.text());
                assert_eq!(
                    (renamed.id(), renamed.params(), renamed.payload()),
                    (parsed.id(), parsed.params(), parsed.payload())
                );
                assert_eq!((renamed.kind(), renamed.method()), (parsed.kind(), parsed.method()));
            }
        }
    }

    #[test]
    fn classifies_messages() {
        let kind = |text: &str| Frame::parse(text).map(|f| f.kind());
        assert_eq!(kind(r#"{"jsonrpc":"2.0","method":"n"}"#).unwrap(), Kind::Notification);
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap(), Kind::Response);
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#).unwrap(), Kind::ErrorResponse);
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#).unwrap(),
            Kind::ErrorResponse
        );
    }

    #[test]
    fn rejects_bad_envelopes_with_codes_and_ids() {
        let err = |text: &str| Frame::parse(text).unwrap_err();
        assert_eq!(err("{not json").code, ErrorCode::ParseError);
        assert_eq!(err("[]").code, ErrorCode::InvalidRequest);
        assert_eq!(err("42").code, ErrorCode::InvalidRequest);
        let missing_version = err(r#"{"id":3,"method":"ping"}"#);
        assert_eq!((missing_version.code, missing_version.id.as_deref()), (ErrorCode::InvalidRequest, Some("3")));
        assert_eq!(err(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).code, ErrorCode::InvalidRequest);
        assert_eq!(err(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#).id, None);
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#).is_err());
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","id":1}"#).is_err());
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","method":"m","params":3}"#).is_err());
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).is_err(), "duplicate ids");
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","method":7}"#).is_err());
    }

    #[test]
    fn envelope_members_mean_what_json_says() {
        // Found by the jsonrpc_frame fuzz target (differential with serde_json).
        // An escaped "2.0" is "2.0".
        let escaped = Frame::parse(r#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#);
        assert_eq!(escaped.map(|frame| frame.kind()).ok(), Some(Kind::Request));
        // A method of null is not a method's absence: no response has one.
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#).is_err());
        assert!(Frame::parse(r#"{"jsonrpc":"2.0","method":null}"#).is_err());
    }

    #[test]
    fn escaped_method_names_are_decoded() {
        let frame = Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#).unwrap();
        assert_eq!(frame.method(), Some(&Method::ToolsCall));
    }
}
