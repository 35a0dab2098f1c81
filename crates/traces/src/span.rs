//! A finished span, as it is exported.

use std::sync::Arc;

/// A span's kind, as OTLP numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Warden serving a client's request.
    Server = 2,
    /// Warden calling a server.
    Client = 3,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
}

/// Something that happened during a span (the policy's decision).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub name: &'static str,
    pub time_unix_nanos: u64,
    pub attributes: Vec<(&'static str, Value)>,
}

/// One finished span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpanData {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub trace_state: Option<Arc<str>>,
    pub name: String,
    pub kind: Kind,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    pub attributes: Vec<(&'static str, Value)>,
    pub events: Vec<Event>,
    /// Set when the span failed: its status is ERROR with this message.
    pub error: Option<String>,
}
