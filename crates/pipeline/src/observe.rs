//! What the gateway tells whoever watches it (metrics, traces): each
//! request a client made and each one Warden made of a server, with how
//! long it took and how it ended, and sessions as they open and close; and
//! where a traced request's spans sit in their trace.
//!
//! The stages' own events (a policy decision, an approval, an audit append)
//! are not here: an observer learns them by wrapping the stage (see
//! `warden-metrics`), so a stage knows nothing of who watches it.

use std::sync::Arc;
use std::time::Duration;

use warden_jsonrpc::Method;

/// How a request ended, as OpenTelemetry's MCP conventions name it
/// (`error.type`): the JSON-RPC error code, or `tool_error` for a tool
/// result flagged `isError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// Answered with a JSON-RPC error with this code.
    Code(i64),
    /// A tool result with `isError: true` (also a call Warden refused).
    ToolError,
}

/// One request and its answer.
#[derive(Debug, Clone, Copy)]
pub struct Operation<'a> {
    /// `mcp.method.name`.
    pub method: &'a Method,
    /// The tool or prompt it names (`gen_ai.tool.name`, `gen_ai.prompt.name`),
    /// as the server knows it; never a resource's URI.
    pub target: Option<Target<'a>>,
    /// The server it went to, as the config names it.
    pub server: Option<&'a str>,
    /// How it failed, if it did.
    pub error: Option<ErrorType>,
    /// From the request's arrival to its answer.
    pub elapsed: Duration,
    /// The request's span, when it is traced.
    pub span: Option<&'a SpanPlace>,
    /// The request's id (JSON text), when it has one.
    pub request_id: Option<&'a str>,
    /// What the guard decided (`deny`, `escalate`) and by which rule, when
    /// it stopped the request or sent it to a person.
    pub decision: Option<(&'a str, &'a str)>,
    /// How the approval of an escalated request ended.
    pub approval: Option<ApprovalWait<'a>>,
}

/// How an escalated request's wait for a decision ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalWait<'a> {
    /// `approved`, `denied`, `expired` or `withdrawn`.
    pub outcome: &'a str,
    /// Where the decision came from (`web`, `cli`, `auto`, `elicitation`, ...).
    pub channel: &'a str,
    /// From the request's arrival to the decision.
    pub settled_after: Duration,
}

impl<'a> Operation<'a> {
    /// An operation with only a method and a duration; the rest is added
    /// with struct update syntax.
    pub fn new(method: &'a Method, elapsed: Duration) -> Operation<'a> {
        Operation {
            method,
            target: None,
            server: None,
            error: None,
            elapsed,
            span: None,
            request_id: None,
            decision: None,
            approval: None,
        }
    }
}

/// A span's identity in a W3C trace context (`traceparent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanContext {
    /// The trace, 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// The span, 8 bytes, not all zero.
    pub span_id: [u8; 8],
    /// Whether the trace is sampled (the `01` flag).
    pub sampled: bool,
}

impl SpanContext {
    /// Reads a `traceparent` value (`00-<trace>-<span>-<flags>`, lower-case
    /// hex). A later version is read by the same fields, as the
    /// specification asks; version `ff`, all-zero ids and anything else
    /// malformed are not a context.
    pub fn parse(traceparent: &str) -> Option<SpanContext> {
        let text = traceparent.trim();
        let mut parts = text.split('-');
        let (version, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let version = hex::<1>(version)?[0];
        if version == 0xff || (version == 0 && parts.next().is_some()) {
            return None;
        }
        let (trace_id, span_id, flags) = (hex::<16>(trace)?, hex::<8>(span)?, hex::<1>(flags)?[0]);
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(SpanContext { trace_id, span_id, sampled: flags & 1 == 1 })
    }

    /// The `traceparent` value that names this span as the parent.
    pub fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        self.write_traceparent(&mut out);
        out
    }

    /// Appends [`traceparent`](Self::traceparent)'s value to `out`: 55
    /// characters, hex digits and dashes only (nothing to escape in JSON).
    pub fn write_traceparent(&self, out: &mut String) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        // Written on the stack, then appended at once.
        let mut text = *b"00-00000000000000000000000000000000-0000000000000000-00";
        // The trace id's digits go after "00-", the span id's after the next dash.
        let mut hex = |bytes: &[u8], from: usize| {
            for (i, byte) in bytes.iter().enumerate() {
                text[from + 2 * i] = DIGITS[usize::from(byte >> 4)];
                text[from + 2 * i + 1] = DIGITS[usize::from(byte & 0xf)];
            }
        };
        hex(&self.trace_id, 3);
        hex(&self.span_id, 36);
        if self.sampled {
            text[54] = b'1';
        }
        // Hex digits and dashes: ASCII throughout.
        out.push_str(std::str::from_utf8(&text).unwrap_or_default());
    }
}

/// `N` bytes from exactly `2 * N` lower-case hex digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let value = |digit: u8| match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    };
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = value(pair[0])? << 4 | value(pair[1])?;
    }
    Some(out)
}

