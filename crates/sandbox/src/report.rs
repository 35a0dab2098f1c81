//! Where the sandboxes report: refused connections, tool errors marked as
//! refused file operations, and unsandboxed starts (to the audit log and the
//! metrics, through a [`Reporter`]), and how each server was last
//! started (for `/status` and `warden effective`). A [`SandboxReport`] is
//! owned by whoever starts servers and handed to each launch and egress
//! proxy; nothing is kept per process.

use std::sync::{Arc, Mutex};

use crate::annotate::Refusal;

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

    /// Records that a tool error of sandboxed `server` was marked as a
    /// refusal of its sandbox (see [`crate::annotate`]), of what `refusal`
    /// says it stopped. A refused file operation has no other signal than
    /// this error; a refused connection was also reported by the egress
    /// proxy ([`Reporter::denied`]). Nothing by default.
    fn blocked(&self, server: &str, refusal: Refusal) {
        let _ = (server, refusal);
    }
}

/// What the sandboxes of one set of servers report, and where to: the
/// optional [`Reporter`] and how each server was last started. Cheap to
/// clone; clones share everything. The default one has no reporter
/// (refusals are only logged).
#[derive(Clone, Default)]
pub struct SandboxReport {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    reporter: Option<Arc<dyn Reporter>>,
    /// Server name → how it was last started, in the order first started.
    launches: Mutex<Vec<(String, String)>>,
}

impl std::fmt::Debug for SandboxReport {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SandboxReport")
            .field("reporter", &self.inner.reporter.is_some())
            .field("launches", &*warden_sync::lock(&self.inner.launches))
            .finish()
    }
}

impl SandboxReport {
    /// A report whose refusals and unsandboxed starts go to `reporter` (and
    /// the log).
    pub fn new(reporter: Arc<dyn Reporter>) -> SandboxReport {
        SandboxReport { inner: Arc::new(Inner { reporter: Some(reporter), launches: Mutex::default() }) }
    }

    /// Reports `denial` (always logged).
    pub(crate) fn denied(&self, denial: Denial) {
        tracing::warn!(server = %denial.server, host = %denial.host, port = denial.port, "sandbox refused a connection: {}", denial.reason);
        if let Some(reporter) = &self.inner.reporter {
            reporter.denied(denial);
        }
    }

    /// Reports that a tool error of `server` was marked as its sandbox's
    /// refusal.
    pub fn blocked(&self, server: &str, refusal: Refusal) {
        if let Some(reporter) = &self.inner.reporter {
            reporter.blocked(server, refusal);
        }
    }

    /// Reports that `server` was started unsandboxed (always logged by the
    /// caller).
    pub fn unsandboxed(&self, server: &str, warning: &str) {
        if let Some(reporter) = &self.inner.reporter {
            reporter.unsandboxed(server, warning);
        }
    }

    /// Records how server `server` was last started (its confinement, or
    /// that it runs unsandboxed and why), for `/status` and `warden
    /// effective`.
    pub fn launched(&self, server: &str, how: String) {
        let mut launches = warden_sync::lock(&self.inner.launches);
        launches.retain(|(name, _)| name != server);
        launches.push((server.to_owned(), how));
    }

    /// How server `server` was last started, if it has a sandbox.
    pub fn launch_of(&self, server: &str) -> Option<String> {
        let launches = warden_sync::lock(&self.inner.launches);
        launches.iter().find(|(name, _)| name == server).map(|(_, how)| how.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(Mutex<(usize, usize)>);

    impl Reporter for Count {
        fn denied(&self, _denial: Denial) {
            warden_sync::lock(&self.0).0 += 1;
        }

        fn unsandboxed(&self, _server: &str, _warning: &str) {
            warden_sync::lock(&self.0).1 += 1;
        }
    }

    #[test]
    fn each_report_keeps_its_own_launches_and_reporter() {
        let count = Arc::new(Count(Mutex::new((0, 0))));
        let first = SandboxReport::new(count.clone());
        let second = SandboxReport::default();
        first.launched("a", "sandboxed: one".into());
        first.clone().launched("a", "sandboxed: two".into());
        second.launched("b", "UNSANDBOXED: why".into());
        assert_eq!(first.launch_of("a").as_deref(), Some("sandboxed: two"), "the last start counts");
        assert_eq!(first.launch_of("b"), None, "another report's launches are not this one's");
        assert_eq!(second.launch_of("b").as_deref(), Some("UNSANDBOXED: why"));
        let denial = Denial { server: "a".into(), host: "h".into(), port: 1, reason: "no".into() };
        first.denied(denial.clone());
        second.denied(denial);
        first.unsandboxed("a", "why");
        second.unsandboxed("b", "why");
        assert_eq!(*warden_sync::lock(&count.0), (1, 1), "only the report with a reporter reports");
    }
}
