//! The dashboard's data: what the running Warden says of itself, read by
//! the dashboard page (`/dashboard`), its API and `warden status` (over
//! the control socket). The approvals know nothing of servers, metrics or
//! the audit log, so the process that runs them supplies a [`Dashboard`]
//! once its front is up; until then (or without one) the board is empty.

use std::sync::{Arc, RwLock};

use serde_json::Value;

/// What the dashboard shows, as JSON for the page and the CLI.
pub trait Dashboard: Send + Sync {
    /// The overview: servers and their state, client sessions, calls per
    /// second, each tool's figures over the last 5 and 60 minutes, and the
    /// security counts (denials and escalations by rule, sandbox refusals,
    /// pin drift).
    fn status(&self) -> Value;

    /// Audit records that match `filters` (`since`, `until`, `server`,
    /// `tool`, `decision`, `rule`, `client`, `limit`, as `warden audit
    /// query` takes them), most recent last; or why the filters are wrong
    /// or the log cannot be read.
    fn audit(&self, filters: &[(String, String)]) -> Result<Value, String>;

    /// Whether the audit log's hash chain holds, checked now.
    fn verify_audit(&self) -> Value;
}

/// Where the running process puts its [`Dashboard`]; shared by the page
/// and the control socket.
#[derive(Default)]
pub struct Board {
    dashboard: RwLock<Option<Arc<dyn Dashboard>>>,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board").field("set", &self.get().is_some()).finish()
    }
}

impl Board {
    /// Puts `dashboard` on the board (replacing any before it).
    pub fn set(&self, dashboard: Arc<dyn Dashboard>) {
        *warden_sync::write(&self.dashboard) = Some(dashboard);
    }

    /// The dashboard, once the process supplied one.
    pub fn get(&self) -> Option<Arc<dyn Dashboard>> {
        warden_sync::read(&self.dashboard).clone()
    }
}
