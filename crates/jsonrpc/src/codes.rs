//! JSON-RPC error codes used by Warden.

/// An error code of a JSON-RPC error response.
///
/// The standard codes come from JSON-RPC 2.0; the others are in the range the
/// specification reserves for implementation-defined server errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The line was not valid JSON.
    ParseError,
    /// The JSON was not a valid JSON-RPC request.
    InvalidRequest,
    /// No method of that name (or no upstream that serves it).
    MethodNotFound,
    /// The parameters were invalid, e.g. an unknown tool name.
    InvalidParams,
    /// Warden failed internally.
    InternalError,
    /// MCP's code for an unknown resource URI.
    ResourceNotFound,
    /// The upstream that owns the request is not running (exited, failed to start).
    UpstreamUnavailable,
    /// The request was refused before it reached an upstream (policy, approval).
    Refused,
    /// 2026-07-28: an HTTP header does not match the body, or a required
    /// one is missing.
    HeaderMismatch,
    /// 2026-07-28: the request needs a client capability it did not declare.
    MissingClientCapability,
    /// 2026-07-28: the requested protocol revision is not spoken here.
    UnsupportedProtocolVersion,
    /// The client cancelled the request (LSP's code; MCP defines none). Sent
    /// only where a transport needs some answer, e.g. an HTTP POST that
    /// accepts nothing but JSON.
    RequestCancelled,
}

impl ErrorCode {
    /// The numeric code as sent on the wire.
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::ResourceNotFound => -32002,
            ErrorCode::UpstreamUnavailable => -32010,
            ErrorCode::Refused => -32011,
            ErrorCode::HeaderMismatch => -32020,
            ErrorCode::MissingClientCapability => -32021,
            ErrorCode::UnsupportedProtocolVersion => -32022,
            ErrorCode::RequestCancelled => -32800,
        }
    }
}
