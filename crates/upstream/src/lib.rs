//! Warden's side of one upstream MCP server.
//!
//! An [`Upstream`] owns a supervisor task that opens a link to the server (a
//! child process over stdio, a Streamable HTTP session, or a 2024-11-05 HTTP+SSE
//! session), performs the MCP handshake with the client's own `initialize`
//! parameters, and opens a new link with backoff when one ends, or at once when
//! its owner asks for a restart (its definition changed) or its watched code
//! changed (calls in flight get a grace period first). While it runs,
//! a [`Connection`] correlates requests with responses by Warden-assigned ids,
//! so any number of calls can be in flight at once. Everything the server
//! sends that is not a response to Warden comes out as an [`Event`].

#![warn(missing_docs)]

mod code_watch;
mod connection;
mod dispatch;
pub mod era;
mod error;
mod event;
mod handshake;
mod link;
pub mod mirror;
mod stderr;
mod supervisor;

pub use connection::{Connection, ResponseFuture};
pub use error::UpstreamError;
pub use event::{Event, EventKind, EventSink};
pub use handshake::Handshake;
pub use stderr::StderrTail;
pub use supervisor::{Upstream, UpstreamSpec, UpstreamState};
