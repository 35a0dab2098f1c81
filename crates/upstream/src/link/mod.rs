//! What carries messages between Warden and one upstream: a child process
//! ([`stdio`]), a Streamable HTTP session ([`http`]) or an HTTP+SSE
//! session ([`sse`], 2024-11-05).
//!
//! Every link produces a [`Connection`] whose outbox it drains (into stdin,
//! or as HTTP POSTs), and feeds everything the server sends (stdout lines,
//! SSE events, JSON bodies) through one [`Dispatch`]. The supervisor sees
//! only this module's [`Link`]: open it, perform the handshake over its
//! connection, wait until it ends, close it.

mod http;
mod sse;
mod stdio;
mod web;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use warden_config::Transport;
use warden_sandbox::SandboxReport;

use crate::connection::Connection;
use crate::dispatch::Dispatch;
use crate::event::EventSink;
use crate::stderr::StderrTail;
use crate::supervisor::UpstreamSpec;

/// Where a run of an upstream is: what counts as its end differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Opened, handshake under way.
    Starting,
    /// Handshake done, serving.
    Ready,
}

/// One run of an upstream, over whichever transport it is configured with.
pub(crate) enum Link {
    /// A child process.
    Stdio(stdio::StdioLink),
    /// A Streamable HTTP session.
    Http(http::HttpLink),
    /// An HTTP+SSE session (2024-11-05).
    Sse(sse::SseLink),
}

impl Link {
    /// Opens a link as `spec` describes; events go to `events`, tagged with
    /// `index`, and what its sandbox does to `sandbox`. Fails with a reason when it cannot even be started (a missing
    /// program, an invalid URL); failing to reach a server shows later, as
    /// the link's end.
    pub fn open(
        spec: &UpstreamSpec,
        index: usize,
        events: Arc<dyn EventSink>,
        sandbox: &SandboxReport,
    ) -> Result<Link, String> {
        let tail = Arc::new(StderrTail::new(match spec.transport {
            Transport::Stdio { .. } => spec.supervision.stderr_tail_bytes,
            _ => 0,
        }));
        let (outbox, outbox_rx) = mpsc::unbounded_channel();
        let connection = Arc::new(Connection::new(spec.name.clone(), outbox, tail.clone()));
        let dispatch = Dispatch::new(connection, events, index, spec.max_message_bytes);
        let grace = Duration::from_millis(spec.supervision.shutdown_grace_ms);
        match &spec.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let env = env.iter().map(|(key, value)| (key.clone(), value.clone())).collect();
                let command =
                    stdio::prepare(&spec.name, spec.sandbox.as_ref(), sandbox, command, args, env, cwd.as_deref())?;
                stdio::StdioLink::open(command, dispatch, outbox_rx, tail, grace).map(Link::Stdio)
            }
            Transport::Http { url, headers } => {
                let settings = web::Settings::new(url, headers, &spec.supervision)?;
                Ok(Link::Http(http::HttpLink::open(settings, dispatch, outbox_rx)))
            }
            Transport::Sse { url, headers } => {
                let settings = web::Settings::new(url, headers, &spec.supervision)?;
                Ok(Link::Sse(sse::SseLink::open(settings, dispatch, outbox_rx)))
            }
        }
    }

    /// The connection requests are sent on.
    pub fn connection(&self) -> &Arc<Connection> {
        match self {
            Link::Stdio(link) => link.connection(),
            Link::Http(link) => link.connection(),
            Link::Sse(link) => link.connection(),
        }
    }

    /// Resolves when the link is gone, with why.
    pub async fn ended(&mut self, phase: Phase) -> String {
        match self {
            Link::Stdio(link) => link.ended(phase).await,
            Link::Http(link) => link.ended().await,
            Link::Sse(link) => link.ended().await,
        }
    }

    /// Closes the link: every waiting request fails with `reason`, the server
    /// is asked to stop (stdin closed, session deleted), and after the grace
    /// period it is stopped for good. Returns `reason` with whatever explains
    /// it (a process's last stderr lines).
    pub async fn close(self, reason: &str) -> String {
        match self {
            Link::Stdio(link) => link.close(reason).await,
            Link::Http(link) => link.close(reason).await,
            Link::Sse(link) => link.close(reason).await,
        }
    }
}
