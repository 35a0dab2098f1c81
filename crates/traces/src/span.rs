//! A finished span, encoded as OTLP's `Span` message when it ends, written
//! straight from the operation's borrowed names into the batch it is sent in.

use warden_pipeline::{ErrorType, Operation, SpanPlace, Target};

use crate::otlp::{bytes, fixed32, fixed64, key_int, key_value, nested, string, uint};

/// A span's kind, as OTLP numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Warden serving a client's request.
    Server = 2,
    /// Warden calling a server.
    Client = 3,
}

/// Writes to `out` the `Span` of `operation`, named and attributed as the
/// MCP conventions say, from `start` to `end` (Unix nanoseconds).
pub(crate) fn encode(
    out: &mut Vec<u8>,
    operation: &Operation<'_>,
    place: &SpanPlace,
    kind: Kind,
    start: u64,
    end: u64,
) {
    bytes(out, 1, &place.context.trace_id);
    bytes(out, 2, &place.context.span_id);
    if let Some(state) = &place.tracestate {
        string(out, 3, state);
    }
    if let Some(parent) = &place.parent {
        bytes(out, 4, &parent.span_id);
    }
    let method = operation.method.as_str();
    // Span.name: `{method} {tool or prompt}`.
    nested(out, 5, |out| {
        out.extend_from_slice(method.as_bytes());
        if let Some(Target::Tool(name) | Target::Prompt(name)) = operation.target {
            out.push(b' ');
            out.extend_from_slice(name.as_bytes());
        }
    });
    uint(out, 6, kind as u64);
    fixed64(out, 7, start);
    fixed64(out, 8, end);
    // Span.attributes
    key_value(out, 9, "mcp.method.name", method);
    match operation.target {
        Some(Target::Tool(tool)) => {
            key_value(out, 9, "gen_ai.tool.name", tool);
            key_value(out, 9, "gen_ai.operation.name", "execute_tool");
        }
        Some(Target::Prompt(prompt)) => key_value(out, 9, "gen_ai.prompt.name", prompt),
        None => {}
    }
    if let Some(id) = operation.request_id {
        // A string id without its quotes, a number as written.
        let id = id.strip_prefix('"').and_then(|id| id.strip_suffix('"')).unwrap_or(id);
        key_value(out, 9, "jsonrpc.request.id", id);
    }
    if let Some(server) = operation.server {
        key_value(out, 9, "warden.server", server);
    }
    let error = operation.error.map(|error| match error {
        ErrorType::Code(code) => {
            key_int(out, 9, "rpc.response.status_code", code);
            code.to_string()
        }
        ErrorType::ToolError => "tool_error".to_owned(),
    });
    if let Some(error) = &error {
        key_value(out, 9, "error.type", error);
    }
    // Span.events: the guard's decision, when it stopped the request.
    if let Some((decision, rule)) = operation.decision {
        nested(out, 11, |out| {
            fixed64(out, 1, start);
            string(out, 2, "warden.policy.decision");
            key_value(out, 3, "warden.policy.decision", decision);
            key_value(out, 3, "warden.policy.rule", rule);
        });
    }
    // And how its approval ended, when the decision came.
    if let Some(approval) = operation.approval {
        let at = start.saturating_add(u64::try_from(approval.settled_after.as_nanos()).unwrap_or(u64::MAX)).min(end);
        nested(out, 11, |out| {
            fixed64(out, 1, at);
            string(out, 2, "warden.approval");
            key_value(out, 3, "warden.approval.outcome", approval.outcome);
            key_value(out, 3, "warden.approval.channel", approval.channel);
        });
    }
    // Span.status: ERROR (2) with its message, or UNSET (no field).
    if let Some(message) = &error {
        nested(out, 15, |out| {
            string(out, 2, message);
            uint(out, 3, 2);
        });
    }
    // Span.flags: the sampled bit, as the W3C context carries it.
    fixed32(out, 16, 1);
}
