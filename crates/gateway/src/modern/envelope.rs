//! The per-request envelope of 2026-07-28: `params._meta` names the
//! revision, the client's capabilities and who it is, on every request.

use std::borrow::Cow;

use warden_jsonrpc::{ErrorCode, Frame, Members, Text, json_string};
use warden_upstream::era::HAS_VERSION_KEY;

use super::{MODERN_VERSIONS, meta};

/// What a modern request says about its client.
#[derive(Debug, Clone, Default)]
pub struct Envelope {
    /// The revision the request is written in (one of Warden's own, unless
    /// [`check_version`](Envelope::check_version) refuses it).
    pub version: Cow<'static, str>,
    /// What the client can do for this request.
    pub capabilities: Capabilities,
    /// Whether the client asked for log messages (a log level): without
    /// one, the request gets no `notifications/message`.
    pub logs: bool,
}

/// The client capabilities an upstream's input request may need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// `elicitation` (form mode, the default).
    pub elicitation_form: bool,
    /// `elicitation.url`.
    pub elicitation_url: bool,
    /// `sampling`.
    pub sampling: bool,
    /// `roots`.
    pub roots: bool,
}

impl Capabilities {
    /// Whether an input request of `method` (with `params`) may be sent to
    /// this client; if not, the capability it lacks, as the JSON object
    /// `MissingRequiredClientCapability` names it with.
    pub fn lacks_for(&self, method: &str, params: Option<&str>) -> Option<&'static str> {
        match method {
            "elicitation/create" => {
                let url = params.is_some_and(|params| {
                    Members::parse(params).ok().and_then(|members| members.get("mode")) == Some("\"url\"")
                });
                if url {
                    (!self.elicitation_url).then_some(r#"{"elicitation":{"url":{}}}"#)
                } else {
                    (!self.elicitation_form).then_some(r#"{"elicitation":{}}"#)
                }
            }
            "sampling/createMessage" => (!self.sampling).then_some(r#"{"sampling":{}}"#),
            "roots/list" => (!self.roots).then_some(r#"{"roots":{}}"#),
            _ => Some("{}"),
        }
    }
}

/// Why a request's envelope is refused: a JSON-RPC error to answer with
/// (HTTP 400 on the HTTP front).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeError {
    /// The code.
    pub code: ErrorCode,
    /// What is wrong.
    pub message: String,
    /// `error.data`, as JSON text.
    pub data: Option<String>,
}

impl EnvelopeError {
    fn invalid(message: impl Into<String>) -> EnvelopeError {
        EnvelopeError { code: ErrorCode::InvalidParams, message: message.into(), data: None }
    }

    /// The error answering `id`.
    pub fn response(&self, id: Option<&str>) -> String {
        warden_jsonrpc::error_response(id, self.code, &self.message, self.data.as_deref())
    }
}

/// Whether `frame` carries the modern envelope (the protocol version in
/// `params._meta`). Cheap for requests that do not: a substring test first.
/// Params that name `_meta` twice and the version key anywhere count as
/// modern, so that [`Envelope::read`] refuses them rather than a 2025
/// session passing on an envelope a server may read from the second.
pub fn is_modern(frame: &Frame) -> bool {
    if let Some(meta) = frame.meta_members() {
        return meta.protocol_version.and_then(Text::read).is_some();
    }
    // Asked of every request on a stdio connection: where the parse found
    // the params' `_meta`, only it is searched (and most requests have none).
    let searched = match frame.param_members() {
        Some(members) => members.meta,
        None => frame.params(),
    };
    searched.is_some_and(|text| HAS_VERSION_KEY.is_in(text)) && version_of(frame).is_some()
}

/// The request's `clientInfo` (JSON text), to name the client upstream.
pub fn client_info(frame: &Frame) -> Option<String> {
    let meta = Members::parse(meta_of(frame)?.ok()??).ok()?;
    meta.get(meta::CLIENT_INFO).filter(|raw| raw.trim_start().starts_with('{')).map(str::to_owned)
}

/// The version the envelope names; `Err` when params name `_meta` twice.
fn version_of(frame: &Frame) -> Option<Result<Text<'_>, EnvelopeError>> {
    let meta = match meta_of(frame)? {
        Ok(meta) => Members::parse(meta?).ok()?,
        Err(twice) => return Some(Err(twice)),
    };
    Text::read(meta.get(meta::PROTOCOL_VERSION)?).map(Ok)
}

/// The `_meta` of `frame`'s params (JSON text, `null` included): as the
/// frame's parse found it, else read here. `None` without params or when
/// they are not an object; `Err` when they name `_meta` twice.
fn meta_of(frame: &Frame) -> Option<Result<Option<&str>, EnvelopeError>> {
    let twice = || EnvelopeError::invalid("params names _meta twice");
    Some(frame.param_meta()?.map_err(|()| twice()))
}

/// The client capabilities as sent, values unread until asked about
/// (borrowed: reading them copies nothing).
struct ClientCapabilities<'a> {
    elicitation: Option<&'a str>,
    sampling: Option<&'a str>,
    roots: Option<&'a str>,
}

