//! Warden's side of one upstream MCP server.
//!
//! An [`Upstream`] owns a supervisor task that starts the server, performs the
//! MCP handshake with the client's own `initialize` parameters, and restarts the
//! server with backoff when it exits. While it runs, a [`Connection`] correlates
//! requests with responses by Warden-assigned ids, so any number of calls can be
//! in flight at once. Everything the server sends that is not a response to
//! Warden comes out as an [`Event`].

mod connection;
mod error;
mod event;
mod handshake;
mod pipes;
mod process;
mod stderr;
mod supervisor;

pub use connection::{Connection, ResponseFuture};
pub use error::UpstreamError;
pub use event::{Event, EventKind, EventSink};
pub use handshake::Handshake;
pub use stderr::StderrTail;
pub use supervisor::{State, Upstream, UpstreamSpec};
