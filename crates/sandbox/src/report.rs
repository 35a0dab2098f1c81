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

/// Receives every refused connection, and every server started without its
/// sandbox (`mode: warn` when the sandbox cannot be set up).
pub trait Reporter: Send + Sync {
    /// Records `denial`.
    fn denied(&self, denial: Denial);

    /// Records that `server` was started unsandboxed, and why.
    fn unsandboxed(&self, server: &str, warning: &str);
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

/// Reports that `server` was started unsandboxed (always logged by the
/// caller).
pub fn unsandboxed(server: &str, warning: &str) {
    if let Some(reporter) = REPORTER.get() {
        reporter.unsandboxed(server, warning);
    }
}

static LAUNCHES: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// Records how server `server` was last started (its confinement, or that
/// it runs unsandboxed and why), for `/status` and `warden effective`.
pub fn launched(server: &str, how: String) {
    let mut launches = warden_sync::lock(&LAUNCHES);
    launches.retain(|(name, _)| name != server);
    launches.push((server.to_owned(), how));
}

/// How server `server` was last started, if it has a sandbox.
pub fn launch_of(server: &str) -> Option<String> {
    let launches = warden_sync::lock(&LAUNCHES);
    launches.iter().find(|(name, _)| name == server).map(|(_, how)| how.clone())
}
