//! Where refused connections are reported (the audit log), set once by the
//! `warden` binary.

use std::sync::{Arc, OnceLock};

/// A connection the egress proxy refused.
#[derive(Debug, Clone)]
pub struct Denial {
    /// The server whose process asked.
    pub server: String,
    /// The host it asked for.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Why it was refused.
    pub reason: String,
}

/// Receives every refused connection.
pub trait Reporter: Send + Sync {
    /// Records `denial`.
    fn denied(&self, denial: Denial);
}

static REPORTER: OnceLock<Arc<dyn Reporter>> = OnceLock::new();

/// Sets where denials go; only the first call counts.
pub fn install(reporter: Arc<dyn Reporter>) {
    let _ = REPORTER.set(reporter);
}

/// Reports `denial` (always logged).
pub(crate) fn denied(denial: Denial) {
    tracing::warn!(server = %denial.server, host = %denial.host, port = denial.port, "sandbox refused a connection: {}", denial.reason);
    if let Some(reporter) = REPORTER.get() {
        reporter.denied(denial);
    }
}