impl<'a> ClientCapabilities<'a> {
    /// The members of the capabilities object that Warden asks about, each
    /// named at most once (a server could read either of two). Not serde's
    /// derived reader: it also takes an array, by position.
    fn of(text: &'a str) -> Result<ClientCapabilities<'a>, String> {
        let members = Members::parse(text).map_err(|err| err.to_string())?;
        let member = |key: &'static str| members.get_once(key).map_err(|()| format!("duplicate field `{key}`"));
        Ok(ClientCapabilities {
            elicitation: member("elicitation")?,
            sampling: member("sampling")?,
            roots: member("roots")?,
        })
    }

    /// What the request may be asked for. A `null` capability is none; an
    /// `elicitation` that is not an object is refused as the whole was.
    fn read(&self) -> Option<Capabilities> {
        let given = |value: Option<&str>| value.is_some_and(|value| value != "null");
        let modes = match self.elicitation.filter(|value| *value != "null") {
            Some(value) => Some(Members::parse(value).ok()?),
            None => None,
        };
        Some(Capabilities {
            // `elicitation: {}` is form mode (before 2025-11-25 the only one).
            elicitation_form: modes.as_ref().is_some_and(|modes| modes.is_empty() || modes.contains("form")),
            elicitation_url: modes.as_ref().is_some_and(|modes| modes.contains("url")),
            sampling: given(self.sampling),
            roots: given(self.roots),
        })
    }
}

impl Envelope {
    /// Reads the envelope of a modern request: the version and the
    /// capabilities are required (whether Warden speaks that version is
    /// [`check_version`](Envelope::check_version)'s call).
    pub fn read(frame: &Frame) -> Result<Envelope, EnvelopeError> {
        // As the parse found `_meta`'s members, where it could: nothing is
        // read again.
        if let Some(meta) = frame.meta_members() {
            return Envelope::of_members(meta.protocol_version, || Ok(meta.client_capabilities), meta.log_level);
        }
        match frame.param_members() {
            Some(members) => Envelope::of_meta(members.meta),
            None => Envelope::of_params(&params_of(frame)?),
        }
    }

    /// [`read`](Envelope::read) from params already read as members, for a
    /// caller that reads other members of them too (one parse for both).
    pub fn of_params(params: &Members<'_>) -> Result<Envelope, EnvelopeError> {
        Envelope::of_meta(once(params, "params", "_meta")?)
    }

    /// [`read`](Envelope::read) from the params' `_meta` (JSON text), named once.
    fn of_meta(meta: Option<&str>) -> Result<Envelope, EnvelopeError> {
        let meta = meta.ok_or_else(|| {
            EnvelopeError::invalid(format!("params._meta is required (with {})", meta::PROTOCOL_VERSION))
        })?;
        let meta = Members::parse(meta).map_err(|_| EnvelopeError::invalid("params._meta must be an object"))?;
        let version = once(&meta, "params._meta", meta::PROTOCOL_VERSION)?;
        let capabilities = || once(&meta, "params._meta", meta::CLIENT_CAPABILITIES);
        Envelope::of_members(version, capabilities, meta.get(meta::LOG_LEVEL))
    }