/// Where a traced request's span sits: its own context, its parent's
/// (the client's span, or for a forwarded request Warden's own), and the
/// `tracestate` the client sent with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanPlace {
    /// The span's own context.
    pub context: SpanContext,
    /// Its parent's, when it has one.
    pub parent: Option<SpanContext>,
    /// The client's `tracestate`, carried along unchanged.
    pub tracestate: Option<Arc<str>>,
}

/// What a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A tool (`tools/call`).
    Tool(&'a str),
    /// A prompt (`prompts/get`).
    Prompt(&'a str),
}

/// Which front a session came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Front {
    /// Standard input and output (`wrap`, `serve` without `--http`).
    Stdio,
    /// Streamable HTTP or HTTP+SSE.
    Http,
}

impl Front {
    /// The front's name in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Front::Stdio => "stdio",
            Front::Http => "http",
        }
    }
}

/// Watches the gateway. Every method has a default that ignores the event,
/// and each is called on the request's own path, so an implementation must
/// be quick and must not block.
pub trait Observer: Send + Sync {
    /// Whether anyone watches: when not, the gateway skips the work of
    /// noting what it would tell (reading a result for `isError`, say).
    fn is_watching(&self) -> bool {
        true
    }

    /// Whether requests may be traced: when not, the gateway does not look
    /// for a client's trace context.
    fn traces(&self) -> bool {
        false
    }

    /// A client request arrived, under the client's span `parent` (from its
    /// `traceparent`) with its `tracestate`: the span that stands for it,
    /// when it is traced (sampled).
    fn begin(&self, parent: Option<SpanContext>, tracestate: Option<&str>) -> Option<SpanPlace> {
        let _ = (parent, tracestate);
        None
    }

    /// The span of a request Warden forwards while serving `within`.
    fn child(&self, within: &SpanPlace) -> Option<SpanPlace> {
        let _ = within;
        None
    }

    /// A client's request was answered (`mcp.server.operation.duration`).
    fn served(&self, operation: &Operation<'_>) {
        let _ = operation;
    }

    /// A request Warden forwarded to a server was answered
    /// (`mcp.client.operation.duration`).
    fn called(&self, operation: &Operation<'_>) {
        let _ = operation;
    }

    /// A modern server asked for input, and the request was sent again with
    /// it (one round of a multi-round request).
    fn round(&self, server: &str) {
        let _ = server;
    }

    /// A connection to `server` ended unexpectedly (an exit, a crash, a
    /// failed start, an unreachable server); a restart follows.
    fn upstream_down(&self, server: &str) {
        let _ = server;
    }

    /// A client session opened.
    fn session_opened(&self, front: Front) {
        let _ = front;
    }

    /// A client session closed after `lasted`.
    fn session_closed(&self, front: Front, lasted: Duration) {
        let _ = (front, lasted);
    }
}

/// Several observers, each told everything; the first that traces a
/// request places its spans.
pub struct Observers(pub Vec<Arc<dyn Observer>>);

impl Observer for Observers {
    fn is_watching(&self) -> bool {
        self.0.iter().any(|observer| observer.is_watching())
    }

    fn traces(&self) -> bool {
        self.0.iter().any(|observer| observer.traces())
    }

    fn begin(&self, parent: Option<SpanContext>, tracestate: Option<&str>) -> Option<SpanPlace> {
        self.0.iter().find_map(|observer| observer.begin(parent, tracestate))
    }

    fn child(&self, within: &SpanPlace) -> Option<SpanPlace> {
        self.0.iter().find_map(|observer| observer.child(within))
    }

    fn served(&self, operation: &Operation<'_>) {
        self.0.iter().for_each(|observer| observer.served(operation));
    }

    fn called(&self, operation: &Operation<'_>) {
        self.0.iter().for_each(|observer| observer.called(operation));
    }

    fn round(&self, server: &str) {
        self.0.iter().for_each(|observer| observer.round(server));
    }

    fn upstream_down(&self, server: &str) {
        self.0.iter().for_each(|observer| observer.upstream_down(server));
    }

    fn session_opened(&self, front: Front) {
        self.0.iter().for_each(|observer| observer.session_opened(front));
    }

    fn session_closed(&self, front: Front, lasted: Duration) {
        self.0.iter().for_each(|observer| observer.session_closed(front, lasted));
    }
}

/// Watches nothing: the gateway without metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unobserved;

impl Observer for Unobserved {
    fn is_watching(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_and_written_back() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = SpanContext::parse(text).unwrap();
        assert!(context.sampled);
        assert_eq!(context.traceparent(), text);
        let unsampled = SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").unwrap();
        assert!(!unsampled.sampled);
        assert_eq!(unsampled.traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
        let edges = SpanContext { trace_id: [0xff; 16], span_id: [0x01; 8], sampled: true };
        assert_eq!(edges.traceparent(), "00-ffffffffffffffffffffffffffffffff-0101010101010101-01");
        // A later version with more fields is read by the ones it shares.
        assert!(SpanContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra").is_some());
    }

    #[test]
    fn malformed_traceparents_are_no_context() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bé-01",
        ] {
            assert_eq!(SpanContext::parse(bad), None, "{bad:?}");
        }
    }
}
