//! What posting needs to know about a message Warden sends upstream.

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::Text;

use crate::dispatch::Dispatch;
use crate::error::UpstreamError;

/// What posting needs to know about an outgoing message.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Outbound {
    /// The id of a request (JSON text); `None` for notifications and responses.
    pub request: Option<String>,
    /// It is `initialize`.
    pub initialize: bool,
    /// It is `notifications/initialized`.
    pub initialized: bool,
    /// The 2026-07-28 headers that mirror it (`Mcp-Method`, `Mcp-Name`,
    /// `MCP-Protocol-Version`), when it carries the modern envelope; the
    /// names in lower case, as `HeaderName::from_static` takes them.
    pub mirrored: Vec<(&'static str, String)>,
    /// The method of a request.
    pub method: Option<String>,
    /// For a modern `tools/call`: the tool's name and its arguments (JSON
    /// text), whose annotated values are mirrored too.
    pub call: Option<(String, Option<String>)>,
    /// For `notifications/cancelled`: the id (JSON text) of the request it
    /// cancels. Over HTTP a modern server is told by the end of that
    /// request's stream instead.
    pub cancels: Option<String>,
    /// The trace context in `params._meta` (`traceparent`, `tracestate`),
    /// sent in the HTTP headers of the same names too, as W3C Trace
    /// Context says an HTTP hop carries it.
    pub trace: Vec<(&'static str, String)>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Text<'a>>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Text<'a>>,
    #[serde(borrow, default)]
    uri: Option<Text<'a>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "requestId")]
    request_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, default)]
    traceparent: Option<Text<'a>>,
    #[serde(borrow, default)]
    tracestate: Option<Text<'a>>,
}

impl Outbound {
    /// Reads the envelope of a message Warden sends, once per message:
    /// its `id`, `method` and the few params posting looks at.
    pub fn read(text: &str) -> Outbound {
        let Ok(envelope) = serde_json::from_str::<Envelope>(text) else { return Outbound::default() };
        let method = envelope.method.as_deref();
        let mut mirrored = Vec::new();
        let mut call = None;
        if let Some(method) = method.filter(|_| crate::era::HAS_VERSION_KEY.is_in(text)) {
            mirrored.push(("mcp-protocol-version", crate::era::MODERN.to_owned()));
            mirrored.push(("mcp-method", method.to_owned()));
            let params = envelope.params.as_ref();
            let name = params.and_then(|params| params.name.as_deref().or(params.uri.as_deref()));
            if let Some(name) = name.filter(|_| matches!(method, "tools/call" | "prompts/get" | "resources/read")) {
                mirrored.push(("mcp-name", crate::mirror::header_value(name)));
            }
            if method == "tools/call" {
                let arguments = params.and_then(|params| params.arguments).map(|raw| raw.get().to_owned());
                call = name.map(|name| (name.to_owned(), arguments));
            }
        }
        let meta = envelope.params.as_ref().and_then(|params| params.meta.as_ref());
        let trace = meta
            .map(|meta| {
                [("traceparent", &meta.traceparent), ("tracestate", &meta.tracestate)]
                    .into_iter()
                    .filter_map(|(name, value)| Some((name, value.as_deref()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Outbound {
            trace,
            request: envelope.id.filter(|_| method.is_some()).map(|id| id.get().to_owned()),
            initialize: method == Some("initialize"),
            initialized: method == Some("notifications/initialized"),
            mirrored,
            method: method.filter(|_| envelope.id.is_some()).map(str::to_owned),
            call,
            cancels: envelope
                .params
                .as_ref()
                .and_then(|params| params.request_id)
                .filter(|_| method == Some("notifications/cancelled") && envelope.id.is_none())
                .map(|id| id.get().to_owned()),
        }
    }

    /// Fails the request with `error`; a notification or response that
    /// could not be delivered is logged.
    pub fn fail(&self, dispatch: &Dispatch, error: UpstreamError) {
        match self.request.as_deref().and_then(|id| id.parse::<u64>().ok()) {
            Some(id) => dispatch.fail(id, error),
            None => {
                tracing::warn!(server = %dispatch.connection().name(), "a message to upstream was not delivered: {error}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outbound;
    use crate::mirror::header_value;

    #[test]
    fn the_trace_context_in_meta_goes_in_headers_too() {
        let traced = Outbound::read(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"v=1","progressToken":1}}}"#,
        );
        assert_eq!(
            traced.trace,
            vec![
                ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned()),
                ("tracestate", "v=1".to_owned())
            ]
        );
        assert!(traced.mirrored.is_empty(), "a 2025 message is not mirrored otherwise");
        let untraced = Outbound::read(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}"#);
        assert!(untraced.trace.is_empty());
    }

    #[test]
    fn modern_messages_are_mirrored_in_headers() {
        let call = Outbound::read(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"héllo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(
            call.mirrored,
            vec![
                ("mcp-protocol-version", "2026-07-28".to_owned()),
                ("mcp-method", "tools/call".to_owned()),
                ("mcp-name", "=?base64?aMOpbGxv?=".to_owned())
            ]
        );
        assert!(
            Outbound::read(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#)
                .mirrored
                .is_empty()
        );
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
    }

    #[test]
    fn reads_what_posting_needs() {
        let init = Outbound::read(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1]}}"#);
        assert_eq!(
            init,
            Outbound {
                request: Some("1".into()),
                initialize: true,
                method: Some("initialize".into()),
                ..Outbound::default()
            }
        );
        let done = Outbound::read(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(done, Outbound { initialized: true, ..Outbound::default() });
        let answer = Outbound::read(r#"{"jsonrpc":"2.0","id":"u-1","result":{"method":"x"}}"#);
        assert_eq!(answer, Outbound::default());
        let escaped = Outbound::read(r#"{"jsonrpc":"2.0","id":7,"method":"tools\/call"}"#);
        assert_eq!(escaped.request.as_deref(), Some("7"));
    }

    #[test]
    fn requests_and_their_cancellations_are_told_apart() {
        let call = Outbound::read(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#);
        assert_eq!((call.request.as_deref(), call.cancels), (Some("7"), None));
        let cancel = Outbound::read(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#);
        assert_eq!((cancel.request, cancel.cancels.as_deref()), (None, Some("7")));
        // An escaped method name is still the same name.
        let escaped = Outbound::read(
            r#"{"jsonrpc":"2.0","method":"notifications\/cancelled","params":{"reason":"x","requestId":"a"}}"#,
        );
        assert_eq!(escaped.cancels.as_deref(), Some(r#""a""#));
        for text in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":7}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        ] {
            assert_eq!(Outbound::read(text).cancels, None, "{text}");
        }
    }
}