    /// The envelope from `_meta`'s members (JSON text): the version, the
    /// capabilities (read after the version, so that each refusal is the one
    /// it always was) and the log level.
    fn of_members<'a>(
        version: Option<&'a str>,
        capabilities: impl FnOnce() -> Result<Option<&'a str>, EnvelopeError>,
        log_level: Option<&'a str>,
    ) -> Result<Envelope, EnvelopeError> {
        let version: Text = version
            .and_then(Text::read)
            .ok_or_else(|| EnvelopeError::invalid(format!("params._meta lacks {}", meta::PROTOCOL_VERSION)))?;
        // Warden's own revisions are named by its constants: nothing to copy.
        let version = match MODERN_VERSIONS.iter().copied().find(|known| *known == &*version) {
            Some(known) => Cow::Borrowed(known),
            None => Cow::Owned(version.0.into_owned()),
        };
        let capabilities = capabilities()?
            .ok_or_else(|| EnvelopeError::invalid(format!("params._meta lacks {}", meta::CLIENT_CAPABILITIES)))?;
        let capabilities = ClientCapabilities::of(capabilities)
            .map_err(|err| {
                let name = meta::CLIENT_CAPABILITIES;
                EnvelopeError::invalid(format!("{name} must be an object that names each capability once: {err}"))
            })?
            .read()
            .ok_or_else(|| EnvelopeError::invalid(format!("{} must be an object", meta::CLIENT_CAPABILITIES)))?;
        let logs = log_level.and_then(Text::read).is_some();
        Ok(Envelope { version, capabilities, logs })
    }
}

/// A modern request's params as members; refused as [`Envelope::read`]
/// refuses them when there are none or they are not an object.
pub fn params_of(frame: &Frame) -> Result<Members<'_>, EnvelopeError> {
    let params = frame.params().ok_or_else(|| EnvelopeError::invalid("params with _meta are required"))?;
    Members::parse(params).map_err(|_| EnvelopeError::invalid("params must be an object"))
}

/// Member `key` of `members` (an object at `at`), refused when named twice:
/// parsers differ on which of two they keep (serde_json and `JSON.parse`
/// the last), so Warden and the server behind it could read different
/// envelopes.
fn once<'a>(members: &Members<'a>, at: &str, key: &str) -> Result<Option<&'a str>, EnvelopeError> {
    members.get_once(key).map_err(|()| EnvelopeError::invalid(format!("{at} names {key} twice")))
}

impl Envelope {
    /// Refuses a revision Warden does not speak.
    pub fn check_version(&self) -> Result<(), EnvelopeError> {
        if MODERN_VERSIONS.contains(&&*self.version) { Ok(()) } else { Err(unsupported(&self.version)) }
    }
}

