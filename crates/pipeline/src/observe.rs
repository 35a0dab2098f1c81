//! What the gateway tells whoever watches it (metrics now, traces later):
//! each request a client made and each one Warden made of a server, with
//! how long it took and how it ended, and sessions as they open and close.
//!
//! The stages' own events (a policy decision, an approval, an audit append)
//! are not here: an observer learns them by wrapping the stage (see
//! `warden-metrics`), so a stage knows nothing of who watches it.

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

/// Watches nothing: the gateway without metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unobserved;

impl Observer for Unobserved {
    fn is_watching(&self) -> bool {
        false
    }
}