/// `UnsupportedProtocolVersion`, naming what Warden speaks.
pub fn unsupported(requested: &str) -> EnvelopeError {
    let supported: Vec<String> = MODERN_VERSIONS.iter().map(|version| json_string(version)).collect();
    EnvelopeError {
        code: ErrorCode::UnsupportedProtocolVersion,
        message: format!("Unsupported protocol version {requested:?} (supported: {})", MODERN_VERSIONS.join(", ")),
        data: Some(format!(r#"{{"supported":[{}],"requested":{}}}"#, supported.join(","), json_string(requested))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `modern_envelope` fuzz target (its oracle read the
    /// capabilities with serde_json, which keeps the last of duplicate
    /// keys): Warden refuses capabilities that name one twice, and says so.
    #[test]
    fn capabilities_that_name_one_twice_are_refused_saying_so() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"sampling":{}}}}}"#;
        let frame = Frame::parse(text.to_owned()).expect("a frame");
        let refused = Envelope::read(&frame).expect_err("refused");
        assert!(
            refused.message.contains("names each capability once: duplicate field `sampling`"),
            "{}",
            refused.message
        );
    }

    /// The capabilities are read as their object's members: keys decoded
    /// (an escaped key is the key it spells, and a second spelling of one is
    /// a duplicate), `null` is absent, and anything but an object is
    /// refused. serde's derived reader, used before, took `[]` as no
    /// capabilities and `[{},{}]` as elicitation and sampling, by position.
    #[test]
    fn capabilities_are_an_object_read_by_key() {
        let read = |capabilities: &str| {
            let meta = format!(
                r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}"#
            );
            Envelope::read(&frame(&meta)).map(|envelope| envelope.capabilities)
        };
        let sampling = read(r#"{"sampl\u0069ng":{},"roots":null,"other":[1,{"roots":{}}]}"#).unwrap();
        assert!(sampling.sampling && !sampling.roots && !sampling.elicitation_form);
        let form = read(r#"{"elicitation":{"form":{}}}"#).unwrap();
        assert!(form.elicitation_form && !form.elicitation_url);
        let twice = read(r#"{"sampling":{},"sampl\u0069ng":{}}"#).unwrap_err();
        assert!(twice.message.contains("duplicate field `sampling`"), "{}", twice.message);
        for refused in ["[]", "[{},{}]", "1", r#""{}""#, r#"{"elicitation":true}"#] {
            assert_eq!(read(refused).unwrap_err().code, ErrorCode::InvalidParams, "{refused}");
        }
        assert_eq!(read("{}").unwrap(), Capabilities::default());
    }

    /// Found by the `modern_envelope` fuzz target: a second `_meta` (which
    /// serde_json and `JSON.parse` keep) lacked the version the first one
    /// named. An envelope, or a member of it, named twice is refused.
    #[test]
    fn an_envelope_or_a_member_of_it_named_twice_is_refused() {
        let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        for doubled in [format!(r#"{{"_meta":{meta},"_meta":{{}}}}"#), format!(r#"{{"_meta":{{}},"_meta":{meta}}}"#)] {
            // Whichever of the two names the version, the request is modern, and refused.
            let f = frame(&doubled);
            assert!(is_modern(&f), "{doubled}");
            let twice = Envelope::read(&f).expect_err("refused");
            assert_eq!((twice.code, twice.message.as_str()), (ErrorCode::InvalidParams, "params names _meta twice"));
        }
        let version = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}"#;
        let refused = Envelope::read(&frame(version)).expect_err("refused");
        assert!(refused.message.contains("names io.modelcontextprotocol/protocolVersion twice"), "{}", refused.message);
        assert!(Envelope::read(&frame(&format!(r#"{{"_meta":{meta}}}"#))).is_ok());
    }

    fn frame(params: &str) -> Frame {
        Frame::parse(format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{params}}}"#)).unwrap()
    }

    #[test]
    fn reads_a_modern_envelope() {
        let f = frame(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}"#,
        );
        assert!(is_modern(&f));
        let envelope = Envelope::read(&f).unwrap();
        assert!(!envelope.logs);
        assert!(envelope.capabilities.sampling && envelope.capabilities.elicitation_url);
        assert!(!envelope.capabilities.elicitation_form && !envelope.capabilities.roots);
        assert_eq!(envelope.capabilities.lacks_for("roots/list", None), Some(r#"{"roots":{}}"#));
        assert_eq!(envelope.capabilities.lacks_for("elicitation/create", Some(r#"{"mode":"url"}"#)), None);
    }

    #[test]
    fn refuses_what_is_missing_or_unknown() {
        assert!(!is_modern(&frame(r#"{"_meta":{"progressToken":1}}"#)));
        let missing = Envelope::read(&frame(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#));
        assert_eq!(missing.unwrap_err().code, ErrorCode::InvalidParams);
        let old = Envelope::read(&frame(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        ))
        .unwrap()
        .check_version()
        .unwrap_err();
        assert_eq!(old.code, ErrorCode::UnsupportedProtocolVersion);
        assert!(old.data.unwrap().contains(r#""requested":"1900-01-01""#));
    }
}
